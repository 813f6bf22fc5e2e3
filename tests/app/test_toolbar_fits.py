"""At 1024x700 the everyday debug actions are buttons in sight, not behind the toolbar's »
extension button (issue 32: Restart, Stop and Inputs were hidden there)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QToolBar

EVERYDAY = ("run", "step", "run_to", "breakpoint", "restart", "stop", "inputs")


@pytest.mark.parametrize("size", [(1024, 700), (1280, 800)])
def test_the_everyday_actions_are_visible_buttons(qtbot, window, size):
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    bar = window.debug.toolbar
    hidden = [key for key in EVERYDAY
              if not (bar.widgetForAction(window.debug.actions[key]) is not None
                      and bar.widgetForAction(window.debug.actions[key]).isVisible())]
    assert hidden == []
    assert bar.geometry().right() < window.width()
    view_bar = window.findChild(QToolBar, "view-toolbar")
    assert bar.geometry().x() < view_bar.geometry().x()        # the debug actions first


def test_short_button_labels_keep_the_full_name_in_the_menu_and_tooltip(window):
    assert window.show_consts.iconText() == "Consts"
    assert window.show_consts.text().replace("&", "") == "Show consts as nodes"
    assert window.show_consts.toolTip() == "Show consts as nodes"
