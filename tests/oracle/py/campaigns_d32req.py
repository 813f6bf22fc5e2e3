"""Requantize_8to8_d32 on nnlib's Hexagon build (op_requantize.c
``do_requantize_8to8_execute_d32`` with quantize.c ``nn_requantize_qu8_to_qu8_hvx_d32``, its
HVX intrinsics under qemu-hexagon): random cases, then edge cases (cases 300 onwards).

    PYTHONPATH=. python campaigns_d32req.py run Requantize_8to8_d32 -n 348
    PYTHONPATH=. python campaigns_d32req.py export Requantize_8to8_d32 348 OUT.json.gz

Same commands and options as campaigns_hvx.py (this module registers its generator there
and hands over to its ``main``). Every byte of the output memory is compared, padding
included: the harness fills output buffers with 0xA5, Hexscope's default padding fill.

Random cases (0-299): the flat Requantize_8to8 campaign's ranges (campaigns_fc.py: the
output range the input's, scaled by 0.5 .. 3, raw (mostly refused: not R1-exact), tiny
(gain >= 2^15) or another range, over the 16 kinds of ``rand_range``: ranges that cross or
miss zero, degenerate, reversed, huge), shapes up to 2x6x9x70, d32 padding random
(``rand_d32_pad``: 0-4 rows, 0-7 columns before, depth before padding half the time, one case
in ten an extra slice of padding only) and the padding bytes one random value; the output's
declared size has room for any padding, one case in seven is the bare shape a row short
("out too small!").
Edge cases (300 onwards): see ``_EDGES``.
"""
from __future__ import annotations

import campaigns
import campaigns_fc
import campaigns_hvx
import numpy as np
from campaigns import F, d32_capacity, rand_d32_pad
from common import T

RANDOM = 300
f32 = np.float32


def _exact(lo: float, hi: float) -> tuple[float, float]:
    from hexscope.engine.quant import adjust_range
    a, b = adjust_range(f32(lo), f32(hi))
    return float(f32(a)), float(f32(b))


def _case(shape, x, pad, fill, xl, xh, ol, oh, declared, desc):
    ins = [T(shape, "u8", x, d32=pad, d32_fill=fill), F(xl), F(xh), F(ol), F(oh)]
    return campaigns.Case(ins, [("u8", d32_capacity(declared)), ("f32", 128), ("f32", 128)],
                          def_max=[declared, (1, 1, 1, 1), (1, 1, 1, 1)],
                          desc=f"{desc} x{shape} pad{pad} fill {fill} in[{xl:.6g},{xh:.6g}] "
                          f"out[{ol:.6g},{oh:.6g}]")


def random_case(rng, i):
    flat = campaigns_fc._rq8_case(rng, i)
    x = flat.inputs[0]
    xl, xh, ol, oh = (float(t.data.reshape(-1)[0]) for t in flat.inputs[1:])
    pad = rand_d32_pad(rng, x.shape)
    b, h, w, d = x.shape
    # room for any padding; one case in seven the bare shape, a row short (often too small)
    declared = (b, max(1, h - 1), w, d) if i % 7 == 3 else (b, h, w + 12, d + 32)
    return _case(x.shape, x.data, pad, int(rng.integers(0, 256)), xl, xh, ol, oh,
                 declared, f"random {i % 8}:")


#: (name, shape, (h_before, h_after, w_before, w_after, d_before, d_after) or None for
#: random, input range, output range (made R1-exact unless "raw" is in the name))
_EDGES = [
    ("gain 1 (CLOSE_ENUF)", (1, 2, 3, 40), None, (-1.0, 1.0), (-1.0, 1.0)),
    ("gain 1 - 2^-15 (CLOSE_ENUF)", (1, 2, 3, 33), None, (-1.0, 1.0), (-1.00003, 1.00003)),
    ("gain just off 1", (1, 2, 5, 33), None, (-1.0, 1.0), (-1.0004, 1.0004)),
    ("gain 2", (2, 2, 3, 17), None, (-2.0, 2.0), (-1.0, 1.0)),
    ("gain 3, positive out", (1, 3, 3, 32), None, (0.0, 6.0), (0.0, 2.0)),
    ("gain 1/3", (1, 3, 2, 64), None, (-1.0, 1.0), (-3.0, 3.0)),
    ("gain 2^14", (1, 1, 4, 8), None, (-16384.0, 16384.0), (-1.0, 1.0)),
    ("gain just under 2^15", (1, 1, 4, 8), None, (-32768.0, 32768.0), (-1.0, 1.0)),
    ("gain 2^15 (refused)", (1, 1, 4, 8), None, (-65536.0, 65536.0), (-1.0, 1.0)),
    ("raw out range (refused)", (1, 1, 4, 8), None, (-1.0, 1.0), (-0.3, 1.0)),
    ("in range misses 0 (positive)", (1, 2, 3, 40), None, (2.0, 10.0), (-4.0, 12.0)),
    ("in range misses 0 (negative)", (1, 2, 3, 40), None, (-10.0, -2.0), (-12.0, 4.0)),
    ("out range [0, x]", (1, 2, 3, 40), None, (-5.0, 5.0), (0.0, 3.0)),
    ("out range [x, 0]", (1, 2, 3, 40), None, (-5.0, 5.0), (-3.0, 0.0)),
    ("in range [0, 0]", (1, 2, 3, 40), None, (0.0, 0.0), (-1.0, 1.0)),
    ("in range min == max", (1, 2, 3, 40), None, (1.5, 1.5), (-1.0, 1.0)),
    ("reversed in range, odd depth", (1, 2, 3, 5), None, (1.0, -1.0), (-1.0, 1.0)),
    ("reversed in range, depth before 1", (1, 2, 3, 33), (1, 1, 4, 1, 1, 30), (2.0, -3.0),
     (-4.0, 4.0)),
    ("reversed in range, gain < -1", (1, 2, 3, 7), None, (5.0, -5.0), (-1.0, 1.0)),
    ("huge in range", (1, 1, 4, 16), None, (-1e7, 1e7), (-1e6, 1e6)),
    ("tiny ranges", (1, 1, 4, 16), None, (-1e-9, 1e-9), (-2e-9, 2e-9)),
    ("depth 1", (2, 2, 3, 1), None, (-1.0, 3.0), (-2.0, 2.0)),
    ("depth 31", (1, 2, 3, 31), None, (-1.0, 3.0), (-2.0, 2.0)),
    ("depth 33, depth before 31", (1, 2, 3, 33), (2, 2, 4, 1, 31, 0), (-1.0, 3.0), (-2.0, 2.0)),
    ("depth 100", (1, 2, 2, 100), None, (-1.0, 3.0), (-2.0, 2.0)),
    ("width 1, left padding 7", (1, 3, 1, 8), (1, 1, 7, 0, 0, 24), (-1.0, 3.0), (-2.0, 2.0)),
    ("width 1, left padding 0", (1, 3, 1, 8), (0, 0, 0, 3, 0, 24), (-1.0, 3.0), (-2.0, 2.0)),
    ("left padding 4 (wskip 4)", (1, 2, 4, 32), (4, 4, 4, 4, 0, 0), (-1.0, 3.0), (-2.0, 2.0)),
    ("left padding 5 (wskip 4)", (1, 2, 3, 32), (4, 4, 5, 0, 0, 0), (-1.0, 3.0), (-2.0, 2.0)),
    ("left padding 3 (wskip 0)", (1, 2, 5, 32), (1, 1, 3, 0, 0, 0), (-1.0, 3.0), (-2.0, 2.0)),
    ("no padding at all", (1, 2, 4, 32), (0, 0, 0, 0, 0, 0), (-1.0, 3.0), (-2.0, 2.0)),
    ("extra slice of padding only", (1, 2, 3, 20), (1, 1, 4, 1, 0, 44), (-1.0, 3.0),
     (-2.0, 2.0)),
    ("odd width 7, 3 batches", (3, 2, 7, 40), None, (-4.0, 4.0), (-6.0, 3.0)),
    ("a taller tensor (work slices)", (1, 20, 6, 40), None, (-4.0, 4.0), (-6.0, 3.0)),
    ("a wide tensor", (1, 2, 60, 64), None, (-4.0, 4.0), (-6.0, 3.0)),
]


def edge_case(rng, k):
    name, shape, pad, (xl, xh), (ol, oh) = _EDGES[k % len(_EDGES)]
    if "raw" not in name:
        ol, oh = _exact(ol, oh)
    pad = pad if pad is not None else rand_d32_pad(rng, shape, allow_extra_slice=False)
    x = rng.integers(0, 256, shape, dtype=np.uint8)
    b, h, w, d = shape
    declared = (b, h, w + 8, d + 32)
    return _case(shape, x, tuple(pad), int(rng.integers(0, 256)), float(f32(xl)),
                 float(f32(xh)), ol, oh, declared, f"edge: {name}:")


def _gen(rng, i):
    return random_case(rng, i) if i < RANDOM else edge_case(rng, i - RANDOM)


campaigns.CAMPAIGNS["hvx:Requantize_8to8_d32"] = campaigns.Campaign(_gen)
campaigns_hvx.HVX_CAMPAIGNS["Requantize_8to8_d32"] = campaigns_hvx.HvxCampaign(
    "hvx:Requantize_8to8_d32", campaigns_hvx._D32)

if __name__ == "__main__":
    campaigns_hvx.main()
