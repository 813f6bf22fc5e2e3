"""A status bar whose messages end in an ellipsis where they meet the permanent widgets.

QStatusBar clips a long message under its permanent widgets (the run total, the device
indicator) mid-letter, so "…returned node by node" read "returne8 node(s) ran". The message
shown is elided to the room left, again whenever the bar or one of its widgets changes size
(the run total grows after the message is shown); the whole text stays in ``currentMessage()``
and the tooltip.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QStatusBar, QWidget

#: room kept between the message and the first permanent widget
_MARGIN = 16


class ElidingStatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self._shown = ""                         # the (elided) text this class last showed
        self._until: float | None = None        # when the message's timeout ends
        self.messageChanged.connect(self._on_changed)

    def showMessage(self, text: str, timeout: int = 0) -> None:  # noqa: N802
        self._full = text
        self._until = time.monotonic() + timeout / 1000 if timeout > 0 else None
        self._show(timeout)

    def currentMessage(self) -> str:  # noqa: N802
        return self._full if super().currentMessage() else ""

    def addPermanentWidget(self, widget: QWidget, stretch: int = 0) -> None:  # noqa: N802
        super().addPermanentWidget(widget, stretch)
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Move, QEvent.Type.Show,
                            QEvent.Type.Hide):
            self._reflow()
        return False

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._reflow()

    def _reflow(self) -> None:
        if not self._full or not super().currentMessage():
            return
        left = 0
        if self._until is not None:
            left = int((self._until - time.monotonic()) * 1000)
            if left <= 0:
                return                           # about to time out
        self._show(left)

    def _show(self, timeout: int) -> None:
        shown = self._elided(self._full)
        if shown != super().currentMessage():
            self._shown = shown
            super().showMessage(shown, timeout)
        self.setToolTip(self._full if shown != self._full else "")

    def _on_changed(self, text: str) -> None:
        if text != self._shown:          # cleared, timed out, or shown by Qt (a status tip)
            self._full, self._shown, self._until = text, text, None
            self.setToolTip("")

    def _room(self) -> int:
        left = [w.x() for w in self.findChildren(QWidget)
                if w.parent() is self and w.isVisible() and w.x() > self.width() // 3]
        return max(40, min(left, default=self.width()) - _MARGIN)

    def _elided(self, text: str) -> str:
        return self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, self._room())
