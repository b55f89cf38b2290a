"""End-to-end demonstration: simulate a population, calibrate, randomize, anonymize, estimate.

Used by ``sufficientdp demo`` and ``make demo``. Everything here calls the public core API; nothing is faked:
the true counts come from the simulated population and the estimates only from the randomized tally.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .aggregation.tally import Tally, tally_packed
from .calibration import Calibration, calibrate
from .estimation.bits import BitEstimates, estimate_bits
from .parameters import RandomizationParams
from .randomization._packing import pack_bits
from .randomization._sources import as_source
from .randomization.randomizer import Randomizer

__all__ = ["DemoResult", "run_demo", "skewed_population"]


def skewed_population(population: int, bits: int, rng: np.random.Generator) -> np.ndarray:
    """A skewed synthetic population: bit j is set with probability ``0.6 * 0.75**j`` and bits 0 and 1 are
    positively correlated (bit 1 copies bit 0 for a third of the people)."""
    probs = 0.6 * 0.75 ** np.arange(bits)
    data = (rng.random((population, bits)) < probs).astype(np.uint8)
    if bits >= 2:
        copy = rng.random(population) < 1 / 3
        data[copy, 1] = data[copy, 0]
    return data


@dataclass(frozen=True, slots=True)
class DemoResult:
    """What the demo computed: the calibration, the truth, the tally and the estimates."""

    calibration: Calibration
    params: RandomizationParams
    truth: np.ndarray
    tally: Tally
    estimates: BitEstimates
    randomness: str

    @property
    def covered(self) -> np.ndarray:
        """Whether each true count lies in its confidence interval."""
        return (self.estimates.lower <= self.truth) & (self.truth <= self.estimates.upper)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        rows = self.estimates.to_records()
        for r, t, c in zip(rows, self.truth, self.covered):
            r["true"] = int(t)
            r["covered"] = bool(c)
        return {
            "calibration": self.calibration.to_dict(),
            "effective_q": self.params.effective_q,
            "randomness": self.randomness,
            "reports": self.tally.reports,
            "estimates": rows,
            "covered": int(self.covered.sum()),
        }

    def render(self) -> str:
        """Human-readable report."""
        c = self.calibration
        e = self.estimates
        lines = [
            (f"sufficientdp demo: N = {c.population} people, L = {c.bits} bits, k = {c.reports}, "
             f"epsilon = {c.epsilon:g} (lambda = {c.lam:.4g})"),
            f"calibration ({c.method}): q = {c.q:.5f}  [{c.guarantee}]",
            (f"  local DP would need q = {c.local_q:.5f}; standard error {c.gain_vs_local:.1f}x smaller here "
             f"({c.sigma_per_sqrt_n:.3f} vs {c.local_sigma_per_sqrt_n:.3f} per sqrt(N))"),
            (f"randomized {self.tally.reports} reports with q = {self.params.effective_q:.10g} (exact dyadic), "
             f"randomness: {self.randomness}; anonymized into per-bit counts"),
            "",
            f"{'bit':>4} {'true':>9} {'estimate':>11} {'95% CI':>25} {'in CI':>6}",
        ]
        for j in range(e.bits):
            lines.append(f"{j:>4} {int(self.truth[j]):>9} {e.estimate[j]:>11.1f} "
                         f"{'[' + f'{e.lower[j]:.1f}, {e.upper[j]:.1f}' + ']':>25} "
                         f"{'yes' if self.covered[j] else 'NO':>6}")
        lines.append("")
        lines.append(f"{int(self.covered.sum())} of {e.bits} true counts inside their {100 * e.level:g}% "
                     f"intervals (expected about {e.level * e.bits:.1f}); standard error {e.std_error[0]:.1f}")
        for note in c.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)


def run_demo(*, population: int = 100_000, bits: int = 16, epsilon: float = 1.0, beta: float = 3.0,
             reports: int = 1, seed: int | None = None, method: str = "certified", eta: float | None = None,
             progress: Any = None) -> DemoResult:
    """Run the whole flow once. ``seed=None`` uses the CSPRNG for the randomizer."""
    cal = calibrate(bits=bits, population=population, epsilon=epsilon, beta=beta, reports=reports, method=method,
                    eta=eta, progress=progress)
    sim_rng = np.random.default_rng(seed)
    truth_data = skewed_population(cal.population, cal.bits, sim_rng)
    params = RandomizationParams(bits=cal.bits, q=cal.q, reports=cal.reports)
    source = as_source(np.random.default_rng(None if seed is None else seed + 1) if seed is not None else None)
    randomized = Randomizer(params, rng=source).randomize_packed(pack_bits(truth_data))
    t = tally_packed(randomized, cal.bits)
    est = estimate_bits(t, q=params.effective_q, reports=params.reports)
    return DemoResult(calibration=cal, params=params, truth=truth_data.sum(axis=0).astype(np.int64), tally=t,
                      estimates=est, randomness=source.name)
