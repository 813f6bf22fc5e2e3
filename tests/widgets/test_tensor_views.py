"""Tensor inspector views (issue 5): the data behind the heatmap, table and histogram,
checked against numpy slicing of the original arrays and the spec's address formula."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import D32Padding, DType, QuantRange, Tensor
from hexscope.widgets.code_histogram import CodeHistogramView
from hexscope.widgets.tensor_heatmap import TensorHeatmapView
from hexscope.widgets.tensor_inspector import TensorInspector
from hexscope.widgets.tensor_table import TensorTableView

PAD = D32Padding(2, 2, 4, 1, 0, 16)     # graph spec §1.6.4
Q = QuantRange(-1.0, 3.0)


def _spec_offset(shape, pad, b, h, w, d):
    """graph spec §1.6.3, written out independently of the engine."""
    _, H, W, D = shape
    w_tot = pad.w_before + W + pad.w_after
    d_tot = pad.d_before + D + pad.d_after
    h_tot = pad.h_before + H + pad.h_after
    dp = d + pad.d_before
    return (b * h_tot * w_tot * d_tot + (h + pad.h_before) * w_tot * d_tot
            + (w + pad.w_before) * 32 + (dp // 32) * w_tot * 32 + dp % 32)


@pytest.fixture
def codes(rng):
    return rng.integers(0, 256, (2, 4, 7, 112)).astype(np.uint8)


@pytest.mark.parametrize("d32", [False, True], ids=["flat", "d32"])
def test_heatmap_image_is_the_chosen_plane(qtbot, codes, d32):
    t = Tensor.from_array(codes)
    t = t.to_d32(PAD, fill=0xA5) if d32 else t
    view = TensorHeatmapView()
    qtbot.addWidget(view)
    view.set_tensor(t, Q)
    view.set_fixed(0, 1)
    view.set_fixed(3, 40)
    np.testing.assert_array_equal(view.image_data, codes[1, :, :, 40])
    assert view.levels == (0.0, 255.0)
    view.set_axes(3, 2)                                   # depth down, width across
    view.set_fixed(1, 2)
    np.testing.assert_array_equal(view.image_data, codes[1, 2, :, :].T)


def test_heatmap_dequantized_values_and_levels_follow_the_range(qtbot, codes):
    view = TensorHeatmapView()
    qtbot.addWidget(view)
    view.set_tensor(Tensor.from_array(codes).to_d32(PAD), Q)
    view.set_dequantized(True)
    # quantized-ops spec §1.1: value = min + code * (max - min) / 255
    expected = -1.0 + codes[0, :, :, 0].astype(np.float64) * (4.0 / 255.0)
    np.testing.assert_allclose(view.image_data, expected, rtol=1e-6, atol=1e-6)
    assert view.levels == (-1.0, 3.0)


def test_heatmap_of_float_tensor_uses_data_levels_and_no_dequantize(qtbot, rng):
    x = rng.normal(size=(1, 3, 5, 2)).astype(np.float32)
    view = TensorHeatmapView()
    qtbot.addWidget(view)
    view.set_tensor(Tensor.from_array(x), Q)
    view.set_dequantized(True)                           # not possible: stays raw values
    np.testing.assert_array_equal(view.image_data, x[0, :, :, 0])
    lo, hi = view.levels
    assert lo == pytest.approx(float(x[0, :, :, 0].min()))
    assert hi == pytest.approx(float(x[0, :, :, 0].max()))


def test_heatmap_readout_gives_hex_value_and_spec_offset(qtbot, codes):
    t = Tensor.from_array(codes).to_d32(PAD)
    view = TensorHeatmapView()
    qtbot.addWidget(view)
    view.set_tensor(t, Q)
    text = view.readout_for((0, 2, 5, 40))
    code = int(codes[0, 2, 5, 40])
    assert f"0x{code:02x}" in text
    assert f"byte {_spec_offset(codes.shape, PAD, 0, 2, 5, 40)}" in text
    assert "byte 6824" in text                             # the spec's worked example
    assert f"{-1.0 + code * 4.0 / 255.0:.4f}"[:5] in text


def test_heatmap_select_moves_sliders_to_the_element(qtbot, codes):
    view = TensorHeatmapView()
    qtbot.addWidget(view)
    view.set_tensor(Tensor.from_array(codes), Q)
    view.select((1, 3, 6, 99))
    assert view.choice.fixed[0] == 1 and view.choice.fixed[3] == 99
    np.testing.assert_array_equal(view.image_data, codes[1, :, :, 99])


def test_table_row_count_and_rows_flat_and_padded(qtbot, codes):
    t = Tensor.from_array(codes).to_d32(PAD, fill=0x5A)
    view = TensorTableView()
    qtbot.addWidget(view)
    view.set_tensor(t, Q)
    m = view.model
    assert m.rowCount() == codes.size
    row = ((1 * 4 + 2) * 7 + 5) * 112 + 40
    assert m.index_of_row(row) == (1, 2, 5, 40)
    assert m.data(m.index(row, 4)) == str(int(codes[1, 2, 5, 40]))
    view.set_include_padding(True)
    assert m.rowCount() == 2 * 8 * 12 * 128
    assert m.index_of_row(0) == (0, -2, -4, 0)
    assert m.data(m.index(0, 5)) == "0x5a"                  # a padding byte: the fill
    assert m.data(m.index(0, 7)) == "0"                      # the base address
    r = m.row_of((1, 2, 5, 40))
    assert m.index_of_row(r) == (1, 2, 5, 40)
    assert m.data(m.index(r, 7)) == str(_spec_offset(codes.shape, PAD, 1, 2, 5, 40))


def test_table_of_1x149x149x32_is_virtual(qtbot, rng):
    x = rng.integers(0, 256, (1, 149, 149, 32)).astype(np.uint8)
    view = TensorTableView()
    qtbot.addWidget(view)
    view.set_tensor(Tensor.from_array(x).to_d32())
    assert view.model.rowCount() == 149 * 149 * 32
    last = view.model.rowCount() - 1
    assert view.model.data(view.model.index(last, 4)) == str(int(x[0, 148, 148, 31]))


def test_histogram_counts_match_bincount_and_marks_ends(qtbot, codes):
    codes[0, 0, 0, :10] = 0
    codes[0, 1, 0, :7] = 255
    view = CodeHistogramView()
    qtbot.addWidget(view)
    view.set_tensor(Tensor.from_array(codes).to_d32(PAD, fill=0), Q)   # padding not counted
    expected = np.array([np.sum(codes == k) for k in range(256)])
    np.testing.assert_array_equal(view.counts, expected)
    heights = view._ends.opts["height"]
    np.testing.assert_array_equal(heights, [expected[0], expected[255]])


def test_histogram_of_int32_values(qtbot, rng):
    x = rng.integers(-1000, 1000, (1, 4, 4, 4)).astype(np.int32)
    view = CodeHistogramView()
    qtbot.addWidget(view)
    view.set_tensor(Tensor.from_array(x, DType.INT32))
    assert view.counts.sum() == x.size and view.counts.size == 64
    assert view.edges[0] == x.min() and view.edges[-1] == x.max()


def test_inspector_pprint_export_matches_hand_written_lines(qtbot, tmp_path):
    # graph spec §4.11-4.13: "[b,h,w,d]: 0x.." lines after the bhwd header
    x = np.arange(2 * 3, dtype=np.uint8).reshape(1, 1, 2, 3)
    insp = TensorInspector()
    qtbot.addWidget(insp)
    f = Tensor.scalar(0.0)
    insp.set_outputs("0x10 Test", [Tensor.from_array(x), f, Tensor.scalar(6.0)])
    insp.set_limit(2, 1, 5)
    path = tmp_path / "p.txt"
    insp.export_pprint(path)
    assert path.read_text().splitlines() == [
        "bhwd = 1,1,2,3", "reporting only on W dimension, range limit to [1...1]",
        "[0,0,1,0]: 0x03", "[0,0,1,1]: 0x04", "[0,0,1,2]: 0x05"]
    assert insp.qrange == QuantRange(0.0, 6.0)
    insp.heatmap.export_npy(tmp_path / "t.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "t.npy"), x)
    insp.heatmap.export_png(tmp_path / "v.png")
    assert (tmp_path / "v.png").read_bytes()[:4] == b"\x89PNG"
