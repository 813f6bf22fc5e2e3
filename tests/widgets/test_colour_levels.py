"""Colour levels of the heatmap: the colours pyqtgraph actually renders, read back from
the image item, for tiny, huge, constant and non-finite data."""

from __future__ import annotations

import warnings

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage, QPainter

from hexscope.engine import QuantRange, Tensor
from hexscope.widgets.tensor_heatmap import TensorHeatmapView

F32_MAX = float(np.finfo(np.float32).max)


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
