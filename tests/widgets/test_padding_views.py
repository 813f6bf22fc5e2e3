"""d32 padding view and FillPadding view (issue 5): the arrays behind the pictures, checked
against the spec's layout rules (graph spec §1.5-§1.6, §4.19) written out here."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import D32Padding, Tensor
from hexscope.engine.padding_regions import Region
from hexscope.widgets.d32_layout_strip import offset_breakdown
from hexscope.widgets.d32_view import D32PaddingView
from hexscope.widgets.fill_padding_view import FillPaddingView

SHAPE = (2, 4, 7, 100)
PAD = D32Padding(2, 2, 4, 1, 12, 16)   # H_tot 8, W_tot 12, D_tot 128: 4 slices


def _padded_reference(codes, fill):
    """(B, H_tot, W_tot, D_tot) with ``fill`` in the padding, by plain index arithmetic."""
    b, h, w, d = codes.shape
    out = np.full((b, h + 4, w + 5, d + 28), fill, np.uint8)
    out[:, 2:2 + h, 4:4 + w, 12:12 + d] = codes
    return out


def _memory_reference(padded):
    """§1.5: memory order is b, padded row, depth slice, padded width, channel."""
    b, ht, wt, dt = padded.shape
    rows = np.empty((b, ht * (dt // 32), wt * 32), np.uint8)
    for bb in range(b):
        for r in range(ht):
            for s in range(dt // 32):
                rows[bb, r * (dt // 32) + s] = padded[bb, r, :, s * 32:(s + 1) * 32].reshape(-1)
    return rows


@pytest.fixture
def tensor(rng):
    codes = rng.integers(0, 256, SHAPE).astype(np.uint8)
    return codes, Tensor.from_array(codes).to_d32(PAD, fill=0xA5)


def test_memory_picture_rows_are_the_bytes_in_memory_order(qtbot, tensor):
    codes, t = tensor
    view = D32PaddingView()
    qtbot.addWidget(view)
    view.set_tensor(t)
    padded = _padded_reference(codes, 0xA5)
    for b in (0, 1):
        view._batch.setValue(b)
        pic = view.picture
        np.testing.assert_array_equal(pic.image_data, _memory_reference(padded)[b])
        # the padding mask: a byte is padding iff its (h, w, d) lies outside the valid box
        valid = np.zeros(padded.shape[1:], bool)
        valid[2:6, 4:11, 12:112] = True
        expected_valid = _memory_reference(valid[None].astype(np.uint8))[0].astype(bool)
        np.testing.assert_array_equal(pic.regions == Region.VALID, expected_valid)


def test_memory_picture_region_kinds_and_pixel_mapping(qtbot, tensor):
    _, t = tensor
    view = D32PaddingView()
    qtbot.addWidget(view)
    view.set_tensor(t)
    pic = view.picture
    # row 0 is h=-2 slice 0: top padding; row 8 is h=0 slice 0; column 0 is w=-4
    assert pic.regions[0, 200] == Region.TOP
    assert pic.regions[8, 0] == Region.LEFT
    assert pic.regions[8, 4 * 32 + 3] == Region.DEPTH_BEFORE       # d = 3 - 12 = -9
    assert pic.regions[8 + 3, 4 * 32 + 20] == Region.DEPTH_AFTER   # d = 96+20-12 = 104
    assert pic.regions[8, 11 * 32] == Region.RIGHT
    for index in [(0, -2, -4, -12), (0, 0, 0, 0), (0, 3, 6, 99), (0, 5, 7, 115)]:
        row, col = pic.place_of(index)
        assert pic.pixel(row, col).index == index
        assert pic.image_data[row, col] == t.raw[t.offset(*index)]


def test_plane_mode_shows_the_padded_plane_with_negative_indices(qtbot, tensor):
    codes, t = tensor
    view = D32PaddingView()
    qtbot.addWidget(view)
    view.set_tensor(t)
    view.set_mode("plane")
    view.set_depth(-5)                                    # a depth-before padding channel
    padded = _padded_reference(codes, 0xA5)
    np.testing.assert_array_equal(view.picture.image_data, padded[0, :, :, 12 - 5])
    assert (view.picture.regions[2:6, 4:11] == Region.DEPTH_BEFORE).all()
    view.set_depth(50)
    np.testing.assert_array_equal(view.picture.image_data, padded[0, :, :, 62])
    assert view.picture.pixel(0, 0).index == (0, -2, -4, 50)


def test_selection_links_memory_and_plane(qtbot, tensor):
    _, t = tensor
    view = D32PaddingView()
    qtbot.addWidget(view)
    view.set_tensor(t)
    view.select((1, 2, 5, 40))
    assert view._batch.value() == 1
    row, col = view.picture.place_of((1, 2, 5, 40))
    assert (row, col) == ((2 + 2) * 4 + (40 + 12) // 32, (5 + 4) * 32 + (40 + 12) % 32)
    view.set_mode("plane")
    view.select((1, 2, 5, 40))
    assert view._depth.value() == 40
    assert view.picture.place_of((1, 2, 5, 40)) == (4, 9)


def test_limit_mask_follows_pprint_correction_rule(qtbot, tensor):
    _, t = tensor
    view = D32PaddingView()
    qtbot.addWidget(view)
    view.set_tensor(t)
    view.set_mode("plane")
    # graph spec §4.11-4.13 example: {2, -100, 0} prints only w = -4..-1
    view.set_limit(2, -100, 0)
    mask = view.limit_mask()
    assert mask[:, :4].all() and not mask[:, 4:].any()
    text = view.pprint_text()
    assert text[1] == "reporting only on W dimension, range limit to [-4...-1]"
    assert len(text) == 2 + 2 * 8 * 4 * 128
    view.set_limit(1, 3, 3)                               # end <= start: one row, h = 3
    mask = view.limit_mask()
    assert mask[5].all() and mask.sum() == mask.shape[1]


def test_offset_breakdown_matches_the_spec_example():
    t = Tensor.from_array(np.zeros((1, 4, 7, 112), np.uint8)).to_d32(
        D32Padding(2, 2, 4, 1, 0, 16))
    # graph spec §1.6.4: (0,2,5,40) -> 6824 = 4*1536 + 1*384 + 9*32 + 8
    assert offset_breakdown(t, (0, 2, 5, 40)) == "byte 6824 = 0·12288 + 4·1536 + 1·384 + 9·32 + 8"


def _fill_like_device(t: Tensor, spatial: int, depth: int, extra: int) -> Tensor:
    """FillPadding_8_d32 by the region list of graph spec §4.19, with ``extra`` tail bytes."""
    raw = np.concatenate([t.raw.copy(), np.zeros(extra, np.uint8)])
    p, (B, H, W, D) = t.padding, t.shape
    wt, dt = p.w_before + W + p.w_after, p.d_before + D + p.d_after
    row, d32s, batch = wt * dt, wt * 32, (p.h_before + H + p.h_after) * wt * dt
    nd32 = -(-(p.d_before + D) // 32)
    size = t.nbytes
    for b in range(B):
        raw[b * batch: b * batch + p.h_before * row] = spatial
        s = b * batch + (p.h_before + H) * row
        raw[s: s + p.h_after * row] = spatial
    raw[size: size + min(extra, 4 * row)] = spatial
    for b in range(B):
        for k in range(H * nd32):
            s = b * batch + p.h_before * row + k * d32s
            raw[s: s + 32 * p.w_before] = spatial
            s += 32 * p.w_before + 32 * W
            raw[s: s + 32 * p.w_after] = spatial
        for h in range(H):
            for w in range(W):
                s = b * batch + (p.h_before + h) * row + 32 * (p.w_before + w)
                raw[s: s + p.d_before] = depth
                s2 = s + (nd32 - 1) * d32s + (32 - p.d_after)
                raw[s2: s2 + p.d_after] = depth
    return Tensor(t.shape, t.dtype, raw, t.layout, t.padding)


def test_fill_padding_view_marks_exactly_the_changed_bytes(qtbot, tensor):
    codes, t = tensor
    after = _fill_like_device(t, 0x11, 0x22, extra=300)
    view = FillPaddingView()
    qtbot.addWidget(view)
    view.set_tensors(t, after, "0x30 FillPadding_8_d32")
    padded_before = _padded_reference(codes, 0xA5)
    expected = np.ones(after.raw.size, bool)
    expected[: t.raw.size] = t.raw != after.raw[: t.raw.size]
    np.testing.assert_array_equal(view.changed_mask, expected)
    # every padding byte changed (0xA5 -> 0x11 or 0x22), no valid byte did, 300 tail bytes
    n_pad = padded_before.size - codes.size
    assert view.changed_counts.get(Region.VALID, 0) == 0
    assert sum(view.changed_counts.values()) == n_pad + 300
    assert view.changed_counts[Region.TAIL] == 300
    pic = view.output_picture
    view._batch.setValue(1)                               # the last batch shows the tail
    assert pic.image_data.shape[0] == 8 * 4 + -(-300 // (12 * 32))
    assert pic.marks.sum() == (expected[t.geometry.batch_stride:]).sum()
    np.testing.assert_array_equal(view.input_picture.image_data,
                                  _memory_reference(padded_before)[1])


def test_fill_padding_view_rejects_flat_tensors(qtbot, tensor):
    codes, t = tensor
    view = FillPaddingView()
    qtbot.addWidget(view)
    view.set_tensors(Tensor.from_array(codes), t)
    assert view.changed_mask is None and view.output_picture.image_data is None
