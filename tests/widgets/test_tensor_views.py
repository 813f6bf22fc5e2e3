"""Tensor inspector views (issue 5): the data behind the heatmap, table and histogram,
checked against numpy slicing of the original arrays and the spec's address formula."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QPushButton

from hexscope.engine import D32Padding, DType, QuantRange, Tensor
from hexscope.widgets._plane import fitting_axes
from hexscope.widgets.code_histogram import CodeHistogramView
from hexscope.widgets.fill_padding_view import FillPaddingView
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


@pytest.mark.parametrize("shape, rows, cols, want", [
    ((1, 6, 7, 40), 1, 2, (1, 2)),      # a plane with extent both ways: the user's choice
    ((1, 1, 1, 1000), 1, 2, (1, 3)),    # a classifier's output: h kept, d across
    ((1, 1, 7, 40), 1, 2, (2, 3)),      # h is 1: the two longest axes, w down, d across
    ((1, 1, 1, 1), 1, 2, (1, 2)),       # nothing longer anywhere: unchanged
    ((3, 1, 1, 1), 3, 2, (0, 3)),       # batch is the only extent: d (rows) kept beside it
])
def test_fitting_axes_shows_a_tensors_extent(shape, rows, cols, want):
    assert fitting_axes(shape, rows, cols) == want


def test_a_classifier_output_shows_as_a_strip_not_one_pixel(qtbot, rng):
    """The Compare panel on MobileNetV2's 1x1x1x1000 output showed one pixel of it."""
    view = TensorHeatmapView()
    qtbot.addWidget(view)
    view.set_tensor(Tensor.from_array(rng.integers(0, 256, (1, 8, 8, 3)).astype(np.uint8)), Q)
    assert view.image_data.shape == (8, 8)
    assert view._plot.vb.state["aspectLocked"]                # square pixels for a square
    logits = rng.integers(0, 256, (1, 1, 1, 1000)).astype(np.uint8)
    view.set_tensor(Tensor.from_array(logits), Q)
    np.testing.assert_array_equal(view.image_data, logits[0, 0, :, :])   # 1 x 1000
    assert (view.choice.rows, view.choice.cols) == (1, 3)
    assert not view._plot.vb.state["aspectLocked"]            # the strip fills the view
    view.set_tensor(Tensor.from_array(rng.integers(0, 256, (1, 5, 4, 3)).astype(np.uint8)), Q)
    assert view.image_data.shape == (5, 3)                    # h by d, as last fitted


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


# --- odd data: the views show what is there and never raise ---------------------------------


def _hover_heatmap(view: TensorHeatmapView, r: float = 0.5, c: float = 0.5) -> None:
    view._on_mouse_moved((view._plot.vb.mapViewToScene(QPointF(c, r)),))


@pytest.mark.parametrize("d32", [False, True], ids=["flat", "d32"])
@pytest.mark.parametrize("shape", [(1, 0, 4, 5), (1, 3, 0, 5), (0, 3, 4, 5), (1, 3, 4, 0)])
def test_heatmap_with_an_empty_axis_shows_no_elements(qtbot, shape, d32):
    t = Tensor.from_array(np.zeros(shape, np.uint8))
    t = t.to_d32() if d32 else t
    view = TensorHeatmapView()
    qtbot.addWidget(view)
    view.resize(500, 400)
    view.show()
    view.set_tensor(t, Q)
    assert "no elements" in view.note
    assert view.image_data is None or view.image_data.size == 0
    before = view._readout.text()
    _hover_heatmap(view)                                   # nothing there: read-out unchanged
    assert view._readout.text() == before
    view.set_axes(3, 0)                                    # depth down, batch across
    view.set_fixed(1, 2)
    view.select((0, 0, 0, 0))
    view.set_dequantized(True)
    _hover_heatmap(view)
    assert "no elements" in view.note
    view.set_tensor(Tensor.from_array(np.ones((1, 2, 2, 1), np.uint8)), Q)
    assert view.note == ""                                 # the note goes with the empty tensor


@pytest.mark.parametrize("lo, hi", [(np.nan, np.nan), (-np.inf, np.inf), (0.0, np.inf)])
def test_heatmap_dequantized_with_a_non_finite_range_falls_back_to_codes(qtbot, lo, hi):
    codes = np.arange(12, dtype=np.uint8).reshape(1, 3, 4, 1)
    insp = TensorInspector()
    qtbot.addWidget(insp)
    insp.set_outputs("node", [Tensor.from_array(codes), Tensor.scalar(lo), Tensor.scalar(hi)])
    insp.heatmap._mode.setCurrentIndex(1)                  # the user picks "dequantized"
    view = insp.heatmap
    np.testing.assert_array_equal(view.image_data, codes[0, :, :, 0])
    assert view.levels == (0.0, 255.0)
    assert "not finite" in view.note and "codes" in view.note
    view._mode.setCurrentIndex(0)
    assert view.note == ""


@pytest.mark.parametrize("value", [1e20, float(np.finfo(np.float32).max),
                                   -float(np.finfo(np.float32).max), 3.5])
def test_histogram_of_equal_floats_of_any_magnitude(qtbot, value):
    view = CodeHistogramView()
    qtbot.addWidget(view)
    view.set_tensor(Tensor.from_array(np.full((1, 2, 2, 1), value, np.float32)))
    assert view.counts.sum() == 4
    v = f"{float(np.float32(value)):.6g}"
    assert view._summary.text() == f"4 elements in [{v}, {v}]"


def test_histogram_summary_of_empty_and_non_finite_tensors(qtbot):
    view = CodeHistogramView()
    qtbot.addWidget(view)
    view.set_tensor(Tensor.from_array(np.zeros((0, 3, 4, 5), np.uint8)), Q)
    assert view._summary.text().startswith("0 elements")
    assert view.counts.sum() == 0
    view.set_tensor(Tensor.from_array(np.zeros((0, 3, 4, 5), np.float32)))
    assert view._summary.text() == "0 elements"
    view.set_tensor(Tensor.from_array(np.full((1, 3, 4, 5), np.nan, np.float32)))
    assert view._summary.text() == "60 elements, no finite values (60 not finite)"
    view.set_tensor(Tensor.from_array(np.full((1, 1, 2, 1), np.inf, np.float32)))
    assert view._summary.text() == "2 elements, no finite values (2 not finite)"
    assert view.counts.sum() == 0


def _hover_picture(pic, index):
    r, c = pic.place_of(index)
    pic._on_moved((pic.plotItem.vb.mapViewToScene(QPointF(c + 0.5, r + 0.5)),))


def test_fill_view_with_different_geometries_reads_each_tensor_at_its_own_offset(qtbot):
    x = Tensor.from_array(np.arange(1, 1 + 3 * 5 * 7, dtype=np.uint8).reshape(1, 3, 5, 7))
    before = x.to_d32(D32Padding(4, 4, 4, 3, 4, 53), fill=0xAA)     # 2 depth slices
    after = x.to_d32(D32Padding(4, 4, 4, 3, 0, 25), fill=0x00)      # 1 depth slice
    view = FillPaddingView()
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    view.set_tensors(before, after, "node", 0)
    assert "geometr" in view._summary.text() and "not compared" in view._summary.text()
    assert view.changed_mask is None
    _hover_picture(view.input_picture, (0, 1, 2, 3))
    text = view._readout.text()
    ob, oa = before.offset(0, 1, 2, 3), after.offset(0, 1, 2, 3)
    assert ob != oa
    assert f"input byte {ob}: 0x{int(before.raw[ob]):02x}" in text
    assert f"output byte {oa}: 0x{int(after.raw[oa]):02x}" in text
    assert int(before.raw[ob]) == int(x.array[0, 1, 2, 3])
    _hover_picture(view.input_picture, (0, 0, 0, -2))      # depth-before padding of the input
    text = view._readout.text()
    assert f"input byte {before.offset(0, 0, 0, -2)}: 0xaa" in text and "output -" in text
    _hover_picture(view.input_picture, (0, 0, 0, 40))      # second slice: only the input has it
    assert "output -" in view._readout.text()
    _hover_picture(view.output_picture, (0, 0, 0, 5))
    ob, oa = before.offset(0, 0, 0, 5), after.offset(0, 0, 0, 5)
    assert (f"input byte {ob}: 0x{int(before.raw[ob]):02x}" in view._readout.text()
            and f"output byte {oa}:" in view._readout.text())


def test_fill_view_with_equal_geometry_still_compares_bytes(qtbot):
    x = Tensor.from_array(np.arange(1, 1 + 3 * 5 * 7, dtype=np.uint8).reshape(1, 3, 5, 7))
    before = x.to_d32(D32Padding(4, 4, 4, 3, 0, 25), fill=0xAA)
    after = x.to_d32(D32Padding(4, 4, 4, 3, 0, 25), fill=0x00)
    view = FillPaddingView()
    qtbot.addWidget(view)
    view.set_tensors(before, after, "node", 0)
    assert view.changed_mask is not None and "changed" in view._summary.text()
    _hover_picture(view.input_picture, (0, 0, 0, 8))      # depth-after padding
    off = before.offset(0, 0, 0, 8)
    assert view._readout.text() == f"(b,h,w,d)=(0,0,0,8) byte {off}: input 0xaa → output 0x00"


def test_inspector_pprint_export_failure_of_the_formatter_shows_a_message(qtbot, tmp_path,
                                                                           monkeypatch):
    import hexscope.widgets.tensor_inspector as ti

    path = tmp_path / "p.txt"
    warnings: list[str] = []
    monkeypatch.setattr(ti.QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(path), "")))
    monkeypatch.setattr(ti.QMessageBox, "warning",
                        staticmethod(lambda parent, title, text, *a: warnings.append(text)))
    insp = TensorInspector()
    qtbot.addWidget(insp)
    button = next(b for b in insp.findChildren(QPushButton) if b.text() == "PPrint text…")
    for value in (np.inf, -np.inf, np.nan):
        t = Tensor.from_array(np.array([value, 1.0, 2.0], np.float32).reshape(1, 1, 1, 3))
        insp.set_outputs("node", [t.to_d32()])
        warnings.clear()
        insp._ask_pprint()                  # the button's slot, called directly: nothing escapes
        button.click()                      # and through the signal
        assert len(warnings) == 2 and all(w for w in warnings), value


def test_the_tensor_toolbar_wraps_instead_of_widening_the_dock(qtbot):
    from PySide6.QtWidgets import QComboBox, QPushButton

    from hexscope.widgets.tensor_inspector import TensorInspector

    view = TensorInspector()
    qtbot.addWidget(view)
    # the whole bar set it at 788 px; now the heatmap's own minimum (about 440) does
    assert view.minimumSizeHint().width() < 500
    view.resize(460, 400)
    view.show()
    qtbot.waitExposed(view)
    controls = view.findChildren(QPushButton) + [view.findChildren(QComboBox)[0]]
    for widget in controls:
        right = widget.mapTo(view, widget.rect().topRight()).x()
        assert widget.isVisible() and right <= view.width(), widget
    rows = {w.mapTo(view, w.rect().topLeft()).y() for w in controls}
    assert len(rows) >= 2                              # it wrapped
