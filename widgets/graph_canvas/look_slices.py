"""Many nodes' looks set a slice at a time between events, not all in one turn.

Compare's canvas colours at 10,000 nodes set every node's overlay in one call: 120-200 ms
of the GUI thread in one turn of the event loop (issue 32). A ``LookSlices`` takes the
looks to set and sets them in slices of at most ``SLICE_S`` seconds and ``SLICE_NODES``
nodes, one slice per timer turn, so that paints and input come between. A new batch
replaces the one in progress (looks are absolute: the latest wins); a small batch is set
at once, as before, so that a small graph shows it in the same turn.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

from PySide6.QtCore import QObject, QTimer

from hexscope.widgets.event_turns import gated
from hexscope.widgets.graph_canvas.scene import GraphScene

AT_ONCE = 2000          # batches below this many nodes: set in the caller's turn
SLICE_S = 0.015         # a slice's time at most
SLICE_NODES = 2500      # ... and its nodes at most (a look that changes costs ~20 us)

Look = tuple[int, dict[str, object]]


class LookSlices(QObject):
    """One chain of slices setting looks on a scene."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._looks: Iterator[Look] = iter(())
        self._scene: GraphScene | None = None
        self._timer = QTimer(self, singleShot=True, interval=1)
        self._timer.timeout.connect(gated(self._timer, lambda: self._slice()))
        self.slices = 0              # slices run so far (tests)

    @property
    def busy(self) -> bool:
        """True while looks remain to be set."""
        return self._timer.isActive()

    def set_looks(self, scene: GraphScene, looks: Iterable[Look], count: int) -> None:
        """Set ``looks`` (``count`` of them) on ``scene``: at once if few, else in slices
        (what a batch in progress had left is dropped)."""
        self._timer.stop()
        self._looks, self._scene = iter(()), None
        if count < AT_ONCE:
            for node_id, look in looks:
                scene.set_look(node_id, **look)
            return
        self._looks, self._scene = iter(looks), scene
        # a timer, not a posted call: Qt runs posted calls back to back before any timer
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._looks, self._scene = iter(()), None

    def _slice(self) -> None:
        scene = self._scene
        if scene is None:
            return
        self.slices += 1
        end = time.perf_counter() + SLICE_S
        for k, (node_id, look) in enumerate(self._looks, 1):
            scene.set_look(node_id, **look)
            if k >= SLICE_NODES or time.perf_counter() > end:
                self._timer.start()
                return
        self._scene = None
