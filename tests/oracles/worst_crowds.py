"""Test oracle: the all-pairs contour scan of ``ratio.single_bit`` as it was before the issue-10 speed-up (8b9f431).

Verbatim copy of ``_contour_block``, ``_resolve_block`` and ``_remove_pairs`` with their helpers and constants (only
the imports and the BLAS thread count differ). The fast code must reproduce its ``_Pairs`` bit for bit
(``tests/ratio/test_worst_crowds_oracle.py``).
"""
# ruff: noqa: E501

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sufficientdp.ratio.single_bit import _tail_direction

_NEG_INF = -math.inf
# ---------------------------------------------------------------------------------------------------------------

_U = 2.0**-53
#: Half-width of the window of s searched for the cutoff around the tilted mode (Darroch: within 1 of the mean).
_WIN = 2
#: A common tilt is pushed at least this many tilted standard deviations below 1 (keeps 1/(1 - z) tame).
_KAPPA = 3.0
#: Aliasing and dropped-node terms are aimed below ``e**_LOG_TARGET`` of the value (then bounded, not assumed).
_LOG_TARGET = -50.0
#: Per-pair relative bracket half-width above which a pair is recomputed with twice the nodes; a recomputed pair
#: is accepted up to _ACCEPT_REL (its width is then rounding in a delta that is a small difference, which more
#: nodes do not change), else it goes to the slow exact path.
_MAX_REL = 1e-6
_ACCEPT_REL = 1e-3
#: Relative allowance given to a pair computed by the slow exact path (``_tail_direction``) in a worst-case scan.
_SLOW_REL = 1e-7
_ROWS = 16_384
_CELLS = 1 << 21


@dataclass(frozen=True, slots=True)
class _Pairs:
    """Remove-direction values of the pairs ``(A_n(m), A_n(m+1))`` for an array of m (all logs; -inf for 0)."""

    m: NDArray[np.int64]
    cutoff: NDArray[np.int64]
    log_eta: NDArray[np.float64]
    log_eta_lo: NDArray[np.float64]
    log_eta_hi: NDArray[np.float64]
    log_delta: NDArray[np.float64]
    log_delta_lo: NDArray[np.float64]
    log_delta_hi: NDArray[np.float64]
    rel: float  # largest relative half-width of a pair's bracket (contour pairs)
    slow: int  # pairs computed by the slow exact path
    undecided: int  # pairs whose cutoff rounding cannot decide (eta bracketed across it)
    nodes: tuple[int, int]  # (min, max) number of contour nodes used per pair


def _log_bernstein(a: NDArray[np.float64], var: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log`` of Bernstein's bound ``P[S - ES >= a] <= exp(-a**2 / (2 (var + a/3)))`` (summands in [0, 1]); 0 if a <= 0."""
    a = np.maximum(a, 0.0)
    return -(a * a) / (2.0 * (var + a / 3.0))


def _tilted(p: float, q: float, r: float, mf: NDArray[np.float64], n1: int
            ) -> tuple[float, float, float, float, NDArray[np.float64], NDArray[np.float64]]:
    """The law of ``A' = Bin(m, p) + Bin(n1 - m, q)`` tilted by ``r**s``: ``Bin(m, pr) + Bin(n1 - m, qr)``."""
    pr = p * r / (q + p * r)
    qr = q * r / (p + q * r)
    v1 = pr * (q / (q + p * r))  # pr (1 - pr)
    v2 = qr * (p / (p + q * r))
    return pr, qr, v1, v2, mf * pr + (n1 - mf) * qr, mf * v1 + (n1 - mf) * v2


def _log_exact(x: Fraction) -> float:
    """``log x`` for a positive rational, to a few ulps relative (``log1p`` of the exactly formed ``x - 1``)."""
    y = float(x - 1)
    return math.log1p(y) + float((x - 1 - Fraction(y)) / x)


def _block_constants(q: float, lam: float, r: float) -> dict[str, float]:
    """Block scalars from the exact ``p = 1 - q`` (not ``fl(1 - q)``, whose error times n would reach ~1e-10).

    Each is correctly rounded (rationals) or within a few ulps (logs) of its value for the given floats q,
    ``lam = fl(e**epsilon)`` (taken as exact: epsilon is read as ``log(lam)``) and r.
    """
    qf, lf, rf = Fraction(q), Fraction(lam), Fraction(r)
    pf = 1 - qf
    a, b = qf + pf * rf, pf + qf * rf
    c1, c2 = pf - lf * qf, lf * pf - qf
    return {"pr": float(pf * rf / a), "qr": float(qf * rf / b), "v1": float(pf * rf * qf / (a * a)),
            "v2": float(qf * rf * pf / (b * b)), "l1": _log_exact(a), "l2": _log_exact(b), "c1": float(c1),
            "c2": float(c2), "d0": float(c1 - c2 * rf)}


def _contour_block(n: int, q: float, epsilon: float, ms: NDArray[np.int64], b0: NDArray[np.int64] | None,
                   kmult: float) -> dict[str, Any]:
    """Remove-direction eta and delta of the pairs at ``ms`` by one tilted trapezoid rule (see worst_over_crowds)."""
    n1 = n - 1
    p = 1.0 - q
    lam = math.exp(epsilon)
    mf = ms.astype(np.float64)
    qf, lf = Fraction(q), Fraction(lam)
    r0 = max(float(((1 - qf) - lf * qf) / (lf * (1 - qf) - qf)), 1e-300)  # c1 / c2, exactly formed
    _, _, _, _, mu0, s20 = _tilted(p, q, r0, mf, n1)
    base = np.clip(np.floor(mu0).astype(np.int64), 0, n1) if b0 is None else b0
    smin = math.sqrt(float(s20.min()))
    # one tilt for the block: the cutoff's (1/r* = c1/c2, exactly formed: near log(p/q) a rounded c1 would put
    # the tilt far off), pushed at least 3 sd below 1 (keeps 1/(1 - z) tame)
    r = min(r0, math.exp(-_KAPPA / max(smin, 3.0 * _KAPPA)))
    k_ = _block_constants(q, lam, r)
    pr, qr, v1, v2, l1, l2, c1, c2 = (k_[x] for x in ("pr", "qr", "v1", "v2", "l1", "l2", "c1", "c2"))
    mu, s2 = mf * pr + (n1 - mf) * qr, mf * v1 + (n1 - mf) * v2
    lr = math.log(r)
    bf = base.astype(np.float64)
    log_c = mf * l1 + (n1 - mf) * l2 - bf * lr  # e**log_c = phi(r) r**-base: the unit of every column below
    err_c = 8.0 * _U * (mf * abs(l1) + (n1 - mf) * abs(l2) + bf * abs(lr) + 1.0)
    jp = np.arange(-_WIN - 1, _WIN + 2)  # pmf of A' at base + jp
    jf = np.arange(-_WIN - 1, _WIN + 1)  # cdf of A'
    jd = np.arange(-_WIN, _WIN + 1)  # sum_{s <= b} (P(s) - e**eps Q(s))
    # --- node count (heuristic sizes; every term they control is bounded below and added to the bracket)
    s2min, s2max = float(s2.min()), float(s2.max())
    dmax = float(np.max(np.abs(bf - mu))) + _WIN + 1.0
    log_pi = -0.5 * math.log(2.0 * math.pi * (s2min + 1.0)) - dmax * dmax / (2.0 * (s2min + 1.0)) - 5.0
    t = -_LOG_TARGET - log_pi + math.log(s2max + 2.0)
    k_pmf = dmax + t / 3.0 + math.sqrt(t * t / 9.0 + 2.0 * t * s2max) + 1.0
    log_f = min(0.0, float(log_c.min()) + log_pi + (_WIN + 1) * lr)
    k_cdf = min((t - log_f) / -lr + 1.0, max(2.0 * (t + 1.0) / -lr + 2.0, 2.0 * k_pmf))
    big_k = int(math.ceil(kmult * max(k_pmf, k_cdf, 4.0 * _WIN + 8.0)))
    log_wmax = max(-(_WIN + 1) * lr, math.log(c1 + c2 * r) - _WIN * lr - math.log1p(-r), -_WIN * lr - math.log1p(-r))
    need = t + log_wmax
    half = big_k // 2
    if s2min > need / 2.0:
        kw = min(half, int(math.floor(math.acos(1.0 - need / s2min) * big_k / (2.0 * math.pi))) + 1)
    else:
        kw = half
    k = np.arange(kw + 1)
    th = 2.0 * math.pi * k / big_k
    mult = np.where(k == 0, 1.0, 2.0)  # conjugate symmetry: node k stands for k and K - k
    if big_k % 2 == 0 and kw == half:
        mult[-1] = 1.0
    sh = np.sin(0.5 * th) ** 2
    st = np.sin(th)
    ra = 0.5 * np.log1p(-4.0 * v1 * sh)  # log|1 + pr (e**i th - 1)|
    rb = 0.5 * np.log1p(-4.0 * v2 * sh)
    ia = np.arctan2(pr * st, 1.0 - 2.0 * pr * sh) - pr * th  # arg(1 + pr (e**i th - 1)) - pr th
    ib = np.arctan2(qr * st, 1.0 - 2.0 * qr * sh) - qr * th
    z = r * np.exp(1j * th)
    wz = 1.0 / (1.0 - z)
    one_minus = 2.0 * sh - 1j * st  # 1 - e**(i th), without cancellation
    dz = k_["d0"] + c2 * r * one_minus  # c1 - c2 z with the exactly formed c1 - c2 r: no cancellation near th = 0
    w = np.concatenate([
        (r ** -jp.astype(np.float64))[None, :] * np.exp(-1j * np.outer(th, jp)),
        (r ** -jf.astype(np.float64))[None, :] * np.exp(-1j * np.outer(th, jf)) * wz[:, None],
        (r ** -jd.astype(np.float64))[None, :] * np.exp(-1j * np.outer(th, jd)) * (dz * wz)[:, None],
    ], axis=1) * (mult / big_k)[:, None]
    wr, wi, wa = np.ascontiguousarray(w.real), np.ascontiguousarray(-w.imag), np.abs(w)
    # the delta weights' own rounding is relative to |d0| + c2 r |1 - e**(i th)| (>= |c1 - c2 z|)
    wa[:, -jd.size:] *= ((abs(k_["d0"]) + c2 * r * np.abs(one_minus)) / np.maximum(np.abs(dz), 1e-300))[:, None]
    amax = float(np.max(np.abs(ra) + np.abs(ia) + pr * th))
    bmax = float(np.max(np.abs(rb) + np.abs(ib) + qr * th))
    val = np.empty((ms.size, w.shape[1]))
    err = np.empty_like(val)
    rows = max(1, _CELLS // (kw + 1))
    off = bf - mu
    for c in range(0, ms.size, rows):
        sl = slice(c, c + rows)
        re_l = np.multiply.outer(mf[sl], ra) + np.multiply.outer(n1 - mf[sl], rb)
        im_l = np.multiply.outer(mf[sl], ia) + np.multiply.outer(n1 - mf[sl], ib) - np.multiply.outer(off[sl], th)
        amp = np.exp(re_l)
        val[sl] = (amp * np.cos(im_l)) @ wr + (amp * np.sin(im_l)) @ wi
        # rounding: |error of L| <= delta_m (absolute), exp/cos/sin and the weights a few ulps, the dot products
        # gamma_{2(kw+1)}; all relative to sum_k |E_k| |w_k|
        # (the tilted mean enters the phase through off = base - mean, rounded to 2 u mean)
        d_m = 8.0 * _U * (mf[sl] * amax + (n1 - mf[sl]) * bmax + (np.abs(off[sl]) + 2.0 * mu[sl] + 1.0) * th[-1]
                          + 4.0)
        err[sl] = (amp @ wa) * (d_m + (4.0 * (kw + 1) + 32.0) * _U)[:, None] * (1.0 + 1e-6)
    ncols = (jp.size, jf.size, jd.size)
    wmax = np.concatenate([r ** -jp.astype(np.float64), r ** -jf.astype(np.float64) / (1.0 - r),
                           (c1 + c2 * r) * r ** -jd.astype(np.float64) / (1.0 - r)])
    if kw < half:  # dropped nodes: |phi(r e**i th)| / phi(r) <= exp(-(1 - cos th) s2), decreasing in |th|
        th_out = 2.0 * math.pi * (kw + 1) / big_k
        err += np.exp(-(1.0 - math.cos(th_out)) * s2)[:, None] * wmax[None, :]
    a, f, dd = np.split(val, np.cumsum(ncols)[:2], axis=1)
    ea, ef, ed = np.split(err, np.cumsum(ncols)[:2], axis=1)
    # aliasing, in units of e**log_c (see worst_over_crowds)
    sp = base[:, None] + jp[None, :]
    up = np.where(sp + big_k > n1, -np.inf, _log_bernstein(sp + big_k - mu[:, None], s2[:, None]))
    lo = np.where(sp - big_k < 0, -np.inf, _log_bernstein(mu[:, None] - (sp - big_k), s2[:, None]))
    ea = ea + np.exp(np.logaddexp(up, lo) - jp[None, :] * lr)
    sf = base[:, None] + jf[None, :]
    sd = base[:, None] + jd[None, :]

    def geo(b: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray[np.float64]:
        """``sum_{J >= 1} r**(J K) F(b + J K)``: the smaller of ``r**K / (1 - r**K)`` and, splitting the sum at
        ``s = b + J K / 2``, ``phi(r) r**-b (r**(K/2) / (1 - r**(K/2)) + (2 n / K + 1) P_r[S > b + K/2])``."""
        with np.errstate(over="ignore"):
            whole = np.exp(big_k * lr - math.log1p(-(r**big_k)) - log_c)[:, None]
        tail = np.where(b + big_k / 2.0 > n1, -np.inf, _log_bernstein(b + big_k / 2.0 - mu[:, None], s2[:, None]))
        split = np.exp(-j * lr) * (math.exp(0.5 * big_k * lr) / -math.expm1(0.5 * big_k * lr)
                                   + (2.0 * n1 / big_k + 1.0) * np.exp(tail))
        return np.minimum(whole, split)

    lof = np.where(sf - big_k < 0, -np.inf, _log_bernstein(mu[:, None] - (sf - big_k), s2[:, None]))
    ef = ef + geo(sf, jf[None, :]) + np.exp(lof - jf[None, :] * lr) * (np.maximum(sf, 0) / big_k + 1.0)
    lod = np.where(sd - big_k < 0, -np.inf, _log_bernstein(mu[:, None] - (sd - big_k), s2[:, None]))
    ed = ed + max(c1, c2) * geo(sd, jd[None, :]) + (c1 + c2) * np.exp(lod - jd[None, :] * lr) * (
        np.maximum(sd, 0) / big_k + 1.0)
    # outside the support 0..n-1 of A' the values are known exactly
    out_p = (sp < 0) | (sp > n1)
    a, ea = np.where(out_p, 0.0, a), np.where(out_p, 0.0, ea)
    with np.errstate(over="ignore"):
        one = np.exp(-log_c)[:, None]
    f = np.where(sf < 0, 0.0, np.where(sf >= n1, one, f))
    ef = np.where((sf < 0) | (sf >= n1), 0.0, ef) + 4.0 * _U * np.abs(f)  # + eta's float p, q multipliers
    # delta also as c1 F(b) - c2 F(b-1): better where the tilt is far from 1/r* (then c1 - c2 z cancels)
    d_alt = c1 * f[:, 1:] - c2 * f[:, :-1]
    ed_alt = c1 * ef[:, 1:] + c2 * ef[:, :-1] + 4.0 * _U * (c1 * np.abs(f[:, 1:]) + c2 * np.abs(f[:, :-1]))
    use_alt = ed_alt < ed
    dd, ed = np.where(use_alt, d_alt, dd), np.where(use_alt, ed_alt, ed)
    return {"base": base, "log_c": log_c, "err_c": err_c, "a": a, "ea": ea, "f": f, "ef": ef, "d": dd, "ed": ed,
            "c1": c1, "c2": c2, "p": p, "q": q, "lam": lam, "nodes": kw + 1}


def _resolve_block(n: int, blk: dict[str, Any]) -> dict[str, Any]:
    """Cutoff (last risky s) from the pmf window; eta and delta with their brackets; window misses flagged."""
    a, ea, c1, c2, p = blk["a"], blk["ea"], blk["c1"], blk["c2"], blk["p"]
    q = blk["q"]
    base = blk["base"]
    js = np.arange(-_WIN, _WIN + 2)  # s = base + js; g(s) = c1 A'(s) - c2 A'(s-1) > 0 iff s is risky
    s = base[:, None] + js[None, :]
    # e**epsilon is known to 2 ulps (d_lam); g and delta move by d_lam times the Q-mass involved
    d_lam = 4.0 * _U * blk["lam"]
    g = c1 * a[:, 1:] - c2 * a[:, :-1]
    eg = c1 * ea[:, 1:] + c2 * ea[:, :-1] + d_lam * (q * np.abs(a[:, 1:]) + p * np.abs(a[:, :-1]))
    low, high = s <= 0, s >= n  # s = 0 is always risky (pi = p/q); s = n never (A'(n) = 0)
    sure = (g > eg) | low
    sure_not = ((g < -eg) | high) & ~low
    pos = ((g > 0.0) | low) & ~high
    rows = np.arange(base.size)
    width = js.size
    # the risky set is {s <= b}: a surely risky s gives b >= s, a surely safe one b < s, whatever lies beyond
    # (far from the tilted mode the window's values may be too inaccurate to decide, which is fine)
    has_sure, has_not = sure.any(axis=1), sure_not.any(axis=1)
    ib_lo = width - 1 - np.argmax(sure[:, ::-1], axis=1)
    ib_hi = np.argmax(sure_not, axis=1) - 1
    # -1: cutoff below the window, +1: above, 2: contradictory (not expected; recomputed, then the slow path)
    status = np.where(~has_sure, -1, np.where(~has_not, 1, np.where(ib_lo > ib_hi, 2, 0)))
    ok = status == 0
    ib_lo = np.clip(np.where(ok, ib_lo, 0), 0, width - 2)
    ib_hi = np.clip(np.where(ok, ib_hi, 0), 0, width - 2)
    cols = np.arange(width)[None, :]
    in_range = (cols >= ib_lo[:, None]) & (cols <= ib_hi[:, None])
    cand = pos & in_range  # computed cutoff: the last computed-positive s in the undecided range
    ib = np.where(cand.any(axis=1), width - 1 - np.argmax(cand[:, ::-1], axis=1), ib_lo)
    f, ef, d, ed = blk["f"], blk["ef"], blk["d"], blk["ed"]
    fo, do = -js[0] + 1, -js[0]  # column of offset j: j + fo in f (offsets -W-1..W), j + do in d (-W..W)
    # delta at cutoff b is decreasing in e**eps with slope -Q(s <= b) = -(q F(b) + p F(b-1)): an input
    # uncertainty, not a numerical one, so it widens the bracket but does not trigger a recomputation
    ed_lam = d_lam * (q * np.abs(f[:, 1:]) + p * np.abs(f[:, :-1]))

    def eta(i: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        j = js[i]
        return (p * f[rows, j + fo] + q * f[rows, j - 1 + fo], p * ef[rows, j + fo] + q * ef[rows, j - 1 + fo])

    e_val, _ = eta(ib)
    e_lo, e_lo_err = eta(ib_lo)
    e_hi, e_hi_err = eta(ib_hi)
    d_val = d[rows, js[ib] + do]
    rel_d = ed[rows, js[ib] + do] / d_val
    ed = ed + ed_lam
    jd = np.arange(d.shape[1])
    inside = (jd[None, :] >= js[ib_lo][:, None] + do) & (jd[None, :] <= js[ib_hi][:, None] + do)
    # delta = max_b sum_{s <= b} (P(s) - lam Q(s)) (the hockey stick is a sup over sets): every candidate cutoff's
    # lower end is a lower bound, so an undecided cutoff does not widen delta's bracket
    d_lo = np.max(np.where(inside, d - ed, -np.inf), axis=1)
    d_hi = np.max(np.where(inside, d + ed, -np.inf), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # relative half-width at a fixed cutoff (an undecided cutoff widens eta's bracket by a pmf jump, honestly)
        rel = np.maximum(np.maximum(e_lo_err / e_lo, e_hi_err / e_hi), rel_d)
    e_lo, e_hi = e_lo - e_lo_err, e_hi + e_hi_err
    d_lo = np.maximum(d_lo, 0.0)  # (only the e**eps uncertainty can reach 0: the numerical part is checked by rel)
    good = ok & (e_val > 0) & (d_val > 0) & (e_lo > 0) & ~np.isnan(rel)
    lc, ec = blk["log_c"], blk["err_c"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {
            "status": status, "good": good, "cutoff": base + js[ib], "rel": np.where(good, rel, np.inf),
            "undecided": ib_lo < ib_hi,
            "log_eta": lc + np.log(e_val), "log_eta_lo": lc - ec + np.log(e_lo), "log_eta_hi": lc + ec + np.log(e_hi),
            "log_delta": lc + np.log(d_val), "log_delta_lo": lc - ec + np.log(d_lo),
            "log_delta_hi": lc + ec + np.log(d_hi),
        }
    return out


_PAIR_KEYS = ("cutoff", "log_eta", "log_eta_lo", "log_eta_hi", "log_delta", "log_delta_lo", "log_delta_hi")


def _remove_pairs(n: int, q: float, epsilon: float, ms: NDArray[np.int64],
                  progress: Callable[[int, int], None] | None = None) -> _Pairs:
    """Remove-direction (eta, delta) of every pair at ``ms`` (sorted, 0 <= m <= n-1), with per-pair brackets."""
    size = ms.size
    res: dict[str, NDArray[Any]] = {k: np.zeros(size, dtype=np.int64 if k == "cutoff" else np.float64)
                                    for k in _PAIR_KEYS}
    lam = Fraction(math.exp(epsilon))
    if not (1 - Fraction(q)) - lam * Fraction(q) > 0:  # lam >= p/q: every loss <= log(p/q) <= eps
        for k in _PAIR_KEYS[1:]:
            res[k][:] = _NEG_INF
        res["cutoff"][:] = -1
        # within the 2 ulps of e**eps of log(p/q) the true e**eps may still be below p/q: then eta <= 1 and
        # delta <= p - e**eps q (data processing from one person's RR) are all that is certain
        c1_low = (1 - Fraction(q)) - lam * (1 - Fraction(4 * _U)) * Fraction(q)
        if c1_low > 0:
            res["log_eta_hi"][:] = 0.0
            res["log_delta_hi"][:] = math.log(float(c1_low) * (1.0 + 4.0 * _U))
        if progress is not None:
            progress(size, size)
        return _Pairs(m=ms, rel=0.0, slow=0, undecided=0, nodes=(0, 0), **res)
    worst_rel, slow, undecided, nodes = 0.0, 0, 0, [math.inf, 0.0]
    for c in range(0, size, _ROWS):
        idx = np.arange(c, min(size, c + _ROWS))
        todo: NDArray[np.int64] = idx
        b0: NDArray[np.int64] | None = None
        kmult = 1.0
        for _ in range(6):
            blk = _contour_block(n, q, epsilon, ms[todo], b0, kmult)
            nodes = [min(nodes[0], blk["nodes"]), max(nodes[1], blk["nodes"])]
            out = _resolve_block(n, blk)
            done = out["good"] & (out["rel"] <= (_MAX_REL if kmult == 1.0 else _ACCEPT_REL))
            for k in _PAIR_KEYS:
                res[k][todo[done]] = out[k][done]
            if np.any(done):
                worst_rel = max(worst_rel, float(np.max(out["rel"][done])))
                undecided += int(np.sum(out["undecided"][done]))
            left = ~done
            shift = out["status"][left]
            # a missed window moves by its width; a pair whose bracket is too wide gets twice the nodes
            move = np.where(np.abs(shift) == 1, shift, 0)
            b0 = np.clip(blk["base"][left] + move * (2 * _WIN + 1), 0, n - 1)
            kmult = kmult if np.all(move != 0) else 2.0 * kmult
            todo = todo[left]
            if not todo.size:
                break
        for i in todo:  # the slow exact per-pair path (not expected in practice; counted in details)
            t = _tail_direction(n, int(ms[i]), q, epsilon, "remove")
            res["cutoff"][i] = t.boundary
            res["log_eta"][i], res["log_delta"][i] = t.log_eta, t.log_delta
            res["log_eta_lo"][i] = t.log_eta + math.log1p(-_SLOW_REL)
            res["log_eta_hi"][i] = t.log_eta + _SLOW_REL
            res["log_delta_lo"][i] = t.log_delta + math.log1p(-_SLOW_REL)
            res["log_delta_hi"][i] = t.log_delta + _SLOW_REL
            slow += 1
        if progress is not None:
            progress(int(idx[-1]) + 1, size)
    return _Pairs(m=ms, rel=worst_rel, slow=slow, undecided=undecided, nodes=(int(nodes[0]), int(nodes[1])),
                  **res)

