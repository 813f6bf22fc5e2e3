"""View ▸ the zoom, consts, prepared-graph, layout and theme actions, the dock toggles, and the
View toolbar with the node search (moved out of main_window.py, which keeps the window's
state)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLineEdit

from hexscope.app.layout_actions import LayoutActions
from hexscope.app.side_by_side_actions import add_side_by_side_actions
from hexscope.app.theme import add_theme_menu

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow


def _shortcut_text(act: QAction) -> str:
    keys = act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    return f" ({keys})" if keys else ""


def build_view_menu(window: MainWindow) -> None:
    """Adds View's menu and toolbar to ``window`` and sets its view actions on it."""
    menu = window.menuBar().addMenu("&View")
    bar = window.addToolBar("View")
    bar.setObjectName("view-toolbar")
    fit = QAction("Zoom to &fit", window, shortcut=QKeySequence("Ctrl+0"))
    fit.triggered.connect(window.canvas.zoom_to_fit)
    zin = QAction("Zoom &in", window, shortcut=QKeySequence.StandardKey.ZoomIn)
    zin.triggered.connect(lambda: window.canvas.zoom_by(1.25))
    zout = QAction("Zoom &out", window, shortcut=QKeySequence.StandardKey.ZoomOut)
    zout.triggered.connect(lambda: window.canvas.zoom_by(0.8))
    window.show_consts = QAction("Show consts as &nodes", window, checkable=True)
    window.show_consts.toggled.connect(window.toggle_consts)
    window.show_prepared = QAction("Show &prepared graph", window, checkable=True)
    window.show_prepared.toggled.connect(lambda _: window.refresh_prepared())
    actual = QAction("Zoom to &100 %", window, shortcut=QKeySequence("Ctrl+1"))
    actual.triggered.connect(lambda: window.canvas.zoom_to(1.0))
    window.zoom_actual = actual
    window.show_minimap = QAction("&Minimap", window, checkable=True, checked=True,
                                  shortcut=QKeySequence("Ctrl+M"))
    window.show_minimap.toggled.connect(window.canvas.set_minimap_visible)
    menu.addActions([fit, actual, zin, zout, window.show_minimap])
    menu.addSeparator()
    menu.addActions([window.show_consts, window.show_prepared, window.edits.layout])
    add_side_by_side_actions(window, menu)
    window.layout_direction = LayoutActions(window, menu)
    menu.addSeparator()
    window.theme_actions = add_theme_menu(window, menu)
    menu.addSeparator()
    for dock in (window.palette_dock, window.inspector_dock, window.outputs_dock,
                 window.problems_dock, window.log_dock, window.timing_dock):
        menu.addAction(dock.toggleViewAction())
    window.view_menu = menu
    # Short labels on the buttons (the menus keep the full names, the tooltips say them):
    # at 1024x700 the two toolbars overflowed and hid Restart, Stop and Inputs.
    for act, short in ((fit, "Fit"), (window.edits.layout, "Layout"),
                       (window.show_consts, "Consts"), (window.show_prepared, "Prepared")):
        act.setIconText(short)
        act.setToolTip(act.text().replace("&", "") + _shortcut_text(act))
    bar.addActions([fit, window.edits.layout, window.show_consts, window.show_prepared])
    window.search = QLineEdit(placeholderText="Find node: id, label or op")
    window.search.setMaximumWidth(200)
    window.search.setClearButtonEnabled(True)
    window.search.returnPressed.connect(lambda: window.edits.find_next(window.search.text()))
    bar.addWidget(window.search)
    for act in (fit, actual, zin, zout, window.show_minimap):
        window.addAction(act)
