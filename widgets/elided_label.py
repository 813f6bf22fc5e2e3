"""A one-line label that elides its text to the width it is given.

A plain QLabel asks for its whole text's width: a long read-out under a picture ("float32
1x6x7x40  (hover for values)") widened its view past the room a dock had, and the dock
showed scroll bars instead of the picture."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """``text()`` stays whole; what does not fit is drawn elided at its end, the whole text
    in the tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(False)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    @property
    def elided(self) -> bool:
        """Whether the text is drawn cut short (it does not fit the label's width)."""
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        elided = self.elided
        tip = self.text() if elided else ""
        if self.toolTip() != tip:
            self.setToolTip(tip)
        if not elided:
            super().paintEvent(event)       # (a selection by mouse drawn as QLabel draws it)
            return
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight,
                                              rect.width())
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, int(self.alignment()), shown)
        painter.end()
