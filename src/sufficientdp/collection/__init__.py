"""Collection of randomized reports: rate-limiting tokens (and, beside them, the collector's campaign logic).

:mod:`sufficientdp.collection.tokens` holds the Privacy-Pass-style blind-signature tokens that limit each
credential to k reports without linking reports to credentials (``docs/rate_limiting.md``). The token functions
need only the standard library; generating and serializing keys needs the ``crypto`` extra.
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
