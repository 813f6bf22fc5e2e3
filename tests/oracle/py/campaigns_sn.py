"""Supernode_8x8p8to8 campaigns.

Supernode_8x8p8to8        C: Supernode_8x8p8to8_ref (supernode_execute_ref), Hexscope: Supernode_8x8p8to8
Supernode_8x8p8to8_plain  C: Supernode_8x8p8to8 (supernode_execute_hvx: checks, then HVX, or
                          the ref fallback when out_height <= 3), Hexscope: Supernode_8x8p8to8

Hexscope's kernel is called as the executor calls it, and the executor's final capacity
check (executor._check_outputs: an output larger than its declared size fails the node) is
applied after it (hs_exec.py), because the Supernode kernel leaves that check to the executor.
"""
from __future__ import annotations

import numpy as np
from campaigns import CAMPAIGNS, Campaign, Case, F, qrange, u8
from common import T

INF = float("inf")


def _out_range(rng, i):
    k = i % 12
    if k in (0, 1, 2):
        return -INF, INF, "qdown (-inf,inf)"
    if k in (3, 4):
        return 0.0, INF, "relu [0,inf)"
    if k == 5:
        return 0.0, float(np.float32(rng.choice([6.0, 1.0, 0.5, 20.0]))), "relux [0,X]"
    if k == 6:
        return -INF, float(np.float32(rng.uniform(0.5, 50))), "(-inf, X]"
    if k == 7:
        lo = -float(np.float32(rng.uniform(0, 50))); hi = float(np.float32(rng.uniform(0.01, 50)))
        return lo, hi, "fixed"
    if k == 8:
        return float(np.float32(rng.uniform(-1, 1))), INF, "[X, inf)"
    if k == 9:
        v = [0.0, 1e-30, 1e-6, 3e38][int(rng.integers(0, 4))]
        return 0.0, v, "tiny/huge fixed"
    if k == 10:
        return -0.0, INF, "[-0, inf)"
    lo, hi, why = qrange(rng, i)
    return lo, hi, "edge " + why


def _realistic(rng):
    x = (0.0, float(np.float32(rng.choice([6.0, 1.0, 255.0, 3.99]))))
    fl = -float(np.float32(rng.uniform(0.01, 2))); fh = float(np.float32(rng.uniform(0.01, 2)))
    bl = -float(np.float32(rng.uniform(0.01, 10))); bh = float(np.float32(rng.uniform(0.01, 10)))
    return x, (fl, fh), (bl, bh)


def _sn_case(rng, i):
    b = int(rng.integers(1, 3))
    h, w = int(rng.integers(1, 11)), int(rng.integers(1, 11))
    cin, cout = int(rng.integers(1, 13)), int(rng.integers(1, 11))
    fh, fw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    sh, sw = [(1, 1), (2, 2), (1, 2), (2, 1), (3, 3), (3, 1), (1, 1), (2, 2)][int(rng.integers(0, 8))]
    pad = ["SAME", "VALID", "SAME", "VALID", "SAME_CAFFE", "NA"][i % 6]
    x = u8(rng, (b, h, w, cin)); f = u8(rng, (fh, fw, cin, cout)); bias = u8(rng, (1, 1, 1, cout))
    if i % 3 == 0:
        (xl, xh), (fl, fhh), (bl, bh) = _realistic(rng)
        why = "realistic"
    else:
        xl, xh, xw = qrange(rng, i); fl, fhh, fwhy = qrange(rng, i // 3 + 5)
        bl, bh, bwhy = qrange(rng, i // 7 + 3)
        why = f"x {xw} f {fwhy} b {bwhy}"
    ol, oh, owhy = _out_range(rng, i // 2 if i % 5 else i)
    # declared output size: the conv output, or one row fewer (capacity), or larger
    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.conv.conv2d import output_window
    ohh = output_window(h, fh, sh, Padding.parse(pad)).out
    oww = output_window(w, fw, sw, Padding.parse(pad)).out
    dm = (b, max(ohh, 1), max(oww, 1), cout)
    if i % 9 == 4:
        dm = (1, 1, 1, max(1, (b * ohh * oww * cout) // 2))     # half the output
    elif i % 9 == 7:
        dm = (b, ohh + 3, oww + 1, cout)
    cap = (int(np.prod(dm)) + 127) & ~127
    ins = [T.of(x, "u8"), T.of(f, "u8"), F(xl), F(xh), F(fl), F(fhh), T.shape_only((1, sh, sw, 1)),
           T.of(bias, "u8"), F(bl), F(bh), F(ol), F(oh)]
    return Case(ins, [("u8", cap), ("f32", 128), ("f32", 128)], pad,
                def_max=[dm, (1, 1, 1, 1), (1, 1, 1, 1)],
                desc=f"x{(b, h, w, cin)} f{(fh, fw, cin, cout)} s{(sh, sw)} {pad} "
                     f"x[{xl:.6g},{xh:.6g}] f[{fl:.6g},{fhh:.6g}] b[{bl:.6g},{bh:.6g}] ({why}) "
                     f"out [{ol},{oh}] ({owhy}) declared {dm} out {(b, ohh, oww, cout)}")


def _sn_cls(case, c, h, diffs):
    d = diffs[0]
    if d.startswith("status"):
        import re
        return re.sub(r"[-0-9.e+x]{2,}|\d", "N", d)[:160]
    return d.split(":")[0]


CAMPAIGNS["Supernode_8x8p8to8"] = Campaign(_sn_case, c_op="Supernode_8x8p8to8_ref",
                                           hs_op="Supernode_8x8p8to8", classify=_sn_cls)
CAMPAIGNS["Supernode_8x8p8to8_plain"] = Campaign(_sn_case, c_op="Supernode_8x8p8to8",
                                                 hs_op="Supernode_8x8p8to8", classify=_sn_cls)


# ---------------------------------------------------------------- FillPadding, depth-after >= 32
def _fillpad_extra(rng, i):
    """Every case has a padding-only depth slice (d_after >= 32), the case turn 2 found and the
    developers say they now simulate: the overwrite of the tensor's own bytes, and a failure
    where the device writes before the buffer."""
    from campaigns import d32_capacity, rand_shape
    shape = rand_shape(rng, maxh=5, maxw=6, maxd=70)
    b, h, w, d = shape
    hb, ha = int(rng.integers(0, 5)), int(rng.integers(0, 5))
    wb = int(rng.integers(0, 8))
    wa = (-(wb + w)) % 4 + 4 * int(rng.integers(0, 2))
    db = int(rng.integers(0, 32)) if rng.random() < 0.5 else 0
    da = (-(db + d)) % 32 + 32 * int(rng.integers(1, 3))
    pad = (hb, ha, wb, wa, db, da)
    x = T(shape, "u8", u8(rng, shape), d32=pad, d32_fill=int(rng.integers(0, 256)))
    ins = [x]
    k = i % 6
    if k >= 1:
        ins.append(T.i([-1, 0, 7, 300, -2, 255][int(rng.integers(0, 6))]))
    if k >= 3:
        ins.append(T.i([-1, 0, 0x55, -1, 1000][int(rng.integers(0, 5))]))
    dmax = list(shape)
    if i % 4 != 3:      # room for the whole padded input (else the declared shape: mostly too small)
        dmax = [b, hb + h + ha + (2 if i % 5 == 2 else 0), wb + w + wa, db + d + da]
    cap = d32_capacity(tuple(dmax))
    return Case(ins, [("u8", cap)], def_max=[tuple(dmax)],
                desc=f"x{shape} pad{pad} fills {[int(t.data.ravel()[0]) for t in ins[1:]]} declared{tuple(dmax)}")


def _fillpad_extra_cls(case, c, h, diffs):
    if c.guard[0] and not h.ok and "outside the output buffer" in h.error:
        return "C writes before the buffer (guard zone hit) / Hexscope fails naming the writes"
    return diffs[0].split(":")[0][:120]


CAMPAIGNS["FillPadding_8_d32_dafter32"] = Campaign(
    _fillpad_extra, c_op="FillPadding_8_d32", hs_op="FillPadding_8_d32",
    compare_kw={"compare_padding": True, "tail": True}, classify=_fillpad_extra_cls)


# ---------------------------------------------------------------- d32 add/sub/mul: C's output layout
def _d32_arith_layout_case(rng, i):
    """As campaigns._d32_arith_case, but the inputs may hold a padding-only depth slice
    (allow_extra_slice) and the output's declared size has room for it: the layout C decides
    (tensor_out_prepare_padded_d32 in op_add_d32.c, before the HVX core) is compared with
    Hexscope's when C then reaches HVX."""
    from campaigns import d32_capacity, qrange, rand_d32_pad, rand_shape
    shape = rand_shape(rng, maxh=4, maxw=6, maxd=40)
    a = T(shape, "u8", u8(rng, shape), d32=rand_d32_pad(rng, shape, True))
    b = T(shape, "u8", u8(rng, shape), d32=rand_d32_pad(rng, shape, True))
    al, ah, _ = qrange(rng, i); bl, bh, _ = qrange(rng, i + 3)
    big = (shape[0], shape[1] + 8, shape[2] + 16, shape[3] + 64) if i % 2 else shape
    return Case([a, b, F(al), F(ah), F(bl), F(bh)],
                [("u8", d32_capacity(big)), ("f32", 128), ("f32", 128)],
                def_max=[big, (1, 1, 1, 1), (1, 1, 1, 1)], desc=f"{shape} a{a.d32} b{b.d32} declared {big}")


for _n in ("QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32", "QuantizedMul_8x8to8_d32"):
    CAMPAIGNS[_n + "_layout"] = Campaign(_d32_arith_layout_case, c_op=_n, hs_op=_n,
                                         compare_kw={"layout_only_c_stub": True})


def _sn_na_case(rng, i):
    """NA padding, small images and strides 2-3, fixed output range [0, 1e4] (no saturation
    from the range search), codes as reals: the padding-before computed from the output size."""
    c = _sn_case(rng, i)
    b = int(rng.integers(1, 2)); h, w = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    cin, cout = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    fh, fw = int(rng.integers(1, 8)), int(rng.integers(1, 8))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    x = rng.integers(0, 8, (b, h, w, cin), dtype=np.uint8); f = rng.integers(0, 8, (fh, fw, cin, cout), dtype=np.uint8)
    bias = np.zeros((1, 1, 1, cout), np.uint8)
    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.conv.conv2d import output_window
    oh = output_window(h, fh, sh, Padding.NA).out; ow = output_window(w, fw, sw, Padding.NA).out
    dm = (b, max(oh, 1), max(ow, 1), cout)
    ins = [T.of(x, "u8"), T.of(f, "u8"), F(0.0), F(255.0), F(0.0), F(255.0), T.shape_only((1, sh, sw, 1)),
           T.of(bias, "u8"), F(0.0), F(255.0), F(0.0), F(10000.0)]
    return Case(ins, [("u8", (int(np.prod(dm)) + 127) & ~127), ("f32", 128), ("f32", 128)], "NA",
                def_max=[dm, (1, 1, 1, 1), (1, 1, 1, 1)],
                desc=f"x{(b, h, w, cin)} f{(fh, fw, cin, cout)} s{(sh, sw)} NA out {(oh, ow)}")


def _sn_na_cls(case, c, h, diffs):
    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.conv.conv2d import output_window
    _, hh, ww, _ = case.inputs[0].shape; fh, fw = case.inputs[1].shape[:2]; sh, sw = case.inputs[6].shape[1:3]
    oh = output_window(hh, fh, sh, Padding.NA).out; ow = output_window(ww, fw, sw, Padding.NA).out
    if (0 < oh < sh) or (0 < ow < sw):
        return "NA padding, an output size < stride: nn_pad_compute_before gives 0 (C), Hexscope's output_window a positive padding"
    return diffs[0].split(":")[0]


CAMPAIGNS["Supernode_8x8p8to8_NA"] = Campaign(_sn_na_case, c_op="Supernode_8x8p8to8_ref",
                                              hs_op="Supernode_8x8p8to8", classify=_sn_na_cls)
