"""QuantizedResizeBilinear_8 (``op_resizebilinear.c``, ``resizebilinear_qu8_execute``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import f2i
from hexscope.engine.ops.context import KernelContext, data_of, output_fits, scalar_i
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.shape.params import int_words
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32


def _taps(n_in: int, n_out: int, align: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per output row (or column): the two source indices and the fraction, in the float32
    steps of ``resizebilinear_general``; indices clamped above at n_in - 1 only."""
    with np.errstate(all="ignore"):
        scale = f32(f32(n_in - 1) / f32(n_out - 1)) if align else f32(f32(n_in) / f32(n_out))
        pos = (np.arange(n_out, dtype=f32) * scale).astype(f32)
        frac = (pos - np.floor(pos)).astype(f32)
        whole = (pos - frac).astype(f32)
        i0 = np.minimum(n_in - 1, f2i(whole))
        i1 = np.minimum(n_in - 1, f2i((whole + f32(1.0)).astype(f32)))
    return i0, i1, frac


def bilinear_general(x: np.ndarray, new_h: int, new_w: int, align: bool) -> np.ndarray:
    """``resizebilinear_general``: four taps blended in float32 (rows last), + 0.5, truncated."""
    b, h, w, d = x.shape
    r0, r1, fy = _taps(h, new_h, align)
    c0, c1, fx = _taps(w, new_w, align)
    if min(r0.min(initial=0), c0.min(initial=0)) < 0:
        raise KernelError(f"the bilinear taps of {h}x{w} -> {new_h}x{new_w} (align_corners) "
                          "divide by zero and read before the input; nnlib reads garbage there")
    v = x.astype(f32)
    fx = fx[None, None, :, None]

    def row(r: np.ndarray) -> np.ndarray:
        a, e = v[:, r][:, :, c0], v[:, r][:, :, c1]
        return (a + (e - a) * fx).astype(f32)

    top, bot = row(r0), row(r1)
    out = (top + (bot - top) * fy[None, :, None, None]).astype(f32)
    return (out + f32(0.5)).astype(f32).astype(np.int64).astype(np.uint8)


def _sizes(size: Tensor, align: tuple[Tensor, ...]) -> tuple[int, int, bool]:
    new_h, new_w = int_words(size, 2, "the new size")
    return new_h, new_w, bool(align) and scalar_i(align[0]) != 0


def resize_bilinear_8_reference(ctx: KernelContext, x: Tensor, size: Tensor, x_min: Tensor,
                                x_max: Tensor, *align: Tensor) -> tuple[np.ndarray, ...]:
    """the real input resized bilinearly (the same taps and fractions, in float)."""
    new_h, new_w, al = _sizes(size, align)
    xr = real(x, x_min, x_max)
    _, h, w, _ = x.shape
    r0, r1, fy = _taps(h, new_h, al)
    c0, c1, fx = _taps(w, new_w, al)
    t = fx[None, None, :, None]
    top = xr[:, r0][:, :, c0] + (xr[:, r0][:, :, c1] - xr[:, r0][:, :, c0]) * t
    bot = xr[:, r1][:, :, c0] + (xr[:, r1][:, :, c1] - xr[:, r1][:, :, c0]) * t
    return ranged((top + (bot - top) * fy[None, :, None, None]).astype(f32))


@op("QuantizedResizeBilinear_8", Category.PLUMBING,
    reference=resize_bilinear_8_reference,
    inputs=(Port("x", DType.QUINT8), Port("new_size", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32),
            Port("align_corners", DType.INT32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def quantized_resize_bilinear_8(ctx: KernelContext, x: Tensor, size: Tensor, x_min: Tensor,
                                x_max: Tensor, *align: Tensor) -> tuple[np.ndarray, Tensor, Tensor]:
    """Resizes height and width by bilinear interpolation of the codes; min/max pass through.

    Semantics (``op_resizebilinear.c``): ``new_size`` is [new_h, new_w]. Output row i reads
    source position p = i * H/new_h (with ``align_corners`` non-zero, i * (H-1)/(new_h-1)),
    rows floor(p) and floor(p) + 1 capped at H - 1, blended by p - floor(p); columns
    likewise, blended first. Everything is float32 as nnlib's ``resizebilinear_general``
    computes it: lerp(a, b, t) = a + (b - a) t, then code = trunc(v + 0.5). The same sizes
    copy the input. There is no half-pixel-centres variant in nnlib.

    Fidelity: byte-exact with nnlib's general (scalar C) path, run in the oracle; 300+ cases
    in ``tests/data/oracle/QuantizedResizeBilinear_8.json``. nnlib takes HVX paths for exact
    2x and 4x upscales (power-of-two depth, and for 2x a power-of-two width or depth >= 128)
    and for align_corners 4x with (W-1) % 3 == 0: these run fixed-point assembly the oracle
    cannot run, and Hexscope computes them with the general formula (unverified there, and
    possibly a code off).

    Errors, as nnlib raises them: "out too small" when the result exceeds the output's
    declared size; "didn't get scaling plan" on the align_corners 4x path with depth > 2.
    With align_corners and a new size of 1, nnlib divides by zero and reads before its input
    (garbage, ``resizebilinear_general``); Hexscope fails the node there.
    """
    new_h, new_w, al = _sizes(size, align)
    b, h, w, d = x.shape
    if new_h < 0 or new_w < 0:
        raise KernelError(f"out too small: new size {new_h}x{new_w} is negative")
    output_fits(ctx, 0, b * new_h * new_w * d, f"resized ({b}, {new_h}, {new_w}, {d})")
    codes = data_of(x, "the input")
    if (new_h, new_w) == (h, w):
        return fresh(codes.copy()), x_min.copy(), x_max.copy()
    if al and new_w == 4 * w and (w - 1) % 3 == 0 and w * d < 384 and d > 2:
        # op_resizebilinear.c takes its HVX align_corners 4x path, whose weight_generation
        # handles only depth 1 and 2
        raise KernelError(f"didn't get scaling plan: the align_corners 4x path of "
                          f"{x.describe()} needs depth 1 or 2")
    return fresh(bilinear_general(codes, new_h, new_w, al)), x_min.copy(), x_max.copy()
