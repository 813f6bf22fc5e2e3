"""View > Layout direction: left to right (long graphs wrap into bands) or top to bottom.

The choice is kept in the settings and used by every layout the app makes: Auto layout, and
a graph opened without positions. Choosing it lays the open graph out again at once, as one
undo step ("lay out top to bottom"): the user sees what the choice does, and Undo gives back
positions placed by hand. The file keeps the positions, so the change also makes the
document modified, like any other move.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu

from hexscope.widgets.graph_canvas.layout import LEFT_TO_RIGHT, TOP_TO_BOTTOM

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

CHOICES = (
    (LEFT_TO_RIGHT, "&Left to right", "left to right"),
    (TOP_TO_BOTTOM, "&Top to bottom", "top to bottom"),
)


class LayoutActions:
    """The exclusive direction actions, in a submenu of ``menu``."""

    def __init__(self, window: MainWindow, menu: QMenu) -> None:
        self.w = window
        self.group = QActionGroup(window)
        self.group.setExclusive(True)
        submenu = menu.addMenu("Layout &direction")
        self.actions: dict[str, QAction] = {}
        for direction, text, _ in CHOICES:
            action = QAction(text, window, checkable=True)
            action.setData(direction)
            action.setToolTip(f"Lay graphs out {text.replace('&', '').lower()}; "
                              "long ones wrap to fit the view")
            self.group.addAction(action)
            submenu.addAction(action)
            self.actions[direction] = action
        current = window.settings.layout_direction()
        self.actions[current].setChecked(True)
        window.scene.direction = current
        self.group.triggered.connect(self._chosen)

    def direction(self) -> str:
        """The chosen direction."""
        return str(self.group.checkedAction().data())

    def _chosen(self, action: QAction) -> None:
        direction = str(action.data())
        if direction == self.w.scene.direction:
            return                      # the current one again: nothing to change
        self.w.settings.set_layout_direction(direction)
        self.w.scene.direction = direction
        if self.w.scene.items_by_id:
            words = next(words for d, _, words in CHOICES if d == direction)
            self.w.edits.auto_layout(text=f"lay out {words}")
