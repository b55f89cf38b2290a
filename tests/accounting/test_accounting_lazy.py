"""``sufficientdp.accounting`` loads its modules on first use (issue 10: the account command's start-up).

The package's public surface is what the eager package had: the same ``__all__`` and ``dir()``, every name the
object of its defining module, the submodules reachable as attributes; and the ``account`` command for shuffled RR
imports neither scipy.stats nor scipy.optimize (about 0.5 s of start-up that it does not need).
"""

import importlib
import subprocess
import sys

import pytest

import sufficientdp.accounting as accounting

# the submodules the eager package imported, hence its attributes
SUBMODULES = ["amplification", "conversions", "discrete_gaussian", "mechanisms", "memoization", "pbdp", "rounds",
              "sampling", "shuffled"]


def test_every_public_name_is_its_modules_object():
    assert accounting.__all__ == sorted(accounting.__all__)
    for name in accounting.__all__:
        value = getattr(accounting, name)
        home = importlib.import_module(accounting._LAZY[name], "sufficientdp.accounting")
        assert value is getattr(home, name), name
    for name in SUBMODULES:
        assert getattr(accounting, name) is importlib.import_module(f"sufficientdp.accounting.{name}")
    from sufficientdp.accounting import gaussian, shuffled_rr_pld  # noqa: F401  (the from-import form)


def test_dir_is_the_eager_packages():
    expected = set(accounting.__all__) | set(SUBMODULES) | {"__all__", "__doc__", "__name__", "__path__"}
    assert expected <= set(dir(accounting))
    assert not {"_LAZY", "_SUBMODULES", "_HELPERS", "TYPE_CHECKING", "Any", "annotations"} & set(dir(accounting))
    assert dir(accounting) == sorted(dir(accounting))


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        accounting.no_such_name  # noqa: B018
    assert not hasattr(accounting, "pld_typo")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "; import sys; print(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.strip().splitlines()[-1].split())


def test_account_shuffled_rr_imports_neither_scipy_stats_nor_optimize():
    mods = _modules_after("import sufficientdp.accounting")
    assert not {"scipy.stats", "scipy.optimize", "sufficientdp.accounting.conversions"} & mods
    mods = _modules_after(
        "from sufficientdp.cli.main import main; main(['account', '--mechanism', 'shuffled-rr', '--population', "
        "'40000', '--q', '0.25', '--epsilon', '0.05', '--json'])")
    assert "sufficientdp.accounting.shuffled" in mods
    assert not {"scipy.stats", "scipy.optimize", "scipy.special"} & mods  # (scipy.special: 0.2 s, not needed)
    # a mechanism that needs them still gets them (the lazy names resolve)
    mods = _modules_after("from sufficientdp.cli.main import main; main(['account', '--mechanism', 'gaussian', "
                          "'--sigma', '2', '--epsilon', '1', '--json'])")
    assert "sufficientdp.accounting.mechanisms" in mods


def test_account_interpret_and_estimate_start_without_scipy_stats_or_optimize(tmp_path):
    """``account --mechanism rr``, ``interpret`` and ``estimate`` need neither (0.3-0.5 s of their start-up each,
    issue 10): the binomial law and the root finders load when a mechanism computes with them; the normal quantile
    of the confidence intervals is ``scipy.special.ndtri``."""
    mods = _modules_after("from sufficientdp.cli.main import main; main(['account', '--mechanism', 'rr', '--q', "
                          "'0.25', '--epsilon', '1', '--json'])")
    assert "sufficientdp.accounting.mechanisms" in mods
    assert not {"scipy.stats", "scipy.optimize"} & mods
    mods = _modules_after("from sufficientdp.cli.main import main; main(['interpret', '--epsilon', '1', '--json'])")
    assert "sufficientdp.semantics" in mods
    assert not {"scipy.stats", "scipy.optimize"} & mods
    data = tmp_path / "reports.csv"
    data.write_text("a,b\n" + "0,1\n1,1\n1,0\n" * 20)
    mods = _modules_after(f"from sufficientdp.cli.main import main; main(['estimate', '--input', {str(data)!r}, "
                          "'--q', '0.2', '--reports', '1', '--json'])")
    assert "sufficientdp.estimation.bits" in mods
    assert not {"scipy.stats", "scipy.optimize"} & mods
    # the bit-vector RR loss distribution still loads the binomial law when it is computed
    mods = _modules_after("from sufficientdp.accounting.mechanisms import bit_vector_randomized_response as f; f(0.25, 4, 2)")
    assert "scipy.stats" in mods
