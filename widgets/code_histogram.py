"""CodeHistogramView: how often each of the 256 codes occurs; the bins at 0 and 255 stand out."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from hexscope.engine import QuantRange, Tensor
from hexscope.engine.analysis.ranges import code_counts
from hexscope.widgets._plane import is_codes
from hexscope.widgets.plot_theme import follow_palette

BAR = QColor(90, 140, 220)
SATURATED = QColor(230, 60, 50)
_FLOAT_BINS = 64


class CodeHistogramView(QWidget):
    """Histogram of a tensor's valid data: 256 code bins for quint8, else 64 value bins."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts: np.ndarray = np.zeros(0, np.int64)
        self.edges: np.ndarray = np.zeros(0)
        self._build_ui()

    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self._plot = pg.PlotWidget()
        self._plot.setLabel("left", "elements")
        self._bars = pg.BarGraphItem(x=[], height=[], width=1.0)
        self._ends = pg.BarGraphItem(x=[], height=[], width=1.0, brush=SATURATED,
                                     pen=pg.mkPen(SATURATED))
        dash = pg.mkPen((250, 200, 60), style=Qt.PenStyle.DashLine)
        self._zero = pg.InfiniteLine(angle=90, pen=dash)
        self._labels = [pg.TextItem(color=SATURATED, anchor=(0, 1)),
                        pg.TextItem(color=SATURATED, anchor=(1, 1))]
        for item in (self._bars, self._ends, self._zero, *self._labels):
            self._plot.addItem(item)
        follow_palette(self._plot)
        lay.addWidget(self._plot, 1)
        self._summary = QLabel("no tensor")
        lay.addWidget(self._summary)

    def set_tensor(self, tensor: Tensor | None, qrange: QuantRange | None = None) -> None:
        if tensor is None or not tensor.has_data:
            self.counts, self.edges = np.zeros(0, np.int64), np.zeros(0)
            self._bars.setOpts(x=[], height=[])
            self._ends.setOpts(x=[], height=[])
            for label in self._labels:
                label.setText("")
            self._zero.hide()
            self._summary.setText("no tensor")
            return
        if is_codes(tensor):
            self._show_codes(tensor, qrange)
        else:
            self._show_values(tensor)

    def _show_codes(self, tensor: Tensor, qrange: QuantRange | None) -> None:
        self.counts = code_counts(tensor.array)
        self.edges = np.arange(257) - 0.5
        n = int(self.counts.sum())
        x = np.arange(256)
        inner = self.counts.copy()
        inner[[0, 255]] = 0
        self._bars.setOpts(x=x, height=inner, width=1.0, brush=BAR, pen=pg.mkPen(BAR))
        self._ends.setOpts(x=[0, 255], height=self.counts[[0, 255]], width=1.0)
        top = max(1, int(self.counts.max()))
        for label, code, xpos in zip(self._labels, (0, 255), (0, 255), strict=True):
            share = f" ({100 * self.counts[code] / n:.1f}%)" if n else ""
            label.setText(f"{code}: {self.counts[code]}{share}")
            label.setPos(xpos, top)
        self._plot.setLabel("bottom", "code")
        self._plot.setXRange(-2, 257, padding=0)
        self._plot.setYRange(0, top * 1.18, padding=0)
        if qrange is not None:
            self._zero.setPos(qrange.zero_code)
            self._zero.show()
        else:
            self._zero.hide()
        used = int(np.count_nonzero(self.counts))
        zero = f", 0.0 at code {qrange.zero_code}" if qrange is not None else ""
        ends = (f", at 0: {100 * self.counts[0] / n:.2f}%, at 255: "
                f"{100 * self.counts[255] / n:.2f}%") if n else ""
        self._summary.setText(f"{n} elements, {used} of 256 codes used{ends}{zero}")

    def _show_values(self, tensor: Tensor) -> None:
        data = np.asarray(tensor.array, np.float64).reshape(-1)
        finite = data[np.isfinite(data)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        # equal values get bins around them; the margin scales with the value, since at
        # 1e20 or FLT_MAX a fixed 0.5 vanishes (lo - 0.5 == lo)
        pad = max(0.5, abs(lo) * 1e-6) if hi <= lo else 0.0
        self.counts, self.edges = np.histogram(finite, bins=_FLOAT_BINS,
                                               range=(lo - pad, hi + pad))
        centers = (self.edges[:-1] + self.edges[1:]) / 2
        self._bars.setOpts(x=centers, height=self.counts, width=self.edges[1] - self.edges[0],
                           brush=BAR, pen=pg.mkPen(BAR))
        self._ends.setOpts(x=[], height=[])
        for label in self._labels:
            label.setText("")
        self._zero.hide()
        self._plot.setLabel("bottom", "value")
        self._plot.enableAutoRange()
        bad = data.size - finite.size
        if not data.size:
            text = "0 elements"
        elif not finite.size:
            text = f"{data.size} elements, no finite values ({bad} not finite)"
        else:
            text = (f"{data.size} elements in [{lo:.6g}, {hi:.6g}]"
                    + (f", {bad} not finite" if bad else ""))
        self._summary.setText(text)
