"""The minimap: the whole graph in a corner of the canvas, the visible part outlined;
clicking or dragging in it moves the view there.

It paints the nodes as coloured rectangles into a cached image (no edges, no text), redrawn
a moment after the scene changes, so a 10,000-node graph costs a few milliseconds per
change and nothing while panning: panning only moves the outline. The rectangles are
rasterised with numpy: filling them one QPainter call at a time cost ~100 ms at 20,000
nodes, paid in the first frame of the first zoom step in from the fitted view.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from hexscope.widgets.event_turns import gated
from hexscope.widgets.theme_colors import theme_colors

if TYPE_CHECKING:
    from hexscope.widgets.graph_canvas.view import GraphCanvas

MINIMAP_SIZE = QSize(240, 160)
#: Above this many nodes the pass that reads their places is made between events, this
#: long at a time (20,000 nodes: 140-150 ms in one go, after Open, Import C, the toggle).
SLICE_ABOVE = 3000
SLICE_S = 0.008


def _premultiplied(color: QColor) -> int:
    """``color`` as one premultiplied ARGB32 pixel (the image's format)."""
    a = color.alpha()
    r, g, b = (round(c * a / 255) for c in (color.red(), color.green(), color.blue()))
    return (a << 24) | (r << 16) | (g << 8) | b
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
        self._nodes = np.zeros((0, 5))
        self._items: list = []               # the visible node items, as _nodes' rows
        self._geometry_of: tuple[object, int | None] = (None, None)
        self._reading: Iterator[None] | None = None     # a pass over the places, in slices
        self._shown_image: QImage | None = None          # drawn while a pass goes on
        self._reader = QTimer(self, singleShot=True, interval=0)
        self._reader.timeout.connect(gated(self._reader, self._read_slice))
        canvas.horizontalScrollBar().valueChanged.connect(self.refresh)
        canvas.verticalScrollBar().valueChanged.connect(self.refresh)

    def follow(self) -> None:
        """Redraw soon after the scene changes (call again after a new scene)."""
        # a bound method, not a lambda: Qt drops the connection with this widget, while a
        # lambda kept a deleted minimap's timer alive for a scene that outlived it (every
        # later change of the scene then raised in the event loop)
        self.canvas.scene().changed.connect(self._scene_changed)
        self._shown_image = None             # another graph's drawing: not shown meanwhile
        self.invalidate()

    def _scene_changed(self, _rects: object) -> None:
        self._redraw.start()

    def invalidate(self) -> None:
        self._image = None
        self._bounds_dirty = True
        self._reading = None                 # (started again from the scene as it is now)
        self.refresh()

    def refresh(self) -> None:
        """Shown when wanted and the view does not show the whole graph (a small graph
        needs no overview, and the map would cover part of it)."""
        bounds = self._shown_bounds()
        seen = self.canvas.visible_scene_rect().adjusted(-2, -2, 2, 2)
        shown = self.wanted and not bounds.isEmpty() and not seen.contains(bounds)
        if shown != self.isVisible():
            self.setVisible(shown)
            self.place()
        if shown:
            self.update()

    def _shown_bounds(self) -> QRectF:
        """Where the nodes are, to choose whether to show the map: the scene's rect of its
        content (kept from its build, or held by the scene's rect after an edit), not the
        pass over every item that drawing the map needs (20-50 ms at 10,000-20,000 nodes,
        on each Open and const toggle, and on each view resize after an edit)."""
        content = getattr(self.canvas.scene(), "content_rect", None)
        return content(exact=False) if content is not None else self._graph_bounds()

    def _graph_bounds(self) -> QRectF:
        if self._bounds_dirty:
            self._collect()
            self._bounds_dirty = False
        return self._bounds

    def _collect(self) -> None:
        """One pass over the nodes: their bodies and colours as arrays, and the bounds.
        Where no node moved, appeared or was hidden since the last pass (a run's end, a
        step: only looks change), only the colours are read again (the geometry took
        0.3-0.4 s of the GUI thread at 10,000-20,000 nodes after every run)."""
        for _ in self._collect_steps():
            pass

    def _needs_places(self) -> bool:
        """Whether drawing needs a pass over the nodes' places (not only their colours)."""
        scene = self.canvas.scene()
        version = getattr(scene, "geometry_version", None)
        return not (self._bounds_dirty is False or (
            version is not None and (scene, version) == self._geometry_of and self._items))

    def _collect_steps(self, chunk: int = 0) -> Iterator[None]:
        """:meth:`_collect`, yielding every ``chunk`` nodes read (0: never)."""
        scene = self.canvas.scene()
        version = getattr(scene, "geometry_version", None)
        if version is not None and (scene, version) == self._geometry_of and self._items:
            self._nodes[:, 4] = [item.block_rgb for item in self._items]
            return
        items, rows = [], []
        for k, item in enumerate(list(getattr(scene, "items_by_id", {}).values()), 1):
            if item.isVisible():
                items.append(item)
                rows.append((item.x(), item.y(), item.width, item.height, item.block_rgb))
            if chunk and k % chunk == 0:
                yield
        self._items = items
        self._geometry_of = (scene, version)
        self._nodes = np.array(rows, np.float64).reshape(-1, 5)
        if not rows:
            self._bounds = QRectF()
            return
        x, y, w, h = (self._nodes[:, k] for k in range(4))
        left, top = x.min(), y.min()
        self._bounds = QRectF(left, top, (x + w).max() - left, (y + h).max() - top)

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
        """The nodes as blocks of their colour, rasterised with numpy (a 20,000-node graph
        in a few milliseconds beyond the pass that reads the items)."""
        self._graph_bounds()
        width, height = self.width(), self.height()
        pixels = np.full((height, width), _premultiplied(theme_colors().minimap), np.uint32)
        nodes = self._nodes
        if len(nodes):
            s, b = self._scale(), self._bounds
            off_x = (width - b.width() * s) / 2 - b.left() * s
            off_y = (height - b.height() * s) / 2 - b.top() * s
            left, top = off_x + nodes[:, 0] * s, off_y + nodes[:, 1] * s
            x0 = np.clip(np.round(left), 0, width - 1).astype(np.int64)
            y0 = np.clip(np.round(top), 0, height - 1).astype(np.int64)
            # The pixels an aliased QPainter fill of the block grown by 0.6 px covers (at
            # least one): under a pixel each, the blocks of a large graph still show.
            w = np.maximum(1, np.round(left + nodes[:, 2] * s + 0.6) - x0).astype(np.int64)
            h = np.maximum(1, np.round(top + nodes[:, 3] * s + 0.6) - y0).astype(np.int64)
            colour = nodes[:, 4].astype(np.uint32) | np.uint32(0xFF000000)
            for dy in range(int(h.max())):
                for dx in range(int(w.max())):
                    keep = (w > dx) & (h > dy)
                    pixels[np.minimum(y0[keep] + dy, height - 1),
                           np.minimum(x0[keep] + dx, width - 1)] = colour[keep]
        image = QImage(pixels.data, width, height, width * 4,
                       QImage.Format.Format_ARGB32_Premultiplied)
        return image.copy()          # owns its pixels (the array goes away)

    def _read_slice(self) -> None:
        """Read the next nodes' places for ``SLICE_S``; once all are read, draw."""
        if self._reading is None:
            return
        end = time.perf_counter() + SLICE_S
        try:
            next(self._reading)
            while time.perf_counter() < end:
                next(self._reading)
        except StopIteration:
            self._reading = None
            self._bounds_dirty = False
            self._image = None
            self.update()
            return
        self._reader.start()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        if self._image is None and self._reading is None and self._bounds_dirty \
                and self._needs_places() \
                and len(getattr(self.canvas.scene(), "items_by_id", ())) > SLICE_ABOVE:
            self._reading = self._collect_steps(chunk=250)
            self._reader.start()
        if self._image is None and self._reading is None:
            self._image = self._shown_image = self._render()
        painter = QPainter(self)
        if self._reading is None or self._shown_image is None:
            image = self._image
        else:
            image = self._shown_image    # the last drawing, until the pass is done
        if image is not None:
            painter.drawImage(0, 0, image)
        else:
            painter.fillRect(self.rect(), theme_colors().minimap)
        painter.setPen(QPen(theme_colors().minimap_frame, 1))
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
