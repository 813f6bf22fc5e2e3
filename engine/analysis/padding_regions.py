"""Where each byte of a d32 buffer lies: valid data, which padding region, or the tail.

The views draw padding regions apart, and the FillPadding view counts changed bytes per
region, so the classification is an engine function (graph spec §1.6, §4.19).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import numpy.typing as npt

from hexscope.engine.dtypes import Layout, U8Array
from hexscope.engine.tensor import Tensor


class Region(IntEnum):
    """What a byte of a tensor's allocation holds."""

    VALID = 0
    TOP = 1
    BOTTOM = 2
    LEFT = 3
    RIGHT = 4
    DEPTH_BEFORE = 5
    DEPTH_AFTER = 6
    TAIL = 7          # past data_size: the rest of the allocation ("rows after the last batch")

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Region.VALID: "valid data", Region.TOP: "top padding", Region.BOTTOM: "bottom padding",
    Region.LEFT: "left padding", Region.RIGHT: "right padding",
    Region.DEPTH_BEFORE: "depth-before padding", Region.DEPTH_AFTER: "depth-after padding",
    Region.TAIL: "past the end",
}


def region_codes(tensor: Tensor) -> U8Array:
    """The :class:`Region` of every element, in memory order (``tensor.memory``'s shape).

    Spatial padding wins over depth padding where they overlap: the depth padding of a
    padding row is part of that row, as FillPadding_8_d32 treats it (§4.19).
    """
    if tensor.layout is not Layout.D32:
        return np.zeros(tensor.shape, np.uint8)
    g, p = tensor.geometry, tensor.padding
    _, h, w, d = tensor.shape
    rows = np.zeros(g.h_total, np.uint8)
    rows[: p.h_before] = Region.TOP
    rows[p.h_before + h:] = Region.BOTTOM
    cols = np.zeros(g.w_total, np.uint8)
    cols[: p.w_before] = Region.LEFT
    cols[p.w_before + w:] = Region.RIGHT
    depth = np.zeros(g.d_total, np.uint8)
    depth[: p.d_before] = Region.DEPTH_BEFORE
    depth[p.d_before + d:] = Region.DEPTH_AFTER
    depth = depth.reshape(g.n_slices, 32)
    r = rows[:, None, None, None]
    c = cols[None, None, :, None]
    dd = depth[None, :, None, :]
    plane = np.where(r != 0, r, np.where(c != 0, c, dd))
    return np.broadcast_to(plane, g.memory_shape).copy()


def byte_regions(tensor: Tensor) -> U8Array:
    """The :class:`Region` of every byte of ``tensor.raw`` (data, then the tail)."""
    codes = region_codes(tensor).reshape(-1)
    per_byte = np.repeat(codes, tensor.dtype.size) if tensor.dtype.size > 1 else codes
    tail = tensor.raw.size - per_byte.size
    if tail > 0:
        per_byte = np.concatenate([per_byte, np.full(tail, Region.TAIL, np.uint8)])
    return per_byte


def row_bytes(tensor: Tensor) -> int:
    """Bytes per picture row: one (row, slice) run for d32, one W*D row for flat tensors."""
    if tensor.layout is Layout.D32:
        return tensor.geometry.d32_stride * tensor.dtype.size
    _, _, w, d = tensor.shape
    return max(1, w * d * tensor.dtype.size)


def memory_rows(values: npt.NDArray, width: int, fill: int = 0) -> npt.NDArray:
    """A 1-D array wrapped into rows of ``width``; a short last row is filled with ``fill``.

    ``width`` must be positive (a d32 tensor with W_tot 0 has no rows to wrap into).
    """
    if width < 1:
        raise ValueError(f"memory rows need a positive width, got {width}")
    n_rows = -(-values.size // width) if values.size else 0
    out = np.full(n_rows * width, fill, dtype=values.dtype)
    out[: values.size] = values
    return out.reshape(n_rows, width)


def changed_bytes(before: Tensor, after: Tensor,
                  unwritten: int | None = None) -> npt.NDArray[np.bool_]:
    """Which bytes of ``after.raw`` differ from ``before.raw``.

    Bytes that only ``after`` has (FillPadding writes past the input's end, §4.19 step 2)
    count as changed, except those equal to ``unwritten``: the byte the simulator puts where
    an op wrote nothing (the session's padding fill).
    """
    a, b = before.raw, after.raw
    common = min(a.size, b.size)
    changed = np.ones(b.size, bool)
    changed[:common] = a[:common] != b[:common]
    if unwritten is not None:
        changed[common:] = b[common:] != (unwritten & 0xFF)
    return changed


def changed_by_region(before: Tensor, after: Tensor,
                      unwritten: int | None = None) -> dict[Region, int]:
    """Changed byte counts per region of ``after`` (regions with no change are left out)."""
    changed = changed_bytes(before, after, unwritten)
    regions = byte_regions(after)[: changed.size]
    counts = np.bincount(regions[changed[: regions.size]], minlength=len(Region))
    return {Region(k): int(n) for k, n in enumerate(counts) if n}
