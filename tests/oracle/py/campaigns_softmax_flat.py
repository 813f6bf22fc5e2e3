"""The flat QuantizedSoftmax_8 on nnlib's Hexagon build (``softmax_flat_execute``): the
x86 campaign's 300 random cases (campaigns_ops26a ``_softmax_case``), then edge cases
(cases 300 onwards) for each of its paths: depth 0 and 1, depth 2 (the lookup), depths
3..1407 (HVX), depth >= 1408 with 5632+ elements (the histogram table) and without, beta 0,
negative and too large, reversed ranges, beta * range exactly -1 on the large-depth path.

    PYTHONPATH=. python campaigns_softmax_flat.py run QuantizedSoftmax_8 -n 345
    PYTHONPATH=. python campaigns_softmax_flat.py export QuantizedSoftmax_8 345 OUT.json.gz

(same commands and options as campaigns_hvx.py, whose ``main`` this hands over to).
"""
from __future__ import annotations

import campaigns
import campaigns_hvx
import campaigns_ops26a
import numpy as np
from campaigns import F
from common import T

RANDOM = 300

#: (name, shape, lo, hi, beta or None, codes: "rand" | "equal" | "hot" | "ramp")
_EDGES = [
    ("depth 0", (1, 1, 2, 0), -4.0, 6.0, None, "rand"),
    ("depth 1", (2, 2, 3, 1), -5.0, 5.0, 1.0, "rand"),
    ("depth 1, beta too large", (1, 1, 2, 1), 0.0, 1.0, 1e6, "rand"),
    ("depth 2", (1, 3, 5, 2), -8.0, 8.0, None, "rand"),
    ("depth 2, equal codes", (1, 1, 4, 2), -8.0, 8.0, 1.0, "equal"),
    ("depth 2, beta -1", (1, 2, 3, 2), -6.0, 6.0, -1.0, "rand"),
    ("depth 2, beta 0", (1, 1, 3, 2), -6.0, 6.0, 0.0, "rand"),
    ("depth 2, beta too large for HVX", (1, 1, 5, 2), 0.0, 1.0, 1e6, "rand"),
    ("depth 2, 300 elements", (1, 1, 150, 2), -3.0, 9.0, 1.0, "rand"),
    ("depth 2, 640 elements", (2, 4, 40, 2), -20.0, 20.0, 1.0, "rand"),
    ("depth 2, reversed range", (1, 1, 6, 2), 4.0, -4.0, None, "rand"),
    ("depth 3", (1, 2, 3, 3), -6.0, 6.0, 1.0, "rand"),
    ("depth 3, one row", (1, 1, 1, 3), -6.0, 6.0, 2.0, "rand"),
    ("depth 4", (1, 3, 3, 4), -6.0, 6.0, 1.0, "rand"),
    ("depth 5, beta -1", (1, 1, 3, 5), -6.0, 6.0, -1.0, "rand"),
    ("depth 64", (1, 1, 3, 64), -10.0, 10.0, 1.0, "rand"),
    ("depth 129", (1, 1, 3, 129), -10.0, 10.0, 1.0, "rand"),
    ("beta 0", (1, 2, 2, 40), -4.0, 6.0, 0.0, "rand"),
    ("beta -1e-3", (1, 1, 2, 33), -8.0, 8.0, -1e-3, "rand"),
    ("beta -1 ramp", (1, 1, 1, 64), 0.0, 25.0, -1.0, "ramp"),
    ("beta too large", (1, 1, 2, 36), 0.0, 1.0, 23000.0, "rand"),
    ("beta just under the limit", (1, 1, 2, 36), 0.0, 1.0, 22000.0, "rand"),
    ("reversed range", (1, 2, 1, 37), 3.0, -3.0, None, "rand"),
    ("infinite range", (1, 1, 1, 10), float("-inf"), 1.0, 1.0, "rand"),
    ("equal codes", (1, 2, 2, 40), -3.0, 3.0, 1.0, "equal"),
    ("one hot", (1, 1, 3, 50), -20.0, 20.0, 1.0, "hot"),
    ("depth 1001 (classifier)", (1, 1, 1, 1001), -12.0, 14.0, 1.0, "rand"),
    ("depth 1407, 4 rows", (1, 1, 4, 1407), -12.0, 14.0, 1.0, "rand"),
    ("depth 1408, 1 row (HVX: under 5632 bytes)", (1, 1, 1, 1408), -12.0, 14.0, 1.0, "rand"),
    ("depth 1408, 4 rows (large depth)", (1, 1, 4, 1408), -12.0, 14.0, 1.0, "rand"),
    ("depth 1500, 4 rows, ramp", (1, 2, 2, 1500), -8.0, 8.0, 1.0, "ramp"),
    ("depth 2000, 3 rows, one hot", (1, 1, 3, 2000), -20.0, 20.0, 1.0, "hot"),
    ("depth 2000, 3 rows, equal codes", (1, 1, 3, 2000), -1.0, 1.0, 1.0, "equal"),
    ("depth 5632, 1 row", (1, 1, 1, 5632), -10.0, 10.0, 0.5, "rand"),
    ("large depth, beta 0", (1, 1, 4, 1600), -10.0, 10.0, 0.0, "rand"),
    ("large depth, beta -1", (1, 1, 4, 1600), -4.0, 6.0, -1.0, "rand"),
    ("large depth, beta * range = -1", (1, 1, 4, 1600), 0.0, 1.0, -1.0, "rand"),
    ("large depth, reversed range", (1, 1, 4, 1600), 6.0, -6.0, None, "rand"),
    ("large depth, beta 1e6", (1, 1, 4, 1600), 0.0, 1.0, 1e6, "rand"),
    ("large depth, small range", (1, 1, 4, 1600), -0.1, 0.1, 1.0, "rand"),
    ("depth 2, infinite range", (1, 1, 4, 2), float("-inf"), 1.0, 1.0, "rand"),
    ("depth 2, range [0, 0]", (1, 1, 4, 2), 0.0, 0.0, 1.0, "rand"),
    ("large depth, infinite range", (1, 1, 4, 1600), float("-inf"), 1.0, 1.0, "rand"),
    ("large depth, range [0, 0]", (1, 1, 4, 1600), 0.0, 0.0, 1.0, "rand"),
    ("large depth, beta -1e6", (1, 1, 4, 1600), 0.0, 1.0, -1e6, "rand"),
]


def _codes(rng, shape, kind: str) -> np.ndarray:
    if kind == "equal":
        return np.full(shape, int(rng.integers(0, 256)), np.uint8)
    if kind == "hot":
        x = rng.integers(0, 100, shape, dtype=np.uint8)
        x[..., int(rng.integers(0, shape[3]))] = 255
        return x
    if kind == "ramp":
        return np.broadcast_to(np.arange(shape[3]) % 256, shape).astype(np.uint8)
    return rng.integers(0, 256, shape, dtype=np.uint8)


def edge_case(rng, k: int) -> campaigns.Case:
    name, shape, lo, hi, beta, kind = _EDGES[k % len(_EDGES)]
    x = _codes(rng, shape, kind)
    ins = [T.of(x, "u8"), F(lo), F(hi)] + ([F(beta)] if beta is not None else [])
    return campaigns.Case(ins, [("u8", int(np.prod(shape)) + 128), ("f32", 4), ("f32", 4)],
                          desc=f"edge: {name}, x{shape} [{lo:g},{hi:g}] beta {beta}")


def _gen(rng, i):
    return campaigns_ops26a._softmax_case(rng, i) if i < RANDOM else edge_case(rng, i - RANDOM)


campaigns.CAMPAIGNS["hvx:softmax_flat"] = campaigns.Campaign(_gen)
campaigns_hvx.HVX_CAMPAIGNS["QuantizedSoftmax_8"] = campaigns_hvx.HvxCampaign("hvx:softmax_flat",
                                                                             {})

if __name__ == "__main__":
    campaigns_hvx.main()
