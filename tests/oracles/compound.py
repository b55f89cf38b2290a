"""The law of a compound sum by direct convolution of its atoms (exact up to float addition), for small n.

``S = W_1 + ... + W_n`` with ``W`` = 0 with probability ``1 - gamma`` and ``v_c`` with probability ``gamma pi_c``:
the oracle for :mod:`sufficientdp._numerics.lattice` and :mod:`sufficientdp._numerics.positive_part`.
"""

from __future__ import annotations

from collections.abc import Iterable


def compound_law(values: Iterable[float], probs: Iterable[float], gamma: float, n: int) -> dict[float, float]:
    """``{s: P[S = s]}`` by n convolutions of one person's law as a dictionary (sums rounded to 12 decimals)."""
    dist = {0.0: 1.0}
    atoms = [(0.0, 1.0 - gamma)] + [(float(v), gamma * float(p)) for v, p in zip(values, probs, strict=True)]
    for _ in range(n):
        nxt: dict[float, float] = {}
        for s, ps in dist.items():
            for a, pa in atoms:
                key = round(s + a, 12)
                nxt[key] = nxt.get(key, 0.0) + ps * pa
        dist = nxt
    return dist
