"""Flat quantized concatenation: QuantizedConcat_8 (quantized-ops spec §10)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import div255, exact_memo, rndi1, sat_u8, wrap_i16
from hexscope.engine.ops.context import KernelContext, scalar_f, scalar_i
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, Repeat, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_COPY_GAIN = 0x7FC0     # a gain this close to 1.0 maps 0 -> 0 and 255 -> 255: plain copy


def merged_range(mins: list[float], maxes: list[float]) -> tuple[np.float32, np.float32]:
    """Union of the input ranges, min clamped to <= 0, with no zero nudge (§10)."""
    out_min, out_max = f32(mins[0]), f32(maxes[0])
    for mn, mx in zip(mins, maxes, strict=True):
        out_min = np.fmin(out_min, f32(mn))    # fminf/fmaxf: a NaN operand is ignored
        out_max = np.fmax(out_max, f32(mx))
    return (f32(0.0) if out_min > 0 else out_min), out_max


def rescale_codes(codes: np.ndarray, in_min: float, in_max: float, out_min: np.float32,
                  out_max: np.float32) -> np.ndarray:
    """One input's codes in the merged range, as the HVX ``memconvert`` path computes them."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        recip = f32(f32(255.0) / f32(out_max - out_min))
        imin = f32(0.0) if f32(in_min) > 0 else f32(in_min)
        level = div255(f32(f32(in_max) - imin))
        offset = max(0, rndi1(f32(f32(imin - out_min) / level)))
        gain = rndi1(f32(f32(recip * level) * f32(32768.0)))
    if offset == 0 and gain >= _COPY_GAIN:
        return codes.copy()
    gains = 32767 if gain > 32767 else int(wrap_i16(gain))
    # Matches device: the offset is added in 16-bit lanes without saturation.
    v = wrap_i16(codes.astype(np.int64) + int(wrap_i16(offset)))
    return sat_u8((v * gains + 16384) >> 15).astype(np.uint8)


_ALL_CODES = np.arange(256, dtype=np.uint8)


@exact_memo
def rescale_table(in_min: float, in_max: float, out_min: float, out_max: float
                  ) -> np.ndarray | None:
    """:func:`rescale_codes` of the 256 codes as a read-only table, or None when it maps
    every code to itself; memoised on the exact bits of the ranges (a network's ranges
    repeat from run to run, and building the table costs ~100 us)."""
    lut = rescale_codes(_ALL_CODES, in_min, in_max, f32(out_min), f32(out_max))
    if np.array_equal(lut, _ALL_CODES):
        return None
    lut.flags.writeable = False
    return lut


def _rescale_into(y: np.ndarray, d0: int, codes: np.ndarray, in_min: float, in_max: float,
                  out_min: np.float32, out_max: np.float32) -> None:
    """:func:`rescale_codes` written into the depth slice of ``y`` (B,H,W,D, contiguous) that
    starts at ``d0``: the function maps each code on its own, so it is tabulated once for the
    256 codes and applied as a lookup (bit-identical), compiled when it can be."""
    dst = y[..., d0:d0 + codes.shape[3]]
    lut = rescale_table(in_min, in_max, out_min, out_max)
    if lut is None:
        dst[...] = codes
        return
    kernel = compiled.kernel("lookup_into")
    if kernel is not None and codes.size:
        kernel(np.ascontiguousarray(codes).reshape(-1, codes.shape[3]), lut,
               y.reshape(-1, y.shape[3]), d0)
        return
    dst[...] = np.take(lut, codes, mode="clip")         # uint8 indices: never clipped


def concat_8_reference(ctx: KernelContext, axis: Tensor, *rest: Tensor) -> tuple[np.ndarray, ...]:
    """the dequantized inputs joined along the axis (0..3 = B,H,W,D)."""
    n = len(rest) // 3
    parts = [real(rest[k], rest[n + k], rest[2 * n + k]) for k in range(n)]
    return ranged(np.concatenate(parts, axis=scalar_i(axis)))


@op("QuantizedConcat_8", Category.PLUMBING,
    reference=concat_8_reference,
    inputs=(Port("axis", DType.INT32),
            Repeat((Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32),
                    Port("x_max", DType.FLOAT32)), min=1)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def quantized_concat_8(ctx: KernelContext, axis: Tensor,
                       *groups: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """Concatenate quint8 tensors along depth, requantized to the union of their ranges.

    Semantics (quantized-ops spec §10): inputs are the axis, then N tensors, N mins, N maxes.
    The output range is [min of mins (set to 0 if > 0), max of maxes], not nudged, so its
    zero point may be fractional. Each input is rescaled with a 15-bit gain
    g = rndi(255/(out_max - out_min) * step_i * 32768), capped at 32767, and an integer offset
    off = max(0, rndi((in_min - out_min)/step_i)): y = sat_u8(((x + off) * g + 16384) >> 15),
    where step_i = div255(in_max - in_min) and in_min is first clamped to <= 0.

    Fidelity: this is the plain (HVX) op. An input with off == 0 and uncapped gain >= 32704 is
    copied byte for byte (the formula gives the same bytes). The vector routine adds off in
    16-bit lanes without saturation, so off acts modulo 2^16; that differs from the ``_ref``
    C formula only when off > 32512 (an input range tiny and far from out_min, §10).

    Errors: axis != 3 ("only depth"); an input whose width, height or batches differ from the
    first input's ("width mismatch tensor i", and so on). Fewer than 3N+1 inputs are rejected
    when the graph is validated.
    """
    n = len(groups) // 3
    xs, mins, maxes = groups[:n], groups[n:2 * n], groups[2 * n:]
    dim = scalar_i(axis)
    if dim != 3:
        raise KernelError(f"only depth: QuantizedConcat_8 concatenates along axis 3, got {dim}")
    _check_shapes(xs)
    lo = [scalar_f(t) for t in mins]
    hi = [scalar_f(t) for t in maxes]
    out_min, out_max = merged_range(lo, hi)
    b, h, w, _ = xs[0].shape
    y = np.empty((b, h, w, sum(x.shape[3] for x in xs)), np.uint8)
    d0 = 0
    for x, mn, mx in zip(xs, lo, hi, strict=True):
        d1 = d0 + x.shape[3]
        _rescale_into(y, d0, x.array, mn, mx, out_min, out_max)
        d0 = d1
    return (fresh(y), np.full((1, 1, 1, 1), out_min, np.float32),
            np.full((1, 1, 1, 1), out_max, np.float32))


def _check_shapes(xs: tuple[Tensor, ...]) -> None:
    b0, h0, w0, _ = xs[0].shape
    for i, x in enumerate(xs):
        b, h, w, _ = x.shape
        for name, got, want in (("width", w, w0), ("height", h, h0), ("batches", b, b0)):
            if got != want:
                raise KernelError(f"{name} mismatch tensor {i}: {name} {got}, input 0 has "
                                  f"{want} (only the depth may differ)")
