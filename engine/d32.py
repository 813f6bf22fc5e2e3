"""The d32 memory layout: paddings, totals, strides and element offsets (graph spec §1.5-§1.6).

A d32 tensor is stored as [B, H_tot, D_tot/32, W_tot, 32]: batch, padded row, 32-deep depth
slice, padded width position, channel within the slice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

MAX_PADDING_HEIGHT = 8
MAX_PADDING_WIDTH = 7
MAX_PADDING_DEPTH = 31


class D32Padding(NamedTuple):
    """Padding before/after on height, width and depth, in elements."""

    h_before: int = 0
    h_after: int = 0
    w_before: int = 0
    w_after: int = 0
    d_before: int = 0
    d_after: int = 0


NO_PADDING = D32Padding()


@dataclass(frozen=True, slots=True)
class D32Geometry:
    """Totals and strides (in elements) of a d32 tensor of a given shape and padding."""

    shape: tuple[int, int, int, int]
    padding: D32Padding

    @property
    def h_total(self) -> int:
        return self.padding.h_before + self.shape[1] + self.padding.h_after

    @property
    def w_total(self) -> int:
        return self.padding.w_before + self.shape[2] + self.padding.w_after

    @property
    def d_total(self) -> int:
        return self.padding.d_before + self.shape[3] + self.padding.d_after

    @property
    def d32_stride(self) -> int:
        return self.w_total * 32

    @property
    def row_stride(self) -> int:
        return self.w_total * self.d_total

    @property
    def batch_stride(self) -> int:
        return self.h_total * self.row_stride

    @property
    def n_slices(self) -> int:
        return self.d_total // 32

    @property
    def n_data_slices(self) -> int:
        """Slices that hold valid data: ceil((d_before + D) / 32) (``nd32``)."""
        return -(-(self.padding.d_before + self.shape[3]) // 32)

    @property
    def elements(self) -> int:
        return self.shape[0] * self.batch_stride

    @property
    def memory_shape(self) -> tuple[int, int, int, int, int]:
        return (self.shape[0], self.h_total, self.n_slices, self.w_total, 32)

    def slice_spans(self) -> list[tuple[int, int]]:
        """Per depth slice, the padded depth positions [lo, hi) that hold data (may be empty)."""
        db, d = self.padding.d_before, self.shape[3]
        return [(max(32 * k, db), min(32 * k + 32, db + d)) for k in range(self.n_slices)]

    def check(self) -> None:
        """Raise ValueError unless the totals obey d32's alignment rules (§1.6.1)."""
        if any(p < 0 for p in self.padding):
            raise ValueError(f"d32 padding must not be negative, got {tuple(self.padding)}")
        if self.d_total % 32:
            raise ValueError(f"d32 total depth {self.d_total} is not a multiple of 32")
        if self.w_total % 4:
            raise ValueError(f"d32 total width {self.w_total} is not a multiple of 4")

    def offset(self, b: int, h: int, w: int, d: int) -> int:
        """Element offset of (b, h, w, d); padding is addressed with negative or past-the-end
        indices (§1.6.3)."""
        p = self.padding
        if not (0 <= b < self.shape[0] and -p.h_before <= h < self.shape[1] + p.h_after
                and -p.w_before <= w < self.shape[2] + p.w_after
                and -p.d_before <= d < self.shape[3] + p.d_after):
            raise IndexError(f"({b}, {h}, {w}, {d}) lies outside the padded tensor")
        dp = d + p.d_before
        return (b * self.batch_stride + (h + p.h_before) * self.row_stride
                + (w + p.w_before) * 32 + (dp // 32) * self.d32_stride + dp % 32)

    def position(self, offset: int) -> tuple[int, int, int, int]:
        """The (b, h, w, d) at an element offset: the inverse of :meth:`offset`."""
        if not 0 <= offset < self.elements:
            raise IndexError(f"offset {offset} lies outside the buffer of {self.elements}")
        p = self.padding
        b, rest = divmod(offset, self.batch_stride)
        row, rest = divmod(rest, self.row_stride)
        sl, rest = divmod(rest, self.d32_stride)
        wp, c = divmod(rest, 32)
        return b, row - p.h_before, wp - p.w_before, sl * 32 + c - p.d_before


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def converter_padding(shape: tuple[int, int, int, int], *, w_left: int = 4,
                      w_right_min: int = 0, h_pad: int = 4, d_before: int = 0) -> D32Padding:
    """Output padding of Convert_to_d32 and its kin (graph spec §4.17).

    Right padding makes W_tot a multiple of 4 and drops by 4 when it would exceed 7, so the
    requested minimum is not always honoured. Depth-after padding fills to the next 32.
    """
    width = shape[2]
    w_total = round_up(w_left + width + w_right_min, 4)
    w_after = w_total - w_left - width
    if w_after > MAX_PADDING_WIDTH:
        w_after -= 4
    d_after = (-(d_before + shape[3])) % 32
    return D32Padding(h_pad, h_pad, w_left, w_after, d_before, d_after)


def default_padding(shape: tuple[int, int, int, int]) -> D32Padding:
    """hexagon_nn's default d32 padding: 4 top and bottom, 4 left, right to a multiple of 4."""
    return converter_padding(shape)
