"""The run's progress in the status bar, drawn at most every 50 ms (issue 17's large graphs:
each repaint of the bar took ~0.6 ms, as long as a small node's work, at every node)."""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QProgressBar, QStatusBar

#: Seconds between two repaints; the latest node shows at the latest this long after it
#: started.
INTERVAL = 0.05


class RunProgress(QObject):
    """``show(k, n, node_id)`` at every node; ``hide()`` when the run ends."""

    def __init__(self, bar: QProgressBar, status: QStatusBar) -> None:
        super().__init__(bar)
        self.bar, self.status = bar, status
        self._shown = 0.0                   # when it last drew (monotonic s)
        self._next: tuple[int, int, int] | None = None
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(self._apply)

    def show(self, k: int, n: int, node_id: int) -> None:
        self._next = (k, n, node_id)
        wait = self._shown + INTERVAL - time.monotonic()
        if wait <= 0:
            self._apply()
        elif not self._timer.isActive():
            self._timer.start(max(1, int(wait * 1000)))

    def hide(self) -> None:
        self._timer.stop()
        self._next = None
        self.bar.hide()

    def _apply(self) -> None:
        if self._next is None:
            return
        k, n, node_id = self._next
        self._next = None
        self._shown = time.monotonic()
        self.bar.setMaximum(n)
        self.bar.setValue(k)
        self.bar.show()
        self.status.showMessage(f"Running 0x{node_id:x} (node {k} of {n})")


__all__ = ["RunProgress"]
