"""Test-wide settings: property tests draw the same examples on every run (CI must not flake on a new draw).

Set HYPOTHESIS_PROFILE=explore to draw fresh examples locally.
"""

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _mpmath_precision_restored():
    """mpmath's working precision is global: whatever a test sets, the next test starts from the default again
    (tests use ``mpmath.workdps``; this catches one that forgets)."""
    try:
        import mpmath
    except ImportError:  # pragma: no cover - the test extra installs it
        yield
        return
    prec = mpmath.mp.prec
    try:
        yield
    finally:
        mpmath.mp.prec = prec


@pytest.fixture(autouse=True)
def _composed_rows_forgotten():
    """The k-report bound keeps its recent per-type rows (``sufficientdp.ratio.proven._ROWS``, pure functions of
    their keys): every test starts with none, so a test that counts the curves computed sees only its own. (Only if
    the module is loaded already: tests of lazy imports must not see it imported here.)"""
    import sys

    proven = sys.modules.get("sufficientdp.ratio.proven")
    if proven is not None:
        proven._ROWS.clear()
    yield


def pytest_collection_modifyitems(config, items):  # noqa: ARG001 - pytest hook signature
    """Markers by location, so a contributor can run the fast suite (``make test-fast``): ``spark`` for tests that
    start a Spark session, ``service`` for the HTTP collector, its client and the collector demo."""
    import pytest

    for item in items:
        path = str(item.path)
        if "spark" in os.path.basename(path):
            item.add_marker(pytest.mark.spark)
        if f"{os.sep}service{os.sep}" in path or f"{os.sep}client{os.sep}" in path or "demo_collector" in path:
            item.add_marker(pytest.mark.service)
