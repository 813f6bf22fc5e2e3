"""The scene's rect, set by the scene and never left to Qt, and the rect of its content.

Without a rect of its own, Qt works out the bounds of every item after each change
(Python's boundingRect for each node, every time a node's look changes during a run; and
with a run's thread holding the GIL, each of those calls waits for it).

A mixin of :class:`~hexscope.widgets.graph_canvas.scene.GraphScene`, which holds the items
(``items_by_id``) and counts the changes of their geometry (``geometry_version``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from PySide6.QtCore import QRectF

from hexscope.widgets.graph_canvas.node_item import NodeItem

SCENE_MARGIN = 400.0      # around the nodes: room for edges' bends and the view's edge


class SceneRect:
    """The rect methods of the graph scene (see the module's docstring)."""

    _content: tuple[int, QRectF]

    def _fit_rect_steps(self, chunk: int) -> Iterator[tuple[int, int]]:
        """Set the scene's rect around all nodes, with a margin, yielding every ``chunk``
        nodes (a build's last slices: one pass over 20,000 items took ~30 ms)."""
        total = 2 * len(self.graph)
        left = top = math.inf
        right = bottom = -math.inf
        for k, item in enumerate(list(self.items_by_id.values()), 1):
            x, y, w, h = item.body_rect()
            left, top = min(left, x), min(top, y)
            right, bottom = max(right, x + w), max(bottom, y + h)
            if k % chunk == 0:
                yield total, total
        if left == math.inf:
            self._set_rect(QRectF(-SCENE_MARGIN, -SCENE_MARGIN, 2 * SCENE_MARGIN,
                                  2 * SCENE_MARGIN))
            return
        nodes = QRectF(left, top, right - left, bottom - top)
        self._content = (self.geometry_version, nodes)
        self._set_rect(nodes.adjusted(-SCENE_MARGIN, -SCENE_MARGIN, SCENE_MARGIN, SCENE_MARGIN))

    def content_rect(self) -> QRectF:
        """The rect around the nodes: as the build found it while no node moved, appeared
        or was hidden since (a graph just opened is fitted to it twice), else Qt's rect
        around every item (a pass over all of them: 10-20 ms at 10,000 nodes)."""
        version, rect = self._content
        if version != self.geometry_version:
            rect = self.itemsBoundingRect()
            self._content = (self.geometry_version, rect)
        return QRectF(rect)

    def _set_rect(self, rect: QRectF) -> None:
        """Set the scene's rect, telling its item index even while the scene's signals are
        blocked (a build, a refresh): the index learns the rect from ``sceneRectChanged``.
        Left at the build's first rect (1 x 1), it put every node in the same few cells of
        its tree, and every query (each paint, each overview tile) called Python's
        ``boundingRect`` of every node: 5,290 calls for a 10 x 10 rect at 10,000 nodes."""
        blocked = self.blockSignals(False)
        try:
            self.setSceneRect(rect)
        finally:
            self.blockSignals(blocked)

    def _grow_rect(self, item: NodeItem) -> None:
        """Grow the scene's rect to hold ``item`` (added or moved); it never shrinks."""
        x, y, w, h = item.body_rect()
        rect = self.sceneRect()
        if not rect.contains(QRectF(x, y, w, h)):
            self._set_rect(rect.united(QRectF(x, y, w, h).adjusted(
                -SCENE_MARGIN, -SCENE_MARGIN, SCENE_MARGIN, SCENE_MARGIN)))


__all__ = ["SCENE_MARGIN", "SceneRect"]
