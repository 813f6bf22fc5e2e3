"""Random case generators, one campaign per op. Each gen(rng, i) returns a Case or None."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from common import SIZE, T

f32 = np.float32


@dataclass
class Case:
    inputs: list[T]
    outs: list[tuple[str, int]]          # (dtype, capacity bytes) per output, for the C side
    padding: str = "NA"
    desc: str = ""
    def_max: list[tuple[int, int, int, int]] | None = None

    def elsizes(self):
        return [SIZE.get(dt, 1) for dt, _ in self.outs]


@dataclass
class Campaign:
    gen: Callable
    c_op: str | None = None      # nnlib op name if different
    hs_op: str | None = None     # Hexscope op name if different
    compare_kw: dict = field(default_factory=dict)
    filter: Callable | None = None
    classify: Callable | None = None
    glibc: bool = False          # run Hexscope with glibc's expf/logf/tanhf (see hs.glibc_libm)
    # a C stub hit means the op passed all its checks (False where the asm runs first)
    stub_after_checks: bool = True


CAMPAIGNS: dict[str, Campaign] = {}


def campaign(name: str, **kw):
    def deco(fn):
        CAMPAIGNS[name] = Campaign(fn, **kw)
        return fn
    return deco


# ---------------------------------------------------------------- helpers
def rand_range(rng, i: int) -> tuple[float, float, str]:
    """A float (min, max) range with edge cases mixed in."""
    k = i % 16
    if k == 0:
        return (0.0 if (i // 16) % 2 else -0.0), float(rng.uniform(0.1, 10)), "min=+-0"
    if k == 1:
        v = float(rng.uniform(0.1, 5)); return -v, v, "symmetric"
    if k == 2:
        a = float(rng.uniform(0.5, 5)); return a, a + float(rng.uniform(0.1, 5)), "positive (0 outside)"
    if k == 3:
        a = -float(rng.uniform(0.5, 5)); return a - float(rng.uniform(0.1, 5)), a, "negative (0 outside)"
    if k == 4:
        return 0.0, 0.0, "min==max==0"
    if k == 5:
        a = float(rng.uniform(-3, 3)); return a, a, "min==max"
    if k == 6:
        a = float(rng.uniform(-1e-6, 0)); return a, a + 1e-6 * float(rng.uniform(0.5, 2)), "tiny"
    if k == 7:
        a = -float(rng.uniform(1e5, 1e7)); return a, float(rng.uniform(1e5, 1e7)), "large"
    if k == 8:
        a = -float(rng.uniform(1e-12, 1e-9)); return a, float(rng.uniform(1e-12, 1e-9)), "very tiny"
    if k == 9:
        a = float(rng.uniform(0, 2)); return a + 1.0, a, "min>max"
    if k == 10:
        return -float(rng.uniform(1.8e38, 3.4e38)), float(rng.uniform(1.8e38, 3.4e38)), "width overflows float"
    lo = -float(rng.uniform(0, 20)) * float(rng.random() < 0.9)
    hi = float(rng.uniform(0, 20))
    return lo, hi, "random"


def f32v(x) -> float:
    return float(np.float32(x))


def rand_shape(rng, maxb=2, maxh=9, maxw=9, maxd=40) -> tuple[int, int, int, int]:
    return (int(rng.integers(1, maxb + 1)), int(rng.integers(1, maxh + 1)),
            int(rng.integers(1, maxw + 1)), int(rng.integers(1, maxd + 1)))


def u8(rng, shape, mode=None) -> np.ndarray:
    mode = mode if mode is not None else int(rng.integers(0, 6))
    if mode == 0:
        return np.full(shape, int(rng.integers(0, 256)), np.uint8)
    if mode == 1:
        return rng.choice(np.array([0, 1, 254, 255], np.uint8), size=shape)
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


# ---------------------------------------------------------------- QuantizeDownAndShrinkRange
@campaign("QuantizeDownAndShrinkRange_32to8")
def _qdsr(rng, i):
    k = i % 10
    if k < 4:
        n = int(rng.integers(1, 128))          # below the 128-element HVX threshold
    elif k < 7:
        n = int(rng.integers(128, 700))
    else:
        n = int(rng.integers(1, 300))
    shape = (1, 1, 1, n) if rng.random() < 0.5 else None
    if shape is None:
        d = int(rng.integers(1, 9)); w = max(1, n // d)
        shape = (1, 1, w, d)
    mag = [2 ** 8, 2 ** 16, 2 ** 24, 2 ** 31 - 1][int(rng.integers(0, 4))]
    sub = i % 7
    if sub == 0:
        x = np.zeros(shape, np.int64)
    elif sub == 1:
        x = rng.integers(0, mag, size=shape)
    elif sub == 2:
        x = -rng.integers(0, mag, size=shape)
    else:
        x = rng.integers(-mag, mag, size=shape)
    x = np.clip(x, -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    lo, hi, why = rand_range(rng, i)
    if why == "random":
        s = float(rng.uniform(0.001, 1000)); lo, hi = -s, s
    return Case([T.of(x, "i32", qint32=True), T.f(lo), T.f(hi)],
                [("u8", x.size + 128), ("f32", 4), ("f32", 4)],
                desc=f"shape {shape} codes |x|<{mag} range [{lo:.6g},{hi:.6g}] ({why})")


def _qdsr_filter(case, c, h, diffs):
    """For n >= 128 Hexscope (rightly, per its spec) models the DSP's quantize_asm (Path A),
    which the oracle cannot run; there the data bytes are checked against Hexscope's own
    Path B (the formula of nnlib's scalar twin) and Path A's deviations are only counted."""
    if not (c.ok and h.ok) or not diffs:
        return diffs
    from hexscope.engine.ops.requantize import requantize_i32_to_u8
    x = case.inputs[0].data
    if x.size < 128:
        return diffs
    rest = [d for d in diffs if not d.startswith("out0 data")]
    lvl = np.float32(np.float32(np.float32(case.inputs[2].data.ravel()[0])
                                - np.float32(case.inputs[1].data.ravel()[0])) * np.float32(2.0 ** -32))
    omin = np.float32(h.outs[1].logical().ravel()[0]); omax = np.float32(h.outs[2].logical().ravel()[0])
    with np.errstate(all="ignore"):
        b = requantize_i32_to_u8(x, lvl, omin, omax, aligned=False)
    cb = c.outs[0].logical()
    if not np.array_equal(np.asarray(b, np.int64).reshape(cb.shape), cb.astype(np.int64)):
        rest.append(f"out0 data (Path B, n>=128): {int(np.count_nonzero(b != cb))} differ")
    else:
        n = int(np.count_nonzero(h.outs[0].logical() != cb))
        rest.append(f"[expected] Path A (quantize_asm, DSP-only) differs from the scalar twin "
                    f"on {n}/{x.size} codes; Path B matches")
    return rest


def _qdsr_classify(case, c, h, diffs):
    lo = float(case.inputs[1].data.ravel()[0]); hi = float(case.inputs[2].data.ravel()[0])
    if all(d.startswith("[expected]") for d in diffs):
        return "expected: n>=128 Path A (quantize_asm) vs the scalar twin"
    if hi < lo:
        return "in_max < in_min: NaN/inf scale converted to int (x86 vs Hexagon conversion)"
    return diffs[0].split(":")[0]


CAMPAIGNS["QuantizeDownAndShrinkRange_32to8"].filter = _qdsr_filter
CAMPAIGNS["QuantizeDownAndShrinkRange_32to8"].classify = _qdsr_classify


# ---------------------------------------------------------------- helpers for 8-bit ops
def qrange(rng, i):
    lo, hi, why = rand_range(rng, i)
    return f32v(lo), f32v(hi), why


def F(v):
    return T.f(v)


# ---------------------------------------------------------------- QuantizedConv2d_8x8to32
def _conv_case(rng, i):
    b = int(rng.integers(1, 3))
    h, w = int(rng.integers(1, 10)), int(rng.integers(1, 10))
    cin, cout = int(rng.integers(1, 12)), int(rng.integers(1, 10))
    fh, fw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    sh, sw = [(1, 1), (2, 2), (1, 2), (2, 1), (3, 3), (3, 1)][int(rng.integers(0, 6))]
    pad = ["SAME", "VALID", "SAME", "VALID", "SAME_CAFFE", "NA"][i % 6]
    x = u8(rng, (b, h, w, cin)); f = u8(rng, (fh, fw, cin, cout))
    xl, xh, xw = qrange(rng, i); fl, fhh, fwhy = qrange(rng, i // 3 + 5)
    if rng.random() < 0.3:
        xl, xh = -1.0, 1.0
    return Case([T.of(x, "u8"), T.of(f, "u8"), F(xl), F(xh), F(fl), F(fhh),
                 T.shape_only((1, sh, sw, 1))],
                [("i32", 4 * b * (h + 2) * (w + 2) * cout + 256), ("f32", 4), ("f32", 4)], pad,
                desc=f"x{(b, h, w, cin)} f{(fh, fw, cin, cout)} s{(sh, sw)} {pad} "
                     f"x[{xl:.6g},{xh:.6g}]({xw}) f[{fl:.6g},{fhh:.6g}]({fwhy})")


CAMPAIGNS["QuantizedConv2d_8x8to32"] = Campaign(_conv_case)
CAMPAIGNS["QuantizedConv2d_8x8to32_ref"] = Campaign(_conv_case)


# ---------------------------------------------------------------- QuantizedMatMul_8x8to32
def _matmul_case(rng, i):
    m, k, n = int(rng.integers(1, 20)), int(rng.integers(1, 40)), int(rng.integers(1, 20))
    ashape = [(1, 1, m, k), (1, m, 1, k), (2, 1, m, k), (1, 1, 1, m * k)][i % 4]
    a = u8(rng, ashape); bm = u8(rng, (1, 1, k, n))
    al, ah, aw = qrange(rng, i); bl, bh, bw = qrange(rng, i // 2 + 3)
    na = int(np.prod(ashape)) // k
    return Case([T.of(a, "u8"), T.of(bm, "u8"), F(al), F(ah), F(bl), F(bh)],
                [("i32", 4 * na * n + 256), ("f32", 4), ("f32", 4)],
                desc=f"A{ashape} B{(1, 1, k, n)} a[{al:.6g},{ah:.6g}]({aw}) b[{bl:.6g},{bh:.6g}]({bw})")


CAMPAIGNS["QuantizedMatMul_8x8to32"] = Campaign(_matmul_case, c_op="QuantizedMatMul_8x8to32_ref")
CAMPAIGNS["QuantizedMatMul_8x8to32_ref"] = Campaign(_matmul_case)


# ---------------------------------------------------------------- QuantizedBiasAdd_8p8to32
def _biasadd_case(rng, i):
    shape = rand_shape(rng)
    x = u8(rng, shape); bias = u8(rng, (1, 1, 1, shape[3]))
    xl, xh, xw = qrange(rng, i); bl, bh, bw = qrange(rng, i // 2 + 7)
    return Case([T.of(x, "u8"), T.of(bias, "u8"), F(xl), F(xh), F(bl), F(bh)],
                [("i32", 4 * int(np.prod(shape)) + 128), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} x[{xl:.6g},{xh:.6g}]({xw}) b[{bl:.6g},{bh:.6g}]({bw})")


CAMPAIGNS["QuantizedBiasAdd_8p8to32"] = Campaign(_biasadd_case)
CAMPAIGNS["QuantizedBiasAdd_8p8to32_ref"] = Campaign(_biasadd_case)


# ---------------------------------------------------------------- Relu / ReluX
@campaign("QuantizedRelu_8")
def _relu(rng, i):
    shape = rand_shape(rng)
    x = u8(rng, shape); lo, hi, why = qrange(rng, i)
    return Case([T.of(x, "u8"), F(lo), F(hi)], [("u8", x.size + 128), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} [{lo:.6g},{hi:.6g}]({why})")


@campaign("QuantizedReluX_8")
def _relux(rng, i):
    shape = rand_shape(rng)
    x = u8(rng, shape); lo, hi, why = qrange(rng, i)
    mx = [f32v(rng.uniform(lo, hi) if hi > lo else 1.0), f32v(6.0), f32v(-1.0), f32v(1e9),
          f32v(hi), f32v(lo), 0.0][i % 7]
    return Case([T.of(x, "u8"), F(lo), F(hi), F(mx)], [("u8", x.size + 128), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} [{lo:.6g},{hi:.6g}]({why}) max_value {mx:.6g}")


# ---------------------------------------------------------------- pools
def _pool_case(rng, i, big=False):
    b = int(rng.integers(1, 3)); h, w = int(rng.integers(1, 12)), int(rng.integers(1, 12))
    d = int(rng.integers(1, 40))
    wh, ww = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    if big and i % 10 == 0:
        h, w, wh, ww, d = 13, 13, 12, 12, 3
    sh, sw = [(1, 1), (2, 2), (1, 2), (3, 3), (2, 1)][int(rng.integers(0, 5))]
    pad = ["SAME", "VALID", "SAME", "VALID", "SAME_CAFFE"][i % 5]
    x = u8(rng, (b, h, w, d))
    if big and i % 10 == 0:
        x = np.full((b, h, w, d), 255, np.uint8)
    lo, hi, why = qrange(rng, i)
    return Case([T.of(x, "u8"), F(lo), F(hi), T.shape_only((1, wh, ww, 1)),
                 T.shape_only((1, sh, sw, 1))],
                [("u8", b * (h + 1) * (w + 1) * d + 128), ("f32", 4), ("f32", 4)], pad,
                desc=f"x{(b, h, w, d)} win{(wh, ww)} s{(sh, sw)} {pad} [{lo:.6g},{hi:.6g}]")


CAMPAIGNS["QuantizedMaxPool_8"] = Campaign(lambda r, i: _pool_case(r, i), c_op="QuantizedMaxPool_8_ref")
CAMPAIGNS["QuantizedAvgPool_8"] = Campaign(lambda r, i: _pool_case(r, i, big=True),
                                           c_op="QuantizedAvgPool_8_ref")


# ---------------------------------------------------------------- QuantizedMul_8x8to8
@campaign("QuantizedMul_8x8to8")
def _mul888(rng, i):
    shape = rand_shape(rng)
    k = i % 4
    ashape = shape
    bshape = shape if k == 0 else ((1, 1, 1, 1) if k == 1 else shape)
    if k == 2:
        ashape = (1, 1, 1, 1)
    a = u8(rng, ashape); bq = u8(rng, bshape)
    al, ah, aw = qrange(rng, i); bl, bh, bw = qrange(rng, i // 2 + 1)
    n = max(a.size, bq.size)
    return Case([T.of(a, "u8"), T.of(bq, "u8"), F(al), F(ah), F(bl), F(bh)],
                [("u8", n + 128), ("f32", 4), ("f32", 4)],
                desc=f"a{ashape} b{bshape} a[{al:.6g},{ah:.6g}]({aw}) b[{bl:.6g},{bh:.6g}]({bw})")


def f32data(rng, shape, i):
    k = i % 8
    if k == 0:
        return np.zeros(shape, np.float32)
    if k == 1:
        return rng.uniform(0, 10, size=shape).astype(np.float32)
    if k == 2:
        return -rng.uniform(0, 10, size=shape).astype(np.float32)
    if k == 3:
        return (rng.standard_normal(shape) * 1e-6).astype(np.float32)
    if k == 4:
        return (rng.standard_normal(shape) * 1e4).astype(np.float32)
    return (rng.standard_normal(shape) * float(rng.uniform(0.1, 20))).astype(np.float32)


def _avgpool_classify(case, c, h, diffs):
    """AvgPool: Hexscope's plain op models the HVX 16-bit sum (spec §9); C runs _ref."""
    x = case.inputs[0].data.astype(np.int64)
    wh, ww = case.inputs[3].shape[1:3]
    if x.max() * wh * ww >= 32768 and all(d.startswith("out0 data") for d in diffs):
        return "expected: window sum >= 32768, Hexscope models the HVX u16/s16 sum defect (C _ref has none)"
    return diffs[0].split(":")[0]


CAMPAIGNS["QuantizedAvgPool_8"].classify = _avgpool_classify
CAMPAIGNS["QuantizedMaxPool_8_asm"] = Campaign(lambda r, i: _pool_case(r, i), c_op="QuantizedMaxPool_8",
                                               hs_op="QuantizedMaxPool_8")
CAMPAIGNS["QuantizedAvgPool_8_asm"] = Campaign(lambda r, i: _pool_case(r, i), c_op="QuantizedAvgPool_8",
                                               hs_op="QuantizedAvgPool_8")
CAMPAIGNS["QuantizedMatMul_8x8to32_asm"] = Campaign(_matmul_case, c_op="QuantizedMatMul_8x8to32",
                                                    hs_op="QuantizedMatMul_8x8to32")


# ---------------------------------------------------------------- Quantize / AutoQuantize / Dequantize
def _quantize_case(rng, i):
    shape = rand_shape(rng, maxd=70)
    x = f32data(rng, shape, i)
    lo, hi, why = qrange(rng, i)
    if why == "random" and rng.random() < 0.5:
        lo, hi = f32v(np.minimum(x.min(), 0)), f32v(np.maximum(x.max(), 0))
        why = "data range"
    return Case([T.of(x, "f32"), F(lo), F(hi)], [("u8", x.size + 128), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} [{lo:.6g},{hi:.6g}]({why})")


def _qcls(case, c, h, diffs):
    if not (c.ok and h.ok):
        return diffs[0][:90]
    d0 = [d for d in diffs if d.startswith("out0")]
    rng_d = [d for d in diffs if d.startswith("out1") or d.startswith("out2")]
    if rng_d:
        return "range (out_min/out_max) differs"
    if d0 and "max |diff| 1;" in d0[0]:
        return "codes differ by 1 only (plain op = HVX quantizer in Hexscope vs C _ref)"
    return diffs[0].split(":")[0]


CAMPAIGNS["Quantize"] = Campaign(_quantize_case, c_op="Quantize_ref", classify=_qcls)
CAMPAIGNS["Quantize_plain_C"] = Campaign(_quantize_case, c_op="Quantize", hs_op="Quantize")


def _autoq_case(rng, i):
    shape = rand_shape(rng, maxd=70)
    x = f32data(rng, shape, i)
    if i % 17 == 5:
        x.flat[0] = np.nan
    if i % 17 == 6:
        x.flat[-1] = np.inf
    return Case([T.of(x, "f32")], [("u8", x.size + 128), ("f32", 4), ("f32", 4)], desc=f"x{shape} kind{i % 8}")


CAMPAIGNS["AutoQuantize"] = Campaign(_autoq_case, c_op="AutoQuantize_ref", classify=_qcls)
CAMPAIGNS["AutoQuantize_plain_C"] = Campaign(_autoq_case, c_op="AutoQuantize", hs_op="AutoQuantize")


@campaign("Dequantize")
def _deq(rng, i):
    shape = rand_shape(rng, maxd=70)
    x = u8(rng, shape)
    lo, hi, why = qrange(rng, i)
    if i % 13 == 12:
        lo, hi, why = 0.0, 1e-40, "step < 2^-126"
    if i % 13 == 11:
        lo, hi, why = -1e38, 3e38, "step huge"
    return Case([T.of(x, "u8"), F(lo), F(hi)], [("f32", 4 * x.size + 128)],
                desc=f"x{shape} [{lo:.6g},{hi:.6g}]({why})")


# ---------------------------------------------------------------- concat
def _qconcat_case(rng, i, d32=False):
    n = int(rng.integers(1, 5))
    b, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
    axis = 3 if i % 10 else int(rng.integers(0, 3))
    xs, mins, maxs = [], [], []
    for k in range(n):
        d = int(rng.integers(1, 40))
        shape = (b, h, w, d)
        if i % 23 == 7 and k == 1:
            shape = (b, h + 1, w, d)           # mismatching height
        xs.append(T.of(u8(rng, shape), "u8"))
        lo, hi, _ = qrange(rng, i + k)
        if i % 3 == 0:
            lo, hi = -1.0, 1.0                 # all inputs share the range
        mins.append(F(lo)); maxs.append(F(hi))
    tot = sum(x.data.size for x in xs)
    desc = f"axis {axis} shapes {[x.shape for x in xs]} ranges {[(float(a.data.ravel()[0]), float(b_.data.ravel()[0])) for a, b_ in zip(mins, maxs)]}"
    return Case([T.i(axis)] + xs + mins + maxs, [("u8", tot * 2 + 4096), ("f32", 4), ("f32", 4)], desc=desc)


CAMPAIGNS["QuantizedConcat_8"] = Campaign(_qconcat_case, c_op="QuantizedConcat_8_ref")
CAMPAIGNS["QuantizedConcat_8_asm"] = Campaign(_qconcat_case, c_op="QuantizedConcat_8", hs_op="QuantizedConcat_8")


def _concatf_case(rng, i, v2=False):
    n = int(rng.integers(1, 5))
    base = list(rand_shape(rng, maxd=10))
    axis = int(rng.integers(0, 4))
    if i % 11 == 3:
        axis = int(rng.choice([-1, 4, 5]))
    xs = []
    for k in range(n):
        s = list(base)
        if 0 <= axis < 4:
            s[axis] = int(rng.integers(1, 6))
        if i % 19 == 4 and k == 1:
            s[(axis + 1) % 4] += 1
        xs.append(T.of(rng.standard_normal(tuple(s)).astype(np.float32), "f32"))
    tot = sum(x.data.size for x in xs)
    ins = (xs + [T.i(axis)]) if v2 else ([T.i(axis)] + xs)
    return Case(ins, [("f32", 4 * tot + 4096)], desc=f"axis {axis} shapes {[x.shape for x in xs]}")


CAMPAIGNS["Concat_f"] = Campaign(lambda r, i: _concatf_case(r, i))
CAMPAIGNS["ConcatV2_f"] = Campaign(lambda r, i: _concatf_case(r, i, v2=True))


# ---------------------------------------------------------------- gather
def _gather_case(rng, i, kind):
    trank = int(rng.integers(1, 5))
    tshape = [1] * (4 - trank) + [int(rng.integers(1, 7)) for _ in range(trank)]
    irank = int(rng.integers(0, 4))
    ishape = [1] * (4 - irank) + [int(rng.integers(1, 5)) for _ in range(irank)]
    dimsel = None
    if i % 3 == 1:
        dimsel = int(rng.integers(-1, 4))
    ind_rank = None
    if dimsel is not None and i % 2 == 0:
        ind_rank = int(rng.integers(-1, 5))
    # table index dimension as the op will choose it
    td = next((k for k in range(4) if tshape[k] > 1), 3) if dimsel is None or dimsel < 0 else dimsel
    tabn = tshape[td]
    idx = rng.integers(0, tabn, size=ishape).astype(np.int32)
    pad = ["NA", "SAME", "VALID"][i % 3]
    if i % 7 == 3:
        idx.flat[0] = tabn + 2                     # out of range
    if i % 7 == 4:
        idx.flat[-1] = -1
    if kind == "f":
        table = T.of(rng.standard_normal(tshape).astype(np.float32), "f32"); odt = "f32"
    elif kind == "i":
        table = T.of(rng.integers(-1000, 1000, size=tshape).astype(np.int32), "i32"); odt = "i32"
    else:
        table = T.of(u8(rng, tshape), "u8"); odt = "u8"
    ins = [T.of(idx, "i32"), table]
    outs = [(odt, 4 * idx.size * int(np.prod(tshape)) + 4096)]
    if kind == "8":
        lo, hi, _ = qrange(rng, i)
        ins += [F(lo), F(hi)]
        outs += [("f32", 4), ("f32", 4)]
    if dimsel is not None:
        ins.append(T.i(dimsel))
        if ind_rank is not None:
            ins.append(T.i(ind_rank))
    return Case(ins, outs, pad, desc=f"index{tuple(ishape)} table{tuple(tshape)} dimsel {dimsel} "
                                    f"index_rank {ind_rank} {pad}")


CAMPAIGNS["Gather_f"] = Campaign(lambda r, i: _gather_case(r, i, "f"))
CAMPAIGNS["Gather_int32"] = Campaign(lambda r, i: _gather_case(r, i, "i"))
CAMPAIGNS["Gather_8"] = Campaign(lambda r, i: _gather_case(r, i, "8"))


# ---------------------------------------------------------------- Min_f / Max_f
def _minmax_case(rng, i):
    shape = rand_shape(rng, maxd=12)
    x = f32data(rng, shape, i)
    if i % 9 == 4:
        x.flat[int(rng.integers(0, x.size))] = np.nan
    ins = [T.of(x, "f32")]
    pad = "NA"
    desc = f"x{shape}"
    if i % 4 != 0:
        naxes = int(rng.integers(0, 4))
        axes = rng.choice(np.arange(-4, 4), size=naxes, replace=False).astype(np.int32)
        ins.append(T.of(axes, "i32"))
        desc += f" axes {axes.tolist()}"
        if i % 3 == 0:
            tr = int(rng.integers(0, 5))
            ins.append(T.i(tr)); desc += f" true_rank {tr}"
        pad = ["NA", "VALID", "SAME"][i % 3]
    return Case(ins, [("f32", 4 * x.size + 128)], pad, desc=desc + f" {pad}")


CAMPAIGNS["Min_f"] = Campaign(_minmax_case)
CAMPAIGNS["Max_f"] = Campaign(_minmax_case)


# ---------------------------------------------------------------- float elementwise
def _ulp_cls(case, c, h, diffs):
    import re
    m = re.search(r"max ulp (\d+)", diffs[0]) if diffs else None
    if m and int(m.group(1)) <= 2:
        return f"float data differs by <= {m.group(1)} ulp (libm / evaluation order)"
    return diffs[0].split(":")[0] if diffs else ""


@campaign("Softmax_f", classify=_ulp_cls)
def _softmax(rng, i):
    shape = rand_shape(rng, maxd=50)
    x = f32data(rng, shape, i)
    ins = [T.of(x, "f32")]
    if i % 2:
        ins.append(F(f32v([1.0, 0.5, 2.0, -1.0, 0.0, 10.0][i % 6])))
    return Case(ins, [("f32", 4 * x.size + 128)], desc=f"x{shape} beta {ins[1].data.ravel()[0] if len(ins) > 1 else 'default'}")


@campaign("Tanh_f", classify=_ulp_cls)
def _tanh(rng, i):
    shape = rand_shape(rng, maxd=50)
    x = f32data(rng, shape, i)
    if i % 10 == 3:
        x.flat[0] = np.nan; x.flat[-1] = -np.inf
    return Case([T.of(x, "f32")], [("f32", 4 * x.size + 128)], desc=f"x{shape} kind {i % 8}")


CAMPAIGNS["Sigmoid_f"] = Campaign(_tanh, classify=_ulp_cls)


@campaign("LRN_f", classify=_ulp_cls)
def _lrn(rng, i):
    shape = rand_shape(rng, maxd=12)
    x = f32data(rng, shape, i)
    win = (1, int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 6)))
    if i % 5 == 0:
        win = (1, 1, 1, 5)
    wdata = np.full(win, f32v(rng.uniform(1, 8)), np.float32)
    bias, alpha, beta = f32v(rng.uniform(0.5, 2)), f32v(rng.uniform(1e-5, 1e-2)), f32v(rng.choice([0.75, 0.5, 1.0]))
    if i % 9 == 4:
        bias = 0.0                     # t can be 0: logf(0) = -inf
        x.flat[::2] = 0.0
    return Case([T.of(x, "f32"), T.of(wdata, "f32"), F(bias), F(alpha), F(beta)],
                [("f32", 4 * x.size + 128)], desc=f"x{shape} window{win} bias {bias} alpha {alpha} beta {beta}")


# ---------------------------------------------------------------- Close / Check
def _close_pair(rng, i, dt):
    shape = rand_shape(rng, maxd=10)
    if dt == "f32":
        a = (rng.standard_normal(shape) * 5).astype(np.float32)
        b = a.copy()
        k = i % 5
        if k == 1:
            b = (a + rng.standard_normal(shape).astype(np.float32) * 0.05 * (np.abs(a).max() + 1e-3)).astype(np.float32)
        elif k == 2:
            b.flat[0] += 10.0
        elif k == 3 and a.size > 1:
            b = a[..., ::-1].copy() if shape[3] > 1 else b
        elif k == 4:
            b.flat[-1] = np.nan
    elif dt == "u8":
        a = u8(rng, shape); b = a.copy()
        if i % 4 == 1:
            b.flat[0] = (int(b.flat[0]) + 1) % 256
        elif i % 4 == 2:
            b = u8(rng, shape)
    else:
        a = rng.integers(-1000, 1000, size=shape).astype(np.int32); b = a.copy()
        if i % 4 == 1:
            b.flat[0] += 1
        elif i % 4 == 2:
            b = rng.integers(-1000, 1000, size=shape).astype(np.int32)
    if i % 17 == 9:
        b = b.reshape(-1)[: max(1, b.size - 1)] if b.size > 1 else b
    return a, b, shape


def _close_case(rng, i, dt, with_tol=False):
    a, b, shape = _close_pair(rng, i, dt)
    ins = [T.of(a, dt, qint32=False), T.of(b, dt)]
    if with_tol and i % 2:
        ins.append(F(f32v([0.07, 0.001, 0.5, 0.0][i % 4])))
    return Case(ins, [], desc=f"{dt} {shape} vs {b.shape} k{i % 5}")


CAMPAIGNS["Close_f"] = Campaign(lambda r, i: _close_case(r, i, "f32", True))
CAMPAIGNS["Close_quint8"] = Campaign(lambda r, i: _close_case(r, i, "u8"))
CAMPAIGNS["Close_int32"] = Campaign(lambda r, i: _close_case(r, i, "i32"))
CAMPAIGNS["Close_qint32"] = Campaign(lambda r, i: _close_case(r, i, "i32"))
CAMPAIGNS["Check"] = Campaign(lambda r, i: _close_case(r, i, ["f32", "u8", "i32"][i % 3]))


@campaign("Close_q_quint8")
def _closeq(rng, i):
    shape = rand_shape(rng, maxd=10)
    a = u8(rng, shape)
    lo, hi, why = qrange(rng, i)
    b = a.copy(); lo2, hi2 = lo, hi
    k = i % 4
    if k == 1:
        b = np.clip(a.astype(int) + rng.integers(-2, 3, size=shape), 0, 255).astype(np.uint8)
    elif k == 2:
        lo2, hi2 = lo * 1.01, hi * 1.01
    elif k == 3:
        b = u8(rng, shape)
    ins = [T.of(a, "u8"), F(lo), F(hi), T.of(b, "u8"), F(lo2), F(hi2)]
    if i % 3 == 0:
        ins.append(F(f32v([0.07, 0.01, 0.3][i % 3])))
    return Case(ins, [], desc=f"{shape} [{lo:.6g},{hi:.6g}]({why}) k{k}")


# ---------------------------------------------------------------- Flatten
@campaign("QuantizedFlatten")
def _qflat(rng, i):
    shape = rand_shape(rng)
    x = u8(rng, shape); lo, hi, _ = qrange(rng, i)
    return Case([T.of(x, "u8"), F(lo), F(hi)], [("u8", x.size + 128), ("f32", 4), ("f32", 4)], desc=f"x{shape}")


@campaign("Flatten")
def _flat(rng, i):
    shape = rand_shape(rng)
    x = rng.standard_normal(shape).astype(np.float32)
    ins = [T.of(x, "f32")]
    if i % 2:
        ins.append(T.i(int(rng.integers(-2, 5))))
    return Case(ins, [("f32", 4 * x.size + 128)], desc=f"x{shape} n_in {len(ins)}")


# The same float campaigns with Hexscope's exp/log/tanh swapped for glibc's (the C side's
# libm): what remains is a difference of formula or evaluation order, not of libm.
for _n in ("Softmax_f", "Tanh_f", "Sigmoid_f", "LRN_f"):
    CAMPAIGNS[_n + "_glibc"] = Campaign(CAMPAIGNS[_n].gen, c_op=_n, hs_op=_n, glibc=True)


# ---------------------------------------------------------------- d32
def rand_d32_pad(rng, shape, allow_extra_slice=True):
    b, h, w, d = shape
    hb, ha = int(rng.integers(0, 5)), int(rng.integers(0, 5))
    wb = int(rng.integers(0, 8))
    wa = (-(wb + w)) % 4 + 4 * int(rng.integers(0, 2))
    db = int(rng.integers(0, 32)) if rng.random() < 0.5 else 0
    da = (-(db + d)) % 32
    if allow_extra_slice and rng.random() < 0.1:
        da += 32
    return (hb, ha, wb, wa, db, da)


def d32_capacity(shape, elsize=1, index=0, d32_output=True):
    """newnode.c compute_max_size_with_pad (read from the source; Hexscope uses the same rule)."""
    b, h, w, d = shape
    if d32_output and not ((b, h, w, d) == (1, 1, 1, 1) and elsize == 4 and index > 0):
        h, w, d = h + 8, (w + 7) & ~3, (d + 31) & ~31
    return (b * h * w * d * elsize + 127) & ~127


@campaign("FillPadding_8_d32", compare_kw={"compare_padding": True, "tail": True})
def _fillpad(rng, i):
    shape = rand_shape(rng, maxh=6, maxw=7, maxd=70)
    pad = rand_d32_pad(rng, shape)
    x = T(shape, "u8", u8(rng, shape), d32=pad, d32_fill=int(rng.integers(0, 256)))
    ins = [x]
    k = i % 6
    if k >= 1:
        ins.append(T.i([-1, 0, 7, 300, -2, 255][int(rng.integers(0, 6))]))
    if k >= 3:
        ins.append(T.i([-1, 0, 0x55, -1, 1000][int(rng.integers(0, 5))]))
    # declared output size: same as input, or a bit smaller/larger (how many tail rows fit)
    dmax = list(shape)
    if i % 5 == 1:
        dmax[1] = max(1, shape[1] - 1)
    elif i % 5 == 2:
        dmax[1] = shape[1] + 2
    cap = d32_capacity(tuple(dmax))
    return Case(ins, [("u8", cap)], def_max=[tuple(dmax)],
                desc=f"x{shape} pad{pad} fills {[int(t.data.ravel()[0]) for t in ins[1:]]} declared{tuple(dmax)}")


def _to_d32_case(rng, i, fill=False):
    shape = rand_shape(rng, maxh=6, maxw=9, maxd=70)
    x = u8(rng, shape)
    ins = [T.of(x, "u8")]
    nopt = i % 5
    opts = [int(rng.integers(-2, 34)), int(rng.integers(-1, 9)), int(rng.integers(-1, 9)), int(rng.integers(-1, 10))]
    for k in range(nopt):
        ins.append(T.i(opts[k]))
    cap = d32_capacity(shape)
    return Case(ins, [("u8", cap)], def_max=[shape], desc=f"x{shape} options {opts[:nopt]}")


CAMPAIGNS["Convert_to_d32"] = Campaign(_to_d32_case, compare_kw={"layout_only_c_stub": True})


@campaign("Convert_from_d32", compare_kw={"layout_only_c_stub": True})
def _from_d32(rng, i):
    shape = rand_shape(rng, maxh=6, maxw=9, maxd=70)
    pad = rand_d32_pad(rng, shape)
    x = T(shape, "u8", u8(rng, shape), d32=pad, d32_fill=0x33)
    return Case([x], [("u8", int(np.prod(shape)) + 256)], def_max=[shape], desc=f"x{shape} pad{pad}")


def _qft_case(rng, i):
    shape = rand_shape(rng, maxh=6, maxw=9, maxd=70)
    x = f32data(rng, shape, i)
    if i % 13 == 5:
        x.flat[0] = np.nan
    if i % 13 == 6:
        x.flat[-1] = np.inf
    ins = [T.of(x, "f32")]
    nopt = i % 5
    opts = [int(rng.integers(-1, 33)), int(rng.integers(-1, 9)), int(rng.integers(-1, 9)), int(rng.integers(-1, 10))]
    for k in range(nopt):
        ins.append(T.i(opts[k]))
    outs = [("u8", d32_capacity(shape)), ("f32", 128), ("f32", 128)]
    dm = [shape, (1, 1, 1, 1), (1, 1, 1, 1)]
    if i % 2:
        outs.append(("f32", 4 * int(np.prod(shape)) + 128)); dm.append(shape)
    return Case(ins, outs, def_max=dm, desc=f"x{shape} kind {i % 8} options {opts[:nopt]} n_out {len(outs)}")


CAMPAIGNS["QuantizeForTest_d32"] = Campaign(_qft_case, compare_kw={"compare_padding": False})


def _aq_d32_case(rng, i):
    c = _qft_case(rng, i)
    c.outs = c.outs[:3]; c.def_max = c.def_max[:3]
    return c


CAMPAIGNS["AutoQuantize_d32"] = Campaign(_aq_d32_case, c_op="AutoQuantize_d32_ref", classify=_qcls)
CAMPAIGNS["AutoQuantize_d32_plain_C"] = Campaign(_aq_d32_case, c_op="AutoQuantize_d32", hs_op="AutoQuantize_d32")


@campaign("Close_d32")
def _close_d32(rng, i):
    shape = rand_shape(rng, maxh=5, maxw=6, maxd=40)
    lo, hi, why = qrange(rng, i)
    if why in ("min>max", "min==max", "min==max==0"):
        lo, hi = -1.0, 1.0
    q = u8(rng, shape)
    step = (hi - lo) / 255.0
    ref = (lo + q.astype(np.float64) * step).astype(np.float32)
    k = i % 5
    if k == 1:
        ref = ref + np.float32(step * 0.6)
    elif k == 2:
        ref = (ref + rng.standard_normal(shape) * step * 2).astype(np.float32)
    elif k == 3:
        ref.flat[0] += np.float32(step * 10)
    ins = [T(shape, "u8", q, d32=rand_d32_pad(rng, shape)), F(lo), F(hi), T.of(ref.astype(np.float32), "f32")]
    if i % 3:
        ins.append(F(f32v([0.2, 0.5, 0.01, -1.0][i % 4])))
        if i % 3 == 2:
            ins.append(F(f32v([0.05, 0.0, 0.5][i % 3])))
    return Case(ins, [], desc=f"{shape} [{lo:.6g},{hi:.6g}] k{k} n_in {len(ins)}")


def _qconcat_d32_case(rng, i):
    n = int(rng.integers(1, 5))
    b, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 7))
    axis = [3, 3, 3, 2, 1, 0][i % 6]
    xs, mins, maxs = [], [], []
    for k in range(n):
        shape = [b, h, w, int(rng.integers(1, 40))]
        if axis != 3:
            shape[3] = 20
            shape[axis] = int(rng.integers(1, 5))
        shape = tuple(shape)
        xs.append(T(shape, "u8", u8(rng, shape), d32=rand_d32_pad(rng, shape, False), d32_fill=0x5A))
        lo, hi, _ = qrange(rng, i + k)
        if i % 3 == 0:
            lo, hi = -1.0, 1.0
        mins.append(F(lo)); maxs.append(F(hi))
    oshape = list(xs[0].shape)
    oshape[axis] = sum(x.shape[axis] for x in xs)
    oshape = tuple(oshape)
    desc = f"axis {axis} shapes {[x.shape for x in xs]} pads {[x.d32 for x in xs]}"
    return Case([T.i(axis)] + xs + mins + maxs,
                [("u8", d32_capacity(oshape)), ("f32", 128), ("f32", 128)],
                def_max=[oshape, (1, 1, 1, 1), (1, 1, 1, 1)], desc=desc)


CAMPAIGNS["QuantizedConcat_8_d32"] = Campaign(_qconcat_d32_case, c_op="QuantizedConcat_8_d32_ref")
CAMPAIGNS["QuantizedConcat_8_d32_hvx"] = Campaign(_qconcat_d32_case, c_op="QuantizedConcat_8_d32",
                                                  hs_op="QuantizedConcat_8_d32")


def _fillpad_cls(case, c, h, diffs):
    pad = case.inputs[0].d32
    if pad[5] >= 32:
        return "depth-after padding >= 32 (a padding-only slice): nnlib uses nd32 (data slices)"
    return diffs[0].split(":")[0]


CAMPAIGNS["FillPadding_8_d32"].classify = _fillpad_cls


_ORACLE = None


def _placement_filter(direction):
    """Convert_to/from_d32: the copy loops are HVX-only, so the data placement of Hexscope's
    output is checked against nnlib's own d32 addressing (tensor_offset_for_d32)."""
    def f(case, c, h, diffs):
        global _ORACLE
        if diffs or not h.ok or not c.outs:
            return diffs
        from oracle import Oracle, d32_offsets
        _ORACLE = _ORACLE or Oracle()
        x = case.inputs[0]
        if direction == "to":
            ho = h.outs[0]
            offs = d32_offsets(_ORACLE, ho.shape, ho.d32)
            got = ho.raw[offs]
            want = x.data
        else:
            offs = d32_offsets(_ORACLE, x.shape, x.d32)
            want = x.memory()[offs]
            got = h.outs[0].logical()
        if not np.array_equal(got, want):
            return [f"data placement vs nnlib's tensor_offset_for_d32: {int(np.count_nonzero(got != want))} differ"]
        return diffs
    return f


CAMPAIGNS["Convert_to_d32"].filter = _placement_filter("to")
CAMPAIGNS["Convert_from_d32"].filter = _placement_filter("from")


def _aq_d32_case2(rng, i):
    """AutoQuantize_d32's plain op has no D32_OUTPUT flag (op_quantize.c), so its capacity is
    the declared size without the d32 widening: declare room for the padding explicitly."""
    c = _qft_case(rng, i)
    c.outs = c.outs[:3]; c.def_max = c.def_max[:3]
    b, h, w, d = c.def_max[0]
    big = (b, h + 18, w + 16, (d + 31) & ~31)
    c.def_max[0] = big
    c.outs[0] = ("u8", d32_capacity(big, d32_output=False))
    return c


CAMPAIGNS["AutoQuantize_d32"] = Campaign(_aq_d32_case2, c_op="AutoQuantize_d32_ref", classify=_qcls)
CAMPAIGNS["AutoQuantize_d32_plain_C"] = Campaign(_aq_d32_case2, c_op="AutoQuantize_d32", hs_op="AutoQuantize_d32")


def _add888_case(rng, i):
    shape = rand_shape(rng)
    bshape = shape if i % 2 == 0 else (1, 1, 1, shape[3])
    a = u8(rng, shape); bq = u8(rng, bshape)
    al, ah, _ = qrange(rng, i); bl, bh, _ = qrange(rng, i + 3)
    ins = [T.of(a, "u8"), T.of(bq, "u8"), F(al), F(ah), F(bl), F(bh)]
    if i % 3 == 0:
        ins += [F(-4.0), F(4.0)]
    return Case(ins, [("u8", a.size + 128), ("f32", 4), ("f32", 4)], desc=f"a{shape} b{bshape}")


CAMPAIGNS["QuantizedAdd_8p8to8"] = Campaign(_add888_case)


def _d32_arith_case(rng, i):
    shape = rand_shape(rng, maxh=4, maxw=6, maxd=40)
    a = T(shape, "u8", u8(rng, shape), d32=rand_d32_pad(rng, shape, False))
    b = T(shape, "u8", u8(rng, shape), d32=rand_d32_pad(rng, shape, False))
    al, ah, _ = qrange(rng, i); bl, bh, _ = qrange(rng, i + 3)
    return Case([a, b, F(al), F(ah), F(bl), F(bh)],
                [("u8", d32_capacity(shape)), ("f32", 128), ("f32", 128)],
                def_max=[shape, (1, 1, 1, 1), (1, 1, 1, 1)], desc=f"{shape}")


for _n in ("QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32", "QuantizedMul_8x8to8_d32"):
    CAMPAIGNS[_n] = Campaign(_d32_arith_case)


def _qconcat_cls(case, c, h, diffs):
    """QuantizedConcat_8: Hexscope models the HVX routine (16-bit offset wrap when off > 32512,
    spec §10); the C side runs _ref, which saturates."""
    from hexscope.engine import hexmath
    n = (len(case.inputs) - 1) // 3
    mins = [float(t.data.ravel()[0]) for t in case.inputs[1 + n:1 + 2 * n]]
    maxs = [float(t.data.ravel()[0]) for t in case.inputs[1 + 2 * n:]]
    with np.errstate(all="ignore"):
        omin = min(mins + [0.0])
        big = False
        for a, b in zip(mins, maxs):
            a = min(a, 0.0)
            lvl = hexmath.div255(np.float32(b) - np.float32(a))
            off = hexmath.rndi1(np.float32((np.float32(a) - np.float32(omin)) / lvl))
            big |= off > 32512
    if big:
        return "expected: an input offset > 32512 (HVX 16-bit wrap modelled by Hexscope, _ref saturates)"
    return diffs[0].split(":")[0]


CAMPAIGNS["QuantizedConcat_8"].classify = _qconcat_cls


def _quant_status_cls(case, c, h, diffs):
    if diffs and diffs[0].startswith("status: C fails") and "invalid range" in diffs[0]:
        return "expected: plain Quantize accepts a range _ref rejects (min > 0 / max < 0, spec 17.2)"
    return _qcls(case, c, h, diffs)


CAMPAIGNS["Quantize"].classify = _quant_status_cls


def _find_scaling(neg_min, mx):
    import ctypes as C
    global _ORACLE
    from oracle import Oracle
    _ORACLE = _ORACLE or Oracle()
    f = _ORACLE.lib.oracle_find_scaling_for_hvx_quant
    f.restype = C.c_int
    f.argtypes = [C.c_float, C.c_float, C.POINTER(C.c_int32)]
    o5 = (C.c_int32 * 5)()
    rc = f(neg_min, mx, o5)
    if rc:
        return None
    return (np.int32(o5[3]).view(np.float32), np.int32(o5[4]).view(np.float32))


def _plain_quant_filter(auto):
    """Quantize / AutoQuantize: Hexscope models the plain (HVX) op; the C oracle runs _ref.
    The plain op's range comes from C code (find_scaling_for_hvx_quant), so the range output
    is checked against that C function instead; the codes are HVX-only and only summarised."""
    def f(case, c, h, diffs):
        if not h.ok:
            return diffs
        x = case.inputs[0].data
        if auto:
            with np.errstate(all="ignore"):
                lo = np.float32(min(0.0, float(np.min(x)))) if x.size else np.float32(0)
                hi = np.float32(max(0.0, float(np.max(x)))) if x.size else np.float32(0)
            neg = np.float32(-lo) if lo < 0 else np.float32(0.0)   # the asm range finder yields +0.0
        else:
            neg = -np.float32(case.inputs[1].data.ravel()[0]); hi = np.float32(case.inputs[2].data.ravel()[0])
        r = _find_scaling(float(neg), float(hi))
        hmin = np.float32(h.outs[1].logical().ravel()[0]); hmax = np.float32(h.outs[2].logical().ravel()[0])
        out = [d for d in diffs if not (d.startswith("out1") or d.startswith("out2") or d.startswith("status"))]
        if r is None:
            out.append("range: C find_scaling_for_hvx_quant rejects (inf/NaN), Hexscope ok")
        elif (r[0].view(np.uint32), r[1].view(np.uint32)) != (hmin.view(np.uint32), hmax.view(np.uint32)):
            out.append(f"range vs C find_scaling_for_hvx_quant: C ({r[0]!r},{r[1]!r}) H ({hmin!r},{hmax!r})")
        if out and all(d.startswith("out0") for d in out):
            same_range = c.ok and (np.float32(c.outs[1].logical().ravel()[0]).view(np.uint32),
                                   np.float32(c.outs[2].logical().ravel()[0]).view(np.uint32)) == \
                (hmin.view(np.uint32), hmax.view(np.uint32))
            if not same_range:
                return ["[expected] codes: _ref quantizes over another range (R1 / wider minimum) than the plain op"]
            rng_w = float(hmax) - float(hmin)
            far = bool(np.any(np.abs(x.astype(np.float64)) > 16 * rng_w)) if rng_w > 0 else True
            import re
            m = re.search(r"max \|diff\| (\d+)", out[0])
            if m and int(m.group(1)) <= 1:
                return ["[expected] codes: plain (HVX quantizer) vs _ref differ by 1 on some elements"]
            if far:
                return ["[unverifiable] codes: inputs >= 16x the range outside it (HVX negative shift, spec 17.2)"]
        return out
    return f


def _plain_quant_cls(case, c, h, diffs):
    return diffs[0][:100] if diffs else ""


CAMPAIGNS["Quantize"].filter = _plain_quant_filter(False)
CAMPAIGNS["Quantize"].classify = _plain_quant_cls
CAMPAIGNS["AutoQuantize"].filter = _plain_quant_filter(True)
CAMPAIGNS["AutoQuantize"].classify = _plain_quant_cls


def _concat_d32_cls(case, c, h, diffs):
    if all("out1" in d and ("-0.0" in d or "0.0" in d) for d in diffs):
        return "sign of a zero out_min (inputs mix -0.0 and +0.0): fminf operand order, implementation-defined"
    return diffs[0].split(":")[0]


CAMPAIGNS["QuantizedConcat_8_d32"].classify = _concat_d32_cls


def _add888_cls(case, c, h, diffs):
    real = [d for d in diffs if not d.startswith("[note]")]
    if not real:
        return "only the output type tag differs (C tags QINT8, op_add.c)"
    if case.inputs[0].shape != case.inputs[1].shape:
        return "broadcast: nnlib's expand() reads past the end of the smaller input (undefined bytes)"
    return real[0].split(":")[0]


CAMPAIGNS["QuantizedAdd_8p8to8"].classify = _add888_cls


# their C code calls the asm range finder before checking the range for inf/NaN
CAMPAIGNS["AutoQuantize_plain_C"].stub_after_checks = False
CAMPAIGNS["AutoQuantize_d32_plain_C"].stub_after_checks = False

# gather checks each index while it copies, so reaching its HVX copy proves nothing
for _n in ("Gather_f", "Gather_int32", "Gather_8"):
    CAMPAIGNS[_n].stub_after_checks = False


def _d32_arith_cls(case, c, h, diffs):
    if diffs and diffs[0].startswith("status: C fails") and "failure preparing output" in diffs[0]:
        if h.ok and h.outs and h.outs[0].raw.size > case.outs[0][1]:
            return ("C: 'failure preparing output' (output larger than the declared capacity); "
                    "Hexscope's kernel does not check the capacity")
        return "C: 'failure preparing output'; Hexscope ok"
    return diffs[0].split(":")[0][:100]


for _n in ("QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32", "QuantizedMul_8x8to8_d32"):
    CAMPAIGNS[_n].classify = _d32_arith_cls


def _inf_range_cls(case, c, h, diffs):
    ranges = [float(t.data.ravel()[0]) for t in case.inputs if t.dtype == "f32" and t.data is not None and t.data.size == 1]
    if any(abs(v) > 1.7e38 for v in ranges):
        return ("range width overflows float32: Hexscope's div255(inf)=inf / R1 on -inf gives NaN, "
                "nnlib's flt_div_255(inf)=NaN / quantize_adjust_range keeps -inf")
    return _qdsr_classify(case, c, h, diffs) if case.inputs[0].dtype == "i32" else diffs[0].split(":")[0]


CAMPAIGNS["QuantizeDownAndShrinkRange_32to8"].classify = _inf_range_cls
CAMPAIGNS["QuantizedMul_8x8to8"].classify = _inf_range_cls


def _aqd32_filter(case, c, h, diffs):
    """AutoQuantize_d32 (plain, HVX) vs C AutoQuantize_d32_ref (QuantizeForTest): the range is
    checked against C find_scaling_for_hvx_quant, the padding against _ref's except the
    depth-before padding, which the plain op ignores (op_quantize.c: 'ignored')."""
    if not h.ok:
        return diffs
    x = case.inputs[0].data
    with np.errstate(all="ignore"):
        lo = float(np.min(x)); hi = float(np.max(x))
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return diffs
    lo, hi = min(0.0, lo), max(0.0, hi)
    r = _find_scaling(float(np.float32(-lo)) if lo < 0 else 0.0, float(np.float32(hi)))
    hmin = np.float32(h.outs[1].logical().ravel()[0]); hmax = np.float32(h.outs[2].logical().ravel()[0])
    out = []
    if r is None or (r[0].view(np.uint32), r[1].view(np.uint32)) != (hmin.view(np.uint32), hmax.view(np.uint32)):
        out.append(f"range vs C find_scaling_for_hvx_quant: C {r} H ({hmin!r},{hmax!r})")
    if c.ok:
        cp, hp = c.outs[0].d32, h.outs[0].d32
        if cp is not None and hp is not None:
            if tuple(cp[:4]) != tuple(hp[:4]) or hp[4] != 0 or (hp[4] + case.inputs[0].shape[3] + hp[5]) % 32:
                out.append(f"d32 spatial padding: C _ref {cp} H {hp}")
    return out or ["[expected] codes/depth padding: plain op (HVX quantizer, depth-before ignored) vs _ref"]


CAMPAIGNS["AutoQuantize_d32"].filter = _aqd32_filter
CAMPAIGNS["AutoQuantize_d32"].classify = lambda case, c, h, d: d[0][:110]
