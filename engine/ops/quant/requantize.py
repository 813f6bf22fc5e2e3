"""qint32 -> quint8 requantization: QuantizeDownAndShrinkRange_32to8 (quantized-ops spec §7)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.hexmath import exact_memo, f2i, f2i1, rndi1, sat_i32, sat_u8
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.elementwise.activation import range_words
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.code_bounds import known
from hexscope.engine.ops.reference import Reals, ranged, real_or_deferred
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.quant import adjust_range
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_TWO_POW_M32 = f32(2.0 ** -32)


def shrink_range(codes: np.ndarray, level: np.float32,
                 bounds: tuple[int, int] | None = None) -> tuple[np.float32, np.float32]:
    """The "shrink": the codes' actual span plus 0, scaled, then R1 (quantized-ops spec §7).

    ``bounds`` may give (min, max) of ``codes`` when the caller already has them."""
    lo, hi = bounds if bounds is not None else code_bounds(codes)
    cmax, cmin = max(0, hi), min(0, lo)
    m0 = f32(level * f32(cmin))      # int -> float rounds to nearest, as the device does
    big_m0 = f32(level * f32(cmax))
    mn, mx = adjust_range(m0, big_m0)
    return f32(mn), f32(mx)


def code_bounds(codes: np.ndarray) -> tuple[int, int]:
    """(min, max) of the codes as Python ints; (0, 0) when there are none."""
    if not codes.size:
        return 0, 0
    flat = codes.reshape(-1)
    return int(_MINIMUM(flat)), int(_MAXIMUM(flat))


_MINIMUM, _MAXIMUM = np.minimum.reduce, np.maximum.reduce


def requantize_i32_to_u8(codes: np.ndarray, level: np.float32, out_min: np.float32,
                         out_max: np.float32, aligned: bool = True,
                         bounds: tuple[int, int] | None = None) -> np.ndarray:
    """``nn_requantize_i32_to_qu8_hvx``: the device's three paths (quantized-ops spec §7).

    Path C (gain >= 1): float multiply-add then truncation. Otherwise a 31-bit gain gi and
    either Path A (aligned, n >= 128, gi >= 1024: the input offset is subtracted first, in
    input-code units) or Path B (the output zero code is added after the rounded multiply).
    """
    c_path, gain, off, gi, oi, zo = requantize_plan(level, out_min, out_max)
    if c_path:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            prod = codes.astype(np.int64).astype(f32) * gain
            return sat_u8(f2i((prod + off).astype(f32)))
    if aligned and codes.size >= 128 and gi >= 1024:
        return path_a(codes, gi, oi, bounds)
    x = codes.astype(np.int64)
    return sat_u8(sat_i32(((x * gi + 2 ** 30) >> 31) + zo))


@exact_memo
def requantize_plan(level: float, out_min: float, out_max: float
                    ) -> tuple[bool, np.float32, np.float32, int, int, int]:
    """The scalars of :func:`requantize_i32_to_u8`: (path C, gain, offset, gi, oi, zo).

    Path C (gain >= 1) uses gain and offset; A uses gi and oi; B gi and zo (0 for path C).
    Pure float32 steps in the library's order, memoised on the exact bits of the inputs
    (the network's ranges repeat from run to run)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        level = f32(level)
        osc = f32(f32(255.0) / f32(f32(out_max) - f32(out_min)))
        gain = f32(level * osc)
        off = f32(f32(0.5) - f32(f32(out_min) * osc))
        if gain >= 1:
            return True, gain, off, 0, 0, 0
        gi = rndi1(f32(gain * f32(2.0 ** 31)))
        return False, gain, off, gi, rndi1(f32(f32(out_min) / level)), f2i1(off)


@exact_memo
def shrink_plan(x_min: float, x_max: float, cmin: int, cmax: int
                ) -> tuple[np.float32, np.float32, np.float32]:
    """(level, out_min, out_max) of the kernel: the input step, then :func:`shrink_range` of
    codes spanning [cmin, cmax] (cmin <= 0 <= cmax); memoised on the exact input bits."""
    level = f32(f32(f32(x_max) - f32(x_min)) * _TWO_POW_M32)
    return (level, *shrink_range(_NO_CODES, level, (cmin, cmax)))


_NO_CODES = np.zeros(0, np.int32)


def path_a(codes: np.ndarray, gi: int, oi: int,
           bounds: tuple[int, int] | None = None) -> np.ndarray:
    """Path A, ``sat_u8((sat_i32(x - oi) * gi + 2**30) >> 31)``, as uint8, exactly.

    ``gi`` is in [1024, 2**31): the result is a non-decreasing function of e = x - oi that
    is 0 below ``lo`` and 255 above ``hi``, and steps by at most 1. So the codes are first
    clipped to [lo + oi, hi + oi] (which also makes the int32 saturation a no-op), and for
    e in [lo, hi] the product e * gi stays below 2**39: float64 evaluates
    ``e * (gi / 2**31) + 0.5`` exactly, and its truncation is the floor that the shift
    gives, in 0..255: three passes (by cache-sized blocks on large tensors) instead of
    the eight of int64 arithmetic. ``bounds`` may give (min, max) of the codes: when they
    lie within the clip limits already (the usual case after the shrink), the clip is skipped.
    """
    lo = -(2 ** 30 // gi)                       # smallest e with (e*gi + 2^30) >> 31 >= 0
    hi = (2 ** 39 - 2 ** 30 - 1) // gi          # largest e with (e*gi + 2^30) >> 31 <= 255
    info = _IINFO.get(codes.dtype) or np.iinfo(codes.dtype)
    if lo + oi > info.max:
        return np.zeros(codes.shape, np.uint8)
    if hi + oi < info.min:
        return np.full(codes.shape, 255, np.uint8)
    flat = np.ascontiguousarray(codes).reshape(-1)
    out = np.empty(flat.size, np.uint8)
    kernel = compiled.kernel("requantize_path_a") if flat.dtype == np.int32 else None
    if kernel is not None:                  # one pass of the integer formula itself
        kernel(flat, gi, oi, out)
        return out.reshape(codes.shape)
    block = flat.size if flat.size <= 2 * _BLOCK else _BLOCK
    x_lo, x_hi = max(lo + oi, info.min), min(hi + oi, info.max)
    clip = bounds is None or not x_lo <= bounds[0] <= bounds[1] <= x_hi
    g = gi * 2.0 ** -31
    # x * g + (0.5 - oi * g) is exact when both products are (< 2**53) and their sum, in
    # [0, 256) with 31 fraction bits, is representable: one pass fewer than (x - oi) * g.
    folded = max(abs(x_lo), abs(x_hi), abs(oi)) * gi < 2 ** 52
    c = 0.5 - oi * g if folded else 0.5
    o = flat.dtype.type(0 if folded else oi)
    e = np.empty(block, flat.dtype)
    v = np.empty(block, np.float64)
    # Plain copies convert types much faster than ufuncs that cast (measured ~2.5x).
    for i in range(0, flat.size, block):
        m = min(block, flat.size - i)
        ei, vi = e[:m], v[:m]
        if clip:
            np.clip(flat[i:i + m], x_lo, x_hi, out=ei)
            np.copyto(vi, ei, casting="unsafe")   # exact: |x| < 2**53
        else:
            np.copyto(vi, flat[i:i + m], casting="unsafe")
        if not folded:
            vi -= o                               # exact in float64
        vi *= g
        vi += c
        np.copyto(out[i:i + m], vi, casting="unsafe")     # truncation: vi >= 0
    return out.reshape(codes.shape)


_IINFO = {np.dtype(t): np.iinfo(t) for t in (np.int32, np.int64)}

#: Elements per block of Path A on large tensors: the scratch stays in cache and no large
#: temporary is allocated (fresh pages cost more than the arithmetic; measured).
_BLOCK = 131072


def requantize_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                         x_max: Tensor) -> tuple[np.ndarray, ...]:
    """the value itself: requantizing changes the codes, not what they stand for."""
    y = real_or_deferred(x, x_min, x_max)
    return (y, None, None) if isinstance(y, Reals) else ranged(y)


@op("QuantizeDownAndShrinkRange_32to8", Category.QUANTIZE,
    reference=requantize_reference,
    inputs=(Port("x", DType.QINT32), Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def quantize_down_and_shrink_range_32to8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                                         x_max: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """Requantize qint32 to quint8 over the smallest range holding the data and 0.

    Semantics (quantized-ops spec §7): the input step is f32((max - min) * 2^-32); the
    output range is R1 (``quantize_adjust_range``) of [step * min(0, min code),
    step * max(0, max code)], nudged so 0.0 is an exact code, with no headroom. The codes are
    then requantized by the device's integer path, not by float rounding.

    Fidelity: gain >= 1 uses the float path C; otherwise a 31-bit gain with Path A for 128 or
    more elements (graph tensors are 128-byte aligned; §23 item 6) and gain code >= 1024, else
    Path B. A and B differ by one code on a few per cent of values, and both differ from
    plain float rounding on about 1 % of values. The 32x32 multiply pair is taken as
    (u * g + 2^30) >> 31 (§23 item 1).
    All-zero input or a zero input range (unconfirmed, §7): the range is [0, 0] and the
    scales are inf/NaN; with Hexagon's float-to-int conversion (NaN -> -1, as QEMU models
    it) every code comes out 0, which the simulator writes, with a warning.

    Errors: none beyond arity and types.
    """
    codes = x.array
    # The producer (a convolution) may have noted the span while its blocks were in cache.
    bounds = known(x.raw) or code_bounds(codes)
    level, out_min, out_max = shrink_plan(scalar_f(x_min), scalar_f(x_max),
                                          min(0, bounds[0]), max(0, bounds[1]))
    if out_min == out_max:
        ctx.warn("the data (or the input range) are all zero, so the output range is [0, 0]; "
                 "the device's codes come from NaN scales (the simulator writes 0)")
    y = requantize_i32_to_u8(codes, level, out_min, out_max, bounds=bounds)
    w_min, w_max = range_words(out_min, out_max)
    return fresh(y.astype(np.uint8, copy=False)), w_min.copy(), w_max.copy()

