"""Colour levels of the heatmap and the d32 memory pictures: the colours pyqtgraph actually
renders, read back from the image item, for tiny, huge, constant and non-finite data and for
d32 tensors whose elements are wider than a byte."""

from __future__ import annotations

import warnings

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage, QPainter

from hexscope.engine import D32Padding, QuantRange, Tensor
from hexscope.widgets.d32_view import D32PaddingView
from hexscope.widgets.fill_padding_view import FillPaddingView
from hexscope.widgets.tensor_heatmap import TensorHeatmapView

F32_MAX = float(np.finfo(np.float32).max)
PAD = D32Padding(1, 1, 1, 0, 3, 21)     # for SHAPE below: W_tot 4, D_tot 64 (two slices)


def _colour_indices(item: pg.ImageItem) -> np.ndarray:
    """The colour-map entry of every pixel as pyqtgraph renders it; -1 where transparent.

    The item gets a grey ramp as its lookup table first, so that a pixel's colour is its entry
    (viridis repeats a colour); levels, not the colour map, are under test here.
    """
    item.setLookupTable(np.repeat(np.arange(256, dtype=np.uint8)[:, None], 3, axis=1))
    item.render()
    # the array is a view of the image's memory: keep the converted image alive while reading
    image = item.qimage.convertToFormat(QImage.Format.Format_RGBA8888)
    rgba = pg.functions.ndarray_from_qimage(image).copy()
    del image
    index = rgba[..., 0].astype(np.int64)
    index[rgba[..., 3] == 0] = -1
    return index


def _expected_index(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """256 equal bins over [lo, hi], computed in float64 whatever the data type."""
    scaled = (values.astype(np.float64) - lo) * (256.0 / (hi - lo))
    return np.clip(np.floor(scaled), 0, 255).astype(np.int64)


def _heatmap(qtbot, values: np.ndarray, qrange: QuantRange | None = None,
             dequantized: bool = False) -> tuple[TensorHeatmapView, np.ndarray, list]:
    """The view, its rendered colour indices (plane h x w) and the warnings seen."""
    view = TensorHeatmapView()
    qtbot.addWidget(view)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        view.set_tensor(Tensor.from_array(values.reshape(1, 4, -1, 1)), qrange)
        view.set_dequantized(dequantized)
        index = _colour_indices(view._image)
        view.grab()                                  # the colour bar and its labels too
    return view, index, [str(w.message) for w in caught]


RANGES = {
    "denormals": np.linspace(1e-42, 3e-42, 24, dtype=np.float32),
    "zero to 1e-40": np.linspace(0.0, 1e-40, 24, dtype=np.float32),
    "tiny normals": np.linspace(-2e-37, 2e-37, 24, dtype=np.float32),
    "near float32 max": np.linspace(-3e38, 3e38, 24, dtype=np.float32),
    "whole float32 range": np.linspace(-F32_MAX, F32_MAX, 24, dtype=np.float32),
    "ordinary": np.linspace(-1.0, 3.0, 24, dtype=np.float32),
}


@pytest.mark.parametrize("values", RANGES.values(), ids=RANGES.keys())
def test_heatmap_spreads_any_float32_range_over_the_colour_map(qtbot, values):
    assert np.unique(values).size == values.size
    view, index, caught = _heatmap(qtbot, values)
    lo, hi = float(values.min()), float(values.max())
    assert caught == []
    assert view.levels == (lo, hi)
    assert tuple(view._colorbar.levels()) == (lo, hi)      # the bar reads in real units
    index = index.reshape(-1)
    assert index[0] == 0 and index[-1] == 255
    assert (np.diff(index) > 0).all()                      # distinct values, distinct colours
    assert np.abs(index - _expected_index(values, lo, hi)).max() <= 1


def test_heatmap_of_values_dequantized_from_a_tiny_range(qtbot):
    codes = (np.arange(24) * 11).astype(np.uint8)
    view, index, caught = _heatmap(qtbot, codes, QuantRange(0.0, 1e-40), dequantized=True)
    assert caught == []
    assert view.levels == (0.0, 1e-40)
    assert np.abs(index.reshape(-1) - codes.astype(np.int64)).max() <= 1


CONSTANTS = [0.0, 1e-42, -3e-39, 7.0, 123456.0, 3e38, F32_MAX, -F32_MAX]


@pytest.mark.parametrize("value", CONSTANTS)
def test_heatmap_of_a_constant_plane_is_one_middle_colour_around_the_value(qtbot, value):
    values = np.full(24, value, np.float32)
    v = float(values[0])
    view, index, caught = _heatmap(qtbot, values)
    assert caught == []
    assert np.unique(index).size == 1 and 64 <= index[0, 0] <= 191
    lo, hi = view.levels
    assert lo < v < hi
    # the bar's labels must show the value's own scale, not a span straddling zero
    assert v == 0.0 or (lo * v > 0 and hi * v > 0)
    assert tuple(view._colorbar.levels()) == (lo, hi)


def test_heatmap_of_an_all_nan_plane_is_transparent_and_says_why(qtbot):
    view, index, caught = _heatmap(qtbot, np.full(24, np.nan, np.float32))
    assert caught == []
    assert (index == -1).all()
    assert "no finite" in view.note
    lo, hi = view.levels
    assert np.isfinite([lo, hi]).all() and lo < hi


def test_heatmap_of_infinities_among_finite_values(qtbot):
    values = np.linspace(-2.0, 5.0, 24).astype(np.float32)
    values[[3, 10]] = np.inf
    values[[5, 17]] = -np.inf
    values[[7]] = np.nan
    view, index, caught = _heatmap(qtbot, values)
    assert caught == []
    finite = np.isfinite(values)
    lo, hi = float(values[finite].min()), float(values[finite].max())
    assert view.levels == (lo, hi)
    index = index.reshape(-1)
    assert (index[[3, 10]] == 255).all() and (index[[5, 17]] == 0).all()
    assert index[7] == -1
    assert np.abs(index[finite] - _expected_index(values[finite], lo, hi)).max() <= 1
    assert view.note == ""


def test_heatmap_of_only_infinities(qtbot):
    values = np.where(np.arange(24) % 2 == 0, np.inf, -np.inf).astype(np.float32)
    view, index, caught = _heatmap(qtbot, values)
    assert caught == []
    index = index.reshape(-1)
    assert (index[::2] == 255).all() and (index[1::2] == 0).all()
    assert "no finite" in view.note


@pytest.mark.parametrize("values", [RANGES["denormals"], RANGES["near float32 max"],
                                    RANGES["zero to 1e-40"], RANGES["ordinary"]],
                         ids=["denormals", "near float32 max", "zero to 1e-40", "ordinary"])
def test_heatmap_colour_bar_labels_its_range(qtbot, values):
    """pyqtgraph drops a tick label that does not fit its axis: the bar must make room."""
    view = TensorHeatmapView()
    qtbot.addWidget(view)
    view.resize(520, 420)
    view.show()
    view.set_tensor(Tensor.from_array(values.reshape(1, 4, -1, 1)))
    qtbot.waitExposed(view)
    for _ in range(3):                   # the axis learns its labels' width when it paints
        view.grab()
        qtbot.wait(10)
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        texts = view._colorbar.axis.generateDrawSpecs(painter)[2]
    finally:
        painter.end()
    labels = sorted(float(text.replace("\N{MINUS SIGN}", "-")) for _, _, text in texts)
    lo, hi = float(values.min()), float(values.max())
    assert len(labels) >= 3
    assert lo <= labels[0] < (lo + hi) / 2 < labels[-1] <= hi


# d32 memory pictures ----------------------------------------------------------------------
SHAPE = (1, 2, 3, 40)
WIDE = {
    "uint16": np.linspace(0, 60000, 240).astype(np.uint16),
    "int16": np.linspace(-30000, 30000, 240).astype(np.int16),
    "int32": np.linspace(-2e9, 2e9, 240).astype(np.int32),
    "float32 denormals": np.linspace(1e-42, 3e-42, 240, dtype=np.float32),
    "float32 near max": np.linspace(-3e38, 3e38, 240, dtype=np.float32),
}


def _d32(values: np.ndarray) -> Tensor:
    return Tensor.from_array(values.reshape(SHAPE)).to_d32(PAD)


@pytest.mark.parametrize("mode", ["memory", "plane"])
@pytest.mark.parametrize("values", WIDE.values(), ids=WIDE.keys())
def test_d32_picture_of_wide_elements_uses_the_data_range(qtbot, values, mode):
    t = _d32(values)
    mem = t.memory.astype(np.float64)                    # data and padding, as drawn
    lo, hi = float(mem.min()), float(mem.max())
    view = D32PaddingView()
    qtbot.addWidget(view)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        view.set_tensor(t)
        view.set_mode(mode)
        view.set_depth(5)
        pic = view.picture
        index = _colour_indices(pic._image)
    assert [str(w.message) for w in caught] == []
    assert np.abs(index - _expected_index(pic.image_data, lo, hi)).max() <= 1
    if mode == "memory":               # the one batch is the whole tensor: both ends appear
        shown = pic.image_data
        assert (index[shown == hi] == 255).all() and (index[shown == lo] == 0).all()
        assert np.unique(index).size > 128                 # a gradient, not a few saturated hues
    assert pic.levels == (lo, hi)
    fmt = (lambda x: str(int(x))) if values.dtype.kind in "iu" else (lambda x: f"{x:.6g}")
    title = pic.plotItem.titleLabel.text
    assert f"{fmt(lo)} .. {fmt(hi)}" in title and t.dtype.c_name in title
    assert title == pic.levels_text


def test_d32_picture_of_bytes_keeps_byte_levels_and_its_caption(qtbot, rng):
    codes = rng.integers(3, 41, SHAPE).astype(np.uint8)    # narrow: must not be stretched
    t = Tensor.from_array(codes).to_d32(PAD, fill=3)
    view = D32PaddingView()
    qtbot.addWidget(view)
    view.set_tensor(t)
    pic = view.picture
    assert pic._image.image.dtype == np.uint8
    np.testing.assert_array_equal(_colour_indices(pic._image), pic.image_data)
    assert pic.levels == (0.0, 255.0)
    assert pic.plotItem.titleLabel.text == ""
    assert "0 .. 255" in pic.levels_text
    fill = FillPaddingView()
    qtbot.addWidget(fill)
    fill.set_tensors(t, t, "0x10 FillPadding_8_d32")
    assert fill.input_picture.plotItem.titleLabel.text == "input"


def test_d32_picture_caption_follows_the_tensor(qtbot):
    """A wide tensor's levels join the owner's caption and leave with the tensor."""
    view = FillPaddingView()
    qtbot.addWidget(view)
    wide = _d32(WIDE["uint16"])
    view.set_tensors(wide, wide, "0x10 FillPadding")
    title = view.input_picture.plotItem.titleLabel.text
    assert title.startswith("input") and "0 .. 60000" in title
    narrow = Tensor.from_array(np.ones(SHAPE, np.uint8)).to_d32()
    view.set_tensors(narrow, narrow, "0x11 FillPadding_8_d32")
    assert view.input_picture.plotItem.titleLabel.text == "input"


def test_the_colour_bar_goes_with_the_picture(qtbot):
    """Cleared (a reopened file, a tensor with no element), the view shows no colour bar: the
    last tensor's scale beside "no tensor" read as if it were this one's."""
    view, _, _ = _heatmap(qtbot, np.arange(8, dtype=np.float32))
    assert view._colorbar.isVisible() and tuple(view._colorbar.levels()) == (0.0, 7.0)
    view.set_tensor(None)
    assert not view._colorbar.isVisible()
    view.set_tensor(Tensor.from_array(np.zeros((1, 0, 3, 1), np.float32)))
    assert not view._colorbar.isVisible()
    view.set_tensor(Tensor.from_array(np.full((1, 2, 2, 1), 5.0, np.float32)))
    assert view._colorbar.isVisible()
