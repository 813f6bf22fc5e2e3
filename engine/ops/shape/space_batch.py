"""SpaceToBatchND_8 and BatchToSpaceND_8 (nnlib's ``op_batchspace.c``): the TFLite Hexagon
delegate wraps a dilated depthwise convolution in them (space to batch, convolution, batch
back to space)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import quantize_uint8
from hexscope.engine.ops.context import KernelContext, data_of, scalar_f
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

_F32 = DType.FLOAT32
_IN = (Port("x", DType.QUINT8), Port("block", DType.INT32), Port("pad", DType.INT32),
       Port("x_min", _F32), Port("x_max", _F32))
_OUT = (Port("y", DType.QUINT8), Port("y_min", _F32), Port("y_max", _F32))


def _geometry(block: Tensor, pad: Tensor) -> tuple[int, int, int, int, int, int]:
    """(block h, block w, pad top, bottom, left, right), checked as ``batchspace_*_execute``
    checks them: a block [1,1,1,n] with n 1 or 2, a pad [1,1,n,2]."""
    n = block.shape[3]
    if n >= 3:
        raise KernelError(f"block {list(block.shape)}: at most 2 space dimensions "
                          "(device: \"don't support that many space dimensions\")")
    if n < 1 or tuple(block.shape[:3]) != (1, 1, 1):
        raise KernelError(f"block must have shape [1,1,1,1] or [1,1,1,2], got "
                          f"{list(block.shape)} (device: 'bad stride shape')")
    if tuple(pad.shape) != (1, 1, n, 2):
        raise KernelError(f"pad must have shape [1,1,{n},2] for a block of {n}, got "
                          f"{list(pad.shape)} (device: 'bad pad shape')")
    s = data_of(block, "block").reshape(-1).astype(np.int64)
    p = data_of(pad, "pad").reshape(-1).astype(np.int64)
    sh, sw = (int(s[0]), int(s[1])) if n == 2 else (int(s[0]), 1)
    top, bottom = int(p[0]), int(p[1])
    left, right = (int(p[2]), int(p[3])) if n == 2 else (0, 0)
    if sh < 1 or sw < 1:
        raise KernelError(f"block sizes must be positive, got {sh}x{sw} (the device divides "
                          "by them)")
    return sh, sw, top, bottom, left, right


def _range_copy(x_min: Tensor, x_max: Tensor) -> tuple[Tensor, Tensor]:
    """The output range: copies of the input range tensors (``tensor_copy``)."""
    return (Tensor.from_array(fresh(np.array(x_min.array, copy=True)), x_min.dtype),
            Tensor.from_array(fresh(np.array(x_max.array, copy=True)), x_max.dtype))


def _moved_reference(ctx: KernelContext, x: Tensor, block: Tensor, pad: Tensor,
                     x_min: Tensor, x_max: Tensor) -> tuple[np.ndarray, ...]:
    """the same rearrangement of the dequantized values (padding is real 0)."""
    lo, hi = scalar_f(x_min), scalar_f(x_max)
    # the values themselves, not codes: the accumulated float run feeds float32 reals,
    # which the kernel would have read as codes (255 steps off on a dilated depthwise)
    y = _s2b(x, real(x, x_min, x_max), np.float32(0.0), block, pad)
    return ranged(y)[0], np.float32(lo), np.float32(hi)


@op("SpaceToBatchND_8", Category.PLUMBING, reference=_moved_reference, inputs=_IN,
    outputs=_OUT)
def space_to_batch_nd_8(ctx: KernelContext, x: Tensor, block: Tensor, pad: Tensor,
                        x_min: Tensor, x_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Move blocks of space into the batch: padded [B,H,W,D] -> [B*sh*sw, H'/sh, W'/sw, D].

    Semantics (op_batchspace.c ``batchspace_s2b_execute``): the image is padded by
    (top, bottom) rows and (left, right) columns (a block [1,1,1,1] pads and splits the
    height only), with the code of 0.0 (``quantize_uint8``); H' = H + top + bottom must be a
    multiple of sh, W' likewise of sw. Output batch (i * sw + j) * B + b holds the pixels
    (i + sh * y, j + sw * x) of input batch b. A negative pad crops, as the C's loop does.
    The output range is the input's, copied.

    Fidelity: byte-exact with the C (the transpose used when nothing is padded gives the
    same bytes as the loop).

    Errors (KernelError): more than 2 space dimensions; a block shape other than [1,1,1,n]
    ('bad stride shape'); a pad shape other than [1,1,n,2] ('bad pad shape'); H' or W' not
    a multiple of the block ('height/width not evenly divisible'); a block size < 1 (the
    device divides by it); a negative output size ('failed to prepare output').
    """
    return _rearranged(ctx, x, block, pad, x_min, x_max)


def _rearranged(ctx: KernelContext, x: Tensor, block: Tensor, pad: Tensor, x_min: Tensor,
                x_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    zero = quantize_uint8(0.0, scalar_f(x_min), scalar_f(x_max))
    y = _s2b(x, data_of(x, "input"), zero, block, pad)
    return (Tensor.from_array(fresh(y), DType.QUINT8), *_range_copy(x_min, x_max))


def _s2b(x: Tensor, codes: np.ndarray, zero: object, block: Tensor, pad: Tensor
         ) -> np.ndarray:
    """SpaceToBatchND's rearrangement of ``codes`` (x's shape), padded with ``zero``."""
    sh, sw, top, bottom, left, right = _geometry(block, pad)
    b, h, w, d = x.shape
    hp, wp = h + top + bottom, w + left + right
    if hp % sh:
        raise KernelError(f"padded height {hp} is not a multiple of the block height {sh} "
                          "(device: 'height not evenly divisible')")
    if wp % sw:
        raise KernelError(f"padded width {wp} is not a multiple of the block width {sw} "
                          "(device: 'width not evenly divisible')")
    oh, ow = hp // sh, wp // sw
    if oh < 0 or ow < 0:
        raise KernelError(f"output size {oh}x{ow} is negative (device: 'failed to prepare "
                          "output')")
    codes = np.asarray(codes).reshape(x.shape)
    # Row r of block row i reads input row i - top + sh * r; outside the image: zero code.
    rows = np.arange(sh)[:, None] - top + sh * np.arange(oh)[None, :]
    cols = np.arange(sw)[:, None] - left + sw * np.arange(ow)[None, :]
    in_r, in_c = (rows >= 0) & (rows < h), (cols >= 0) & (cols < w)
    src = np.pad(codes, ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=zero)
    r_idx, c_idx = np.where(in_r, rows, h), np.where(in_c, cols, w)
    # [sh, oh] x [sw, ow] -> out[i, j, b, y, x, :] = src[b, r_idx[i, y], c_idx[j, x], :]
    g = src[:, r_idx[:, None, :, None], c_idx[None, :, None, :], :]   # [B, sh, sw, oh, ow, D]
    return np.ascontiguousarray(g.transpose(1, 2, 0, 3, 4, 5)).reshape(sh * sw * b, oh, ow, d)


def _b2s_reference(ctx: KernelContext, x: Tensor, block: Tensor, pad: Tensor,
                   x_min: Tensor, x_max: Tensor) -> tuple[np.ndarray, ...]:
    """the same rearrangement of the dequantized values."""
    y = _b2s(x, real(x, x_min, x_max), block, pad)     # values, not codes (see above)
    return ranged(y)[0], np.float32(scalar_f(x_min)), np.float32(scalar_f(x_max))


@op("BatchToSpaceND_8", Category.PLUMBING, reference=_b2s_reference, inputs=_IN,
    outputs=_OUT)
def batch_to_space_nd_8(ctx: KernelContext, x: Tensor, block: Tensor, pad: Tensor,
                        x_min: Tensor, x_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Move batches back into space, then crop: [B,H,W,D] -> [B/(sh*sw), sh*H - top -
    bottom, sw*W - left - right, D].

    Semantics (op_batchspace.c ``batchspace_b2s_execute``): the inverse of SpaceToBatchND_8:
    output pixel (b, y, x) comes from input batch ((y + top) % sh * sw + (x + left) % sw) *
    B' + b at ((y + top) // sh, (x + left) // sw), B' = B / (sh * sw). The output range is
    the input's, copied.

    Fidelity: byte-exact with the C (the transpose used without crop gives the same bytes).

    Errors (KernelError): the block and pad shapes as SpaceToBatchND_8; B not a multiple of
    sh * sw ('batches not evenly divisible'); a block size < 1 (the device divides by it);
    a negative crop (the device's unsigned index reads outside the input); a negative
    output size ('failed to prepare output').
    """
    y = _b2s(x, data_of(x, "input"), block, pad)
    return (Tensor.from_array(fresh(y), DType.QUINT8), *_range_copy(x_min, x_max))


def _b2s(x: Tensor, codes: np.ndarray, block: Tensor, pad: Tensor) -> np.ndarray:
    """BatchToSpaceND's rearrangement of ``codes`` (x's shape), cropped."""
    sh, sw, top, bottom, left, right = _geometry(block, pad)
    b, h, w, d = x.shape
    if b % (sh * sw):
        raise KernelError(f"{b} batches are not a multiple of the block {sh}x{sw} "
                          "(device: 'batches not evenly divisible')")
    if min(top, bottom, left, right) < 0:
        raise KernelError(f"negative crop {[top, bottom, left, right]}: the device reads "
                          "outside the input")
    ob, oh, ow = b // (sh * sw), sh * h - top - bottom, sw * w - left - right
    if oh < 0 or ow < 0:
        raise KernelError(f"output size {oh}x{ow} is negative (device: 'failed to prepare "
                          "output')")
    codes = np.asarray(codes).reshape(sh, sw, ob, h, w, d)
    rows, cols = np.arange(oh) + top, np.arange(ow) + left
    g = codes[(rows % sh)[:, None], (cols % sw)[None, :], :, (rows // sh)[:, None],
              (cols // sw)[None, :], :]                          # [oh, ow, ob, D]
    return np.ascontiguousarray(g.transpose(2, 0, 1, 3))
