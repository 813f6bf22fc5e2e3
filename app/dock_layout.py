"""Where the main window's docks go and how big they are: added beside their area's tab
group, sized so the canvas keeps most of the window, grown when a data view needs room, and
restored as the user left them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import QDockWidget, QScrollArea, QWidget

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

DOCK = Qt.DockWidgetArea
BOTTOM_SHARE, BOTTOM_MIN = 1 / 6, 120     # the bottom dock area's default height
VIEW_SHARE, VIEW_MIN = 0.45, 300          # its height while a data view (a picture) is shown


def add_dock(w: MainWindow, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
    dock = QDockWidget(title, w)
    dock.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
    hint = widget.minimumSizeHint()
    tall = BOTTOM_MIN - 20 if area == DOCK.BottomDockWidgetArea else 160
    if (hasattr(w, "view_menu") and (hint.height() > tall or hint.width() > 420)) \
            or widget is getattr(w, "inspector", None):
        # A tall or wide panel scrolls rather than forcing the window (or the bottom dock
        # area, which the canvas shares) to grow; the inspector's list of ports can be
        # longer than its dock.
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(widget)
        dock.setWidget(scroll)
    else:
        dock.setWidget(widget)
    w.addDockWidget(area, dock)
    # Docks added later (the views) join the tab group of their area, so the window keeps
    # its size instead of growing by each dock's minimum width.
    anchor = {DOCK.BottomDockWidgetArea: "timing_dock",
              DOCK.RightDockWidgetArea: "outputs_dock"}.get(area)
    if anchor and hasattr(w, anchor):
        w.tabifyDockWidget(getattr(w, anchor), dock)
    if hasattr(w, "view_menu"):
        w.view_menu.addAction(dock.toggleViewAction())
    return dock


def default_sizes(w: MainWindow) -> None:
    """Side docks at their usual widths; the bottom tabs get a sixth of the height, so the
    canvas keeps most of the window (a problems list of one line needs no more)."""
    # Wide enough for most op names; longer ones lose their middle, never their suffix, and
    # the canvas keeps its share.
    palette = min(max(220, w.palette.preferred_width()), 260)
    w.resizeDocks([w.palette_dock, w.inspector_dock], [palette, 310],
                  Qt.Orientation.Horizontal)
    bottom = max(BOTTOM_MIN, int(w.height() * BOTTOM_SHARE))
    w.resizeDocks([w.problems_dock], [bottom], Qt.Orientation.Vertical)
    # The inspector (ports of the selected node) above the outputs: about half each.
    side = w.height() - bottom
    w.resizeDocks([w.inspector_dock, w.outputs_dock],
                  [int(side * 0.42), int(side * 0.58)], Qt.Orientation.Vertical)


def make_room_for(w: MainWindow, dock: QDockWidget, share: float = VIEW_SHARE) -> None:
    """Give a bottom dock at least ``share`` of the window's height (never shrinks it: a
    height the user dragged to stays)."""
    if w.dockWidgetArea(dock) != DOCK.BottomDockWidgetArea or not w.isVisible():
        return
    want = max(VIEW_MIN, int(w.height() * share))
    if dock.height() < want:
        w.resizeDocks([dock], [want], Qt.Orientation.Vertical)


def restore(w: MainWindow, saved: tuple[QByteArray | None, QByteArray | None],
            version: int) -> bool:
    """The docks and size the user left at the last close; False when there is no usable
    dock state (one saved by another version of the window's docks is ignored: Qt checks
    the version)."""
    geometry, state = saved
    restored = state is not None and w.restoreState(state, version)
    if geometry is not None:
        w.restoreGeometry(geometry)
    return bool(restored)


__all__ = ["add_dock", "default_sizes", "make_room_for", "restore"]
