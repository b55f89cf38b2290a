"""The pbdp curve of a Gaussian mechanism with almost no signal (mu = sensitivity / sigma down to 1e-300; interpret
--rho 1e-300): the search for the left end of the crossing doubled its start until 2.0**i overflowed (OverflowError,
exit 1) because log Phi(mu + z) - log Phi(z) loses every digit there. Now at most 60 doublings; beyond them delta is
bounded by Phi(mu + 2**59 start), which is 0 in double precision."""

import warnings

import mpmath
import pytest

from sufficientdp.accounting.mechanisms import GaussianPLD, gaussian
from sufficientdp.accounting.pbdp import pbdp_delta
from sufficientdp.cli.main import main


@pytest.mark.parametrize("pld", [GaussianPLD.from_rho(1e-300), GaussianPLD.from_rho(5e-324), GaussianPLD(mu=1e-300)])
def test_almost_no_signal_gives_delta_zero(pld):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = pbdp_delta(pld, [0.5, 1.0, 3.0])
    # the crossing z* solves log Phi(mu + z) - log Phi(z) = eps, z* ~ -eps / mu: Phi there is far below 1e-300
    assert all(0.0 <= x <= 1e-300 for x in d)


def test_a_resolvable_signal_keeps_its_exact_value():
    # mu = 1, eps = 1: delta = Phi(1 + z*) with Phi(1 + z*) = e Phi(z*), solved at 40 digits
    with mpmath.workdps(40):
        zs = mpmath.findroot(lambda z: mpmath.ncdf(1 + z) - mpmath.e * mpmath.ncdf(z), -1.0)
        want = float(mpmath.ncdf(1 + zs))
    assert float(pbdp_delta(gaussian(1.0), 1.0)) == pytest.approx(want, rel=1e-9)


def test_interpret_rho_tiny_is_not_an_internal_error(capsys):
    assert main(["interpret", "--rho", "1e-300", "--json"]) == 0
    assert "internal error" not in capsys.readouterr().err
