"""The scene's mouse: moving nodes, and dragging from an output port to an input port to
connect them (with the reason shown at the mouse when the connection would be refused).

A mixin of :class:`~hexscope.widgets.graph_canvas.scene.GraphScene`, which holds the items,
the graph, the registry and the signals these methods use.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsSceneMouseEvent, QGraphicsSimpleTextItem

from hexscope.engine.validate import can_connect
from hexscope.widgets.graph_canvas.edge_item import curve
from hexscope.widgets.graph_canvas.node_item import NodeItem

OK_COLOR = QColor("#2e9d4f")
BAD_COLOR = QColor("#d62828")


class SceneMouse:
    """Mouse handling of the graph scene (see the module's docstring)."""

    # mouse: moves and drag-to-connect ----------------------------------------------------------
    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        item = self._node_at(event.scenePos())
        hit = item.port_at(event.scenePos()) if item else None
        if item and hit and hit[0] == "out" and not self.read_only:
            self._start_drag(item, hit[1])
            event.accept()
            return
        super().mousePressEvent(event)
        self._press_positions = {i.node_id: i.pos() for i in self.selectedItems()
                                 if isinstance(i, NodeItem)}

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if self._drag is not None:
            self._update_drag(event.scenePos())
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if self._drag is not None:
            self._finish_drag(event.scenePos())
            return
        super().mouseReleaseEvent(event)
        moved = {nid: (item.pos().x(), item.pos().y())
                 for nid, start in self._press_positions.items()
                 if (item := self.items_by_id.get(nid)) is not None and item.pos() != start}
        self._press_positions = {}
        if moved:
            self.nodes_moved.emit(moved)

    def _node_at(self, pos: QPointF) -> NodeItem | None:
        for item in self.items(pos):
            if isinstance(item, NodeItem):
                return item
        # Port handles stick out of the node's body by a few pixels.
        for item in self.items(QRectF(pos.x() - 10, pos.y() - 2, 20, 4)):
            if isinstance(item, NodeItem) and item.port_at(pos):
                return item
        return None

    def _start_drag(self, item: NodeItem, port: int) -> None:
        self._drag = (item, port)
        self._drag_line = QGraphicsPathItem()
        self._drag_line.setZValue(5)
        self._drag_label = QGraphicsSimpleTextItem()
        self._drag_label.setZValue(6)
        self.addItem(self._drag_line)
        self.addItem(self._drag_label)
        self._update_drag(item.output_pos(port))

    def drag_target(self, pos: QPointF) -> tuple[int, int] | None:
        """(node id, input port) under ``pos`` while dragging a connection."""
        item = self._node_at(pos)
        hit = item.port_at(pos) if item else None
        if item is None or hit is None or hit[0] != "in":
            return None
        return item.node_id, hit[1]

    def connection_problem(self, src: tuple[int, int], dst: int, port: int) -> str | None:
        """Why output ``src`` may not feed input ``port`` of ``dst`` (None if it may)."""
        node = self.graph.node(dst)
        if port > len(node.inputs):
            return f"connect input {len(node.inputs)} of 0x{dst:x} first (inputs are in order)"
        issue = can_connect(self.graph, src, dst, port, self.registry)
        return issue.message if issue else None

    def _update_drag(self, pos: QPointF) -> None:
        assert self._drag is not None and self._drag_line and self._drag_label
        src_item, out = self._drag
        target = self.drag_target(pos)
        end = pos
        if target is None:
            self.drag_problem, color, text = "not over an input port", QColor("#888"), ""
        else:
            self.drag_problem = self.connection_problem((src_item.node_id, out), *target)
            end = self.items_by_id[target[0]].input_pos(target[1])
            color = BAD_COLOR if self.drag_problem else OK_COLOR
            text = self.drag_problem or f"connect to 0x{target[0]:x} input {target[1]}"
        pen = QPen(color, 2.5)
        pen.setCosmetic(True)
        self._drag_line.setPen(pen)
        self._drag_line.setPath(curve(src_item.output_pos(out), end))
        self._drag_label.setBrush(color)
        self._drag_label.setText(text)
        if target is None:
            self._drag_label.setPos(pos + QPointF(12, 10))
        else:
            # Above the target node, clear of its port names (which it would cover).
            body = self.items_by_id[target[0]]
            height = self._drag_label.boundingRect().height()
            self._drag_label.setPos(body.pos() + QPointF(0, -height - 16))

    def drag_feedback(self) -> tuple[str, str] | None:
        """While dragging a connection: the text and colour (name) shown at the mouse."""
        if self._drag_label is None:
            return None
        return self._drag_label.text(), self._drag_label.brush().color().name()

    def _finish_drag(self, pos: QPointF) -> None:
        assert self._drag is not None
        src_item, out = self._drag
        self._update_drag(pos)
        target = self.drag_target(pos)
        for temp in (self._drag_line, self._drag_label):
            if temp is not None:
                self.removeItem(temp)
        self._drag, self._drag_line, self._drag_label = None, None, None
        if target is not None and self.drag_problem is None:
            self.connect_requested.emit(src_item.node_id, out, target[0], target[1])
        elif target is not None and self.drag_problem:
            self.connection_refused.emit(
                f"Not connected: 0x{target[0]:x} input {target[1]} {self.drag_problem}")


__all__ = ["BAD_COLOR", "OK_COLOR", "SceneMouse"]
