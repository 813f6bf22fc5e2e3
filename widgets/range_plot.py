"""RangePlotView: min and max of each quantized output along the execution order, with the
clipped share as a second trace on its own axis (right, in %).

Cheap at thousands of outputs (issue 32: 120-230 ms a repaint at 3,000): the [min, max]
spans are one bar item (its rectangles drawn in one call), the curves are clipped to the
view and drawn at most a point per pixel column (peak downsampling, so no extreme is
lost), carry markers only when few points are in sight, and the axis labels only the ticks
it draws. A click picks the output under the pointer, with or without markers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from hexscope.engine.analysis.ranges import RangeStats
from hexscope.widgets.plot_theme import follow_palette

MIN_PEN = (80, 160, 255)
MAX_PEN = (255, 120, 80)
SAT_PEN = (240, 50, 50)
SPAN_BRUSH = (150, 150, 150, 70)
#: Markers on the points only while at most this many outputs are in sight.
MARKERS_UP_TO = 200


class _NodeAxis(pg.AxisItem):
    """The bottom axis: whole positions only, each labelled with its output's node id."""

    def __init__(self) -> None:
        super().__init__("bottom")
        self.node_ids: list[int] = []

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list:  # noqa: N802
        return [(max(1.0, spacing), offset)
                for spacing, offset in super().tickSpacing(minVal, maxVal, size)]

    def tickStrings(self, values: list, scale: float, spacing: float) -> list[str]:  # noqa: N802
        ids = self.node_ids
        return [f"0x{ids[int(v)]:x}" if float(v).is_integer() and 0 <= v < len(ids) else ""
                for v in values]


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
        self._axis = _NodeAxis()
        self._plot = pg.PlotWidget(axisItems={"bottom": self._axis})
        p = self._plot.plotItem
        p.addLegend(offset=(10, 10))
        p.setLabel("bottom", "quantized output, in execution order")
        p.setLabel("left", "range")
        self.spans = pg.BarGraphItem(x=[], y0=[], y1=[], width=0.7, brush=SPAN_BRUSH,
                                     pen=None)
        p.addItem(self.spans)
        self._min = p.plot(pen=pg.mkPen(MIN_PEN, width=2), name="min")
        self._max = p.plot(pen=pg.mkPen(MAX_PEN, width=2), name="max")
        self._zero = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen((150, 150, 150)))
        p.addItem(self._zero)
        self._sat_box = pg.ViewBox()
        p.showAxis("right")
        p.scene().addItem(self._sat_box)
        p.getAxis("right").linkToView(self._sat_box)
        p.getAxis("right").setLabel("clipped %", color=SAT_PEN)
        self._sat_box.setXLink(p)
        self._sat = pg.PlotDataItem(pen=pg.mkPen(SAT_PEN, width=1, dash=[4, 3]))
        self._sat_box.addItem(self._sat)
        p.legend.addItem(self._sat, "clipped %")
        for curve in self.curves:
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")
            curve.setSkipFiniteCheck(True)
        p.vb.sigResized.connect(self._sync_boxes)
        p.vb.sigXRangeChanged.connect(lambda *_: self._update_markers())
        self._plot.scene().sigMouseClicked.connect(self._on_click)
        follow_palette(self._plot)
        lay.addWidget(self._plot, 1)

    @property
    def curves(self) -> tuple[pg.PlotDataItem, ...]:
        return self._min, self._max, self._sat

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
        # Markers off before many new points, on after few: an empty view (an edit drops
        # the run's ranges) shows markers, and 3,000 points set with them made a marker
        # each (35-50 ms of a const edit at 10,000 nodes) for them to be taken off at
        # once; markers put on the 3,000 old points before the few new ones, the same.
        if n > MARKERS_UP_TO:
            self._update_markers(n)          # the auto range shows them all
        self.spans.setOpts(x=self.x, y0=self.mins, y1=self.maxs)
        self._min.setData(self.x, self.mins)
        self._max.setData(self.x, self.maxs)
        self._sat.setData(self.x, self.clipped)
        self._axis.node_ids = [s.node_id for s in self.stats]
        self._axis.picture = None            # labels of the new ids
        self._axis.update()
        top = float(self.clipped.max()) if n else 1.0
        self._sat_box.setYRange(0, max(1.0, top * 1.1), padding=0)
        self._plot.plotItem.enableAutoRange()
        self._sync_boxes()
        self._update_markers(n)

    def markers_shown(self) -> bool:
        return self._min.opts["symbol"] is not None

    def _update_markers(self, in_sight: float | None = None) -> None:
        """Markers while few outputs are in sight (a marker per point of 3,000 was most of
        a repaint); the view's range changes often, the markers only across the bound."""
        if in_sight is None:
            left, right = self._plot.plotItem.vb.viewRange()[0]
            in_sight = min(len(self.stats), max(0.0, right - left))
        want = in_sight <= MARKERS_UP_TO
        if want == self.markers_shown():
            return
        for curve, pen in ((self._min, MIN_PEN), (self._max, MAX_PEN)):
            if want:
                curve.setSymbol("o")
                curve.setSymbolSize(5)
                curve.setSymbolBrush(pen)
            else:
                curve.setSymbol(None)
        if want:
            self._sat.setSymbol("x")
            self._sat.setSymbolSize(7)
            self._sat.setSymbolPen(SAT_PEN)
            self._sat.setPen(pg.mkPen(SAT_PEN, width=1, dash=[4, 3]))
        else:
            # thousands of dashed segments hid the bars under a red hatch: a thin, light line
            self._sat.setSymbol(None)
            self._sat.setPen(pg.mkPen((*SAT_PEN, 120), width=1))

    def index_at(self, scene_pos: QPointF) -> int | None:
        """The output whose bar is under ``scene_pos`` (the plot's scene), if any."""
        vb = self._plot.plotItem.vb
        if not self.stats or not vb.sceneBoundingRect().contains(scene_pos):
            return None
        k = int(round(vb.mapSceneToView(scene_pos).x()))
        return k if 0 <= k < len(self.stats) else None

    def _on_click(self, event: object) -> None:
        k = self.index_at(event.scenePos())  # type: ignore[attr-defined]
        if k is not None:
            self.node_activated.emit(self.stats[k].node_id)
