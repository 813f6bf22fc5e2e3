"""GraphCanvas: the view on a GraphScene: pan, zoom, zoom to fit, rubber band, op drops."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFont,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmapCache,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QGraphicsView,
    QRubberBand,
    QStyle,
    QStyleHintReturnMask,
    QStyleOptionRubberBand,
    QWidget,
)

from hexscope.widgets.graph_canvas.minimap import Minimap
from hexscope.widgets.graph_canvas.navigate import neighbour
from hexscope.widgets.graph_canvas.overview_tiles import OverviewTiles
from hexscope.widgets.graph_canvas.scene import GraphScene
from hexscope.widgets.theme_colors import theme_colors

OP_MIME = "application/x-hexscope-op"
MIN_ZOOM, MAX_ZOOM = 0.02, 4.0
READABLE_ZOOM = 0.75        # below this, port names are too small to read (< 6 pt)
#: A graph that fits the view at this zoom or more opens whole; a larger one opens at this
#: zoom at its start. Below it the blocks carry no name (tiles, from 0.125 down) or names
#: too small to read: a fitted 10,000-node graph (0.024) opened as a field of coloured
#: dots that named nothing (issue 32). The minimap shows the whole; Fit (Ctrl+0) fits it.
OPEN_MIN_ZOOM = 0.2
NAV_KEYS = (Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Down,
            Qt.Key.Key_Return, Qt.Key.Key_Enter)
EMPTY_HINT = ("Open a graph with File ▸ Open (Ctrl+O)\n"
              "or drag an op from the Ops palette onto the canvas")


class GraphCanvas(QGraphicsView):
    """Wheel zooms around the cursor; the middle button (or Alt + left) pans."""

    def __init__(self, scene: GraphScene, parent: QWidget | None = None) -> None:
        super().__init__(scene, parent)
        self._scene = scene       # the view does not own the scene; keep it alive
        self._pan_from: QPointF | None = None
        self.setRenderHints(QPainter.RenderHint.Antialiasing
                            | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setBackgroundBrush(theme_colors().canvas)
        self.setAcceptDrops(True)
        self.minimap = Minimap(self)
        self.minimap.follow()
        self.tiles = OverviewTiles(self)
        self.tiles.follow(scene)
        # Nodes cache their drawing zoomed in (GraphScene.set_item_cache): room for a full
        # screen of them at 4x (Qt's default is 10 MiB).
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), 64 * 1024))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        # A theme switch changes the palette: the canvas, its items and the minimap follow.
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.setBackgroundBrush(theme_colors().canvas)
            self.minimap.invalidate()
            scene = self.scene()
            if scene is not None:
                # update() drops an item's cached pixmap (DeviceCoordinateCache), which a
                # repaint of the scene alone would reuse in the old theme's colours
                for item in getattr(scene, "items_by_id", {}).values():
                    item.update()
                scene.update()        # and the overview tiles, through scene.changed
        super().changeEvent(event)

    def set_scene(self, scene: GraphScene) -> None:
        self._scene = scene
        self.setScene(scene)
        self.minimap.follow()
        self.tiles.follow(scene)
        # Every item of a scene just built is dirty: Qt would hand each one's rect to the
        # Python slots of ``changed`` (the tiles', the minimap's), a list of 60,000 QRectF
        # made for each at 20,000 nodes, after calling Python's boundingRect for each.
        # Changed all at once, they get the scene's rect, and nothing was drawn yet.
        scene.update()

    def set_minimap_visible(self, shown: bool) -> None:
        self.minimap.wanted = shown
        self.minimap.refresh()

    def zoom_to(self, zoom: float) -> None:
        """Set the zoom (1.0 = 100 %: one scene unit per pixel) around the selection (what
        the user is looking at), or keeping the centre when nothing is selected."""
        center = self.visible_scene_rect().center()
        selected = self._scene.selectedItems()
        if selected:
            box = selected[0].sceneBoundingRect()
            for item in selected[1:]:
                box = box.united(item.sceneBoundingRect())
            center = box.center()
        self.zoom_by(zoom / self.zoom)
        self.centerOn(center)

    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float) -> None:
        target = min(MAX_ZOOM, max(MIN_ZOOM, self.zoom * factor))
        self.scale(target / self.zoom, target / self.zoom)
        self.minimap.refresh()

    def zoom_to_fit(self) -> None:
        rect = self._scene.content_rect()
        if rect.isEmpty():
            return
        self.fitInView(rect.adjusted(-40, -40, 40, 40), Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom > 1.0:
            self.zoom_by(1.0 / self.zoom)
            self.centerOn(rect.center())
        self.minimap.refresh()

    def show_graph(self) -> None:
        """A graph opens fitted to the view (never above 100 %): zoomed out, nodes are
        blocks named by their op (level of detail) and long layouts wrap into bands, so
        the whole graph reads; the minimap keeps the overview once zoomed in. A graph too
        large to name its blocks when fitted opens at ``OPEN_MIN_ZOOM`` at its start (the
        top left: its inputs), the minimap showing where that is in the whole."""
        self.zoom_to_fit()
        if self.zoom >= OPEN_MIN_ZOOM:
            return
        rect = self._scene.content_rect()
        if rect.isEmpty():
            return
        self.zoom_by(OPEN_MIN_ZOOM / self.zoom)
        seen = self.visible_scene_rect()
        self.centerOn(QPointF(rect.left() - 40 + seen.width() / 2,
                              rect.top() - 40 + seen.height() / 2))

    def center_on_node(self, node_id: int) -> None:
        item = self._scene.items_by_id.get(self._scene.folded.get(node_id, node_id))
        if item is None:
            return
        if self.zoom < READABLE_ZOOM:
            self.zoom_by(0.8 / self.zoom)     # too small to read: zoom in on the node
        self.centerOn(item.sceneBoundingRect().center())

    def ensure_node_visible(self, node_id: int) -> bool:
        """Scroll as little as needed to show the node (the debugger's next node)."""
        item = self._scene.items_by_id.get(self._scene.folded.get(node_id, node_id))
        if item is None:
            return False
        self.ensureVisible(item.sceneBoundingRect(), 40, 40)
        return True

    def empty_hint(self) -> str:
        """The text drawn over an empty canvas ("" once the graph has nodes)."""
        return "" if self._scene.items_by_id else EMPTY_HINT

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()

    # Qt overrides ---------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.minimap.place()
        self.minimap.refresh()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        tiled = self.tiles.active()
        self._scene.set_item_cache(not tiled, self.mapToScene(event.rect()).boundingRect())
        if not tiled:
            super().paintEvent(event)
            return
        # Far out: the scene from cached tiles (overview_tiles.py), then what Qt's own
        # paintEvent adds on top: background, foreground and the rubber band.
        painter = QPainter(self.viewport())
        exposed = self.mapToScene(event.rect()).boundingRect()
        painter.setTransform(self.viewportTransform())
        self.drawBackground(painter, exposed)
        if not self.tiles.paint(painter, exposed):
            painter.end()             # too many tiles to render in one pass: live
            super().paintEvent(event)
            return
        self.drawForeground(painter, exposed)
        band = self.rubberBandRect()
        if not band.isEmpty():
            painter.resetTransform()
            option = QStyleOptionRubberBand()
            option.initFrom(self.viewport())
            option.rect = band
            option.shape = QRubberBand.Shape.Rectangle
            mask = QStyleHintReturnMask()
            if self.style().styleHint(QStyle.StyleHint.SH_RubberBand_Mask, option,
                                      self.viewport(), mask):
                painter.setClipRegion(mask.region, Qt.ClipOperation.IntersectClip)
            self.style().drawControl(QStyle.ControlElement.CE_RubberBand, option, painter,
                                     self.viewport())
        painter.end()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        ids = self._scene.selected_ids()
        if len(ids) == 1 and event.modifiers() in (Qt.KeyboardModifier.NoModifier,
                                                   Qt.KeyboardModifier.KeypadModifier):
            target = neighbour(self._scene, ids[0], event.key())
            if target is not None:
                self._scene.select_only(target)
                self.ensure_node_visible(target)
                event.accept()
                return
            if event.key() in NAV_KEYS:
                event.accept()        # at the end of the graph: stay, do not scroll
                return
        super().keyPressEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom_by(1.2 ** steps)
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        alt = event.modifiers() & Qt.KeyboardModifier.AltModifier
        if event.button() == Qt.MouseButton.MiddleButton or (
                alt and event.button() == Qt.MouseButton.LeftButton):
            self._pan_from = event.position()
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            h, v = self.horizontalScrollBar(), self.verticalScrollBar()
            h.setValue(h.value() - int(delta.x()))
            v.setValue(v.value() - int(delta.y()))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._pan_from is not None:
            self._pan_from = None
            self.unsetCursor()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasFormat(OP_MIME) and not self._scene.read_only:
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802
        if event.mimeData().hasFormat(OP_MIME):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        if not event.mimeData().hasFormat(OP_MIME):
            super().dropEvent(event)
            return
        name = bytes(event.mimeData().data(OP_MIME).data()).decode()
        self._scene.op_dropped.emit(name, self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802
        super().drawForeground(painter, rect)
        if not self.empty_hint():
            return
        # An empty canvas says how to start instead of showing nothing.
        painter.save()
        painter.resetTransform()
        painter.setPen(theme_colors().hint)
        font = QFont(painter.font())
        font.setPointSizeF(11)
        painter.setFont(font)
        painter.drawText(self.viewport().rect(), Qt.AlignmentFlag.AlignCenter, self.empty_hint())
        painter.restore()

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802
        super().drawBackground(painter, rect)
        if self.zoom < 0.35:
            return
        # A light dot grid helps to judge distances when placing nodes.
        step = 40.0
        painter.setPen(QPen(theme_colors().grid, 0))
        left = int(rect.left() // step) * step
        top = int(rect.top() // step) * step
        points = [QPointF(x, y)
                  for x in _frange(left, rect.right(), step)
                  for y in _frange(top, rect.bottom(), step)]
        if len(points) < 20000:
            painter.drawPoints(points)


def _frange(start: float, stop: float, step: float) -> list[float]:
    count = max(0, int((stop - start) / step) + 1)
    return [start + k * step for k in range(count)]
