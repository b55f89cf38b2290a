"""The T-round calibration answers the smallest q to its tolerance (session 17): two ways it had stopped high.

The first evaluation (every pair type, on a coarse lattice with few points) only picks the worst type; where it
is much looser than that type's own bound (seen at epsilon = 0.05-0.1), the step down from local DP's q stopped
at a q that only it failed, the coarse search converged onto that q, and the fine search's twelve steps of at most
4% ended still passing: q = 0.2426 (about half of local DP's) with eta = 1.0e-6 against a target of 1e-3, where
q = 0.19 passes. The fine search now walks on down until its bound fails, then searches the root. And the step
up after a failed check is narrowed (below)."""

from __future__ import annotations

import pytest

from sufficientdp import calibrate
from sufficientdp.accounting.rounds import rounds_tail
from sufficientdp.ratio.proven import Domain


@pytest.mark.slow
@pytest.mark.parametrize(("bits", "population", "epsilon", "rounds", "max_weight"),
                         [(2, 10**5, 0.1, 3, 1), (12, 10**6, 0.05, 3, 1)])
def test_the_answer_is_the_smallest_q_that_passes(bits: int, population: int, epsilon: float, rounds: int,
                                                   max_weight: int) -> None:
    c = calibrate(bits=bits, population=population, epsilon=epsilon, rounds=rounds, max_weight=max_weight)
    args = {"bits": bits, "population": population, "epsilon": epsilon, "rounds": rounds,
            "domain": Domain.from_max_weight(bits, max_weight)}
    at = rounds_tail(q=c.q, **args).eta
    assert at == c.eta_at_q <= 1e-3  # one number everywhere
    assert rounds_tail(q=c.q * 0.995, **args).eta > 1e-3  # 0.5% lower fails (the search's tolerance is 0.2%)
    assert c.q < 0.2 < 0.5 * c.local_q  # (it had been 0.2426 and 0.2436)


@pytest.mark.slow
def test_the_step_up_is_narrowed_to_the_tolerance() -> None:
    """Where the search's root fails the full bound (every type, values changing between rounds), q steps up by
    0.1%, 0.2%, 0.4%, ...; the first pass had been returned, up to its last step (0.8% here) above the smallest
    q passing: 0.20825 with eta 7.6e-7 against 1e-6, where 0.2072 passes. The pass is now narrowed."""
    args = {"bits": 5, "population": 10**6, "epsilon": 0.3, "rounds": 3}
    c = calibrate(**args, eta=1e-6)
    assert rounds_tail(q=c.q, **args).eta == c.eta_at_q <= 1e-6
    assert rounds_tail(q=c.q * 0.995, **args).eta > 1e-6
    assert c.q < 0.2075  # (it had been 0.20825)
