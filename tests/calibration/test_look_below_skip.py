"""The proven calibration's last look below its answer (one full bound of every pair type 0.2% lower in q: 1-2 s at
L = 128-256) is skipped where the bound is predicted well above the target there (issue 10). The prediction
extrapolates log eta from the full bound at the answer through the fine search's nearest failing bound below it;
where it skips, the look would not have moved q: the same q, bit for bit, as with the look forced."""

from __future__ import annotations

import pytest

from sufficientdp.calibration import proven as calibration_proven
from sufficientdp.calibration.proven import proven_q


@pytest.mark.slow
@pytest.mark.parametrize(("bits", "population", "epsilon", "eta"),
                         [(16, 100_000, 1.0, 1e-3), (24, 1_000, 2.0, 1e-6), (48, 100_000, 2.0, 1e-3)])
def test_skipped_look_below_would_not_have_moved_q(bits: int, population: int, epsilon: float, eta: float,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    skipped: list[bool] = []
    plain = calibration_proven._steep_below

    def recording(*args: object) -> bool:
        skipped.append(plain(*args))  # type: ignore[arg-type]
        return skipped[-1]

    monkeypatch.setattr(calibration_proven, "_steep_below", recording)
    q, tail, _ = proven_q(bits=bits, population=population, epsilon=epsilon, eta=eta)
    monkeypatch.setattr(calibration_proven, "_steep_below", lambda *args: False)
    q_forced, tail_forced, _ = proven_q(bits=bits, population=population, epsilon=epsilon, eta=eta)
    assert any(skipped)  # the skip was taken here
    assert q.hex() == q_forced.hex() and tail.eta == tail_forced.eta <= eta


def test_steep_below_needs_half_the_target_and_a_failing_bound_below() -> None:
    run = calibration_proven._Run(bits=8, population=1000, epsilon=1.0, eta=1e-3, reports=1,
                                  dom=calibration_proven.Domain(bits=8), progress=None, larger_crowds=False)
    hi = 0.3
    assert not calibration_proven._steep_below(run, hi, 9e-4)  # no failing bound recorded below hi
    run.fine_fails.append((0.31, 5e-3))  # (above hi: not used)
    assert not calibration_proven._steep_below(run, hi, 9e-4)
    run.fine_fails.append((hi * (1 - 1e-4), 1.2e-3))  # eta x 1.33 over 0.01% of q: steep
    assert calibration_proven._steep_below(run, hi, 9e-4)
    assert not calibration_proven._steep_below(run, hi, 4e-4)  # far below the target at hi: the look may help
    run.fine_fails[-1] = (hi * 0.98, 1.2e-3)  # eta x 1.33 over 2% of q: 0.2% lower predicted at 9.3e-4
    assert not calibration_proven._steep_below(run, hi, 9e-4)
