"""View ▸ Theme: System / Light / Dark, saved in the settings; System follows the desktop."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from hexscope.app import theme as theme_module
from hexscope.app.main_window import MainWindow
from hexscope.app.theme import Theme, apply_theme
from hexscope.widgets.theme_colors import DARK, LIGHT, is_dark


@pytest.fixture(autouse=True)
def back_to_system():
    yield
    apply_theme(Theme.SYSTEM)       # the other tests run in the light palette


def test_choosing_dark_repaints_the_app_and_is_remembered(qtbot, window, settings):
    assert window.theme_actions[Theme.SYSTEM].isChecked()     # the default
    window.theme_actions[Theme.DARK].trigger()
    assert is_dark(QApplication.palette())
    assert settings.theme() == "dark"
    QApplication.processEvents()        # Qt posts the palette-change events
    assert window.canvas.backgroundBrush().color() == DARK.canvas
    # The problems list follows the palette: its text is the palette's, not a fixed black.
    assert window.problems.list.palette().color(
        window.problems.list.palette().ColorRole.Text).lightness() > 128

    again = MainWindow(settings)          # the next start keeps the choice
    qtbot.addWidget(again)
    assert again.theme_actions[Theme.DARK].isChecked()
    assert is_dark(QApplication.palette())
    again.shutdown()

    window.theme_actions[Theme.LIGHT].trigger()
    assert not is_dark(QApplication.palette())
    assert settings.theme() == "light"
    QApplication.processEvents()
    assert window.canvas.backgroundBrush().color() == LIGHT.canvas


def test_system_follows_the_desktop_scheme_while_running(qtbot, window, monkeypatch):
    window.theme_actions[Theme.SYSTEM].trigger()
    monkeypatch.setattr(theme_module, "system_is_dark", lambda: True)
    theme_module._scheme_changed(None)            # what colorSchemeChanged calls
    assert is_dark(QApplication.palette())
    monkeypatch.setattr(theme_module, "system_is_dark", lambda: False)
    theme_module._scheme_changed(None)
    assert not is_dark(QApplication.palette())
    # An explicit choice is not overridden by the desktop.
    window.theme_actions[Theme.DARK].trigger()
    theme_module._scheme_changed(None)
    assert is_dark(QApplication.palette())


def test_an_unknown_saved_theme_falls_back_to_system(settings):
    settings.qsettings.setValue("theme", "purple")
    assert settings.theme() == "system"


def test_error_labels_change_colour_with_the_theme(qtbot, window):
    from PySide6.QtWidgets import QLabel

    from hexscope.widgets.theme_colors import mark_error_text

    label = QLabel("bad input")
    qtbot.addWidget(label)
    mark_error_text(label)
    assert LIGHT.error_text.name() in label.styleSheet()
    window.theme_actions[Theme.DARK].trigger()
    assert DARK.error_text.name() in label.styleSheet()


def test_user_ops_in_the_palette_change_colour_with_the_theme(qtbot, window):
    from hexscope.engine.dtypes import DType
    from hexscope.engine.ops.registry import REGISTRY, Category, Port, op

    name = "ThemeTest_f"

    @op(name, Category.USER, user=True, inputs=(Port("x", DType.FLOAT32),),
        outputs=(Port("y", DType.FLOAT32),))
    def theme_test_f(ctx, x):
        """Passes its input on."""
        return [x.array]
    try:
        window.palette.populate()
        _check_user_colour(window, name)
    finally:
        REGISTRY.unregister(name)


def _check_user_colour(window, name):
    from hexscope.widgets.op_palette import DARK_USER_COLOR, NAME_ROLE, USER_COLOR

    def color():
        tree = window.palette.tree
        items = [tree.topLevelItem(g).child(k) for g in range(tree.topLevelItemCount())
                 for k in range(tree.topLevelItem(g).childCount())]
        item = next(i for i in items if i.data(0, NAME_ROLE) == name)
        return item.foreground(0).color()
    assert color() == USER_COLOR
    window.theme_actions[Theme.DARK].trigger()
    QApplication.processEvents()
    assert color() == DARK_USER_COLOR
