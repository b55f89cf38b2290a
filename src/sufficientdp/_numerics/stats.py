"""The few scipy.stats laws the analysis uses, imported on first use.

``import scipy.stats`` loads every distribution (about 0.6 s on the 2-core machine), and most commands never call
one: the default proven bound needs none. These functions are exactly scipy.stats' (same numerics: boost's
binomial, the beta quantile, the normal quantile); only the import is deferred to the first call (issue 10:
start-up time).
"""

from __future__ import annotations

from typing import Any

__all__ = ["beta_ppf", "binom_cdf", "binom_isf", "binom_pmf", "binom_ppf", "binom_sf", "norm_ppf"]


def binom_pmf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.pmf``."""
    from scipy.stats import binom

    return binom.pmf(k, n, p)


def binom_cdf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.cdf``."""
    from scipy.stats import binom

    return binom.cdf(k, n, p)


def binom_sf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.sf``."""
    from scipy.stats import binom

    return binom.sf(k, n, p)


def binom_ppf(q: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.ppf``."""
    from scipy.stats import binom

    return binom.ppf(q, n, p)


def binom_isf(q: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.isf``."""
    from scipy.stats import binom

    return binom.isf(q, n, p)


def beta_ppf(q: Any, a: Any, b: Any) -> Any:
    """``scipy.stats.beta.ppf``."""
    from scipy.stats import beta

    return beta.ppf(q, a, b)


def norm_ppf(q: Any) -> Any:
    """``scipy.stats.norm.ppf``."""
    from scipy.stats import norm

    return norm.ppf(q)
