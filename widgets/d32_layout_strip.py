"""D32LayoutStrip: the strides of a d32 tensor and where the selected byte lies in memory.

Two bars: one batch as its padded rows (row stride each), and the selected row as its depth
slices (d32 stride each) cut into 32-byte width positions. Below, the byte offset written as
the sum of its strides (graph spec §1.6.2-§1.6.3).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QWidget

from hexscope.engine import Layout, Tensor
from hexscope.engine.analysis.padding_regions import Region
from hexscope.widgets.memory_picture import REGION_COLORS

VALID = QColor(235, 235, 225)
SELECT = QColor(255, 200, 0)


def offset_breakdown(tensor: Tensor, index: tuple[int, int, int, int]) -> str:
    """``byte N = b·batch + (h+hb)·row + slice·d32 + (w+wb)·32 + channel``."""
    g, p = tensor.geometry, tensor.padding
    b, h, w, d = index
    k = d + p.d_before
    size = tensor.dtype.size
    parts = (f"{b}·{g.batch_stride} + {h + p.h_before}·{g.row_stride} + "
             f"{k // 32}·{g.d32_stride} + {w + p.w_before}·32 + {k % 32}")
    scale = f" (×{size} bytes per element)" if size > 1 else ""
    return f"byte {tensor.offset(b, h, w, d)} = {parts}{scale}"


class D32LayoutStrip(QWidget):
    """See the module docstring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tensor: Tensor | None = None
        self._index: tuple[int, int, int, int] | None = None
        self.setMinimumHeight(96)

    def sizeHint(self) -> QSize:
        return QSize(600, 104)

    def set_tensor(self, tensor: Tensor | None) -> None:
        self._tensor = tensor if tensor is not None and tensor.layout is Layout.D32 else None
        self._index = None
        self.update()

    def set_selected(self, index: tuple[int, int, int, int] | None) -> None:
        """Mark ``index``; an index outside the shown tensor clears the mark."""
        self._index = index if index is not None and inside_padded(self._tensor, index) \
            else None
        self.update()

    @property
    def selected(self) -> tuple[int, int, int, int] | None:
        return self._index

    def text_lines(self) -> list[str]:
        t = self._tensor
        if t is None:
            return ["no d32 tensor"]
        g = t.geometry
        first = (f"d32 stride {g.d32_stride} · row stride {g.row_stride} · batch stride "
                 f"{g.batch_stride} · nd32 {g.n_data_slices} of {g.n_slices} slices · "
                 f"data_size {t.nbytes} B, allocation {t.raw.size} B")
        second = (offset_breakdown(t, self._index) if self._index is not None
                  else "click a byte to see its offset")
        return [first, second]

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        # A painter left active when paintEvent raises makes the next paint crash the process,
        # so it is always ended.
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:
            painter.end()

    def _paint(self, painter: QPainter) -> None:
        painter.fillRect(self.rect(), self.palette().window())
        lines = self.text_lines()
        painter.setPen(self.palette().windowText().color())
        fm = painter.fontMetrics()
        painter.drawText(4, fm.ascent() + 2, lines[0])
        t = self._tensor
        if t is not None and t.nbytes:
            top = fm.height() + 6
            label = fm.horizontalAdvance("row: 00 slices × 000 × 32 B") + 12
            width = self.width() - label - 8
            g = t.geometry
            painter.drawText(4, int(top + 12), f"batch: {g.h_total} rows × {g.row_stride} B")
            painter.drawText(4, int(top + 38),
                             f"row: {g.n_slices} slices × {g.w_total} × 32 B")
            self._draw_rows(painter, QRectF(label, top, width, 16))
            self._draw_slices(painter, QRectF(label, top + 24, width, 20))
        elif t is not None:
            painter.drawText(4, fm.height() * 2 + 6,
                             "nothing to show: the padded tensor has no bytes")
        painter.setPen(self.palette().windowText().color())
        painter.drawText(4, self.height() - fm.descent() - 2, lines[-1])

    def _draw_rows(self, painter: QPainter, rect: QRectF) -> None:
        t = self._tensor
        assert t is not None
        g, p = t.geometry, t.padding
        n = g.h_total
        cell = rect.width() / n
        for r in range(n):
            region = Region.TOP if r < p.h_before else (
                Region.BOTTOM if r >= p.h_before + t.shape[1] else Region.VALID)
            color = REGION_COLORS.get(region, VALID)
            painter.fillRect(QRectF(rect.x() + r * cell, rect.y(), max(1.0, cell - 0.5),
                                    rect.height()), color)
        if self._index is not None:
            r = self._index[1] + p.h_before
            self._mark(painter, QRectF(rect.x() + r * cell, rect.y(), max(2.0, cell),
                                       rect.height()))

    def _draw_slices(self, painter: QPainter, rect: QRectF) -> None:
        t = self._tensor
        assert t is not None
        g, p = t.geometry, t.padding
        cells = g.n_slices * g.w_total
        cell = rect.width() / cells
        data_end = p.d_before + t.shape[3]
        for s in range(g.n_slices):
            if (s + 1) * 32 <= p.d_before:
                depth_pad = REGION_COLORS[Region.DEPTH_BEFORE]
            elif s * 32 >= data_end:
                depth_pad = REGION_COLORS[Region.DEPTH_AFTER]
            else:
                depth_pad = None
            for w in range(g.w_total):
                if w < p.w_before:
                    color = REGION_COLORS[Region.LEFT]
                elif w >= p.w_before + t.shape[2]:
                    color = REGION_COLORS[Region.RIGHT]
                else:
                    color = depth_pad or VALID
                x = rect.x() + (s * g.w_total + w) * cell
                painter.fillRect(QRectF(x, rect.y(), max(1.0, cell - 0.3), rect.height()),
                                 color)
            painter.setPen(QPen(Qt.GlobalColor.black, 2))
            x = rect.x() + s * g.w_total * cell
            painter.drawLine(int(x), int(rect.y() - 2), int(x), int(rect.bottom() + 2))
        if self._index is not None:
            k = self._index[3] + p.d_before
            w = self._index[2] + p.w_before
            x = rect.x() + ((k // 32) * g.w_total + w + (k % 32) / 32) * cell
            self._mark(painter, QRectF(x - 1, rect.y() - 3, 3, rect.height() + 6))

    def _mark(self, painter: QPainter, rect: QRectF) -> None:
        painter.setPen(QPen(QColor(200, 0, 0), 2))
        painter.setBrush(SELECT)
        painter.drawRect(rect)
        painter.setBrush(Qt.BrushStyle.NoBrush)


def inside_padded(tensor: Tensor | None, index: tuple[int, int, int, int]) -> bool:
    """Whether ``index`` names an element of ``tensor``'s padded extent (False for None)."""
    if tensor is None:
        return False
    try:
        tensor.offset(*index)
    except (IndexError, ValueError):
        return False
    return True
