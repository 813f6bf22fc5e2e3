"""ResizeNearestNeighbor_8 (``op_resizenear.c``, ``resizenear_8_execute``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, data_of, output_fits, scalar_i
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.shape.params import int_words
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32


def nearest_rows(n_in: int, n_out: int, align: bool, aligned_scale: bool) -> np.ndarray:
    """The source index of each output row (or column), in the library's float steps.

    The scale is n_in / n_out in float32, or (n_in - 1)/(n_out - 1) when align_corners is
    set and both new sizes exceed 1 (``aligned_scale``). Without align_corners the float32
    product i * scale is truncated; with it, rounded half away from zero and capped at
    n_in - 1 (C's ``round`` on the float product).
    """
    with np.errstate(all="ignore"):
        if aligned_scale:
            scale = f32(f32(n_in - 1) / f32(f32(n_out) - f32(1.0)))
        else:
            scale = f32(f32(n_in) / f32(n_out))
        pos = (np.arange(n_out, dtype=np.float32) * scale).astype(np.float32)
    if align:
        p = pos.astype(np.float64)
        return np.minimum(np.floor(p + 0.5), n_in - 1).astype(np.int64)
    return np.trunc(pos).astype(np.int64)


def _plan(x: Tensor, size: Tensor, align_corners: tuple[Tensor, ...]
          ) -> tuple[int, int, np.ndarray, np.ndarray]:
    new_h, new_w = int_words(size, 2, "the new size")
    align = bool(align_corners) and scalar_i(align_corners[0]) != 0
    if new_h < 0 or new_w < 0:
        raise KernelError(f"output prepare failed: new size {new_h}x{new_w} is negative")
    aligned = align and new_h > 1 and new_w > 1
    _, h, w, _ = x.shape
    return (new_h, new_w, nearest_rows(h, new_h, align, aligned),
            nearest_rows(w, new_w, align, aligned))


def resize_nearest(x: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Rows and columns picked as the device reads them: from the flat buffer, so an index
    past the last row reads the next batch's first (and past the buffer fails)."""
    b, h, w, d = x.shape
    flat = x.reshape(-1, d) if d else x.reshape(b * h * w, 0)
    pixel = (np.arange(b)[:, None, None] * (h * w) + rows[None, :, None] * w
             + cols[None, None, :])
    if pixel.size and (pixel.max() >= b * h * w or pixel.min() < 0):
        raise KernelError("the resize reads past the input buffer (a source index rounds "
                          "past the last row or column)")
    return np.ascontiguousarray(flat[pixel.reshape(-1)].reshape(b, len(rows), len(cols), d))


def resize_nearest_8_reference(ctx: KernelContext, x: Tensor, size: Tensor, x_min: Tensor,
                               x_max: Tensor, *align: Tensor) -> tuple[np.ndarray, ...]:
    """the real input resized by nearest neighbour."""
    _, _, rows, cols = _plan(x, size, align)
    return ranged(resize_nearest(real(x, x_min, x_max), rows, cols))


@op("ResizeNearestNeighbor_8", Category.PLUMBING,
    reference=resize_nearest_8_reference,
    inputs=(Port("x", DType.QUINT8), Port("new_size", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32),
            Port("align_corners", DType.INT32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def resize_nearest_neighbor_8(ctx: KernelContext, x: Tensor, size: Tensor, x_min: Tensor,
                              x_max: Tensor, *align: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Resizes height and width by picking the nearest source pixel; min/max pass through.

    Semantics (``op_resizenear.c``, ``resizenear_8_execute``): ``new_size`` is [new_h,
    new_w]. Source row of output row i: trunc(i * (H / new_h)) in float32; with
    ``align_corners`` non-zero, round(i * (H - 1)/(new_h - 1)) capped at H - 1 (the aligned
    scale only when new_h and new_w both exceed 1; rounding applies whenever the flag is
    set). Columns likewise. The output is tagged uint8 (NN_TYPE_UINT8), as nnlib tags it.
    There is no half-pixel-centres variant in nnlib.

    Fidelity: byte-exact with nnlib's op run as C in the oracle (``tests/oracle``), 300+
    cases in ``tests/data/oracle/ResizeNearestNeighbor_8.json``.

    Errors, as nnlib raises them: "output prepare failed" when the result exceeds the
    output's declared size (or a new size is negative).
    """
    new_h, new_w, rows, cols = _plan(x, size, align)
    b, _, _, d = x.shape
    output_fits(ctx, 0, b * new_h * new_w * d, f"resized ({b}, {new_h}, {new_w}, {d})",
                reason="output prepare failed")
    y = resize_nearest(data_of(x, "the input"), rows, cols)
    return (Tensor.from_array(fresh(y), DType.QUINT8).tagged(DType.UINT8), x_min.copy(),
            x_max.copy())
