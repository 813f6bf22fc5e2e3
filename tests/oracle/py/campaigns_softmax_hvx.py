"""QuantizedSoftmax_8_d32 (and its ``_ref``) on nnlib's Hexagon build: the d32ops26 random
cases, then edge cases (cases 300 onwards).

    PYTHONPATH=. python campaigns_softmax_hvx.py run QuantizedSoftmax_8_d32 -n 348
    PYTHONPATH=. python campaigns_softmax_hvx.py export QuantizedSoftmax_8_d32 348 OUT.json.gz

Same commands and options as campaigns_hvx.py (this module registers its generator there
and hands over to its ``main``). The edge cases, each once on the HVX function (no
depth-before padding) and once on the plain C one (depth-before padding; the ``_ref`` op
always runs the C): beta 0, negative betas (a small one, -1, and one whose betamul
saturates), reversed ranges, a single-element depth, depths around multiples of 32 and a
1001-class vector, equal codes (the largest sums), one hot code, ranges that miss zero,
an infinite range and a beta just under nnlib's limit.
"""
from __future__ import annotations

import campaigns
import campaigns_hvx
import numpy as np
from campaigns import F, d32_capacity
from campaigns_d32ops26 import _softmax_d32_case
from common import T

RANDOM = 300

#: (name, shape, lo, hi, beta or None, codes: "rand" | "equal" | "hot" | "ramp")
_EDGES = [
    ("beta 0", (1, 2, 3, 40), -4.0, 6.0, 0.0, "rand"),
    ("beta -1e-3", (1, 1, 2, 33), -8.0, 8.0, -1e-3, "rand"),
    ("beta -1", (1, 2, 2, 20), -10.0, 10.0, -1.0, "rand"),
    ("beta -1 ramp", (1, 1, 1, 64), 0.0, 25.0, -1.0, "ramp"),
    ("beta -50 (betamul saturates)", (1, 1, 2, 8), -1.0, 1.0, -50.0, "rand"),
    ("reversed range", (1, 2, 1, 37), 3.0, -3.0, None, "rand"),
    ("reversed range, equal codes", (1, 1, 1, 300), 5.0, 1.0, 1.0, "equal"),
    ("depth 1", (2, 2, 3, 1), -5.0, 5.0, 1.0, "rand"),
    ("depth 1, beta -1", (1, 1, 2, 1), -5.0, 5.0, -1.0, "rand"),
    ("depth 31", (1, 1, 3, 31), -6.0, 6.0, 1.0, "rand"),
    ("depth 32", (1, 2, 2, 32), -6.0, 6.0, 1.0, "rand"),
    ("depth 33", (1, 1, 2, 33), -6.0, 6.0, 2.0, "rand"),
    ("depth 1001 (classifier)", (1, 1, 1, 1001), -12.0, 14.0, 1.0, "rand"),
    ("depth 1001, equal codes", (1, 1, 1, 1001), -12.0, 14.0, 1.0, "equal"),
    ("depth 2050, equal codes", (1, 1, 1, 2050), -1.0, 1.0, 1.0, "equal"),
    ("equal codes", (1, 2, 2, 40), -3.0, 3.0, 1.0, "equal"),
    ("one hot", (1, 1, 3, 50), -20.0, 20.0, 1.0, "hot"),
    ("range misses 0 (positive)", (1, 2, 2, 24), 2.0, 10.0, 1.0, "rand"),
    ("range misses 0 (negative)", (1, 2, 1, 45), -10.0, -2.0, 1.0, "rand"),
    ("range [0, 0]", (1, 1, 2, 10), 0.0, 0.0, 1.0, "rand"),
    ("infinite range", (1, 1, 1, 10), float("-inf"), 1.0, 1.0, "rand"),
    ("beta just under the limit", (1, 1, 2, 36), 0.0, 1.0, 22000.0, "rand"),
    ("beta over the limit", (1, 1, 2, 36), 0.0, 1.0, 23000.0, "rand"),
    ("ramp 0..255", (1, 1, 1, 256), -8.0, 8.0, 1.0, "ramp"),
]


def _codes(rng, shape, kind: str) -> np.ndarray:
    if kind == "equal":
        return np.full(shape, int(rng.integers(0, 256)), np.uint8)
    if kind == "hot":
        x = np.zeros(shape, np.uint8)
        x[..., int(rng.integers(0, shape[3]))] = 255
        return x
    if kind == "ramp":
        return np.broadcast_to(np.arange(shape[3]) % 256, shape).astype(np.uint8)
    return rng.integers(0, 256, shape, dtype=np.uint8)


def edge_case(rng, k: int) -> campaigns.Case:
    name, shape, lo, hi, beta, kind = _EDGES[(k // 2) % len(_EDGES)]
    b, h, w, d = shape
    db = 0 if k % 2 == 0 else int(rng.integers(1, 32))       # odd k: the C path
    wb = int(rng.integers(0, 8))
    pad = (int(rng.integers(0, 5)), int(rng.integers(0, 5)), wb, (-(wb + w)) % 4,
           db, -(db + d) % 32)
    x = T(shape, "u8", _codes(rng, shape, kind), d32=pad, d32_fill=int(rng.integers(0, 256)))
    ins = [x, F(lo), F(hi)] + ([F(beta)] if beta is not None else [])
    declared = (b, h, w + 8, d + 32)
    return campaigns.Case(ins, [("u8", d32_capacity(declared)), ("f32", 128), ("f32", 128)],
                          def_max=[declared, (1, 1, 1, 1), (1, 1, 1, 1)],
                          desc=f"edge: {name}, x{shape} [{lo:g},{hi:g}] beta {beta} "
                          f"d_before {db}")


def _gen(rng, i):
    return _softmax_d32_case(rng, i) if i < RANDOM else edge_case(rng, i - RANDOM)


campaigns.CAMPAIGNS["hvx:softmax_d32"] = campaigns.Campaign(_gen)
for _op in ("QuantizedSoftmax_8_d32", "QuantizedSoftmax_8_d32_ref"):
    campaigns_hvx.HVX_CAMPAIGNS[_op] = campaigns_hvx.HvxCampaign("hvx:softmax_d32",
                                                                 campaigns_hvx._D32)

if __name__ == "__main__":
    campaigns_hvx.main()
