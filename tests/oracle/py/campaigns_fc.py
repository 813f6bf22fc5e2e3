"""Campaigns of the delegate's FULLY_CONNECTED chain and the other issue-25 ops (helper fc25).

Requantize_32to8       C: Requantize_32to8 (nnlib's non-HVX twin of the i32 -> u8 requantize)
Requantize_8to8        C: Requantize_8to8 (HVX lanes emulated in driver/overrides.c, item d)
QuantizedBiasAdd_32p32to32, QuantizedMul_8x8to32, SpaceToBatchND_8, BatchToSpaceND_8,
SuperFC_8x8p32to8      C: the op of the same name (or its _ref, named per campaign)

``golden.py``-style export: ``export(name, n, seed, path)`` keeps the cases where C and
Hexscope agree byte for byte (and those where both fail) as compact JSON.
"""
from __future__ import annotations

import numpy as np
from campaigns import CAMPAIGNS, Campaign, Case, F, qrange, u8
from campaigns import rand_shape as _rand_shape
from common import T

f32 = np.float32

#: Set by export_fc.py: smaller tensors (same kinds of case) so the golden files stay small.
SMALL = False


def rand_shape(rng, maxb=2, maxh=9, maxw=9, maxd=40):
    """campaigns.rand_shape, shrunk when SMALL: h, w <= 3 and mostly shallow depths (a
    quarter of the cases still cross 32)."""
    if not SMALL:
        return _rand_shape(rng, maxb, maxh, maxw, maxd)
    if rng.random() < 0.25 and maxd > 31:      # deep: one small image
        return (1, int(rng.integers(1, 3)), int(rng.integers(1, 3)),
                int(rng.integers(31, maxd + 1)))
    return (int(rng.integers(1, maxb + 1)), int(rng.integers(1, min(maxh, 3) + 1)),
            int(rng.integers(1, min(maxw, 3) + 1)), int(rng.integers(1, min(maxd, 9) + 1)))


def _i32(rng, shape, i):
    mag = [2 ** 8, 2 ** 16, 2 ** 24, 2 ** 31 - 1][i % 4]
    sub = (i // 4) % 5
    if sub == 0:
        x = np.zeros(shape, np.int64)
    elif sub == 1:
        x = rng.integers(0, mag, size=shape)
    elif sub == 2:
        x = -rng.integers(0, mag, size=shape)
    elif sub == 3:
        x = rng.choice(np.array([-2 ** 31, 2 ** 31 - 1, 0, 1, -1]), size=shape)
    else:
        x = rng.integers(-mag, mag, size=shape)
    return np.clip(x, -2 ** 31, 2 ** 31 - 1).astype(np.int32)


# ---------------------------------------------------------------- shared filter
def nan_payload_filter(case, c, h, diffs):
    """A range output that is NaN on both sides differs only in its NaN bits (x86's default
    NaN in C, numpy's here; the DSP's is a third, all ones): explained, not a difference."""
    keep = []
    for d in diffs:
        if " data: " in d and d.startswith("out") and not d.startswith("out0"):
            k = int(d[3])
            cv, hv = c.outs[k].logical().ravel(), h.outs[k].logical().ravel()
            if np.isnan(cv).all() and np.isnan(hv).all():
                continue
        keep.append(d)
    return keep



# ---------------------------------------------------------------- Requantize_32to8
def _rq32_case(rng, i):
    n_kind = i % 3
    shape = rand_shape(rng, maxh=4, maxw=5, maxd=(127 // 40 + 6) if n_kind else 40)
    if int(np.prod(shape)) >= 128:
        shape = (1, 1, 1, int(rng.integers(1, 128)))
    if i % 4 == 3 and not SMALL:      # Path A territory: checked by _rq32_filter
        shape = (1, 1, int(rng.integers(2, 6)), int(rng.integers(64, 140)))
    x = _i32(rng, shape, i)
    xl, xh, xw = qrange(rng, i)
    if xw == "random":
        s = f32(rng.uniform(0.001, 1000)); xl, xh = -float(s), float(s)
    ol, oh, ow = qrange(rng, i // 3 + 1)
    return Case([T.of(x, "i32", qint32=True), F(xl), F(xh), F(ol), F(oh)],
                [("u8", x.size + 128), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} in[{xl:.6g},{xh:.6g}]({xw}) out[{ol:.6g},{oh:.6g}]({ow})")


def _rq32_filter(case, c, h, diffs):
    """128 or more elements: the DSP (and Hexscope) run quantize_asm (Path A), which the
    oracle cannot; there the C's bytes are checked against Hexscope's Path B (the formula of
    nnlib's scalar twin), and Path A's deviations are only counted."""
    x = case.inputs[0].data
    if not (c.ok and h.ok) or not diffs or x.size < 128:
        return diffs
    from hexscope.engine.ops.quant.requantize import requantize_i32_to_u8
    rest = [d for d in diffs if not d.startswith("out0 data")]
    with np.errstate(all="ignore"):
        lvl = f32(f32(f32(case.inputs[2].data.ravel()[0]) - f32(case.inputs[1].data.ravel()[0]))
                  * f32(2.0 ** -32))
        omin = f32(h.outs[1].logical().ravel()[0]); omax = f32(h.outs[2].logical().ravel()[0])
        b = requantize_i32_to_u8(x, lvl, omin, omax, aligned=False)
    cb = c.outs[0].logical()
    if not np.array_equal(np.asarray(b, np.int64).reshape(cb.shape), cb.astype(np.int64)):
        rest.append(f"out0 data (Path B, n>=128): {int(np.count_nonzero(b.reshape(cb.shape) != cb))} differ")
    else:
        rest.append("[expected] Path A (quantize_asm, DSP only) vs the scalar twin; Path B matches")
    return rest


def _rq32_classify(case, c, h, diffs):
    """The scalar twin truncates the 64-bit rounded product to int32 (quantize.c
    scalar_requantize_i32_to_qu8: ``int32_t scaled = Q6_P_asrrnd_PI(p,31)``): with a gain
    code of INT32_MIN (an infinite gain: empty output range, max < min input range) and a
    code of INT32_MIN the product 2**62 wraps; the HVX path Hexscope models saturates."""
    if all(d.startswith("[expected]") for d in diffs):
        return "expected: n>=128 Path A (quantize_asm) vs the scalar twin; Path B equals the C"
    x = case.inputs[0].data
    if (x == -2 ** 31).any() and float(case.inputs[2].data.ravel()[0]) < float(case.inputs[1].data.ravel()[0]):
        return "explained: INT32_MIN x INT32_MIN gain wraps in nnlib's scalar twin (HVX saturates)"
    return diffs[0].split(":")[0]


CAMPAIGNS["Requantize_32to8"] = Campaign(_rq32_case, classify=_rq32_classify,
                                         filter=_rq32_filter)
CAMPAIGNS["Requantize_32to8_ref"] = Campaign(_rq32_case, classify=_rq32_classify,
                                             filter=_rq32_filter)


# ---------------------------------------------------------------- Requantize_8to8
def _exact_range(lo, hi):
    from hexscope.engine.quant import adjust_range
    a, b = adjust_range(lo, hi)
    return float(f32(a)), float(f32(b))


def _rq8_case(rng, i):
    shape = rand_shape(rng, maxh=6, maxw=9, maxd=70)
    x = u8(rng, shape)
    xl, xh, xw = qrange(rng, i)
    k = i % 8
    if k == 0:
        ol, oh, ow = xl, xh, "same as input"
    elif k == 1:
        s = f32(rng.choice([0.5, 2.0, 1.0001, 0.99995, 3.0, 1 / 3]))
        ol, oh, ow = float(f32(xl * s)), float(f32(xh * s)), f"input x{s:.6g}"
    elif k == 2:
        ol, oh, ow = qrange(rng, i // 8 + 3)
        ow = "raw " + ow            # mostly refused: not R1-exact
    elif k == 3:
        ol, oh, ow = float(f32(xl * 1e-5)), float(f32(xh * 1e-5)), "tiny out (gain >= 2^15?)"
    else:
        ol, oh, ow = qrange(rng, i // 8 + 5)
    if k != 2:
        ol, oh = _exact_range(ol, oh)
    return Case([T.of(x, "u8"), F(xl), F(xh), F(ol), F(oh)],
                [("u8", x.size + 128), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} in[{xl:.6g},{xh:.6g}]({xw}) out[{ol:.6g},{oh:.6g}]({ow})")


CAMPAIGNS["Requantize_8to8"] = Campaign(_rq8_case)


# ---------------------------------------------------------------- QuantizedBiasAdd_32p32to32
def _bias32_case(rng, i):
    shape = rand_shape(rng, maxh=4, maxw=5, maxd=37)
    x = _i32(rng, shape, i)
    bias = _i32(rng, (1, 1, 1, shape[3]), i // 3 + 1)
    xl, xh, xw = qrange(rng, i)
    bl, bh, bw = qrange(rng, i // 2 + 7)
    if i % 5 == 0:       # the delegate's case: a bias step a few times x's (saturating ratio)
        bl, bh, bw = float(f32(xl * 300)), float(f32(xh * 300)), "x range * 300"
    return Case([T.of(x, "i32", qint32=True), T.of(bias, "i32", qint32=True),
                 F(xl), F(xh), F(bl), F(bh)],
                [("i32", 4 * x.size + 128), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} x[{xl:.6g},{xh:.6g}]({xw}) b[{bl:.6g},{bh:.6g}]({bw})")


CAMPAIGNS["QuantizedBiasAdd_32p32to32"] = Campaign(_bias32_case)
CAMPAIGNS["QuantizedBiasAdd_32p32to32_ref"] = Campaign(_bias32_case)


# ---------------------------------------------------------------- SuperFC_8x8p32to8
INF = float("inf")


def _superfc_case(rng, i, small=False):
    if small:     # for the golden file: the same kinds of case, smaller matrices
        rows, din, dout = int(rng.integers(1, 4)), int(rng.integers(1, 20)), int(rng.integers(1, 11))
    else:
        rows, din, dout = int(rng.integers(1, 9)), int(rng.integers(1, 70)), int(rng.integers(1, 45))
    k = i % 4
    if k == 0:
        xshape, fshape = (1, 1, rows, din), (1, 1, din, dout)
    elif k == 1:
        xshape, fshape = (rows, 1, 1, din), (1, 1, din, dout)
    elif k == 2:             # weights (fh,fw,fd): din = fh*fw*fd divides the input
        fh, fw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        fd = max(1, din // (fh * fw))
        xshape, fshape = (rows, fh, fw, fd), (fh, fw, fd, dout)
    else:                    # odd: input size not a multiple of din (refused), or matching
        xshape = (1, 1, 1, rows * din + int(rng.integers(0, 2)))
        fshape = (1, 1, din, dout)
    x = u8(rng, xshape); f = u8(rng, fshape)
    bias = _i32(rng, (1, 1, 1, dout), i // 2)
    if i % 3 == 0:
        bias = (rng.integers(-2 ** 14, 2 ** 14, size=(1, 1, 1, dout))).astype(np.int32)
    xl, xh, xw = qrange(rng, i)
    fl, fhh, fwhy = qrange(rng, i // 3 + 5)
    if i % 2:
        xl, xh, xw = 0.0, float(f32(rng.choice([6.0, 1.0, 255.0]))), "realistic"
        fl, fhh, fwhy = -float(f32(rng.uniform(0.01, 2))), float(f32(rng.uniform(0.01, 2))), "realistic"
    bl, bh, bw = qrange(rng, i // 5 + 2)
    if i % 4 == 1:
        bl, bh, bw = -float(f32(rng.uniform(1, 100))), float(f32(rng.uniform(1, 100))), "realistic"
    j = (i // 4) % 6
    ol, oh, ow = [(-INF, INF, "auto"), (0.0, INF, "relu"), (0.0, 6.0, "relu6"),
                  (-INF, 5.0, "(-inf,5]"), (-3.0, 7.0, "fixed"), (-INF, INF, "auto")][j]
    n_out = (int(np.prod(xshape)) // max(1, int(np.prod(fshape[:3])))) * dout
    return Case([T.of(x, "u8"), T.of(f, "u8"), F(xl), F(xh), F(fl), F(fhh),
                 T.of(bias, "i32", qint32=True), F(bl), F(bh), F(ol), F(oh)],
                [("u8", n_out + 128), ("f32", 4), ("f32", 4)],
                desc=f"x{xshape} f{fshape} x[{xl:.6g},{xh:.6g}]({xw}) f[{fl:.6g},{fhh:.6g}]({fwhy}) "
                     f"b[{bl:.6g},{bh:.6g}]({bw}) out {ow}")


CAMPAIGNS["SuperFC_8x8p32to8"] = Campaign(_superfc_case, c_op="SuperFC_8x8p32to8_ref")
CAMPAIGNS["SuperFC_8x8p32to8_ref"] = Campaign(_superfc_case)
CAMPAIGNS["SuperFC_small"] = Campaign(lambda r, i: _superfc_case(r, i, small=True),
                                      c_op="SuperFC_8x8p32to8_ref", hs_op="SuperFC_8x8p32to8_ref")


for _n in ("SuperFC_8x8p32to8", "SuperFC_8x8p32to8_ref"):
    CAMPAIGNS[_n].filter = nan_payload_filter


# ---------------------------------------------------------------- QuantizedMul_8x8to32
def _mul832_case(rng, i):
    shape = rand_shape(rng, maxh=5, maxw=6, maxd=37)
    k = i % 5
    if k == 0:
        bshape = shape
    elif k == 1:
        bshape = (1, 1, 1, 1)
    elif k == 2:
        bshape = (1, 1, 1, shape[3])
    elif k == 3:
        bshape = tuple(d if rng.random() < 0.5 else 1 for d in shape)
    else:                   # incompatible unless equal
        bshape = rand_shape(rng, maxh=3, maxw=3, maxd=5)
    a, b = u8(rng, shape), u8(rng, bshape)
    if i % 2:
        a, b = b, a
    al, ah, aw = qrange(rng, i)
    bl, bh, bw = qrange(rng, i // 2 + 3)
    n = int(np.prod(np.maximum(np.array(a.shape), np.array(b.shape))))
    return Case([T.of(a, "u8"), T.of(b, "u8"), F(al), F(ah), F(bl), F(bh)],
                [("i32", 4 * n + 128), ("f32", 4), ("f32", 4)],
                desc=f"a{a.shape} b{b.shape} a[{al:.6g},{ah:.6g}]({aw}) b[{bl:.6g},{bh:.6g}]({bw})")


# the plain op's HVX loops are not run by the oracle: both names compare with the _ref's C
CAMPAIGNS["QuantizedMul_8x8to32"] = Campaign(_mul832_case, c_op="QuantizedMul_8x8to32_ref",
                                             filter=nan_payload_filter)
CAMPAIGNS["QuantizedMul_8x8to32_ref"] = Campaign(_mul832_case, filter=nan_payload_filter)


# ---------------------------------------------------------------- SpaceToBatchND_8 / BatchToSpaceND_8
def _bs_geometry(rng, i):
    n = 2 if i % 4 else 1
    s = [int(v) for v in rng.integers(1, 4, size=n)]
    p = [int(v) for v in rng.integers(0, 4, size=2 * n)]
    if i % 7 == 0:
        p = [0] * (2 * n)                     # the transpose path
    return n, s, p


def _s2b_case(rng, i):
    n, s, p = _bs_geometry(rng, i)
    sh, sw = (s[0], s[1]) if n == 2 else (s[0], 1)
    b, h, w, d = rand_shape(rng, maxh=9, maxw=9, maxd=37)
    if i % 5:                                 # make the padded size divisible, mostly
        h = max(1, h + (-(h + p[0] + p[1]) % sh))
        if n == 2:
            w = max(1, w + (-(w + p[2] + p[3]) % sw))
        if (h + p[0] + p[1]) % sh or (n == 2 and (w + p[2] + p[3]) % sw):
            h += 0
    if i % 11 == 3:
        p[0] = -1                             # a negative pad crops
    x = u8(rng, (b, h, w, d))
    xl, xh, xw = qrange(rng, i)
    hp, wp = h + p[0] + p[1], w + (p[2] + p[3] if n == 2 else 0)
    cap = max(1, b * sh * sw * (hp // sh + 1) * (wp // sw + 1) * d) + 128
    return Case([T.of(x, "u8"), T.of(np.array(s, np.int32).reshape(1, 1, 1, n), "i32"),
                 T.of(np.array(p, np.int32).reshape(1, 1, n, 2), "i32"), F(xl), F(xh)],
                [("u8", cap), ("f32", 4), ("f32", 4)],
                desc=f"x{(b, h, w, d)} block {s} pad {p} x[{xl:.6g},{xh:.6g}]({xw})")


def _b2s_case(rng, i):
    n, s, p = _bs_geometry(rng, i)
    sh, sw = (s[0], s[1]) if n == 2 else (s[0], 1)
    ob, h, w, d = rand_shape(rng, maxh=6, maxw=6, maxd=37)
    b = ob * sh * sw + (1 if i % 13 == 5 else 0)      # sometimes not divisible
    ph, pw = p[0] + p[1], (p[2] + p[3] if n == 2 else 0)
    h, w = max(h, (ph + sh - 1) // sh), max(w, (pw + sw - 1) // sw)
    x = u8(rng, (b, h, w, d))
    xl, xh, xw = qrange(rng, i)
    cap = max(1, (b // (sh * sw)) * (sh * h) * (sw * w) * d) + 128
    return Case([T.of(x, "u8"), T.of(np.array(s, np.int32).reshape(1, 1, 1, n), "i32"),
                 T.of(np.array(p, np.int32).reshape(1, 1, n, 2), "i32"), F(xl), F(xh)],
                [("u8", cap), ("f32", 4), ("f32", 4)],
                desc=f"x{(b, h, w, d)} block {s} crop {p} x[{xl:.6g},{xh:.6g}]({xw})")


CAMPAIGNS["SpaceToBatchND_8"] = Campaign(_s2b_case)
CAMPAIGNS["BatchToSpaceND_8"] = Campaign(_b2s_case)
