"""``_numerics.blas.one_blas_thread``: same numbers on one OpenBLAS thread, and the thread count is restored."""

import numpy as np
import pytest

from sufficientdp._numerics import blas


def test_one_thread_products_are_bit_identical() -> None:
    rng = np.random.default_rng(7)
    a, w = rng.standard_normal((16384, 31)), rng.standard_normal((31, 18))  # a contour block's shape
    ref = a @ w
    with blas.one_blas_thread():
        inside = a @ w
    assert np.array_equal(inside, ref)
    assert np.array_equal(a @ w, ref)


def test_restores_the_previous_count_even_on_error() -> None:
    with blas.one_blas_thread():
        pass
    setter = blas._setter
    if not callable(setter):
        pytest.skip("numpy's BLAS is not a bundled OpenBLAS with openblas_set_num_threads_local")
    before = setter(3)  # (sets 3, returns the count left by the context above)
    setter(before)
    with pytest.raises(RuntimeError), blas.one_blas_thread():
        assert setter(1) == 1  # inside: one thread
        raise RuntimeError("boom")
    assert setter(before) == before  # restored on the way out
