"""``docs/proven_bound.md``'s generator (:mod:`sufficientdp.report.proven_bound`, command line
``scripts/proven_report.py``) and its best-e' checks (:mod:`sufficientdp.calibration.proven_grid`): the verdict logic,
the budgeted runner and the tables (no calibrations run here)."""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

import pytest

from sufficientdp.calibration import proven_grid
from sufficientdp.report import proven_bound as pb


def _value(**kwargs: Any) -> dict[str, Any]:
    return dict(kwargs)


def _burn(**kwargs: Any) -> dict[str, Any]:
    t0 = time.process_time()
    while time.process_time() - t0 < 30.0:
        pass
    return {"q": 0.1}  # pragma: no cover - stopped before


def _fail(**kwargs: Any) -> dict[str, Any]:
    raise ValueError("boom")


def test_q_compare_and_verdict() -> None:
    assert pb.q_compare(0.1, 0.2) == -1
    assert pb.q_compare(0.2, 0.1) == 1
    assert pb.q_compare(0.1, 0.1 * (1 + 0.5 * pb.Q_REL_TOL)) == 0
    eta = 1e-3
    # decided only by the domain's bound at the 2w q, never by comparing calibrated q
    assert pb.verdict(0.1, 0.2, None, eta).startswith("—")
    assert pb.verdict(0.1, 0.1, 2e-3, eta).startswith("not proven (bound 2× η")  # same q, bound above eta
    assert pb.verdict(0.11, 0.1, 9e-4, eta) == "yes (bound 0.9× η at the 2w q)"  # the calibration overshot
    assert pb.verdict(None, 0.1, 9e-4, eta).startswith("yes (bound")  # calibration skipped, bound decides
    assert pb.verdict(0.09, 0.1, 1e-3, eta).startswith("yes")  # bound exactly eta: certified
    v = pb.verdict(0.11, 0.1, 2e-3, eta)
    assert v == "not proven (bound 2× η at the 2w q)"  # calibrate's q ratio is not part of the verdict
    assert pb.verdict(None, 0.1, None, eta).startswith("—")
    assert pb.certified(None, 0.1, None, eta) is None
    assert pb.certified(0.05, 0.1, None, eta) is None
    assert pb.certified(0.11, 0.1, 2e-3, eta) is False
    assert pb.certified(0.11, 0.1, 5e-4, eta) is True


def test_formatting() -> None:
    assert pb.fmt_eps(math.log(2)) == "ln 2"
    assert pb.fmt_eps(2.0) == "2"
    assert pb.fmt_n(10**7) == "10^7"
    assert pb.fmt_n(3000) == "3000"
    assert pb.fmt_g(None) == "—"
    assert pb.fmt_g(0.0) == "0"
    assert pb.fmt_g(9.95e-4) == "9.95e-04"
    assert pb.fmt_g(0.117) == "0.117"


@pytest.mark.parametrize("budget", [None, 5.0])
def test_timed_ok_and_error(budget: float | None) -> None:
    ok = pb.timed("ok", _value, {"q": 0.25}, budget)
    assert ok.ok and ok.value == {"q": 0.25} and ok.status == "ok"
    bad = pb.timed("bad", _fail, {}, budget)
    assert not bad.ok and bad.status.startswith("error: ValueError")


@pytest.mark.slow
def test_timed_budget_stops_the_job() -> None:
    t0 = time.perf_counter()
    out = pb.timed("burn", _burn, {}, 0.5)
    assert out.status == "skipped" and out.value is None
    assert time.perf_counter() - t0 < 0.5 * pb.WALL_FACTOR + 5.0


def _cal(q: float, **extra: Any) -> Any:
    return {"q": q, "sigma_per_sqrt_n": math.sqrt(q * (1 - q)) / (1 - 2 * q), "scope": "x", "eta_at_q": 1e-3,
            "notes": [], **extra}


def test_sections_and_suspicious_flag() -> None:
    Out = pb.Outcome
    row = pb.PaperRow(5, 1000, math.log(2))
    for m, q in (("local", 0.46), ("paper-sigma", 0.24), ("homogeneous", 0.26), ("proven", 0.25)):
        row.cal[m] = Out(_cal(q), 1.0, "ok", 1.0)
    row.proven_at["homogeneous"] = Out({"eta": 0.1, "worst_pair": "j=5"}, 1.0, "ok", 1.0)
    sus = pb.suspicious_paper([row])
    assert len(sus) == 1 and "proven q = 0.250000 < homogeneous q = 0.260000" in sus[0]
    text = pb.paper_section([row], 1e-3)
    assert "Fails at" in text and "0.1 (100× η)" in text and "j=5" in text

    row.cal["proven"] = Out(_cal(0.30), 1.0, "ok", 1.0)
    assert pb.suspicious_paper([row]) == []
    assert "Holds at every configuration" in pb.paper_section([row], 1e-3)

    ok = Out(_cal(0.04), 1.0, "ok", 1.0)
    rows = [
        pb.CardRow("onehot", 64, None, 10**4, Out(_cal(0.05), 1.0, "ok", 1.0), ok,
                       Out({"eta": 3e-3, "eta_library": 5e-3}, 1.0, "ok", 1.0),
                       Out({"q": 0.045, "sigma_per_sqrt_n": 0.2}, 1.0, "ok", 1.0)),
        pb.CardRow("weight", 16, 2, 10**4, Out(_cal(0.03), 1.0, "ok", 1.0), ok),
        pb.CardRow("weight", 40, 2, 10**6, Out(None, 200.0, "skipped", 181.0), ok,
                       Out(None, 200.0, "skipped", 181.0)),
    ]
    text = pb.card_section(rows, 1.0, 1e-3, 180.0)
    assert "not proven (bound 3× η at the 2w q)" in text
    assert "| 0.04500 | 1.125 |" in text  # the bisected q and its ratio to the 2w q
    assert "— (bound at the 2w q not computed)" in text  # q 0.03 < 0.04 alone decides nothing
    assert "in 0 of 1 decided rows and not certified in 1; 2 rows could not be decided" in text
    assert "**Skipped**" in text and "vectors of 40 bits with at most 2 set, N = 10^6 (calibration)" in text
    assert "Verdict on L_eff = 2w (ERRATA 6): not determined in general.**" in text and "3× η" in text
    assert "the q it does certify is 1.12× the 2w q" in text
    assert "(it certifies q = 0.04500, 1.12× the 2w q)" in text
    # calibrate's q 0.05 is 1.11x the certified 0.045: flagged as a search defect
    assert "**Calibration search defects**" in text and "1.11× the q = 0.04500" in text

    held = [pb.CardRow("onehot", 64, None, 10**4, ok, ok, Out({"eta": 4e-4}, 1.0, "ok", 1.0)),
            pb.CardRow("weight", 16, 2, 10**5, ok, ok, Out({"eta": 8e-4}, 1.0, "ok", 1.0))]
    verdict = pb.card_conclusion(held, 1e-3)
    assert "holds at every configuration tested.** In 2 of 2 decided rows (w = 1, 2)" in verdict
    assert "(0.4–0.8× η; largest 8.00e-04, vectors of 16 bits with at most 2 set, N = 10^5)" in verdict
    assert "not of the remark in general" in verdict
    split = pb.card_conclusion([held[0], pb.CardRow("weight", 16, 2, 10**4, ok, ok,
                                    Out({"eta": 2e-3}, 1.0, "ok", 1.0), Out({"q": 0.042}, 1.0, "ok", 1.0))],
                                    1e-3)
    assert "Short version: holds (proven) where tested for w = 1; not determined for w = 2, where the proof "
    "needs 1.05× the 2w q." in split
    assert "not determined" in pb.card_conclusion(rows[2:], 1e-3)


def _step_bound(**kwargs: Any) -> dict[str, Any]:
    return {"eta": 2e-3 if kwargs["q"] < 0.2 else 5e-4, "gap": 0.1}


def test_certified_q_bisects_to_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proven_grid, "best_bound", _step_bound)
    out = proven_grid.certified_q(q_fail=0.1, q_ok=0.4, bits=4, population=100, epsilon=1.0, eta=1e-3,
                                  domain=None)
    assert 0.2 <= out["q"] <= 0.2 * (1 + proven_grid.BISECT_REL) and out["eta"] == 5e-4
    assert out["q_fail"] < 0.2 and out["steps"] > 5
    assert out["sigma_per_sqrt_n"] == pytest.approx(math.sqrt(out["q"] * (1 - out["q"])) / (1 - 2 * out["q"]))
    with pytest.raises(ValueError, match="q_fail"):
        proven_grid.certified_q(q_fail=0.0, q_ok=0.4, bits=4, population=100, epsilon=1.0, eta=1e-3, domain=None)


@pytest.mark.slow
def test_best_bound_is_valid_and_no_worse_than_proven_tail() -> None:
    """Brute force: the exact eta of every neighbouring pair of collections of 8 people holding vectors of 2 bits
    with at most one set (00, 10, 01), enumerated over all histograms (ratio_distribution), is below the bound."""
    from sufficientdp.ratio.exact import ratio_distribution
    from sufficientdp.ratio.proven import Domain

    q, eps, n = 0.25, 1.0, 8
    vecs = [[0, 0], [1, 0], [0, 1]]
    worst = 0.0
    for base in itertools.combinations_with_replacement(range(3), n - 1):
        for x, xp in itertools.permutations(range(3), 2):
            d = [vecs[i] for i in base]
            worst = max(worst, ratio_distribution(d + [vecs[x]], d + [vecs[xp]], q).eta(eps))
    b = proven_grid.best_bound(q=q, bits=2, population=n, epsilon=eps,
                               domain=Domain(bits=2, kind="weight", max_weight=1))
    assert b["eta"] <= b["eta_library"]
    assert worst <= b["eta"] < 1.0
    assert 0.05 < worst  # the check has teeth: a bound of 0 would fail


def test_results_round_trip() -> None:
    """--save / --render: the document rendered from saved results equals the one rendered from the run."""
    Out = pb.Outcome
    row = pb.PaperRow(5, 1000, math.log(2))
    for m, q in (("local", 0.46), ("paper-sigma", 0.24), ("homogeneous", 0.26), ("proven", 0.30)):
        row.cal[m] = Out(_cal(q, notes=("a", "b")), 1.0, "ok", 1.0)
    row.proven_at["homogeneous"] = Out({"eta": 0.1, "worst_pair": "j=5"}, 1.0, "ok", 1.0)
    card = [pb.CardRow("weight", 16, 2, 10**4, Out(_cal(0.05), 1.0, "ok", 1.0), Out(_cal(0.04), 1.0, "ok", 1.0),
                           Out({"eta": 3e-3, "eta_library": 5e-3}, 1.0, "ok", 1.0), None)]
    meta = {"eta": 1e-3, "card_epsilon": 1.0, "budget": 180.0, "command": "x", "quick": False,
            "started": "2026-01-01 00:00 UTC", "minutes": 1.0, "version": "0", "commit": "abc", "python": "3"}
    state = {"meta": meta, "paper_rows": [row], "card_rows": card}
    again = pb.results_from_json(pb.results_to_json(state))
    assert pb.render(again) == pb.render(state)
    assert "Rendered from the saved results by `y`" in pb.render(again, rendered_by="y")[0]


def test_saved_results_are_strict_json_and_keep_infinities() -> None:
    """--save writes strict JSON (issue 11: it wrote the non-standard token Infinity, which other parsers reject):
    an infinite value is the string "inf" and is infinite again after --render reads it; NaN is null."""
    import json

    Out = pb.Outcome
    row = pb.PaperRow(5, 1000, math.log(2))
    row.cal["local"] = Out(_cal(0.46), 1.0, "ok", 1.0)
    row.proven_at["local"] = Out({"eta": 0.0, "worst_pair": "j=1", "epsilon_prime": math.inf}, 1.0, "ok", 1.0)
    card = [pb.CardRow("onehot", 64, None, 10**4, Out(_cal(0.05, eta_at_q=-math.inf), 1.0, "ok", 1.0), None,
                       Out({"eta": math.inf, "eta_library": math.nan}, 1.0, "ok", 1.0), None)]
    meta = {"eta": 1e-3, "card_epsilon": 1.0, "budget": None, "command": "x", "quick": True,
            "started": "2026-01-01 00:00 UTC", "minutes": 1.0, "version": "0", "commit": "abc", "python": "3"}
    state = {"meta": meta, "paper_rows": [row], "card_rows": card}
    text = pb.results_to_json(state)

    def refuse(token: str) -> None:
        raise AssertionError(f"non-standard JSON token {token}")

    raw = json.loads(text, parse_constant=refuse)  # Infinity, -Infinity and NaN all go through parse_constant
    assert raw["paper_rows"][0]["proven_at"]["local"]["value"]["epsilon_prime"] == "inf"
    assert raw["card_rows"][0]["at_ref"]["value"] == {"eta": "inf", "eta_library": None}
    again = pb.results_from_json(text)
    assert again["paper_rows"][0].proven_at["local"].value["epsilon_prime"] == math.inf
    assert again["card_rows"][0].at_ref.value == {"eta": math.inf, "eta_library": None}
    assert again["card_rows"][0].dom.value["eta_at_q"] == -math.inf
    assert again["card_rows"][0].dom.value["q"] == 0.05
