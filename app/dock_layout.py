"""Where the main window's docks go and how big they are: added beside their area's tab
group, sized so the canvas keeps most of the window, grown when a data view needs room, and
restored as the user left them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QTabBar,
    QToolButton,
    QWidget,
)

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

DOCK = Qt.DockWidgetArea
BOTTOM_SHARE, BOTTOM_MIN = 1 / 6, 120     # the bottom dock area's default height
VIEW_SHARE, VIEW_MIN = 0.45, 300          # its height while a data view (a picture) is shown
ROOM_MAX_SHARE = 0.7                      # a view's panel may take up to this for its least


def add_dock(w: MainWindow, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
    dock = QDockWidget(title, w)
    dock.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
    hint = widget.minimumSizeHint()
    tall = BOTTOM_MIN - 20 if area == DOCK.BottomDockWidgetArea else 160
    side = area in (DOCK.LeftDockWidgetArea, DOCK.RightDockWidgetArea)
    if (hasattr(w, "view_menu") and (hint.height() > tall or hint.width() > 420)) or side:
        # A tall or wide panel scrolls rather than forcing the window (or the bottom dock
        # area, which the canvas shares) to grow. A side panel always scrolls: what it shows
        # (the inspector's ports, a node's outputs and kept state) must not set its dock's
        # least height, or the bottom docks' separator could not be dragged up past it.
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
    dock.topLevelChanged.connect(lambda floating: _frame_floating(dock, floating))
    return dock


class FloatingTitle(QWidget):
    """The title bar of a floated dock, drawn by Qt rather than left to a window manager
    (without one, or with one that skips tool windows, a floated dock had no frame, title
    or buttons). Dragging it moves the window; double-clicking it docks it back."""

    def __init__(self, dock: QDockWidget) -> None:
        super().__init__(dock)
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 3, 3, 3)
        self.label = QLabel(f"<b>{dock.windowTitle()}</b>")
        # presses go to the dock, which moves its window (a rich-text label kept them)
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        row.addWidget(self.label, 1)
        for text, tip, slot in (("⇲", "Dock it back", lambda: dock.setFloating(False)),
                                ("✕", "Close (View menu shows it again)", dock.close)):
            button = QToolButton()
            button.setText(text)
            button.setToolTip(tip)
            button.setAutoRaise(True)
            button.clicked.connect(slot)
            row.addWidget(button)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.Mid)


def _frame_floating(dock: QDockWidget, floating: bool) -> None:
    if floating and not isinstance(dock.titleBarWidget(), FloatingTitle):
        dock.setTitleBarWidget(FloatingTitle(dock))
    elif not floating and dock.titleBarWidget() is not None:
        old = dock.titleBarWidget()
        dock.setTitleBarWidget(None)        # docked: the area's usual title and buttons
        old.deleteLater()


def fit_to_screen(w: MainWindow, size: tuple[int, int] = (1280, 800)) -> None:
    """Open at ``size``, or at the screen's free area where that is smaller (a 1024x700
    screen got a 1280x800 window whose right and bottom docks were off screen)."""
    width, height = size
    free = screen_free_area(w)
    if free is not None:
        width, height = min(width, free.width()), min(height, free.height())
    w.resize(width, height)


def screen_free_area(w: QWidget) -> QSize | None:
    """The free area of the window's screen; None offscreen, whose screen is a nominal
    800x800 (tests and ``--self-test`` size their windows themselves)."""
    if QGuiApplication.platformName() == "offscreen":
        return None
    screen = w.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry().size() if screen is not None else None


def default_sizes(w: MainWindow) -> None:
    """Side docks at their usual widths; the bottom tabs get a sixth of the height, so the
    canvas keeps most of the window (a problems list of one line needs no more)."""
    # Wide enough for most op names; longer ones lose their middle, never their suffix, and
    # the canvas keeps its share.
    # On a small screen (1024 wide) the side docks give way, so the canvas keeps over half
    # the width and a graph opens at a zoom where its blocks carry names.
    palette = min(max(220, w.palette.preferred_width()), 260, int(w.width() * 0.2))
    inspector = min(310, int(w.width() * 0.25))
    w.resizeDocks([w.palette_dock, w.inspector_dock], [palette, inspector],
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
    # and at least what its panel needs to show all it has at its least (the Compare
    # panel's pictures: 45 % of a 700-px window left them ~60 px), up to ROOM_MAX_SHARE
    need = least_height(dock)
    want = max(VIEW_MIN, int(w.height() * share), min(need, int(w.height() * ROOM_MAX_SHARE)))
    if dock.height() < want:
        # the size given is the area's: the tab bar of tabbed docks comes out of it
        w.resizeDocks([dock], [want + _tab_bar_height(w, dock)], Qt.Orientation.Vertical)


def _tab_bar_height(w: MainWindow, dock: QDockWidget) -> int:
    """The height of the tab bar ``dock`` is a tab of (0 when it is not tabbed)."""
    if not w.tabifiedDockWidgets(dock):
        return 0
    title = dock.windowTitle()
    for bar in w.findChildren(QTabBar):
        if bar.isVisible() and any(bar.tabText(k) == title for k in range(bar.count())):
            return bar.sizeHint().height()
    return 0


def least_height(dock: QDockWidget) -> int:
    """The height ``dock`` needs to show its panel without scrolling, at the panel's least
    sizes (its title bar included): the panel's height for its width where it has one (a
    word-wrapped panel), its least size hint otherwise."""
    content = dock.widget()
    if content is None:
        return 0
    panel = content.widget() if isinstance(content, QScrollArea) else content
    if panel is None:
        return 0
    width = max(content.width(), dock.width(), 1)
    inner = panel.heightForWidth(width) if panel.hasHeightForWidth() else -1
    if inner < 0:
        inner = panel.minimumSizeHint().height()
    title = max(0, dock.height() - content.height()) if dock.isVisible() else 24
    return inner + title


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


__all__ = ["FloatingTitle", "add_dock", "default_sizes", "fit_to_screen", "least_height",
           "make_room_for", "restore", "screen_free_area"]
