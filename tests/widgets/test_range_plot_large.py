"""The Ranges plot stays cheap at thousands of outputs (issue 32: 120-230 ms a repaint at
3,000, one marker per point and a filled path between the curves): one item for all the
[min, max] bars, markers only when few outputs are in sight, and a click still picks the
output. The repaint itself is timed in bench/views_bench.py --ranges."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, Qt

from hexscope.engine.analysis.ranges import RangeStats
from hexscope.widgets.range_plot import MARKERS_UP_TO, RangePlotView


def _stats(n: int) -> list[RangeStats]:
    return [RangeStats(node_id=0x100 + k, op="QuantizedRelu_8", output=0, order=k,
                       min=-float(k % 7), max=1.0 + k % 5, stepsize=0.05, zero_code=0,
                       zero_exact=True, elements=64, distinct=60, share_0=0.0,
                       share_255=0.01 * (k % 3))
            for k in range(n)]


@pytest.fixture
def plot(qtbot):
    view = RangePlotView()
    view.resize(800, 300)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    return view


def _items(view: RangePlotView) -> list:
    return list(view._plot.scene().items())


def test_the_bars_of_every_output_are_one_item(plot):
    plot.set_stats(_stats(5))
    few = len(_items(plot))
    plot.set_stats(_stats(3000))
    assert len(_items(plot)) == few                   # not an item (or marker) per output
    bars = [i for i in _items(plot) if isinstance(i, pg.BarGraphItem)]
    assert bars == [plot.spans]
    x, y0, y1 = (plot.spans.opts[k] for k in ("x", "y0", "y1"))
    assert list(x[:3]) == [0.0, 1.0, 2.0]
    assert list(y0[:3]) == [0.0, -1.0, -2.0] and list(y1[:3]) == [1.0, 2.0, 3.0]


def test_markers_only_when_few_outputs_are_in_sight(plot, qtbot):
    plot.set_stats(_stats(3000))
    assert not plot.markers_shown()
    for curve in plot.curves:                          # only the part in view, a point a pixel
        assert curve.opts["clipToView"] and curve.opts["autoDownsample"]
    plot._plot.plotItem.setXRange(100, 100 + MARKERS_UP_TO // 2, padding=0)
    assert plot.markers_shown()
    plot.set_stats(_stats(20))
    assert plot.markers_shown()


def test_a_click_on_a_bar_activates_its_node_without_markers(plot, qtbot):
    plot.set_stats(_stats(3000))
    plot._plot.plotItem.setXRange(0, 3000, padding=0)
    vb = plot._plot.plotItem.vb
    target = vb.mapViewToScene(pg.Point(1234, 0.5))
    at = plot._plot.mapFromScene(target)
    with qtbot.waitSignal(plot.node_activated) as blocker:
        qtbot.mouseClick(plot._plot.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(at))
    assert abs(blocker.args[0] - (0x100 + 1234)) <= 2   # a pixel is ~4 outputs wide here


def test_the_axis_names_the_node_of_whole_positions_only(plot):
    plot.set_stats(_stats(3))
    axis = plot._plot.plotItem.getAxis("bottom")
    assert axis.tickStrings([0.0, 0.5, 2.0, 7.0], 1.0, 0.5) == ["0x100", "", "0x102", ""]
    assert all(spacing >= 1 for spacing, _ in axis.tickSpacing(0, 2, 800))


def test_many_outputs_after_an_empty_view_make_no_markers(plot, monkeypatch):
    """An edit drops the run's ranges (an empty view shows markers), and the next run's
    3,000 outputs were set with markers on, a marker each, taken off right after: 35-50 ms
    of a const edit's gap at 10,000 nodes (issue 32)."""
    plot.set_stats([])
    assert plot.markers_shown()
    made: list[int] = []
    real = pg.ScatterPlotItem.setData
    monkeypatch.setattr(pg.ScatterPlotItem, "setData",
                        lambda self, *a, **k: (made.append(len(a[0]) if a else
                                                           len(k.get("x", ()))),
                                               real(self, *a, **k))[1])
    plot.set_stats(_stats(3000))
    assert not plot.markers_shown()
    assert max(made, default=0) < 3000          # no marker per output, ever


def test_no_outputs_after_many_make_no_markers_on_the_old_points(plot, monkeypatch):
    """Reopen empties the view: markers put on before the empty data came made a marker
    for each of the 3,000 old points (reopen's longest gap at 10,000 nodes)."""
    plot.set_stats(_stats(3000))
    made: list[int] = []
    real = pg.ScatterPlotItem.setData
    monkeypatch.setattr(pg.ScatterPlotItem, "setData",
                        lambda self, *a, **k: (made.append(len(a[0]) if a else
                                                           len(k.get("x", ()))),
                                               real(self, *a, **k))[1])
    real_points = pg.ScatterPlotItem.addPoints
    monkeypatch.setattr(pg.ScatterPlotItem, "addPoints",
                        lambda self, *a, **k: (made.append(len(a[0]) if a else
                                                           len(k.get("x", ()))),
                                               real_points(self, *a, **k))[1])
    plot.set_stats([])
    assert plot.markers_shown()
    assert max(made, default=0) < 3000
