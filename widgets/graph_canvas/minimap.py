"""The minimap: the whole graph in a corner of the canvas, the visible part outlined;
clicking or dragging in it moves the view there.

It paints the nodes as coloured rectangles into a cached image (no edges, no text), redrawn
a moment after the scene changes, so a 10,000-node graph costs a few milliseconds per
change and nothing while panning: panning only moves the outline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from hexscope.widgets.graph_canvas.view import GraphCanvas

MINIMAP_SIZE = QSize(240, 160)
MARGIN = 12


class Minimap(QWidget):
    """An overview of ``canvas``'s scene, drawn over the canvas's bottom-right corner."""

    def __init__(self, canvas: GraphCanvas) -> None:
        super().__init__(canvas)
        self.canvas = canvas
        self.setFixedSize(MINIMAP_SIZE)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        self._image: QImage | None = None
        self._bounds = QRectF()
        self._redraw = QTimer(self, singleShot=True, interval=300)
        self._redraw.timeout.connect(self.invalidate)
        self.wanted = True               # the user's choice (View > Minimap)
        self._bounds_dirty = True
        canvas.horizontalScrollBar().valueChanged.connect(self.refresh)
        canvas.verticalScrollBar().valueChanged.connect(self.refresh)

    def follow(self) -> None:
        """Redraw soon after the scene changes (call again after a new scene)."""
        self.canvas.scene().changed.connect(lambda _rects: self._redraw.start())
        self.invalidate()

    def invalidate(self) -> None:
        self._image = None
        self._bounds_dirty = True
        self.refresh()

    def refresh(self) -> None:
        """Shown when wanted and the view does not show the whole graph (a small graph
        needs no overview, and the map would cover part of it)."""
        bounds = self._graph_bounds()
        seen = self.canvas.visible_scene_rect().adjusted(-2, -2, 2, 2)
        shown = self.wanted and not bounds.isEmpty() and not seen.contains(bounds)
        if shown != self.isVisible():
            self.setVisible(shown)
            self.place()
        if shown:
            self.update()

    def _graph_bounds(self) -> QRectF:
        if self._bounds_dirty:
            self._bounds = QRectF()
            for item in getattr(self.canvas.scene(), "items_by_id", {}).values():
                self._bounds |= item.sceneBoundingRect()
            self._bounds_dirty = False
        return self._bounds

    def place(self) -> None:
        """Keep to the canvas's bottom-right corner, above its scroll bars, at most a quarter
        of its width and a third of its height (a short canvas, under an open data view,
        must stay mostly canvas)."""
        vp = self.canvas.viewport().geometry()
        scale = min(1.0, vp.width() / 4 / MINIMAP_SIZE.width(),
                    vp.height() / 3 / MINIMAP_SIZE.height())
        size = QSize(max(60, int(MINIMAP_SIZE.width() * scale)),
                     max(40, int(MINIMAP_SIZE.height() * scale)))
        if size != self.size():
            self.setFixedSize(size)
            self._image = None          # drawn again at the new size
        self.move(vp.right() - self.width() - MARGIN, vp.bottom() - self.height() - MARGIN)

    # geometry: scene <-> minimap ---------------------------------------------------------
    def _scale(self) -> float:
        b = self._bounds
        if b.isEmpty():
            return 1.0
        return min((self.width() - 8) / b.width(), (self.height() - 8) / b.height())

    def to_map(self, p: QPointF) -> QPointF:
        s = self._scale()
        b = self._bounds
        off_x = (self.width() - b.width() * s) / 2
        off_y = (self.height() - b.height() * s) / 2
        return QPointF(off_x + (p.x() - b.left()) * s, off_y + (p.y() - b.top()) * s)

    def to_scene(self, p: QPointF) -> QPointF:
        s = self._scale()
        b = self._bounds
        off_x = (self.width() - b.width() * s) / 2
        off_y = (self.height() - b.height() * s) / 2
        return QPointF(b.left() + (p.x() - off_x) / s, b.top() + (p.y() - off_y) / s)

    # painting ---------------------------------------------------------------------------------
    def _render(self) -> QImage:
        image = QImage(self.size(), QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor(255, 255, 255, 225))
        items = getattr(self.canvas.scene(), "items_by_id", {})
        self._graph_bounds()
        painter = QPainter(image)
        # The mapping of to_map, inlined: this loop runs for every node after each change.
        s, b = self._scale(), self._bounds
        off_x = (self.width() - b.width() * s) / 2 - b.left() * s
        off_y = (self.height() - b.height() * s) / 2 - b.top() * s
        for item in items.values():
            if not item.isVisible():
                continue
            r = item.sceneBoundingRect()
            painter.fillRect(QRectF(off_x + r.left() * s, off_y + r.top() * s,
                                    r.width() * s + 0.6, r.height() * s + 0.6),
                             item.block_color())
        painter.end()
        return image

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        if self._image is None:
            self._image = self._render()
        painter = QPainter(self)
        painter.drawImage(0, 0, self._image)
        painter.setPen(QPen(QColor("#8a93a3"), 1))
        painter.drawRect(self.rect().adjusted(0, 0, -1, -1))
        if not self._bounds.isEmpty():
            seen = self.canvas.visible_scene_rect()
            view = QRectF(self.to_map(seen.topLeft()), self.to_map(seen.bottomRight()))
            view = view.intersected(QRectF(self.rect()))
            painter.setPen(QPen(QColor("#1f78d1"), 2))
            painter.setBrush(QColor(31, 120, 209, 40))
            painter.drawRect(view)
        painter.end()

    def view_rect(self) -> QRectF:
        """The outline of the visible part, in minimap pixels."""
        if self._image is None:
            self._image = self._render()
        seen = self.canvas.visible_scene_rect()
        return QRectF(self.to_map(seen.topLeft()), self.to_map(seen.bottomRight()))

    # mouse: click or drag moves the view ---------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._move_view(event.position())
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._move_view(event.position())
        event.accept()

    def _move_view(self, pos: QPointF) -> None:
        if self._image is None:
            self._image = self._render()
        if not self._bounds.isEmpty():
            self.canvas.centerOn(self.to_scene(pos))
            self.update()
