"""The T-round calibration on domains of 16 or more pair types (issue 10: `calibrate --bits 40 --population 1e6
--rounds 4` took about 60 s): the first evaluation's four worst types are bounded in full before every check (a q
where their bound alone exceeds the target fails without the other types: the bound over every type is at least
theirs), and once a check has failed beyond the search's lead type, the fine search runs again on them as the check
bounds them. The q returned must still pass the full bound (recomputed here from scratch, not from the search's
cache) and sit at the edge: a q 0.2% lower fails."""

from __future__ import annotations

import pytest

from sufficientdp.accounting import rounds as accounting_rounds
from sufficientdp.accounting.rounds import rounds_tail
from sufficientdp.calibration import rounds as calibration_rounds
from sufficientdp.calibration.rounds import rounds_q


@pytest.mark.slow
@pytest.mark.parametrize(("values", "epsilon"), [("changing", 1.0), ("fixed", 2.0)])
def test_probe_calibration_passes_the_full_bound_at_the_edge(values: str, epsilon: float,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    bits, population, rounds, eta = 16, 100_000, 2, 1e-3
    probed: list[int] = []
    plain = accounting_rounds.evaluate_rounds

    def counting(**kw: object) -> accounting_rounds.RoundsEvaluation:
        only = kw.get("only")
        if isinstance(only, frozenset) and kw.get("resolution") == accounting_rounds.DEFAULT_RESOLUTION:
            probed.append(len(only))
        return plain(**kw)  # type: ignore[arg-type]

    monkeypatch.setattr(calibration_rounds, "evaluate_rounds", counting)
    q, tail, _ = rounds_q(bits=bits, population=population, epsilon=epsilon, eta=eta, rounds=rounds, values=values)
    assert max(probed) == calibration_rounds._PROBE_TYPES  # the probe was used
    fresh = rounds_tail(q=q, bits=bits, population=population, epsilon=epsilon, rounds=rounds, values=values)
    assert fresh.eta == tail.eta <= eta
    lower = rounds_tail(q=q * 0.998, bits=bits, population=population, epsilon=epsilon, rounds=rounds, values=values)
    assert lower.eta > eta
