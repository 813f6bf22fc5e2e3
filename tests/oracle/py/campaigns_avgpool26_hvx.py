"""QuantizedAvgPool_8_d32 on nnlib's Hexagon build (HVX, under qemu-hexagon): the cases of
campaigns_avgpool26.py that Hexscope simulates, half of them with windows reaching past the
input (global pools: the reduce-to-1x1 handler; the others: the HVX integral path, with its
edge padding; one in four through the 3x3 stride-1 assembly handler), and ``QuantizedAvgPool_8_d32_ref`` on the
same build.

    PYTHONPATH=. python campaigns_avgpool26_hvx.py run QuantizedAvgPool_8_d32 -n 300
    PYTHONPATH=. python campaigns_avgpool26_hvx.py export QuantizedAvgPool_8_d32 300 OUT.json.gz

Same commands and options as campaigns_hvx.py (this module registers its generator there and
hands over to its ``main``).
"""
from __future__ import annotations

import campaigns
import campaigns_hvx
import numpy as np
from campaigns import Case
from campaigns_avgpool26 import _case

from hexscope.engine.nodes import Padding
from hexscope.engine.ops.pooling.avgpool_d32 import axis_plan, not_simulated


def _simulated(case) -> bool:
    x, win, stride = case.inputs[0], case.inputs[3], case.inputs[4]
    p = Padding.parse(case.padding)
    try:
        hp = axis_plan(x.shape[1], win.shape[1], stride.shape[1], p)
        wp = axis_plan(x.shape[2], win.shape[2], stride.shape[2], p)
    except Exception:       # noqa: BLE001 (an error case: both sides should fail)
        return True
    return not_simulated(hp, wp) is None


def _three(rng, i):
    """A 3x3 stride-1 pool (the assembly handler), SAME 3 times in 4; the input padded as
    Convert_to_d32 does 1 time in 2 (else at random: too little padding to zap falls back
    to the integral path)."""
    from campaigns import F, T, d32_capacity, rand_d32_pad
    b = 1 + (i % 7 == 3)
    h, w, d = int(rng.integers(2, 10)), int(rng.integers(2, 10)), [1, 5, 32, 33, 70][i % 5]
    shape = (b, h, w, d)
    pad = (4, 4, 4, (-w) % 4 + 4, 0, (-d) % 32) if i % 2 else rand_d32_pad(rng, shape)
    data = rng.integers(0, 256, shape).astype(np.uint8) if i % 3 else \
        rng.integers(240, 256, shape).astype(np.uint8)
    x = T(shape, "u8", data, d32=pad, d32_fill=int(rng.integers(0, 256)))
    mode = "VALID" if i % 4 == 0 else "SAME"
    out = (b, h, w, d) if mode == "SAME" else (b, h - 2, w - 2, d)
    if min(out) < 1:
        return None
    dm = [out, (1, 1, 1, 1), (1, 1, 1, 1)]
    lo, hi = sorted(float(np.float32(v)) for v in rng.uniform(-5, 5, 2))
    return Case([x, F(lo), F(hi), T.shape_only((1, 3, 3, 1)), T.shape_only((1, 1, 1, 1))],
                [("u8", d32_capacity(out)), ("f32", 128), ("f32", 128)], mode, def_max=dm,
                desc=f"x{shape} pad {pad} win 3x3 s 1x1 {mode} [{lo:.6g},{hi:.6g}]")


def _gen(rng, i):
    if i % 4 == 2:
        return _three(rng, i)
    for _ in range(50):
        case = _case(rng, i, edge=i % 2 == 1)
        if _simulated(case):
            return case
    return None


campaigns.CAMPAIGNS["hvx:avgpool_d32"] = campaigns.Campaign(_gen)
for _op in ("QuantizedAvgPool_8_d32", "QuantizedAvgPool_8_d32_ref"):
    campaigns_hvx.HVX_CAMPAIGNS[_op] = campaigns_hvx.HvxCampaign(
        "hvx:avgpool_d32", {"compare_padding": True})

if __name__ == "__main__":
    campaigns_hvx.main()
