"""The nodes' cache mode changed a chunk at a time, those in view first.

Zooming in past the overview's tiles (a palette add centres the view on the new node) set
every node's cache mode in one paint: 10,000 calls into Qt, 20-25 ms of the palette add's
longest gap at 10,000 nodes and 40 ms at 20,000 (issue 32). The nodes in view are set at
once (they are painted now); the others a chunk per timer turn. A node still in the old
mode draws the same, only from or without its pixmap.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QRectF, QTimer
from PySide6.QtWidgets import QGraphicsItem

from hexscope.widgets.graph_canvas.node_item import NodeItem

if TYPE_CHECKING:
    from hexscope.widgets.graph_canvas.scene import GraphScene

CHUNK = 2000            # nodes a timer turn


class CacheModes(QObject):
    """Sets a scene's nodes to one cache mode, those in ``first`` at once."""

    def __init__(self, scene: GraphScene) -> None:
        super().__init__(scene)
        self._scene = scene
        self._left: Iterator[NodeItem] = iter(())
        self._mode = QGraphicsItem.CacheMode.NoCache
        self._timer = QTimer(self, singleShot=True, interval=1)
        self._timer.timeout.connect(self._chunk)

    @property
    def busy(self) -> bool:
        return self._timer.isActive()

    def start(self, mode: QGraphicsItem.CacheMode, first: QRectF | None) -> None:
        self._mode = mode
        self._left = iter(list(self._scene.items_by_id.values()))
        self._timer.start()
        self.in_view(first)

    def in_view(self, rect: QRectF | None) -> None:
        """Set the nodes in ``rect`` now (about to be painted), if some are left."""
        if rect is None or not self.busy:
            return
        for item in self._scene.items(rect):
            if isinstance(item, NodeItem) and item.cacheMode() != self._mode:
                item.setCacheMode(self._mode)

    def _chunk(self) -> None:
        for k, item in enumerate(self._left, 1):
            if item.scene() is self._scene and item.cacheMode() != self._mode:
                item.setCacheMode(self._mode)
            if k >= CHUNK:
                self._timer.start()
                return
