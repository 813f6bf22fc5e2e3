"""Padding region map and changed-byte counts (graph spec §1.6, §4.19)."""

from __future__ import annotations

import numpy as np

from hexscope.engine import D32Padding, Tensor
from hexscope.engine.analysis.padding_regions import (
    Region,
    byte_regions,
    changed_by_region,
    changed_bytes,
    memory_rows,
    region_codes,
)

# The worked example of graph spec §1.6.4 (the d32 diagram), with depth-before padding added.
SHAPE = (2, 4, 7, 100)
PAD = D32Padding(2, 2, 4, 1, 12, 16)


def _brute_region(h, w, d):
    _, H, W, D = SHAPE
    if h < 0:
        return Region.TOP
    if h >= H:
        return Region.BOTTOM
    if w < 0:
        return Region.LEFT
    if w >= W:
        return Region.RIGHT
    if d < 0:
        return Region.DEPTH_BEFORE
    if d >= D:
        return Region.DEPTH_AFTER
    return Region.VALID


def test_region_codes_match_a_brute_force_walk_of_every_address():
    t = Tensor.from_array(np.zeros(SHAPE, np.uint8)).to_d32(PAD)
    codes = region_codes(t).reshape(-1)
    g = t.geometry
    seen = np.zeros(codes.size, bool)
    for b in range(SHAPE[0]):
        for h in range(-PAD.h_before, SHAPE[1] + PAD.h_after):
            for w in range(-PAD.w_before, SHAPE[2] + PAD.w_after):
                for d in range(-PAD.d_before, SHAPE[3] + PAD.d_after, 7):
                    off = g.offset(b, h, w, d)
                    seen[off] = True
                    assert codes[off] == _brute_region(h, w, d), (b, h, w, d)
    assert seen.sum() > 1000
    # Valid elements are exactly the ones that are not padding.
    np.testing.assert_array_equal(codes == Region.VALID, ~t.padding_mask().reshape(-1))


def test_byte_regions_mark_the_tail_past_data_size():
    t = Tensor.from_array(np.zeros((1, 2, 2, 3), np.uint8)).to_d32()
    raw = np.concatenate([t.buffer, np.full(40, 7, np.uint8)])
    longer = Tensor(t.shape, t.dtype, raw, t.layout, t.padding)
    regions = byte_regions(longer)
    assert regions.size == t.nbytes + 40
    assert (regions[t.nbytes:] == Region.TAIL).all()
    assert (regions[: t.nbytes] != Region.TAIL).all()


def test_changed_by_region_counts_bytes_per_region():
    x = Tensor.from_array(np.arange(2 * 3 * 4, dtype=np.uint8).reshape(1, 2, 3, 4))
    before = x.to_d32(D32Padding(1, 1, 4, 1, 0, 28), fill=0)
    after_raw = before.raw.copy()
    g = before.geometry
    after_raw[g.offset(0, -1, 0, 0)] = 9          # top padding
    after_raw[g.offset(0, 0, -1, 3)] = 9          # left padding
    after_raw[g.offset(0, 1, 2, 5)] = 9           # depth-after padding
    after_raw = np.concatenate([after_raw, np.ones(5, np.uint8)])   # tail only in "after"
    after = type(before)(before.shape, before.dtype, after_raw, before.layout, before.padding)
    assert changed_bytes(before, after).sum() == 3 + 5
    assert changed_by_region(before, after) == {Region.TOP: 1, Region.LEFT: 1,
                                                Region.DEPTH_AFTER: 1, Region.TAIL: 5}


def test_memory_rows_wraps_and_fills_the_last_row():
    rows = memory_rows(np.arange(7, dtype=np.uint8), 3, fill=255)
    np.testing.assert_array_equal(rows, [[0, 1, 2], [3, 4, 5], [6, 255, 255]])


def test_changed_bytes_past_the_input_end_skip_unwritten_marker():
    t = Tensor.from_array(np.zeros((1, 1, 1, 1), np.uint8)).to_d32(D32Padding(0, 0, 0, 3, 0, 31))
    tail = np.array([0x00, 0xA5, 0xA5, 0x07], np.uint8)
    after = Tensor(t.shape, t.dtype, np.concatenate([t.raw, tail]), t.layout, t.padding)
    mask = changed_bytes(t, after, unwritten=0xA5)
    np.testing.assert_array_equal(mask[t.nbytes:], [True, False, False, True])
    assert changed_by_region(t, after, unwritten=0xA5) == {Region.TAIL: 2}
