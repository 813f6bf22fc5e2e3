"""The d32 Supernode's fused path for a convolution other than a plain 1x1 one (MobileNetV2's
first: 3x3 stride 2 over 3 channels): the windows gathered from the d32 memory in one
compiled pass, each input column's filter rows together so that a window is a run of codes
and the next one starts a stride later (:func:`gemm_requant.d32_windower`: no patch matrix),
then the GEMM requantizing in its tiles (:func:`gemm_requant.prepared_gemm_requant`), the
filter read in the same order, where the separate steps
(:func:`supernode_hvx._all_sums`: unpack, im2col, GEMM into int32 sums, then the
requantization) wrote and read the patches and the sums whole.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexscope.engine.dtypes import Layout
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.d32_input_reads import Zaps, border_offsets
from hexscope.engine.ops.kernels.gemm import CENTER, Rhs, Window, patch_dtype
from hexscope.engine.ops.kernels.gemm_requant import d32_windower, prepared_gemm_requant
from hexscope.engine.tensor import Tensor

Fused = Callable[[Tensor, int, np.ndarray, np.ndarray, int, np.ndarray, int],
                 tuple[int, int] | None]


def patch_path(ctx: KernelContext, x: Tensor, filt: Tensor, rows: Window, cols: Window,
               zf: int, channels: int, zaps: Zaps, extra: int) -> Fused | None:
    """The Supernode's sums then their requantization, in one pass, for a d32 input's
    convolution ``rows`` x ``cols`` (the output's data columns; ``extra`` columns past them
    are computed too, the asm's width padding) of ``channels`` output lanes, the filter's
    zero ``zf``: a function of (x, zx, folded, recip, shift, mem, fill) that writes the codes
    into ``mem`` and returns the run's (min, max) in codes, as the 1x1 fused pass does. It
    serves a run whose windows read zx wherever they leave the data (``zaps``, what nnlib
    zaps, or padding bytes that hold zx: :func:`d32_input_reads.window_input`'s plain case)
    and whose zx is a code; for any other run it returns None (the caller takes the separate
    steps). None where it does not apply here."""
    if x.layout is not Layout.D32 or patch_dtype() is not np.int8 \
            or not (rows.out and cols.out and x.shape[0]) or x.padding.d_before:
        return None
    wide = Window(cols.n, cols.f, cols.s, cols.out + extra, cols.before)
    made = d32_windower(x.geometry.memory_shape, x.shape, x.padding,
                        (rows.s, rows.before, rows.out, rows.f),
                        (wide.s, wide.before, wide.out, wide.f))
    if made is None:
        return None
    windows, lda = made
    # the filter read in the windows' (fx, fy, c) order: the same zero and column sums
    # (so the same offsets) as filter_rhs's
    zero = zf if 0 <= zf <= 255 else CENTER
    fh, fw, din, cout = filt.shape
    codes = np.asarray(filt.array).transpose(1, 0, 2, 3).reshape(fw * fh * din, cout)
    rhs = Rhs.from_codes(np.ascontiguousarray(codes), zero)
    c = rhs.zero - zf
    shape = (x.shape[0], rows.out, wide.out)
    both = prepared_gemm_requant(rhs, c, shape, cols.out, channels, lda=lda)
    if both is None:
        return None
    # the bytes outside the data the windows read that nnlib does not zap: zx in all of
    # them is window_input's plain case (the same offsets, worked out once)
    border = border_offsets(x, zaps, rows, wide)
    start = (1 << 24, -(1 << 24))

    def fused(x: Tensor, zx: int, folded: np.ndarray, recip: np.ndarray, shift: int,
              mem: np.ndarray, fill: int) -> tuple[int, int] | None:
        if not 0 <= zx <= 255:
            return None
        raw = np.asarray(x.raw).reshape(-1)
        if border.size and np.any(raw[border] != np.uint8(zx)):
            return None
        _, _, lo, hi = both(windows(raw, zx), rhs.offsets(CENTER - zx, c), folded, recip,
                            shift, False, True, mem, fill)
        return min(start[0], lo), max(start[1], hi)

    return fused


__all__ = ["patch_path"]
