"""RangePlotView: min and max of each quantized output along the execution order, with the
clipped share as a second trace on its own axis (right, in %)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from hexscope.engine.analysis.ranges import RangeStats
from hexscope.widgets.plot_theme import follow_palette

MIN_PEN = (80, 160, 255)
MAX_PEN = (255, 120, 80)
SAT_PEN = (240, 50, 50)


class RangePlotView(QWidget):
    """See the module docstring. ``x``, ``mins``, ``maxs`` and ``clipped`` are the data
    behind the curves (one point per quantized output, in execution order)."""

    node_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stats: list[RangeStats] = []
        self.x = self.mins = self.maxs = self.clipped = np.zeros(0)
        self._build_ui()

    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self._plot = pg.PlotWidget()
        p = self._plot.plotItem
        p.addLegend(offset=(10, 10))
        p.setLabel("bottom", "quantized output, in execution order")
        p.setLabel("left", "range")
        self._min = p.plot(pen=pg.mkPen(MIN_PEN, width=2), symbol="o", symbolSize=5,
                           symbolBrush=MIN_PEN, name="min")
        self._max = p.plot(pen=pg.mkPen(MAX_PEN, width=2), symbol="o", symbolSize=5,
                           symbolBrush=MAX_PEN, name="max")
        self._fill = pg.FillBetweenItem(self._min, self._max, brush=(200, 200, 200, 40))
        p.addItem(self._fill)
        self._zero = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen((150, 150, 150)))
        p.addItem(self._zero)
        self._sat_box = pg.ViewBox()
        p.showAxis("right")
        p.scene().addItem(self._sat_box)
        p.getAxis("right").linkToView(self._sat_box)
        p.getAxis("right").setLabel("clipped %", color=SAT_PEN)
        self._sat_box.setXLink(p)
        self._sat = pg.PlotDataItem(pen=pg.mkPen(SAT_PEN, width=1, dash=[4, 3]), symbol="x",
                                    symbolSize=7, symbolPen=SAT_PEN)
        self._sat_box.addItem(self._sat)
        p.legend.addItem(self._sat, "clipped %")
        p.vb.sigResized.connect(self._sync_boxes)
        for curve in (self._min, self._max):
            curve.sigPointsClicked.connect(self._on_points)
        follow_palette(self._plot)
        lay.addWidget(self._plot, 1)

    def _sync_boxes(self) -> None:
        self._sat_box.setGeometry(self._plot.plotItem.vb.sceneBoundingRect())
        self._sat_box.linkedViewChanged(self._plot.plotItem.vb, self._sat_box.XAxis)

    def set_stats(self, stats: Sequence[RangeStats]) -> None:
        self.stats = list(stats)
        n = len(self.stats)
        self.x = np.arange(n, dtype=float)
        self.mins = np.array([s.min for s in self.stats], float)
        self.maxs = np.array([s.max for s in self.stats], float)
        self.clipped = np.array([100 * s.saturation for s in self.stats], float)
        self._min.setData(self.x, self.mins)
        self._max.setData(self.x, self.maxs)
        self._sat.setData(self.x, self.clipped)
        ticks = [(float(k), f"0x{s.node_id:x}") for k, s in enumerate(self.stats)]
        step = max(1, n // 12)
        self._plot.getAxis("bottom").setTicks([ticks[::step], ticks])
        top = float(self.clipped.max()) if n else 1.0
        self._sat_box.setYRange(0, max(1.0, top * 1.1), padding=0)
        self._plot.plotItem.enableAutoRange()
        self._sync_boxes()

    def _on_points(self, _curve: object, points: Sequence) -> None:
        if points:
            k = int(round(points[0].pos().x()))
            if 0 <= k < len(self.stats):
                self.node_activated.emit(self.stats[k].node_id)
