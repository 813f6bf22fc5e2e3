"""Bottom docks reach a usable height at 1280x800 and 1024x700, and a floated dock has a
title bar of its own (issue 32: the views were squeezed to 20-100 px, a floated one had no
frame)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from hexscope.app.dock_layout import FloatingTitle

EXAMPLE = Path(__file__).parents[2] / "resources" / "examples" / "classic_quantized.hexgraph"
BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea
VIEWS = ("Tensor", "d32 padding", "FillPadding", "Ranges", "Compare")


def _dock(w, title: str) -> QDockWidget:
    return next(d for d in w.findChildren(QDockWidget) if d.windowTitle() == title)


@pytest.mark.parametrize("size", [(1280, 800), (1024, 700)])
def test_each_view_tab_opens_tall_and_drags_taller(qtbot, window, size):
    w = window
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    assert w.files.open_graph(str(EXAMPLE))
    w.default_dock_sizes()
    for title in VIEWS:
        dock = _dock(w, title)
        assert w.dockWidgetArea(dock) == BOTTOM
        w.problems_dock.raise_()
        w.resizeDocks([w.problems_dock], [120], Qt.Orientation.Vertical)
        qtbot.wait(10)
        dock.raise_()                         # the user clicks its tab
        qtbot.waitUntil(lambda d=dock: d.height() >= 0.4 * w.height(), timeout=2000)
        # and the separator goes further up: the canvas and side docks give way
        w.resizeDocks([dock], [int(w.height() * 0.62)], Qt.Orientation.Vertical)
        qtbot.wait(10)
        assert dock.height() >= 0.5 * w.height(), (title, dock.height())
        assert w.canvas.height() >= 120


@pytest.mark.parametrize("size", [(1280, 800), (1024, 700)])
def test_the_views_get_room_after_a_run_with_a_node_selected(qtbot, window, size):
    """With a node's outputs and kept state in the side docks, the d32 view still opens
    tall and drags taller (the side docks' contents had set their least height)."""
    w = window
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    assert w.files.open_graph(str(EXAMPLE.parent / "d32_pipeline.hexgraph"))
    w.default_dock_sizes()
    with qtbot.waitSignal(w.controller.idle, timeout=30000):
        w.debug.actions["run"].trigger()
    add = next(n.node_id for n in w.graph if n.op == "QuantizedAdd_8p8to8_d32")
    w.select_node(add)
    qtbot.wait(50)
    dock = _dock(w, "d32 padding")
    dock.raise_()
    qtbot.waitUntil(lambda: dock.height() >= 0.4 * w.height(), timeout=2000)
    w.resizeDocks([dock], [int(w.height() * 0.62)], Qt.Orientation.Vertical)
    qtbot.wait(10)
    assert dock.height() >= 0.5 * w.height()


def test_a_floated_dock_has_a_title_bar_that_docks_it_back(qtbot, window):
    w = window
    w.show()
    qtbot.waitExposed(w)
    dock = _dock(w, "Compare")
    dock.setFloating(True)
    qtbot.waitUntil(dock.isFloating)
    title = dock.titleBarWidget()
    assert isinstance(title, FloatingTitle) and title.isVisible()
    assert "Compare" in title.label.text() and title.height() >= 16
    assert dock.windowFlags() & Qt.WindowType.FramelessWindowHint   # Qt draws the frame
    # dragging the title (its name) moves the window
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest

    before = dock.pos()
    # the widget a press on the name reaches, as Qt routes it (a label that takes the
    # press keeps it from the dock: nothing moved under Xvfb)
    at = title.label.geometry().center()
    target = dock.childAt(title.mapTo(dock, at))
    start = target.mapFrom(title, at)
    QTest.mousePress(target, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for step in range(1, 8):
        QTest.mouseMove(target, start + QPoint(10 * step, 8 * step))
    QTest.mouseRelease(target, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       start + QPoint(70, 56))
    assert dock.isFloating() and dock.pos() != before
    dock.setFloating(False)
    qtbot.waitUntil(lambda: not dock.isFloating())
    assert dock.titleBarWidget() is None                          # the usual docked title


def test_the_window_opens_within_a_small_screen(qtbot, settings, monkeypatch):
    from PySide6.QtCore import QSize

    from hexscope.app import dock_layout
    from hexscope.app.main_window import MainWindow

    monkeypatch.setattr(dock_layout, "screen_free_area", lambda w: QSize(1024, 700))
    w = MainWindow(settings)
    qtbot.addWidget(w)
    try:
        assert (w.width(), w.height()) == (1024, 700)
        w.show()
        qtbot.waitExposed(w)
        # the side docks give way: the canvas keeps over half the width
        qtbot.waitUntil(lambda: w.canvas.width() >= 0.5 * w.width(), timeout=3000)
    finally:
        w.close()
        w.shutdown()
