"""QuantizedMean_8: the mean over some axes of a quint8 tensor (nnlib op_reducing_mean.c),
requantized by a 31-bit fixed-point multiplier as the HVX epilogue does."""

from __future__ import annotations

import functools

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import (
    exact_memo,
    fminf,
    getexp,
    level_size_zero,
    sat_i32,
    sat_u8,
    wrap_i16,
)
from hexscope.engine.ops.context import KernelContext, data_of, scalar_f
from hexscope.engine.ops.elementwise.activation import range_words
from hexscope.engine.ops.kernels.normalize_loops import loops
from hexscope.engine.ops.normalize.l2norm import normalized_axis
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.quant import adjust_range_for_zero
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_MAX_AXES = 4


def _axes(ctx: KernelContext, t: Tensor) -> list[int]:
    """Input 3's int32 words (its whole data, as the C reads ``data_size / 4`` of them)."""
    words = np.ascontiguousarray(data_of(t, "the axes (input 3)")).reshape(-1).view(np.int32)
    if words.size > _MAX_AXES:
        raise KernelError(f"Number of elements in axes tensor is {words.size}, support a "
                          "maximum of 4")
    return [normalized_axis(int(a)) for a in words]


def quantized_multiplier(m: float) -> tuple[int, int]:
    """``QuantizeMultiplierSmallerThanOne`` (quantize.h): m = q * 2**-shift with q the
    mantissa in 31 bits (floor). Outside (0, 1) it fails and the C keeps (0, 0)."""
    m = f32(m)
    if not (m > 0 and m < 1):
        return 0, 0
    bits = int(np.asarray(m).view(np.uint32))
    frac = np.asarray((bits & 0x807FFFFF) | (126 << 23), np.uint32).view(np.float32)[()]
    return int(np.floor(f32(frac * f32(2.0 ** 31)))), -getexp(m)


def requantize_sums(sums: np.ndarray, divisor: int, in_zero: int, mult: int, shift: int,
                    out_zero: int) -> np.ndarray:
    """``set_output_scaling_for_mean`` per word: the zero-based sum s = sat(sum - z * n);
    x = sat32((((s * mult_lo) >> 16) + s * mult_hi) >> 14) + 1) >> 1) (``vmpye`` then
    ``vmpyo:<<1:rnd:sat:shift``: round(2 s mult / 2**32)); a rounding shift right
    (``RoundingDivideByPOT``), the output zero added with saturation; then the low 16 bits
    (``vpacke``) saturated to a byte. One compiled pass where the compiled kernels load."""
    adj = int(np.int32(np.int64(in_zero) * divisor & 0xFFFFFFFF))        # C int product
    lo, hi = mult & 0xFFFF, mult >> 16
    compiled = loops()
    if compiled is not None and sums.size:
        out = np.empty(sums.shape, np.uint8)
        compiled.mean_requant(np.ascontiguousarray(sums).reshape(-1), adj, lo, hi, int(shift),
                              int(out_zero), out.reshape(-1))
        return out
    s = sat_i32(sums.astype(np.int64) - adj)
    x = sat_i32(((((s * lo) >> 16) + s * hi) >> 14) + 1 >> 1)
    bias = 0 if shift > 31 else (1 << shift) >> 1
    x = sat_i32(x + bias) >> min(shift, 31)
    return sat_u8(wrap_i16(sat_i32(x + out_zero))).astype(np.uint8)


def _output_shape(ctx: KernelContext, reduced: tuple[int, ...]) -> tuple[int, ...]:
    """The output keeps its declared shape (the C reads out_tensor->shape before preparing
    it), which must hold exactly as many elements as the reduction gives."""
    if not ctx.output_defs:
        return reduced
    return _declared_shape(tuple(ctx.output_defs[0].shape), reduced)


@functools.lru_cache(maxsize=256)
def _declared_shape(declared: tuple[int, ...], reduced: tuple[int, ...]) -> tuple[int, ...]:
    """:func:`_output_shape`'s check, memoised (the same shapes run after run)."""
    want = int(np.prod(reduced))
    if int(np.prod(declared)) != want:
        raise KernelError(f"Output tensor is of size {int(np.prod(declared))}, but expected "
                          f"output tensor of size {want}")
    return declared


def mean_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor, axes: Tensor,
                   *out_range: Tensor) -> tuple[np.ndarray, ...]:
    """The mean of the dequantized input over the axes."""
    listed = sorted(set(_axes(ctx, axes)))
    v = real(x, x_min, x_max).astype(np.float64)
    y = v.mean(axis=tuple(listed), keepdims=True) if listed else v
    return ranged(y.astype(np.float32).reshape(_output_shape(ctx, y.shape)))


@op("QuantizedMean_8", Category.ELEMENTWISE, reference=mean_reference,
    inputs=(Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32), Port("axes", DType.INT32),
            Port("out_min", DType.FLOAT32, optional=True),
            Port("out_max", DType.FLOAT32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def quantized_mean_8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                     axes: Tensor, *out_range: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Mean over the listed axes; range the input's (nudged) or inputs 4 and 5.

    Semantics (nnlib op_reducing_mean.c ``reducing_mean_execute``): the axes are every
    int32 word of input 3 (at most 4; -4..3). The codes are summed exactly over the axes;
    n is the product of the input's sizes along the listed axes (a repeated axis counts
    twice, as the C multiplies). The input range is nudged by R2 (``adjust_minmax_for_zero``)
    and is also the output range unless out_min (input 4) / out_max (input 5) are given.
    With the zero codes zi, zo and steps si, so of the two ranges, m = min(0.99999,
    si / (so * n)) becomes a 31-bit multiplier and a right shift; each output is
    sat_u8(wrap16(round(2 (sum - zi n) mult / 2**32) rounding-shifted right + zo)). The
    output keeps its declared shape, tagged uint8 as the C tags it.

    Fidelity: the device's op is HVX only (sums and epilogue): the oracle cannot run it.
    Simulated from the instruction semantics (``vmpye`` + ``vmpyo:<<1:rnd:sat:shift``,
    ``vasr``, ``vpacke``, ``vpack:sat``); checked with hand vectors and against the float
    mean (within a code). An empty axes list leaves the C's sums unwritten (scratch
    garbage): Hexscope reduces nothing and warns. A multiplier outside (0, 1) (an empty
    or degenerate range) makes the C log "Unable to determine quantized mulipiler" and
    use 0: every output is the output zero code.

    Errors: "Number of elements in axes tensor is N, support a maximum of 4"; "Axis value
    ... is out of range"; "Output tensor is of size N, but expected output tensor of size
    M" (the declared output size must equal the reduced size); "out too small".
    """
    listed = _axes(ctx, axes)
    if not listed and x.elements != 1:
        ctx.warn("QuantizedMean_8 with no axes: the device requantizes scratch it never "
                 "wrote (simulated as a mean over nothing: each element on its own)")
    reduced = tuple(1 if i in listed else n for i, n in enumerate(x.shape))
    shape = _output_shape(ctx, reduced)
    divisor = 1
    for a in listed:        # the C's product (int64 here, wrapping as numpy's did)
        divisor = (divisor * x.shape[a] + 2**63) % 2**64 - 2**63
    # memoised while the divisor is exact as a double (any real tensor's)
    plan = mean_plan if abs(divisor) < 2**53 else mean_plan.__wrapped__  # type: ignore[attr-defined]
    zi, mult, shift, zo, w_min, w_max = plan(
        scalar_f(x_min), scalar_f(x_max), scalar_f(out_range[0]) if out_range else 0.0,
        scalar_f(out_range[1]) if len(out_range) > 1 else 0.0, len(out_range), divisor)
    if mult == 0 and shift == 0:
        ctx.log(0, "Unable to determine quantized mulipiler for output")
    y = requantize_sums(_sums(x, listed), divisor, zi, mult, shift, zo).reshape(shape)
    return (Tensor.from_array(fresh(y), DType.QUINT8).tagged(DType.UINT8),
            Tensor.scalar_of(w_min), Tensor.scalar_of(w_max))


@exact_memo
def mean_plan(x_min: float, x_max: float, out_min: float, out_max: float, given: int,
              divisor: int) -> tuple[int, int, int, int, np.ndarray, np.ndarray]:
    """(input zero, multiplier, shift, output zero, out_min word, out_max word) of the
    op's scaling for its input range, the ``given`` first of (out_min, out_max) and the
    divisor; memoised on the exact bits (the ranges repeat from run to run)."""
    mn, mx = adjust_range_for_zero(x_min, x_max)
    out_mn = f32(out_min) if given > 0 else f32(mn)
    out_mx = f32(out_max) if given > 1 else f32(mx)
    zi, si = level_size_zero(mn, mx)
    zo, so = level_size_zero(out_mn, out_mx)
    m = fminf(0.99999, f32(si / f32(so * f32(divisor))))
    mult, shift = quantized_multiplier(m)
    return (zi, mult, shift, zo, *range_words(out_mn, out_mx))


def _sums(x: Tensor, listed: list[int]) -> np.ndarray:
    """The exact sums over the listed axes (keeping them as 1s); each element on its own
    when none is listed. Over height and width (a global average pool) one compiled pass
    where the compiled kernels load."""
    codes = x.array
    axes = tuple(sorted(set(listed)))
    compiled = loops()
    if axes == (1, 2) and compiled is not None and codes.size:
        sums = np.zeros((x.shape[0], x.shape[3]), np.int64)
        compiled.sum_hw(np.ascontiguousarray(codes), sums)
        return sums.reshape(x.shape[0], 1, 1, x.shape[3])
    # int32 holds the sums while every element could be 255 (numpy sums uint8 into int32
    # twice as fast as into int64)
    wide = np.int32 if x.elements * 255 < 2**31 else np.int64
    return codes.sum(axis=axes, keepdims=True, dtype=wide) if axes else codes.astype(wide)
