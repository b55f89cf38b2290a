"""`sufficientdp demo` runs two calibrations (proven, then the paper's homogeneous configuration to price the
proof): one progress bar covers both, its total fixed and its steps never going back; `compare`'s three searches
likewise."""

from __future__ import annotations

import pytest

from sufficientdp.demo import run_demo


@pytest.mark.parametrize("method, phases", [("proven", 2), ("homogeneous", 1)])
def test_one_bar_covers_both_calibrations(method: str, phases: int) -> None:
    calls: list[tuple[int, int]] = []
    result = run_demo(population=3000, bits=3, seed=2, method=method, progress=lambda d, t: calls.append((d, t)))
    assert (result.homogeneous is not None) == (phases == 2)
    assert {t for _, t in calls} == {1000 * phases}
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[-1] == 1000 * phases
    if phases == 2:  # the second calibration reports in the second half
        assert any(0 < d <= 1000 for d in done) and any(d > 1000 for d in done)


def test_compare_draws_one_bar_for_its_three_searches() -> None:
    # approximate-dp-proven, then the homogeneous and proven calibrations: one bar, each search in its third
    from sufficientdp.calibration.compare import compare_approaches

    calls: list[tuple[int, int]] = []
    compare_approaches(bits=3, population=3000, epsilon=1.0, delta=1e-6, progress=lambda d, t: calls.append((d, t)))
    done = [d for d, _ in calls]
    assert {t for _, t in calls} == {3000} and done == sorted(done) and done[-1] == 3000
    assert all(any(lo < d <= lo + 1000 for d in done) for lo in (0, 1000, 2000))
