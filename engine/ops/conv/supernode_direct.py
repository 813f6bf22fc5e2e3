"""The d32 Supernode's first try on :mod:`~hexscope.engine.ops.kernels.conv_d32`: the kernel
reads each window inside the data where it lies in the d32 input (a quad of codes at a time,
tap by tap), and the windows that leave the data (the asm's width padding columns, a SAME
convolution's edges) from a buffer gathered each run as the asm reads them
(:func:`d32_input_reads.point_index`: the padding nnlib zaps as zx, the rest as it is).

Served where the filter's codes lie within a signed byte of its zero code (TFLite's int8
weights); a run whose recips it does not serve hands over to the caller's other path.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexscope.engine.dtypes import Layout
from hexscope.engine.ops.conv.d32_input_reads import Zaps, point_index
from hexscope.engine.ops.kernels.conv_d32 import Windows, prepared_conv_d32
from hexscope.engine.ops.kernels.gemm import Window, is_plain
from hexscope.engine.tensor import Tensor

Fused = Callable[[Tensor, int, np.ndarray, np.ndarray, int, np.ndarray, int],
                 tuple[int, int] | None]

#: The node's range search starts from these (supernode_hvx's ``_extremes``).
_START = (1 << 24, -(1 << 24))


def d32_windows(x: Tensor, fh: int, fw: int, rows: Window, cols: Window, ow: int, zaps: Zaps,
                channels: int) -> Windows:
    """The windows of a convolution of the d32 input ``x`` (``rows`` x ``cols``: ``cols.out``
    columns, the first ``ow`` of them the data's, the rest the asm's width padding columns)
    as :class:`conv_d32.Windows` lays them out, for a Supernode's output memory of
    ``channels`` lanes (4 rows above and below, 4 columns left, ``cols.out`` + 4 wide)."""
    b, h, w, depth = x.shape
    pad = x.padding
    h_tot, slices, w_tot = x.geometry.memory_shape[1:4]
    line = w_tot * 32                           # one depth slice's row
    quads = -(-depth // 4)
    tap_y, tap_x = np.divmod(np.arange(fh * fw), fw)
    qd = np.arange(quads)
    tapoff = ((tap_y * slices * line + tap_x * 32)[:, None]
              + ((qd >> 3) * line + (qd & 7) * 4)[None, :]).reshape(-1)
    n, oy, ox = (v.reshape(-1) for v in np.meshgrid(np.arange(b), np.arange(rows.out),
                                                    np.arange(cols.out), indexing="ij"))
    iy, ix = oy * rows.s - rows.before, ox * cols.s - cols.before
    inside = (iy >= 0) & (iy + fh <= h) & (ix >= 0) & (ix + fw <= w)
    counted = ox < ow
    # inside windows first, then the gathered ones; in each group the counted ones first
    groups = (inside & counted, inside & ~counted, ~inside & counted, ~inside & ~counted)
    order = np.concatenate([np.flatnonzero(g) for g in groups])
    n, oy, ox, iy, ix = n[order], oy[order], ox[order], iy[order], ix[order]
    n_in = int(inside.sum())
    inoff = ((n[:n_in] * h_tot + pad.h_before + iy[:n_in]) * slices * line
             + (pad.w_before + ix[:n_in]) * 32)
    outoff = (((n * (rows.out + 8) + oy + 4) * (channels // 32)) * (cols.out + 4) + 4 + ox) * 32
    # the gathered windows: each tap's codes as the asm reads them; the lanes past the
    # depth in a tap's last quad meet zero weights (read as zx)
    gy, gx = iy[n_in:, None] + tap_y[None, :], ix[n_in:, None] + tap_x[None, :]
    n_out = gy.shape[0]
    gather = np.zeros((n_out, fh * fw, 4 * quads), np.int64)
    gather_zx = np.ones((n_out, fh * fw, 4 * quads), np.bool_)
    if n_out:
        offsets, zero = point_index(x, zaps, gy, gx)          # (B, n_out, taps, D)
        pick = np.arange(n_out)
        gather[:, :, :depth] = offsets[n[n_in:], pick]
        gather_zx[:, :, :depth] = zero[n[n_in:], pick]
    return Windows(tapoff.astype(np.int64), inoff.astype(np.int64),
                   gather.reshape(n_out, fh * fw * 4 * quads),
                   gather_zx.reshape(n_out, fh * fw * 4 * quads),
                   outoff.astype(np.int64),
                   (int((inside & counted).sum()), int((~inside & counted).sum())))


def direct_path(x: Tensor, filt: Tensor, zf: int, rows: Window, cols: Window, extra: int,
                channels: int, zaps: Zaps) -> Fused | None:
    """The Supernode's first try on the kernel reading its d32 input where it lies, for
    inputs of ``x``'s geometry: a function of (x, zx, folded, recip, shift, mem, fill) that
    writes the output memory's codes and its padding ``fill`` and returns the run's (min,
    max) in codes (the node's start included), or None (nothing written) for a run it does
    not serve. ``cols`` is the output's data columns; ``extra`` more are computed (the asm's
    width padding). None where it does not apply (a flat input, depth padding before, a
    filter past a signed byte of ``zf``, no VNNI / IFMA here)."""
    if x.layout is not Layout.D32 or x.padding.d_before or not filt.has_data \
            or not (rows.out and cols.out and x.shape[0]):
        return None
    fh, fw, depth, cout = filt.shape
    wide = Window(cols.n, cols.f, cols.s, cols.out + extra, cols.before)
    windows = d32_windows(x, fh, fw, rows, wide, cols.out, zaps, channels)
    codes = np.asarray(filt.array).reshape(fh * fw, depth, cout)
    mem_shape = (x.shape[0], rows.out + 8, channels // 32, wide.out + 4, 32)
    run = prepared_conv_d32(codes, zf, channels, -(-depth // 4), windows,
                            int(np.prod(x.geometry.memory_shape)), mem_shape)
    if run is None:
        return None

    # the separate steps read a window's padding as zx itself where every padding byte it
    # reads holds zx's low byte (the GEMM's own padding), and zx's low byte elsewhere: the
    # same for a zx that is a code; a 1x1 convolution's only padding reads are the columns
    # past the data, which they read as the low byte
    any_zx = is_plain(rows, cols)

    def fused(x: Tensor, zx: int, folded: np.ndarray, recip: np.ndarray, shift: int,
              mem: np.ndarray, fill: int) -> tuple[int, int] | None:
        if not (any_zx or 0 <= zx <= 255):
            return None
        got = run(x.raw, zx, folded, recip, shift, False, mem, fill)
        return None if got is None else (min(_START[0], got[0]), max(_START[1], got[1]))

    # what supernode_fast calls straight for a zx the pass serves
    fused.direct = run  # type: ignore[attr-defined]
    return fused


__all__ = ["d32_windows", "direct_path"]
