"""The status bar elides a long message before its permanent widgets, keeping the whole text."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QMainWindow, QStatusBar

from hexscope.widgets.status_bar import ElidingStatusBar


def test_a_long_message_ends_in_an_ellipsis_before_the_permanent_widgets(qtbot):
    window = QMainWindow()
    qtbot.addWidget(window)
    bar = ElidingStatusBar(window)
    window.setStatusBar(bar)
    label = QLabel("8 node(s) ran · 27.06 ms")
    bar.addPermanentWidget(label)
    window.resize(500, 300)
    window.show()
    qtbot.waitExposed(window)
    long = "The device ran the graph up to 0x10028 (device run 4); " * 3
    bar.showMessage(long, 5000)
    assert bar.currentMessage() == long and bar.toolTip() == long
    shown = super(ElidingStatusBar, bar).currentMessage()
    assert shown.endswith("…") and len(shown) < len(long)
    assert bar.fontMetrics().horizontalAdvance(shown) <= label.x()
    label.setText(label.text() + " · device: 1,334,773 agent ns")    # it grows after
    qtbot.waitUntil(lambda: bar.fontMetrics().horizontalAdvance(
        super(ElidingStatusBar, bar).currentMessage()) <= label.x())
    assert bar.currentMessage() == long
    bar.showMessage("short")
    assert super(ElidingStatusBar, bar).currentMessage() == "short" and bar.toolTip() == ""
    bar.clearMessage()
    assert bar.currentMessage() == ""
    # a message Qt shows itself (a menu's status tip) is what currentMessage() reports
    QStatusBar.showMessage(bar, "Open a graph file")
    assert bar.currentMessage() == "Open a graph file"
