"""SpaceToDepth_8 and DepthToSpace_8 (``op_depthspace.c``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, data_of, output_fits
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.shape.params import int_words, mulu32_sat
from hexscope.engine.tensor import Tensor, fresh


def block_sizes(block: Tensor) -> tuple[int, int]:
    """``get_blksiz_from_tensor``: [b] or [bh, bw], exactly 1 or 2 int32 values, each >= 1."""
    n = block.shape[3]
    if 1 <= n <= 2 and block.nbytes == 4 * n:
        words = int_words(block, n, "the block size")
        if words[0] >= 1 and words[-1] >= 1:
            return words[0], words[-1]
    raise KernelError(f"bad block size: {block.describe()} must hold 1 or 2 int32 values >= 1")


def space_to_depth_array(x: np.ndarray, bh: int, bw: int) -> np.ndarray:
    """Blocks of bh x bw pixels moved into depth, row of the block first."""
    b, h, w, d = x.shape
    if w % bw:
        raise KernelError(f"width must be multiple of block size: {w} by {bw}")
    if h % bh:
        raise KernelError(f"height must be multiple of block size: {h} by {bh}")
    y = x.reshape(b, h // bh, bh, w // bw, bw * d).transpose(0, 1, 3, 2, 4)
    return np.ascontiguousarray(y).reshape(b, h // bh, w // bw, bh * bw * d)


def space_to_depth_8_reference(ctx: KernelContext, x: Tensor, block: Tensor, x_min: Tensor,
                               x_max: Tensor) -> tuple[np.ndarray, ...]:
    """the real input's pixel blocks moved into depth."""
    return ranged(space_to_depth_array(real(x, x_min, x_max), *block_sizes(block)))


@op("SpaceToDepth_8", Category.PLUMBING,
    reference=space_to_depth_8_reference,
    inputs=(Port("x", DType.QUINT8), Port("block_size", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def space_to_depth_8(ctx: KernelContext, x: Tensor, block: Tensor, x_min: Tensor,
                     x_max: Tensor) -> tuple[np.ndarray, Tensor, Tensor]:
    """Moves each bh x bw block of pixels into depth; min/max pass through.

    Semantics (``op_depthspace.c``, ``depthspace_s2d_execute``): (B,H,W,D) becomes
    (B, H/bh, W/bw, bh bw D); output depth index (i bw + j) D + c holds pixel (i, j) of the
    block, channel c. ``block_size`` is [b] or [bh, bw].

    Fidelity: byte-exact with nnlib's op (a ``gentranspose.c`` strategy) run as C in the
    oracle, where the strategy is scalar (an HVX one is "C path unavailable" there); 300+
    cases in ``tests/data/oracle/SpaceToDepth_8.json``.

    Errors, as nnlib raises them: "bad block size" (not 1 or 2 values >= 1); "width must be
    multiple of block size", "height must be multiple of block size"; "failed to prepare
    output" when the result exceeds the output's declared size.
    """
    bh, bw = block_sizes(block)
    y = space_to_depth_array(data_of(x, "the input"), bh, bw)
    output_fits(ctx, 0, y.size, f"result {y.shape}", reason="failed to prepare output")
    return fresh(y), x_min.copy(), x_max.copy()


def _crop(ctx: KernelContext, crop: tuple[Tensor, ...]) -> tuple[int, int, int, int]:
    if not crop:
        return 0, 0, 0, 0
    t = crop[0]
    if t.shape[3] != 4 or t.nbytes != 16:
        raise KernelError(f"bad crop_tensor shape: {t.describe()} must be 4 int32 values "
                          "(top, bottom, left, right)")
    words = int_words(t, 4, "the crop tensor")
    for i, c in enumerate(words):
        if c < 0:
            raise KernelError(f"bad crop tensor element {c} at index {i}")
    return words[0], words[1], words[2], words[3]


def depth_to_space_array(x: np.ndarray, bh: int, bw: int,
                         crop: tuple[int, int, int, int]) -> np.ndarray:
    """Depth moved into bh x bw pixel blocks, then (top, bottom, left, right) cropped."""
    b, h, w, d = x.shape
    prod = mulu32_sat(bh, bw)
    od = d // prod if prod > 1 else d
    if prod == 0 or prod > d or od * prod != d:
        raise KernelError(f"depth must be multiple of square of block size: depth {d}, "
                          f"block {bh}x{bw}")
    top, bottom, left, right = crop
    oh, ow = h * bh - top - bottom, w * bw - left - right
    if oh <= 0 or ow <= 0:
        raise KernelError(f"cropping leaves no output: {h * bh}x{w * bw} cropped by {crop}")
    y = x.reshape(b, h, w, bh, bw, od).transpose(0, 1, 3, 2, 4, 5).reshape(b, h * bh, w * bw, od)
    return np.ascontiguousarray(y[:, top:top + oh, left:left + ow, :])


def depth_to_space_8_reference(ctx: KernelContext, x: Tensor, block: Tensor, x_min: Tensor,
                               x_max: Tensor, *crop: Tensor) -> tuple[np.ndarray, ...]:
    """the real input's depth moved into pixel blocks, cropped."""
    bh, bw = block_sizes(block)
    return ranged(depth_to_space_array(real(x, x_min, x_max), bh, bw, _crop(ctx, crop)))


@op("DepthToSpace_8", Category.PLUMBING,
    reference=depth_to_space_8_reference,
    inputs=(Port("x", DType.QUINT8), Port("block_size", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32),
            Port("crop", DType.INT32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def depth_to_space_8(ctx: KernelContext, x: Tensor, block: Tensor, x_min: Tensor,
                     x_max: Tensor, *crop: Tensor) -> tuple[np.ndarray, Tensor, Tensor]:
    """Moves depth into bh x bw blocks of pixels (the inverse of SpaceToDepth_8), then crops.

    Semantics (``op_depthspace.c``, ``depthspace_d2s_execute``): (B,H,W,D) becomes
    (B, H bh, W bw, D/(bh bw)); the optional ``crop`` [top, bottom, left, right] then trims
    the result. ``block_size`` is [b] or [bh, bw]. min/max pass through.

    Fidelity: byte-exact with nnlib's op run as C in the oracle (``tests/oracle``), 300+
    cases in ``tests/data/oracle/DepthToSpace_8.json``.

    Errors, as nnlib raises them: "bad block size"; "depth must be multiple of square of
    block size"; "bad crop_tensor shape" (not 4 int32 values); "bad crop tensor element";
    "cropping leaves no output"; "failed to prepare output" when the result exceeds the
    output's declared size.
    """
    bh, bw = block_sizes(block)
    y = depth_to_space_array(data_of(x, "the input"), bh, bw, _crop(ctx, crop))
    output_fits(ctx, 0, y.size, f"result {y.shape}", reason="failed to prepare output")
    return fresh(y), x_min.copy(), x_max.copy()
