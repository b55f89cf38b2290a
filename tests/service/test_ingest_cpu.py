"""The collector's one-report path without numpy: plain-Python packing gives the bytes numpy's packing gives, and
FastAPI's native telemetry (which would record client addresses and paths) is off."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")

from sufficientdp.service.storage import pack_report_rows, pack_reports  # noqa: E402


@pytest.mark.parametrize("bits", [1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100])
def test_plain_packing_equals_numpy_packing(bits: int) -> None:
    rng = np.random.default_rng(bits)
    for n in (1, 2, 4):
        rows = rng.integers(0, 2, size=(n, bits))
        assert pack_report_rows(rows.tolist(), bits) == pack_reports(rows)


def test_plain_packing_every_8_bit_row() -> None:
    rows = [list(v) for v in itertools.product((0, 1), repeat=8)]  # all 256 rows: byte value = sum of v_j 2**j
    assert pack_report_rows(rows, 8) == [bytes([sum(v << j for j, v in enumerate(r))]) for r in rows]
    assert pack_report_rows(rows, 8) == pack_reports(np.array(rows))


@pytest.mark.parametrize("bad", [2, -1, 1 << 70, 0.5])
def test_plain_packing_declines_values_other_than_0_and_1(bad: Any) -> None:
    assert pack_report_rows([[0, 1, 0, 1], [0, 1, bad, 1]], 4) is None


def test_native_telemetry_is_off(tmp_path: Any) -> None:
    from fastapi import FastAPI

    from sufficientdp.service.app import create_app

    app = create_app(str(tmp_path / "c.db"), admin_token="t" * 20)
    try:
        config = getattr(app, "_telemetry", None)
        if config is None:
            assert not hasattr(FastAPI(), "_telemetry")  # a FastAPI without native telemetry
        else:
            assert (config["tracing"], config["metrics"], config["logs"]) == (False, False, False)
    finally:
        app.state.jobs.close()
        app.state.storage.close()
