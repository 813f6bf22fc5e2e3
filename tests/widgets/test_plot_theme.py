"""pyqtgraph plots follow the application's palette (light and dark themes), now and after
a switch: pyqtgraph's own default is a black plot whatever the palette."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from hexscope.widgets.code_histogram import CodeHistogramView
from hexscope.widgets.memory_picture import MemoryPicture
from hexscope.widgets.range_plot import RangePlotView
from hexscope.widgets.tensor_heatmap import TensorHeatmapView


def _palette(ground: str, ink: str) -> QPalette:
    palette = QPalette()
    for role, colour in ((QPalette.ColorRole.Base, ground), (QPalette.ColorRole.Window, ground),
                         (QPalette.ColorRole.Text, ink), (QPalette.ColorRole.WindowText, ink)):
        palette.setColor(role, QColor(colour))
    return palette


def _views(widget) -> list:
    return [v for v in [widget, *widget.findChildren(pg.GraphicsView)]
            if isinstance(v, pg.GraphicsView)]


@pytest.mark.parametrize("make", [CodeHistogramView, RangePlotView, TensorHeatmapView,
                                  MemoryPicture])
def test_a_plot_takes_the_palette_s_colours_and_follows_a_switch(qtbot, make):
    app = QApplication.instance()
    saved = app.palette()
    try:
        app.setPalette(_palette("#fbfbfb", "#202020"))
        widget = make()
        qtbot.addWidget(widget)
        views = _views(widget)
        assert views
        for ground, ink in (("#fbfbfb", "#202020"), ("#1e2227", "#e4e6ea")):
            app.setPalette(_palette(ground, ink))
            QApplication.processEvents()
            for view in views:
                assert view.backgroundBrush().color() == QColor(ground)
                axes = [i for i in view.scene().items() if isinstance(i, pg.AxisItem)]
                assert axes
                for axis in axes:
                    assert axis.pen().color() == QColor(ink)
                    assert axis.textPen().color() == QColor(ink)
                for legend in (i for i in view.scene().items() if isinstance(i, pg.LegendItem)):
                    for _sample, label in legend.items:
                        assert QColor(label.opts["color"]) == QColor(ink)
    finally:
        app.setPalette(saved)
