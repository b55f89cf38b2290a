"""The byte-matrix CSV reader (issue 10: the numpy engine from CSV at least as fast as plain DuckDB): files of one
character per cell are read as bytes and checked byte by byte, and every file reads exactly as before.

The independent truth is the careful standard-library reader (Python's csv module and ``int()``), and the readers
as they were before this one existed (pyarrow's, handing over to the careful one), which the tests reproduce by
switching the byte-matrix reader off."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import sufficientdp.engines as engines
import sufficientdp.io as sio
from sufficientdp import DataError
from sufficientdp.aggregation.tally import tally
from sufficientdp.engines import tally_file
from sufficientdp.io import iter_reports

pytest.importorskip("pyarrow")


def _write(path, data, *, header=None, crlf=False, final_newline=True):
    end = "\r\n" if crlf else "\n"
    bits = data.shape[1]
    head = header if header is not None else ",".join(f"b{j}" for j in range(bits))
    body = end.join(",".join(str(int(x)) for x in row) for row in data)
    path.write_bytes((head + end + body + (end if final_newline and len(data) else "")).encode("utf-8"))


def _read(path, batch_rows):
    """Every batch the CSV readers yield, as one array, and the names (or the DataError's message)."""
    try:
        batches = list(sio._csv_columns(path, str(path), batch_rows, None))
    except DataError as exc:
        return ("error", str(exc))
    arr = np.concatenate([np.stack(cols, axis=1) if cols else np.zeros((0, 0), np.uint8) for cols, _ in batches])
    return ("ok", arr.tolist(), batches[0][1])


def _read_as_before(path, batch_rows, monkeypatch):
    """The same read with the byte-matrix reader switched off (the readers as they were before it)."""
    with monkeypatch.context() as m:
        m.setattr(sio, "_csv_fixed_columns", lambda p, b, c=None: iter([None]))
        return _read(path, batch_rows)


@pytest.mark.parametrize("bits", [1, 2, 7, 16, 70])
@pytest.mark.parametrize("crlf", [False, True])
def test_fixed_layout_files_read_their_values_with_the_byte_matrix_reader(tmp_path, monkeypatch, bits, crlf):
    rng = np.random.default_rng(bits + 100 * crlf)
    for n in (1, 5, 1001):
        data = (rng.random((n, bits)) < rng.random(bits)).astype(np.uint8)
        path = tmp_path / f"r{n}.csv"
        _write(path, data, crlf=crlf)
        assert sio._csv_fixed_layout(path) is not None
        used = []
        real = sio._csv_fixed_columns

        def spy(p, batch_rows, max_cells=None, real=real, used=used):
            for item in real(p, batch_rows, max_cells):
                used.append(item is not None)
                yield item

        monkeypatch.setattr(sio, "_csv_fixed_columns", spy)
        for batch_rows in (1, 97, 1 << 18):
            used.clear()
            got = _read(path, batch_rows)
            assert got == ("ok", data.tolist(), [f"b{j}" for j in range(bits)])
            assert used and all(used)  # the byte-matrix reader read every row
        monkeypatch.setattr(sio, "_csv_fixed_columns", real)
        assert got == _read_as_before(path, 97, monkeypatch)
        t, names = tally_file(path)
        assert t.to_dict(include_vector_histogram=True) == tally(data).to_dict(include_vector_histogram=True)


@pytest.mark.parametrize("header", ['"x","y","z"', "\ufeffx, y ,z", "x,x,z", '"a,b",c,d'])
def test_header_names_are_the_ones_pyarrows_reader_gave(tmp_path, monkeypatch, header):
    data = np.array([[1, 0, 1], [0, 0, 1]], dtype=np.uint8)
    path = tmp_path / "h.csv"
    _write(path, data, header=header)
    assert sio._csv_fixed_layout(path) is not None
    assert _read(path, 10) == _read_as_before(path, 10, monkeypatch)


def test_without_pyarrow_the_names_are_the_careful_readers(tmp_path, monkeypatch):
    data = np.array([[1, 0], [0, 1]], dtype=np.uint8)
    path = tmp_path / "n.csv"
    _write(path, data, header=" p , q ")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.csv", None)
    layout = sio._csv_fixed_layout(path)
    assert layout is not None and layout[0] == ["p", "q"]
    assert _read(path, 10) == ("ok", data.tolist(), ["p", "q"])


@pytest.mark.parametrize("text, why", [
    ("a,b\n1,0\n0,1", "no final line end: the size is not a whole number of rows"),
    ("a,b\n1,0\n\n0,1\n", "an empty line"),
    ("a,b\n 1,0\n0,1\n", "a wider first row"),
    ("a,b\r\n1,0\n0,1\n", "header and rows end differently: decided by the first row, so this is fine"),
    ("a,b", "no line after the header"),
    ("a,b\n", "no rows"),
    ("a,b\n1,0,1\n", "three cells under two names"),
])
def test_layout_decisions(tmp_path, monkeypatch, text, why):
    path = tmp_path / "l.csv"
    path.write_bytes(text.encode())
    layout = sio._csv_fixed_layout(path)
    if why.endswith("this is fine"):
        assert layout == (["a", "b"], 5, 2, 4)
    else:
        assert layout is None, why
    assert _read(path, 1) == _read_as_before(path, 1, monkeypatch)


def test_every_byte_at_every_kind_of_position_reads_exactly_as_before(tmp_path, monkeypatch):
    """A valid file of the fixed layout with one byte replaced by each of the 256 values, at a cell, a comma and
    the line end of a middle row and at the last byte of the file (LF and CRLF files): the values or the error
    are those of the readers before the byte-matrix one (which hand over to the careful reader)."""
    rng = np.random.default_rng(5)
    data = (rng.random((40, 3)) < 0.5).astype(np.uint8)
    compared = 0
    for crlf in (False, True):
        path = tmp_path / "base.csv"
        _write(path, data, crlf=crlf)
        base = path.read_bytes()
        row = 6 + (1 if crlf else 0)  # bytes per row
        start = len(b"b0,b1,b2\r\n" if crlf else b"b0,b1,b2\n") + 20 * row
        positions = [start, start + 1, start + row - 1, len(base) - 1] + ([start + row - 2] if crlf else [])
        for pos in positions:
            for byte in range(256):
                mutated = bytearray(base)
                mutated[pos] = byte
                target = tmp_path / "m.csv"
                target.write_bytes(bytes(mutated))
                for batch_rows in (7, 1000):
                    assert _read(target, batch_rows) == _read_as_before(target, batch_rows, monkeypatch), (
                        crlf, pos, byte, batch_rows)
                    compared += 1
    assert compared == 2 * 2 * 256 * 4 + 2 * 256


def test_a_bad_byte_deep_in_the_file_names_its_line_after_the_rows_already_counted(tmp_path, monkeypatch,
                                                                                   careful_skips):
    rows = ["0,1,0"] * 30_000
    rows[23_456] = "1,7,0"
    path = tmp_path / "bad.csv"
    path.write_text("a,b,c\n" + "".join(r + "\n" for r in rows))
    skips = careful_skips
    monkeypatch.setattr(engines, "CHUNK_ROWS", 1000)
    with pytest.raises(DataError, match="line 23458"):  # header is line 1
        tally_file(path)
    assert skips == [23_000]  # the byte-matrix reader yielded 23 batches of 1000 rows, then handed over
    with pytest.raises(DataError, match="line 23458"):
        list(iter_reports(path, 1000))
