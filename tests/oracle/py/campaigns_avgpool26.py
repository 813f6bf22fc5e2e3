"""avgpool26 campaigns: QuantizedAvgPool_8_d32_ref (op_avgpool_d32.c with ``use_hvx`` false:
the integral image, ``consumer_run_row_ref``; plan ``setup_integral_buffer_plan``).

Global pools up to 64x64 of codes near 255 (window sums far past 16 bits), VALID and SAME
shapes whose windows stay inside the input, strides 1-3, windows 2x2 and 3x3 (the HVX op's
special handlers; the ``_ref`` runs the integral path for them), depths that are not
multiples of 32, random d32 input padding (depth-before included), ranges crossing or
missing zero. ``QuantizedAvgPool_8_d32_ref_edge`` draws windows that reach past the input
(edge padding; one in four windows more than one cell larger than the input, whose
"infeasible" pads nnlib zeroes and whose window it may shrink). Every byte of the output buffer is
compared. Golden file: ``python campaigns_avgpool26.py OP N PATH [SEED]``.
"""
from __future__ import annotations

import numpy as np
from campaigns import CAMPAIGNS, Campaign, Case, F, d32_capacity, qrange, rand_d32_pad
from campaigns_d32ops26 import export
from common import T


def _out(n, f, s, pad):
    if pad == "VALID":
        return (n - f) // s + 1 if n >= f else 0
    return -(-n // s)


def _no_edge(n, f, s, pad):
    """The window, stride and padding of one axis keep every window inside the input."""
    out = _out(n, f, s, pad)
    if out < 1:
        return False
    if out == 1:
        return pad == "VALID" or f >= n or True
    return pad == "VALID" or (out - 1) * s + f - n <= 0


def _codes(rng, shape, i):
    k = i % 5
    if k == 0:
        return rng.integers(250, 256, shape).astype(np.uint8)      # sums past 16 bits
    if k == 1:
        return np.full(shape, 255, np.uint8)
    if k == 2:
        return rng.integers(0, 6, shape).astype(np.uint8)
    return rng.integers(0, 256, shape).astype(np.uint8)


def _case(rng, i, edge=False):
    b = 2 if i % 6 == 5 else 1
    d = [1, 3, 5, 31, 32, 33, 45, 70][int(rng.integers(0, 8))]
    kind = i % 4
    for _ in range(200):
        if kind == 0:                       # a global pool: window = input (or larger)
            h, w = [(64, 64), (32, 48), (17, 23), (12, 12), (9, 1), (1, 40)][i // 8 % 6] \
                if i % 8 == 0 else (int(rng.integers(1, 12)), int(rng.integers(1, 12)))
            if h * w > 100:
                b, d = 1, min(d, 3) if h * w < 1000 else 1
            fh, fw = h + int(rng.integers(0, 3)) * (i % 3 == 1), w
            sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            pad = "VALID" if fh == h else "SAME"
        elif edge and i % 4 == 3:           # windows past the input + 1: infeasible pads
            h, w = int(rng.integers(1, 6)), int(rng.integers(1, 6))
            fh, fw = h + int(rng.integers(2, h + 5)), w + int(rng.integers(2, w + 5))
            sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
            pad = ["SAME", "SAME_CAFFE"][i % 2]
        else:
            h, w = int(rng.integers(1, 10)), int(rng.integers(1, 10))
            fh, fw = [(2, 2), (3, 3), (int(rng.integers(1, 6)), int(rng.integers(1, 6)))][
                kind - 1]
            sh, sw = [(1, 1), (2, 2), (3, 3), (1, 2), (2, 1), (2, 3)][int(rng.integers(0, 6))]
            pad = ["VALID", "SAME", "SAME_CAFFE", "VALID"][int(rng.integers(0, 4))]
        inside = _no_edge(h, fh, sh, pad) and _no_edge(w, fw, sw, pad)
        if _out(h, fh, sh, pad) >= 1 and _out(w, fw, sw, pad) >= 1 and inside != edge:
            break
        if kind == 0:
            kind = 1
    shape = (b, h, w, d)
    x = T(shape, "u8", _codes(rng, shape, i), d32=rand_d32_pad(rng, shape),
          d32_fill=int(rng.integers(0, 256)))
    lo, hi, why = qrange(rng, i)
    out = (b, max(1, _out(h, fh, sh, pad)), max(1, _out(w, fw, sw, pad)), d)
    dm = [out if i % 11 != 7 else (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1)]
    outs = [("u8", d32_capacity(dm[0])), ("f32", 128), ("f32", 128)]
    return Case([x, F(lo), F(hi), T.shape_only((1, fh, fw, 1)), T.shape_only((1, sh, sw, 1))],
                outs, pad, def_max=dm,
                desc=f"x{shape} pad {x.d32} win {fh}x{fw} s {sh}x{sw} {pad} [{lo:.6g},{hi:.6g}]"
                     f"({why})")


_CMP = {"compare_padding": True}
# one case in three with edge windows
CAMPAIGNS["QuantizedAvgPool_8_d32_ref"] = Campaign(lambda r, i: _case(r, i, edge=i % 3 == 2),
                                                   compare_kw=_CMP)
CAMPAIGNS["QuantizedAvgPool_8_d32_ref_edge"] = Campaign(
    lambda r, i: _case(r, i, edge=True), c_op="QuantizedAvgPool_8_d32_ref",
    hs_op="QuantizedAvgPool_8_d32_ref", compare_kw=_CMP)


if __name__ == "__main__":
    import sys
    print(export(sys.argv[1], int(sys.argv[2]), int(sys.argv[4]) if len(sys.argv) > 4 else 1,
                 sys.argv[3]))
