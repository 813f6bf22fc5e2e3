"""What nnlib's d32 Supernodes (op_supernode_new.c, op_dwise_snode_8bit.c) read where their
windows leave a d32 input's data: its padding as they left it, read as memory.

Before a run, ``supernode_execute_workitem_startwork`` (supernode_utils.h) zaps parts of the
input's padding to its zero code: whole rows above and below (``zap_top``, ``zap_bot``), and
in each data row of each depth slice the left padding from the row's start and the right
padding from the first column past the data. The right zap runs only when that column does
not start a vector (``work->zap_right_size && (right_ptr_l % 128)``), and ``padzap_part``
(padzap_d32.S) never leaves its first vector: its mask holds ``size`` mod 4 columns (4 for a
multiple of 4), moved to the start's place in its vector. Every other padding byte is read
as it is. The asm walks the memory linearly: past a row's right padding come the next depth
slice's left padding and data (after the last slice, the next row's first), and before the
left padding the previous slice's right padding.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hexscope.engine.ops.context import Shared
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.tensor import Tensor


class Zaps(NamedTuple):
    """What a run zaps: padding rows above and below the data, and per data row the
    left padding columns (``left`` from the row's start) and right padding columns
    (``right`` from the first column past the data), as asked of ``padzap_part``."""

    top: int
    bottom: int
    left: int
    right: int


def zap_span(start: int, size: int) -> range:
    """The memory columns of a row (rows start 128-aligned: 4 columns a vector) that
    ``padzap_part`` sets when asked for ``size`` columns from column ``start``."""
    if size <= 0:
        return range(0)
    lane = start & 3
    return range(start, start + min(((size - 1) & 3) + 1, 4 - lane))


def zapped_columns(x: Tensor, left: int, right: int) -> np.ndarray:
    """Which memory columns of a data row (its width padding included) hold the zero code:
    the left zap from the row's start, the right one (skipped where it would start a
    vector) from the first column past the data."""
    p = x.padding
    start = p.w_before + x.shape[2]
    zapped = np.zeros(start + p.w_after, bool)
    for span in (zap_span(0, left), zap_span(start, right if start & 3 else 0)):
        zapped[span.start:span.stop] = True
    return zapped


def area_index(x: Tensor, zaps: Zaps, rows: tuple[int, int], cols: tuple[int, int]
               ) -> tuple[np.ndarray, np.ndarray]:
    """Where :func:`read_area`'s codes are: their byte offsets in ``x.raw`` and whether each
    is read as zx (zapped, or outside the tensor), both (B, rows, cols, D). Compiled callers
    read the codes themselves from it."""
    return point_index(x, zaps, np.arange(rows[0], rows[0] + rows[1])[:, None],
                       np.arange(cols[0], cols[0] + cols[1])[None, :])


def point_index(x: Tensor, zaps: Zaps, ys: np.ndarray, xs: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`area_index` at any points: rows ``ys`` and columns ``xs`` (integer arrays that
    broadcast together to a shape S; 0 = the first data row and column), (B, *S, D) each
    (a convolution's windows that leave the data, tap by tap)."""
    b, h, w, d = x.shape
    p = x.padding
    ht, wt = h + p.h_before + p.h_after, w + p.w_before + p.w_after
    ns = (d + p.d_before + p.d_after) // 32
    per_batch = ht * ns
    zapped = zapped_columns(x, zaps.left, zaps.right)
    ch = np.arange(p.d_before, p.d_before + d)
    sl, lane = ch // 32, ch % 32                                  # (D,)
    y, c = np.broadcast_arrays(np.asarray(ys), p.w_before + np.asarray(xs))
    y, c = y[..., None], c[..., None]                             # (*S, 1)
    local = (p.h_before + y) * ns + sl + c // wt                  # (*S, D)
    col = np.broadcast_to(c % wt, local.shape)
    line, zero = lines_read(x, zaps, local, col, zapped)          # (B, *S, D)
    offsets = (np.clip(line, 0, b * per_batch - 1) * wt + col[None]) * 32 + lane
    return offsets, zero


def lines_read(x: Tensor, zaps: Zaps, local: np.ndarray, col: np.ndarray,
               zapped: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For memory lines ``local`` (a batch's row x depth slice, counted from its first
    padded row; any shape) at padded columns ``col`` (the same shape): the lines of every
    batch (B, *shape), and whether each is read as zx: a zapped column of a data row
    (``zapped``: :func:`zapped_columns`), a zapped row above or below, or past the tensor.
    A line past the batch's last is the next batch's first (past the last batch: not
    modelled, read as zx)."""
    b, h, _, d = x.shape
    p = x.padding
    ns = (d + p.d_before + p.d_after) // 32
    per_batch = (h + p.h_before + p.h_after) * ns
    line = np.arange(b).reshape(-1, *(1,) * local.ndim) * per_batch + local[None]
    inside = (line >= 0) & (line < b * per_batch)
    row = (line % per_batch) // ns
    data_row = (row >= p.h_before) & (row < p.h_before + h)
    zero = ((data_row & zapped[col][None])
            | ((row >= p.h_before - zaps.top) & (row < p.h_before))
            | ((row >= p.h_before + h) & (row < p.h_before + h + zaps.bottom))
            | ~inside)
    return line, zero


def read_area(x: Tensor, zaps: Zaps, zx: int, rows: tuple[int, int], cols: tuple[int, int]
              ) -> np.ndarray:
    """Rows ``rows[0]`` .. ``+ rows[1]`` by columns ``cols[0]`` .. ``+ cols[1]`` of the d32
    input ``x`` (0 = its first data row and column) as the asm reads them: a row's
    columns past its memory line continue on the next line, in the rows above and below
    the data as well (a zapped padding row's next line may be one nnlib does not zap).
    (B, rows, cols, D) uint8, zx where zapped (the zero code's low byte)."""
    return read_at(x.raw, area_index(x, zaps, rows, cols), zx)


def read_at(raw: np.ndarray, index: tuple[np.ndarray, np.ndarray], zx: int) -> np.ndarray:
    """The codes at :func:`area_index`'s ``index`` in the raw memory ``raw`` of an input of
    the shape and padding it was worked out for, zx where it says so (a node keeps the
    index for its runs)."""
    offsets, zero = index
    got = np.asarray(raw).reshape(-1)[offsets]
    return np.where(zero, np.uint8(zx & 0xFF), got).astype(np.uint8)


def border_offsets(x: Tensor, zaps: Zaps, rows: Window, cols: Window) -> np.ndarray:
    """The byte offsets in ``x.raw`` of every code the windows ``rows`` x ``cols`` read
    outside the data that nnlib does not zap (fixed by the shapes and paddings: a node
    keeps them and only compares those bytes with zx each run)."""
    h, w = x.shape[1:3]
    top, bottom, left, right = rows.before, rows.after, cols.before, cols.after
    across = (-left, left + w + right)
    parts = [offsets[~zero] for offsets, zero in (
        area_index(x, zaps, area, span) for area, span in (
            ((-top, top), across), ((h, bottom), across), ((0, h), (-left, left)),
            ((0, h), (w, right))) if area[1] > 0 and span[1] > 0)]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def kept_border(state: dict, x: Tensor, zaps: Zaps, rows: Window, cols: Window
                ) -> np.ndarray:
    """:func:`border_offsets`, kept in the node's ``state`` while the shapes, paddings and
    windows stay the same (one gather and compare a run instead of the index arithmetic)."""
    key = (x.shape, tuple(x.padding), tuple(zaps), rows, cols)
    kept = state.get("d32_border")
    if isinstance(kept, Shared) and kept.key == key:
        return kept.value  # type: ignore[no-any-return]
    offsets = border_offsets(x, zaps, rows, cols)
    state["d32_border"] = Shared(key, offsets)
    return offsets


def window_input(x: Tensor, zaps: Zaps, zx: int, rows: Window, cols: Window,
                 border: np.ndarray | None = None) -> tuple[np.ndarray | None, bool]:
    """The codes the windows ``rows`` x ``cols`` read, from the first row and column they
    reach (so their padding before is 0), and whether every one outside the data is zx
    (then the windows' own padding serves and the codes are not read: None). ``border``:
    :func:`border_offsets`, if the caller keeps it."""
    if border is None:
        border = border_offsets(x, zaps, rows, cols)
    if not np.any(np.asarray(x.raw).reshape(-1)[border] != np.uint8(zx & 0xFF)):
        return None, True
    h, w = x.shape[1:3]
    return read_area(x, zaps, zx, (-rows.before, rows.before + h + rows.after),
                     (-cols.before, cols.before + w + cols.after)), False


__all__ = ["Zaps", "area_index", "border_offsets", "kept_border", "point_index", "read_area",
           "read_at", "window_input", "zap_span", "zapped_columns"]
