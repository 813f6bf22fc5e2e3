"""The one-line read-out under a picture: elided to its width, never widening its view."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from hexscope.widgets.elided_label import ElidedLabel


def test_a_long_text_does_not_widen_its_layout_and_is_elided(qtbot):
    text = "float32 1x6x7x40  (hover for values) " * 6
    plain, elided = QLabel(text), ElidedLabel(text)
    assert plain.minimumSizeHint().width() > 600        # what widened the pictures
    box = QWidget()
    QVBoxLayout(box).addWidget(elided)
    qtbot.addWidget(box)
    assert box.minimumSizeHint().width() < 100
    box.resize(200, 40)
    box.show()
    qtbot.waitExposed(box)
    assert elided.text() == text and elided.elided and elided.height() < 40
    qtbot.waitUntil(lambda: elided.toolTip() == text)   # the whole text on hover
    elided.setText("short")
    elided.repaint()
    assert not elided.elided and elided.toolTip() == ""
