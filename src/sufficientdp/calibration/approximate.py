"""The flip probability whose anonymized release is (epsilon, delta)-DP for every pair of neighbouring collections.

Approximate DP in the standard vocabulary, for the product's own release (the histogram of N people's k bit-vector
reports), by the privacy-blanket bound on delta computed for this mechanism
(:func:`sufficientdp.ratio.proven.proven_delta`; docs/proofs/blanket.md) rather than by a generic amplification
theorem that sees only the local epsilon of a whole report (:mod:`sufficientdp.accounting.amplification`). The
comparison of approaches (:func:`sufficientdp.calibration.compare.compare_approaches`) shows it beside them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import CalibrationError, ParameterError
from .._validation import check_int, check_open_interval, check_positive_finite
from ..parameters import local_q
from ..ratio.proven import Domain, local_distance, proven_delta
from .search import bracket_smallest

__all__ = ["GRID", "ITERATIONS", "proven_delta_q"]

#: The top-down grid of the search (``q_local 1e-3**(i / GRID)``) and the bisections its bracketing matches
#: (:func:`sufficientdp.calibration.search.bracket_smallest`): the answer lies within ``(q_pass / q_fail)**(2**-12)``
#: (0.014%) of the smallest grid-bracketed passing q.
GRID = 12
ITERATIONS = 12


def proven_delta_q(*, bits: int, population: int, epsilon: float, delta: float, reports: int = 1,
                   domain: Domain | None = None,
                   progress: Callable[[int, int], Any] | None = None) -> tuple[float, float]:
    """Smallest q (to the search's tolerance, on the safe side) whose release is ``(epsilon, delta)``-DP for every
    pair of neighbouring collections of the domain (one person's vector replaced), both directions, every crowd of
    at least N people, by :func:`sufficientdp.ratio.proven.proven_delta`.

    The worst delta is non-increasing in q (randomized response at q' > q is randomized response at q followed by
    an independent flip of every bit, a post-processing), and the bound nearly so; the search
    (:func:`~sufficientdp.calibration.search.bracket_smallest`, from the local-DP q down) assumes nothing and returns
    a q at which the bound was computed and met.

    Args:
        bits: L >= 1.
        population: N >= 1, the smallest crowd.
        epsilon: > 0.
        delta: target in (0, 1).
        reports: k >= 1 reports per person.
        domain: the vectors people may hold (default all of {0,1}^L).
        progress: optional ``progress(done, total)`` (one step per bound; the total is an estimate).

    Cost: about 10 bounds; each stops refining once it is at most ``delta``, with 1% of ``delta`` as rounding slack
    (a probe needs only the verdict). L = 40, N = 10^7, k = 1: 0.8-0.9 s. k > 1 is far slower: every bound composes the k reports' curves of every pair type
    (1-3 s each at L = 40) and the composed bound jitters near the root, which costs probes (23 bounds, 39 s at
    L = 40, k = 2).

    Returns:
        ``(q, delta bound at q)``.

    Raises:
        ParameterError: a parameter out of range.

    Examples:
        >>> q, d = proven_delta_q(bits=5, population=10_000, epsilon=1.0, delta=1e-6)
        >>> 0.1 < q < local_q(5, 1.0), d <= 1e-6
        (True, True)
    """
    bits = check_int("bits", bits, minimum=1, maximum=100_000)
    population = check_int("population", population, minimum=1, maximum=10**12)
    epsilon = check_positive_finite("epsilon", epsilon)
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    reports = check_int("reports", reports, minimum=1, maximum=10_000)
    dom = domain if domain is not None else Domain(bits=bits)
    if not isinstance(dom, Domain) or dom.bits != bits:
        raise ParameterError(f"domain must be a Domain with bits = {bits} or None; got {domain!r}")
    q_hi = local_q(local_distance(dom), epsilon, reports)  # every report epsilon / k-local DP: delta = 0
    done = [0]
    expected = GRID // 2 + 6

    def passes(q: float) -> tuple[bool, float]:
        # (a probe only needs the verdict: the bound stops refining once it is at most the target)
        d = proven_delta(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports, domain=dom,
                         enough=delta).delta
        done[0] += 1
        if progress is not None:
            progress(min(done[0], expected - 1), expected)
        return d <= delta, d

    top_ok, top = passes(q_hi)  # (0 exactly: no refinement)
    if not top_ok:  # (local_q rounds on the safe side; checked, not assumed)
        raise CalibrationError(f"internal: the local-DP q = {q_hi!r} does not give delta = 0 (got {top!r})")
    q, seen = bracket_smallest(passes, q_hi, delta, grid=GRID, iterations=ITERATIONS)
    # the tightest bound at the answer (the probe stopped at the target); both are valid, the smaller is reported
    at_q = proven_delta(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports, domain=dom).delta
    if seen is not None:
        at_q = min(at_q, float(seen))
    if progress is not None:
        progress(expected, expected)
    return q, at_q
