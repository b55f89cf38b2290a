"""Collection of randomized reports: rate-limiting tokens (and, beside them, the collector's campaign logic).

:mod:`sufficientdp.collection.tokens` holds the Privacy-Pass-style blind-signature tokens that limit each
credential to k reports without linking reports to credentials (``docs/rate_limiting.md``): the key types, the
signer and the RSA-FDH scheme of campaigns created before RSABSSA; :mod:`sufficientdp.collection.rsabssa` holds
the RFC 9474 RSABSSA-SHA384-PSS-Randomized scheme of new campaigns (each campaign's ``token_scheme`` says which).
The RSA-FDH functions need only the standard library; generating and serializing keys, and RSABSSA's PSS
verification, need the ``crypto`` extra.
"""

from .tokens import (
    NONCE_BYTES,
    TokenKey,
    TokenSigner,
    blind,
    full_domain_hash,
    new_nonce,
    unblind,
    verify,
)

__all__ = [
    "NONCE_BYTES",
    "TokenKey",
    "TokenSigner",
    "blind",
    "full_domain_hash",
    "new_nonce",
    "unblind",
    "verify",
]
