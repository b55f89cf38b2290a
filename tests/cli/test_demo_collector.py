"""``sufficientdp demo --collector``, in-process: the loopback collection flow end to end, and its bad inputs.

The slow test runs 400 simulated people (seed 1) against a collector on 127.0.0.1 and checks, against truths
computed here independently of the collector:

* the raw released counts equal the seeded randomizations recomputed here person by person (nothing lost or
  duplicated; the seed reaches every Reporter);
* each standard error is the exact sd of the unbiased estimator, ``sqrt(N q (1 - q) / k) / (1 - 2q)`` (seed 001
  §4, §6), and each true count lies within ``z * std_error`` of its estimate with ``z = z_{1 - 1e-4 / 2}``: under
  the normal approximation a bit fails with probability 1e-4, the test with at most 4 * 1e-4 = 0.04% over seeds
  (union bound). The seeds are fixed, so the outcome is deterministic;
* the second release (10 late people) is refused with ``crowd_too_small`` and a repeated credential with
  ``token_already_issued``;
* nothing is left running: no new thread, the port refuses connections, the temporary database is deleted.
"""

from __future__ import annotations

import json
import math
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from scipy.stats import norm

from sufficientdp.cli import main
from sufficientdp.demo import LATE_PEOPLE, skewed_population
from sufficientdp.parameters import RandomizationParams
from sufficientdp.randomization import Randomizer

PEOPLE = 400
SEED = 1


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_collector_demo_end_to_end(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                   tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the collector needs the 'service' extra")
    pytest.importorskip("uvicorn", reason="the collector needs the 'service' extra")
    pytest.importorskip("httpx", reason="the Reporter needs the 'client' extra")
    pytest.importorskip("cryptography", reason="token keys need cryptography")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the demo's temporary database goes here
    threads_before = set(threading.enumerate())

    code, out, err = _run(capsys, "demo", "--collector", "--population", str(PEOPLE), "--seed", str(SEED),
                          "--json")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert len(lines) == 1
    d: dict[str, Any] = json.loads(lines[0])

    campaign, release, checks = d["campaign"], d["release"], d["checks"]
    bits, k = campaign["bits"], campaign["reports_per_person"]
    assert (bits, k, campaign["crowd_size"], campaign["rate_limit"]) == (4, 1, 300, "tokens")
    assert campaign["calibrated"] and 0 < campaign["q"] < 0.5 and campaign["eta_at_q"] <= campaign["eta"] == 0.001
    assert campaign["q"] == campaign["q_numerator"] / 2 ** campaign["precision"]
    assert "token_key" not in campaign and "every pair of neighbouring collections" in campaign["guarantee"]
    assert release["reports"] == k * PEOPLE and release["people"] == PEOPLE and d["population"] == PEOPLE

    # Independent truth: the same simulated population and the same per-person seeded randomizations.
    values = skewed_population(PEOPLE + LATE_PEOPLE, bits, np.random.default_rng(SEED))
    truth = values[:PEOPLE].sum(axis=0)
    children = np.random.SeedSequence(SEED).spawn(PEOPLE + LATE_PEOPLE)
    params = RandomizationParams(bits=bits, q=campaign["q"], reports=k)
    raw = sum(Randomizer(params, rng=np.random.default_rng(children[i])).randomize(values[i:i + 1]).sum(axis=0)
              for i in range(PEOPLE))
    rows = release["estimates"]
    assert [r["true"] for r in rows] == truth.tolist()
    assert [r["count"] for r in rows] == np.asarray(raw).tolist()

    q = campaign["q"]
    z = float(norm.ppf(1 - 1e-4 / 2))
    for r in rows:
        assert math.isclose(r["std_error"], math.sqrt(PEOPLE * q * (1 - q) / k) / (1 - 2 * q), rel_tol=1e-9)
        assert abs(r["estimate"] - r["true"]) <= z * r["std_error"], r
        assert r["covered"] == (r["lower"] <= r["true"] <= r["upper"])
    assert checks["covered"] == sum(r["covered"] for r in rows) and checks["bits"] == bits

    crowd, rate = checks["crowd_threshold"], checks["rate_limit"]
    assert crowd["refused"] and (crowd["status"], crowd["code"]) == (409, "crowd_too_small")
    assert f"{LATE_PEOPLE} are pending" in crowd["message"]
    assert rate["refused"] and (rate["status"], rate["code"]) == (409, "token_already_issued")
    assert d["randomness"] == "numpy-generator" and d["database"] is None
    # A device with a privacy ledger joins the campaign and declines the next one of the family, sending nothing.
    ledger = checks["ledger"]
    assert ledger["family"] == campaign["family"] == "sufficientdp demo" and ledger["joined"] == campaign["id"]
    assert ledger["declined"] != ledger["joined"] and ledger["reports_sent_to_declined"] == 0
    assert ledger["decision"]["allowed"] is False and ledger["decision"]["reason"].startswith("declined")
    assert ledger["decision"]["after_epsilon"] == 2 * campaign["epsilon"] > ledger["budget"]["epsilon"]

    # Nothing left running: no thread, no listener, no database file.
    assert set(threading.enumerate()) <= threads_before
    address = urlsplit(d["url"])
    assert address.hostname == "127.0.0.1" and address.port is not None
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((address.hostname, address.port), timeout=2).close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--collector", "--population", "100"], "population must be at least the crowd size"),
        (["--collector", "--population", "400", "--crowd-size", "1"], "crowd_size"),
        (["--collector", "--q", "0.7"], "q must be in"),
        (["--collector", "--bits", "40"], "bits"),
        (["--collector", "--method", "mc"], "--method applies only to the in-memory demo"),
        (["--crowd-size", "300"], "--crowd-size applies only with --collector"),
        (["--database", "sqlite:///x.db"], "--database applies only with --collector"),
    ],
)
def test_collector_demo_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str) -> None:
    threads_before = set(threading.enumerate())
    code, out, err = _run(capsys, "demo", *argv)
    assert code == 2 and out == ""
    assert err.startswith("sufficientdp: error:") and fragment in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert set(threading.enumerate()) <= threads_before


def test_collector_demo_missing_extras(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a))
    code, out, err = _run(capsys, "demo", "--collector", "--population", "400")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "'service'" in err and "'client'" in err and "uvicorn" in err and "sufficientdp[service,client]" in err
