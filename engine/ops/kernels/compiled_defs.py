"""The numba kernels behind :mod:`compiled` (imported, and so compiled or loaded from
numba's cache, on first use). Each mirrors a numpy path of the op that calls it, step for
step; the callers check the preconditions written here before they call."""

from __future__ import annotations

import numpy as np
from numba import njit, types

_OPTS = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}


def _arr(dtype, ndim: int, readonly: bool = False) -> types.Array:
    return types.Array(dtype, ndim, "C", readonly=readonly)


def _both(make):  # type: ignore[no-untyped-def]
    """Signatures for writable and read-only inputs (the executor freezes every output)."""
    return [make(False), make(True)]


@njit(_both(lambda ro: types.void(_arr(types.int32, 2, ro), _arr(types.int32, 1, ro),
                                   types.float32, types.int64, _arr(types.uint8, 2))),
      **_OPTS)
def supernode_epilogue(sums, bias, offset, recip, out):  # pragma: no cover - compiled
    """``supernode_execute_ref``'s output step for sums (N, C) and bias (C) in output steps:
    clamp(int32(u32(int32(f32(s + b) + offset) * recip + 2**15)) >> 16, 0, 255).

    Precondition (requantize_sums checks it from the sums' bounds): s + b fits int32 and
    f32(s + b) + offset lies in [-2**31, 2**31), so no wrap and no saturation happen."""
    n, c = sums.shape
    r32 = np.uint32(recip & 0xFFFFFFFF)
    half = np.uint32(32768)
    for i in range(n):
        for j in range(c):
            f = np.float32(sums[i, j] + bias[j]) + offset
            # the low 32 bits of the product, read back as int32; f fits int32, so its
            # int32 truncation has the int64's low bits and 32-bit lanes suffice (they
            # vectorise; the int64 conversion did not)
            p = np.int32(np.uint32(np.int32(f)) * r32 + half)
            out[i, j] = min(max(p >> 16, 0), 255)


@njit(_both(lambda ro: types.void(_arr(types.int32, 1, ro), types.int64, types.int64,
                                   _arr(types.uint8, 1))), **_OPTS)
def requantize_path_a(codes, gi, oi, out):  # pragma: no cover - compiled
    """Path A of ``nn_requantize_i32_to_qu8_hvx``, the integer formula itself:
    sat_u8((sat_i32(x - oi) * gi + 2**30) >> 31), for gi in [0, 2**31) (|product| < 2**62)."""
    for i in range(codes.size):
        e = np.int64(codes[i]) - oi
        if e > 2147483647:
            e = 2147483647
        elif e < -2147483648:
            e = -2147483648
        p = (e * gi + 1073741824) >> 31
        out[i] = 0 if p < 0 else (255 if p > 255 else p)


@njit(_both(lambda ro: types.int64(_arr(types.uint8, 2, ro), _arr(types.float32, 1, ro),
                                    _arr(types.float32, 1, ro), _arr(types.int32, 2),
                                    _arr(types.int64, 1))),
      **_OPTS)
def bias_add(x, x_terms, b_terms, out, bounds):  # pragma: no cover - compiled
    """QuantizedBiasAdd_8p8to32 per element: f32(f32(x_terms[x] + b_terms[d]) + 0.5), then
    the C float-to-int32 (truncate, saturate, NaN -> -1, as ``hexmath.f2i``). Returns how
    many sums were not finite (the kernel warns about them); ``bounds`` gets the min and max
    written (for the requantize that follows)."""
    n, d = x.shape
    bad = 0
    lo = np.int32(2147483647)
    hi = np.int32(-2147483648)
    half = np.float32(0.5)
    for i in range(n):
        for j in range(d):
            f = (x_terms[x[i, j]] + b_terms[j]) + half
            if f != f:
                out[i, j] = -1
                bad += 1
            elif f >= 2147483648.0:
                out[i, j] = 2147483647
                bad += f == np.inf
            elif f <= -2147483648.0:
                out[i, j] = -2147483648
                bad += f == -np.inf
            else:
                out[i, j] = np.int32(f)
            v = out[i, j]
            lo = min(lo, v)
            hi = max(hi, v)
    bounds[0] = lo
    bounds[1] = hi
    return bad


@njit(_both(lambda ro: types.void(_arr(types.uint8, 4, ro), types.int64, types.int64,
                                   types.int64, types.int64, types.int64, types.int64,
                                   types.boolean, _arr(types.uint8, 4))), **_OPTS)
def pool(x, fh, fw, sh, sw, top, left, average, out):  # pragma: no cover - compiled
    """QuantizedMaxPool_8 / QuantizedAvgPool_8 over the window cells inside the input (the
    numpy path pads with 0, which neither wins a max nor adds to a sum). The average is the
    device's: the sum in an unsigned 16-bit lane (wraps), read as int16 by the scaling
    multiply, rc = min(32768 // count, 32767), (s16 * rc + 16384) >> 15, clamped to 0..255
    (a no-op up to 128 cells). Precondition: every window holds at least one cell."""
    nb, h, w, d = x.shape
    oh, ow = out.shape[1], out.shape[2]
    acc = np.empty(d, np.int64)
    for b in range(nb):
        for oy in range(oh):
            y0 = oy * sh - top
            ya, yb = max(y0, 0), min(y0 + fh, h)
            for ox in range(ow):
                x0 = ox * sw - left
                xa, xb = max(x0, 0), min(x0 + fw, w)
                acc[:] = 0
                for yy in range(ya, yb):
                    for xx in range(xa, xb):
                        if average:
                            for c in range(d):
                                acc[c] += x[b, yy, xx, c]
                        else:
                            for c in range(d):
                                acc[c] = max(acc[c], x[b, yy, xx, c])
                if average:
                    rc = min(32768 // ((yb - ya) * (xb - xa)), 32767)
                    for c in range(d):
                        s = acc[c] & 0xFFFF
                        if s >= 32768:
                            s -= 65536
                        r = (s * rc + 16384) >> 15
                        out[b, oy, ox, c] = 0 if r < 0 else (255 if r > 255 else r)
                else:
                    for c in range(d):
                        out[b, oy, ox, c] = acc[c]


@njit(_both(lambda ro: types.void(_arr(types.uint8, 1, ro), _arr(types.int64, 1))), **_OPTS)
def count_codes(codes, counts):  # pragma: no cover - compiled
    """counts[v] += how many codes equal v (np.bincount of uint8, which first widens every
    code to intp): the batch's exact per-output histograms."""
    for i in range(codes.size):
        counts[codes[i]] += 1


@njit(_both(lambda ro: types.void(_arr(types.uint8, 2, ro), _arr(types.uint8, 1, ro),
                                   _arr(types.uint8, 2), types.int64)), **_OPTS)
def lookup_into(codes, table, out, d0):  # pragma: no cover - compiled
    """out[:, d0:d0 + C] = table[codes] for codes (N, C): QuantizedConcat_8's rescale of one
    input, written straight into its slice of the output (numpy makes a temporary)."""
    n, c = codes.shape
    for i in range(n):
        for j in range(c):
            out[i, d0 + j] = table[codes[i, j]]


@njit(_both(lambda ro: types.void(_arr(types.uint8, 1, ro), types.int64, types.int64,
                                   _arr(types.uint8, 1))), **_OPTS)
def clamp_codes(codes, lo, hi, out):  # pragma: no cover - compiled
    """out = min(max(codes, lo), hi), byte-wise (QuantizedRelu_8 with hi 255, ReluX_8)."""
    lo8, hi8 = np.uint8(lo), np.uint8(hi)     # uint8 compares: LLVM vectorises them
    for i in range(codes.size):
        out[i] = min(max(codes[i], lo8), hi8)


@njit(_both(lambda ro: types.void(_arr(types.uint8, 2, ro), _arr(types.float32, 1, ro),
                                   _arr(types.float32, 1, ro), _arr(types.int32, 2),
                                   _arr(types.int64, 1))), **_OPTS)
def bias_add_in_range(x, x_terms, b_terms, out, bounds):  # pragma: no cover - compiled
    """:func:`bias_add` when the caller has shown every sum finite and inside int32 (the
    extremes of the two tables bound them: float rounding is monotone): no branches."""
    n, d = x.shape
    half = np.float32(0.5)
    lo = np.int32(2147483647)
    hi = np.int32(-2147483648)
    for i in range(n):
        for j in range(d):
            v = np.int32((x_terms[x[i, j]] + b_terms[j]) + half)
            out[i, j] = v
            lo = min(lo, v)
            hi = max(hi, v)
    bounds[0] = lo
    bounds[1] = hi


@njit(_both(lambda ro: types.void(_arr(types.uint8, 1, ro), types.float32, types.float32,
                                   _arr(types.float32, 1))), **_OPTS)
def dequantize_u8(codes, scale, offset, out):  # pragma: no cover - compiled
    """The float references' reading of quint8 codes (``reference.real``): f32(q) * scale,
    rounded to float32, then + offset, rounded again (two steps, as numpy takes them: no
    fused multiply-add, so the bits are numpy's)."""
    for i in range(codes.size):
        out[i] = np.float32(codes[i]) * scale + offset


@njit(_both(lambda ro: types.void(_arr(types.int8, 2, ro), _arr(types.int32, 1))), **_OPTS)
def row_sums_i8(lhs, out):  # pragma: no cover - compiled
    """sum_k lhs[p, k] in int32 (exact: |sum| <= 128 K < 2**31), the VNNI GEMM's row term."""
    m, k = lhs.shape
    for p in range(m):
        s = np.int32(0)
        for j in range(k):
            s += lhs[p, j]
        out[p] = s


@njit(_both(lambda ro: types.void(_arr(types.uint8, 1, ro), _arr(types.uint8, 1, ro),
                                   types.int64, types.int64, types.int64, types.int64,
                                   _arr(types.uint8, 1), _arr(types.int64, 1))), **_OPTS)
def addsub_normal(a, b, a_scale, b_scale, offset, rsh, out, bounds):  # pragma: no cover
    """§13.5's normal mode (``d32_engine.addsub_codes_of(addsub_intermediate(...))``):
    t = floor((a A + b B) / 256), y = sat_u8((sat_i16(t + off) + rb) >> rsh); ``bounds``
    gets t's min and max (the §13.7 tracking). Precondition: rsh >= 0 and a.size >= 1."""
    rb = (1 << rsh) >> 1
    lo = np.int64(9223372036854775807)
    hi = np.int64(-9223372036854775807)
    for i in range(a.size):
        t = (np.int64(a[i]) * a_scale + np.int64(b[i]) * b_scale) >> 8
        lo = min(lo, t)
        hi = max(hi, t)
        v = min(max(t + offset, -32768), 32767)
        out[i] = min(max((v + rb) >> rsh, 0), 255)
    bounds[0] = lo
    bounds[1] = hi


@njit(_both(lambda ro: types.void(_arr(types.uint8, 1, ro), _arr(types.uint8, 1, ro),
                                   types.int64, types.int64, _arr(types.int64, 1))), **_OPTS)
def mul_bounds(a, b, za, zb, bounds):  # pragma: no cover - compiled
    """min and max of the exact products (a - za)(b - zb) (§12 step 2). a.size >= 1."""
    lo = np.int64(9223372036854775807)
    hi = np.int64(-9223372036854775807)
    for i in range(a.size):
        p = (np.int64(a[i]) - za) * (np.int64(b[i]) - zb)
        lo = min(lo, p)
        hi = max(hi, p)
    bounds[0] = lo
    bounds[1] = hi


@njit(_both(lambda ro: types.void(_arr(types.uint8, 1, ro), _arr(types.uint8, 1, ro),
                                   types.int64, types.int64, types.int64, types.int64,
                                   types.int64, types.int64, _arr(types.uint8, 1))), **_OPTS)
def mul_codes(a, b, za, zb, pmin, scale, offs, rsh, out):  # pragma: no cover - compiled
    """§12 steps 6-7 (``elementwise.mul_requantize``): p0 = (p - pmin) & 0xFFFF, then
    min(((wrap_i32(p0 * scale + offs) >> rsh) & 0xFFFF), 255)."""
    for i in range(a.size):
        p = (np.int64(a[i]) - za) * (np.int64(b[i]) - zb)
        x = ((p - pmin) & 0xFFFF) * scale + offs
        x = ((x + 2147483648) & 0xFFFFFFFF) - 2147483648
        out[i] = min((x >> rsh) & 0xFFFF, 255)


# The float references' kernels (issue 12's budget): each gives numpy's bits, step for step.

@njit(_both(lambda ro: types.void(_arr(types.float32, 4, ro), types.int64, types.int64,
                                   types.int64, types.int64, types.int64, types.int64,
                                   types.boolean, _arr(types.float32, 4))), **_OPTS)
def pool_f32(x, fh, fw, sh, sw, top, left, average, out):  # pragma: no cover - compiled
    """``pooling._pool_reference`` without its padded copy: the cells in the same order,
    a cell outside the input read as the pad value (0 for the mean, -inf for the max),
    numpy's maximum (NaN wins, an equal second operand is taken), then the mean's division
    by the count of cells inside the input (at least 1)."""
    nb, h, w, d = x.shape
    oh, ow = out.shape[1], out.shape[2]
    pad = np.float32(0.0) if average else np.float32(-np.inf)
    for b in range(nb):
        for oy in range(oh):
            y0 = oy * sh - top
            for ox in range(ow):
                x0 = ox * sw - left
                o = out[b, oy, ox]
                inside = 0
                for fy in range(fh):
                    yy = y0 + fy
                    for fx in range(fw):
                        xx = x0 + fx
                        first = fy == 0 and fx == 0
                        if 0 <= yy < h and 0 <= xx < w:
                            inside += 1
                            cell = x[b, yy, xx]
                            if first:
                                o[:] = cell
                            elif average:
                                for c in range(d):
                                    o[c] = o[c] + cell[c]
                            else:
                                for c in range(d):
                                    v, u = o[c], cell[c]
                                    o[c] = v if (v > u or v != v) else u
                        elif first:
                            o[:] = pad
                        elif average:
                            for c in range(d):
                                o[c] = o[c] + pad
                        else:
                            for c in range(d):
                                v = o[c]
                                o[c] = v if (v > pad or v != v) else pad
                if average:
                    n = np.float32(max(inside, 1))
                    for c in range(d):
                        o[c] = o[c] / n


@njit(_both(lambda ro: types.void(_arr(types.float32, 1, ro), _arr(types.float32, 1))),
      **_OPTS)
def relu_f32(x, out):  # pragma: no cover - compiled
    """out = np.maximum(x, 0) with numpy's bits: NaN stays, -0.0 becomes +0.0 (numpy takes
    the second operand of an equal pair)."""
    zero = np.float32(0.0)
    for i in range(x.size):
        v = x[i]
        out[i] = v if (v > zero or v != v) else zero


@njit(_both(lambda ro: types.void(_arr(types.uint8, 1, ro), types.float32, types.float32,
                                   _arr(types.float32, 1))), **_OPTS)
def relu_u8(codes, scale, offset, out):  # pragma: no cover - compiled
    """:func:`relu_f32` of :func:`dequantize_u8`'s values, without the float copy between."""
    zero = np.float32(0.0)
    for i in range(codes.size):
        v = np.float32(codes[i]) * scale + offset
        out[i] = v if (v > zero or v != v) else zero


@njit(_both(lambda ro: types.void(_arr(types.float32, 2, ro), _arr(types.float32, 1, ro),
                                   types.float32, types.float32, _arr(types.float32, 2))),
      **_OPTS)
def bias_clamp_f32(y, bias, lo, hi, out):  # pragma: no cover - compiled
    """The Supernode reference's epilogue for y (N, C): out = np.minimum(np.maximum(y +
    bias, lo), hi) with numpy's bits (NaN kept; of an equal pair, the second operand: lo
    or hi). An infinite bound is a no-op, as the numpy path's skipped step."""
    n, c = y.shape
    for i in range(n):
        for j in range(c):
            v = y[i, j] + bias[j]
            v = v if (v > lo or v != v) else lo
            out[i, j] = v if (v < hi or v != v) else hi


@njit(_both(lambda ro: types.void(_arr(types.uint8, 1, ro), types.int64, types.int64,
                                   types.int64, types.int64, types.int64,
                                   _arr(types.uint8, 1))), **_OPTS)
def affine_codes(codes, in_off, mul, add, shift, out_off, out):  # pragma: no cover - compiled
    """out = sat_u8((((codes - in_off) * mul + add) >> shift) + out_off): Requantize_8to8's
    lane arithmetic as one step (the caller checks the 256 codes against its table first).
    Arithmetic lanes vectorise where a byte table lookup cannot (no byte gathers): ~10x."""
    io, m, a = np.int32(in_off), np.int32(mul), np.int32(add)
    s, oo = np.int32(shift), np.int32(out_off)
    for i in range(codes.size):
        v = (((np.int32(codes[i]) - io) * m + a) >> s) + oo
        out[i] = np.uint8(min(max(v, np.int32(0)), np.int32(255)))
