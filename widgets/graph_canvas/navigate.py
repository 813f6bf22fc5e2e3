"""Keyboard navigation along the graph: from the selected node to a producer, a consumer
or a sibling, among the nodes the canvas shows (folded consts are not stops)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from hexscope.widgets.graph_canvas.layout import TOP_TO_BOTTOM
from hexscope.widgets.graph_canvas.scene import GraphScene

Key = Qt.Key
# Laid out top to bottom, the graph flows down: the arrows turn with it.
_TURNED = {Key.Key_Down: Key.Key_Right, Key.Key_Up: Key.Key_Left,
           Key.Key_Right: Key.Key_Down, Key.Key_Left: Key.Key_Up}


def producers(scene: GraphScene, node_id: int) -> list[int]:
    """The shown producers of ``node_id``, in input order, each once."""
    seen: list[int] = []
    for src, _ in scene.graph.node(node_id).inputs:
        if src in scene.items_by_id and src not in seen:
            seen.append(src)
    return seen


def consumers(scene: GraphScene, node_id: int) -> list[int]:
    """The shown consumers of ``node_id``, top to bottom on the canvas (left to right in
    a top-to-bottom layout)."""
    ids = {dst for dst, _, _ in scene.graph.consumers(node_id) if dst in scene.items_by_id}
    items = scene.items_by_id
    if scene.direction == TOP_TO_BOTTOM:
        return sorted(ids, key=lambda i: (items[i].x(), i))
    return sorted(ids, key=lambda i: (items[i].y(), i))


def siblings(scene: GraphScene, node_id: int) -> list[int]:
    """The other consumers of this node's first producer, and itself, top to bottom."""
    ups = producers(scene, node_id)
    return consumers(scene, ups[0]) if ups else [node_id]


def neighbour(scene: GraphScene, node_id: int, key: int) -> int | None:
    """Where an arrow key (or Enter) moves the selection from ``node_id``.

    Right: the first consumer; Left and Enter: the producer of the first input (Enter
    follows the data input, as reading a graph backwards does); Up and Down: the previous or
    next sibling (another consumer of the same producer). In a top-to-bottom layout Down
    and Up go along the graph, Left and Right to the siblings.
    """
    if node_id not in scene.graph:
        return None
    if scene.direction == TOP_TO_BOTTOM:
        key = _TURNED.get(key, key)
    if key == Key.Key_Right:
        found = consumers(scene, node_id)
        return found[0] if found else None
    if key in (Key.Key_Left, Key.Key_Return, Key.Key_Enter):
        found = producers(scene, node_id)
        return found[0] if found else None
    if key in (Key.Key_Up, Key.Key_Down):
        row = siblings(scene, node_id)
        if node_id not in row or len(row) < 2:
            return None
        k = row.index(node_id) + (1 if key == Key.Key_Down else -1)
        return row[k] if 0 <= k < len(row) else None
    return None
