"""QuantizedConcat_8_d32: concatenation of d32 quint8 tensors on any axis (quantized-ops §11)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import f2i1, wrap_i16
from hexscope.engine.ops.context import KernelContext, f32_scalar, scalar_f, scalar_i
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, Repeat, op
from hexscope.engine.quant import adjust_range_for_zero
from hexscope.engine.tensor import Tensor

f32 = np.float32
_COPY_GAIN = 32704   # at or above this gain with no offset, the scaling is an exact copy


def concat_shape(shapes: Sequence[tuple[int, int, int, int]], axis: int) -> tuple[int, ...]:
    """``find_concat_shape``: every dimension but ``axis`` must equal input 0's."""
    if not 0 <= axis <= 3:
        raise KernelError(f"bad concat dim: {axis} (expected 0..3 for b, h, w, d)")
    for dim in range(4):
        if dim != axis and any(s[dim] != shapes[0][dim] for s in shapes[1:]):
            found = ", ".join(str(s[dim]) for s in shapes)
            raise KernelError(f"mismatch on tensor dim {dim}, concat on {axis}: "
                              f"{'bhwd'[dim]} sizes are {found}")
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    return tuple(out)


def merged_range(mins: Sequence[float], maxes: Sequence[float]) -> tuple[np.float32, np.float32]:
    """Union of the ranges (fminf/fmaxf); min > 0 becomes 0, min < 0 is nudged with R2."""
    out_min, out_max = f32(mins[0]), f32(maxes[0])
    for mn, mx in zip(mins, maxes, strict=True):
        out_min, out_max = f32(np.fmin(out_min, f32(mn))), f32(np.fmax(out_max, f32(mx)))
    if out_min > 0:
        return f32(0.0), out_max
    if out_min < 0:
        mn, mx = adjust_range_for_zero(out_min, out_max)
        return f32(mn), f32(mx)
    return out_min, out_max


def gain_offset(in_min: float, in_max: float, out_min: np.float32,
                out_max: np.float32) -> tuple[int, int]:
    """(gain, offset) of one input: truncated 15-bit gain and offset in 1/128 codes (§11)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        recip = f32(f32(255.0) / f32(out_max - out_min))
        level = f32(f32(f32(in_max) - f32(in_min)) / f32(255.0))
        offset = f2i1(f32(f32(f32(f32(in_min) - out_min) * recip) * f32(128.0)))
        gain = f2i1(f32(f32(recip * level) * f32(32768.0)))
    gain = gain if 0 <= gain <= 32767 else 32767
    # scale and offset are packed as gain + (offset << 16) and unpacked with >> 16: the
    # offset is used modulo 2**16 (only reachable with an input min above its max).
    return gain, int(wrap_i16(offset))


def requantize(codes: np.ndarray, gain: int, offset: int) -> np.ndarray:
    """``scaled_copy_d32``: sat_u8((x*gain + offset*256 + 16384) >> 15), or an exact copy."""
    if offset == 0 and gain >= _COPY_GAIN:
        return codes
    y = (codes.astype(np.int64) * gain + offset * 256 + 16384) >> 15
    return np.clip(y, 0, 255).astype(np.uint8)


def output_padding(shape: tuple[int, ...]) -> D32Padding:
    """4 rows top/bottom and 4 columns left (none when that size is 1), right to a multiple
    of 4, depth to a multiple of 32 (``concat_execute``)."""
    _, h, w, d = shape
    h_pad = 0 if h == 1 else 4
    w_left = 0 if w == 1 else 4
    return D32Padding(h_pad, h_pad, w_left, -(w_left + w) % 4, 0, -d % 32)


def concat_d32_reference(ctx: KernelContext, axis: Tensor, *rest: Tensor) -> tuple[np.ndarray, ...]:
    """the dequantized inputs joined along the axis (0..3 = B,H,W,D), on the logical tensors."""
    n = len(rest) // 3
    parts = [real(rest[k], rest[n + k], rest[2 * n + k]) for k in range(n)]
    return ranged(np.concatenate(parts, axis=scalar_i(axis)))


@op("QuantizedConcat_8_d32", Category.D32,
    reference=concat_d32_reference, d32_output=True,
    inputs=(Port("axis", DType.INT32),
            Repeat((Port("x", DType.QUINT8, layout=Layout.D32), Port("x_min", DType.FLOAT32),
                    Port("x_max", DType.FLOAT32)), min=1)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def quantized_concat_8_d32(ctx: KernelContext, axis: Tensor, *rest: Tensor) -> list[Tensor]:
    """Concatenates d32 quint8 tensors on any axis, requantized to the merged range.

    Quantized-ops spec §11. Inputs: axis (0..3 = b, h, w, d), then n tensors, n mins and
    n maxes (3n+1). Every dimension but the axis must equal input 1's; inputs may have any
    d32 paddings and relative alignments (the result depends only on their valid values).

    Range: the union of the input ranges (fminf/fmaxf); a min above 0 becomes 0, a min below
    0 is nudged with R2 (§1.5); the max is never forced to be >= 0. Per input (float32):
    k = 255/(max-min), gain = trunc(k*(imax-imin)/255*32768) (32767 if outside 0..32767),
    offset = trunc((imin-min)*k*128); y = sat_u8((x*gain + offset*256 + 16384) >> 15), or an
    exact copy when offset is 0 and gain >= 32704 (so an input whose range is the merged
    range is copied). Gain and offset are truncated, where QuantizedConcat_8 rounds them.

    Output padding (``op_concat_d32.c``, not in the spec): height 4 top and bottom (0 when
    the height is 1), width 4 left (0 when the width is 1) and right up to a multiple of 4,
    no depth-before padding, depth-after up to a multiple of 32. The library writes only the
    valid lanes, so all padding is undefined and shows the session's padding fill.

    Errors: "bad concat dim" (axis outside 0..3), "mismatch on tensor dim" (another dimension
    differs), "need d32 inputs" (a flat data input).
    """
    n = len(rest) // 3
    xs, mins, maxes = rest[:n], rest[n:2 * n], rest[2 * n:]
    dim = scalar_i(axis)
    shape = concat_shape([x.shape for x in xs], dim)
    for k, x in enumerate(xs):
        if x.layout is not Layout.D32:
            raise KernelError(f"need d32 inputs: input {k + 1} is {x.describe()}")
    lo = [scalar_f(t) for t in mins]
    hi = [scalar_f(t) for t in maxes]
    out_min, out_max = merged_range(lo, hi)
    parts = [requantize(x.array, *gain_offset(mn, mx, out_min, out_max))
             for x, mn, mx in zip(xs, lo, hi, strict=True)]
    data = np.concatenate(parts, axis=dim) if parts else np.zeros(shape, np.uint8)
    out = Tensor.from_array(data, DType.QUINT8).to_d32(output_padding(shape),
                                                         fill=ctx.padding_fill)
    return [out, f32_scalar(out_min), f32_scalar(out_max)]
