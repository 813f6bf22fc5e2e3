"""Light and dark themes: System (follow the desktop's colour scheme), Light or Dark.

Qt reports the desktop's scheme through ``QStyleHints.colorScheme`` (and signals a change
while the app runs). Hexscope draws with the Fusion style and an explicit palette for either
scheme, so both look the same on every desktop and in the bundle; the widgets' own colours
follow the palette (hexscope.widgets.theme_colors).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMenu

from hexscope.widgets.theme_colors import is_dark, restyle_error_texts

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

Role, Group = QPalette.ColorRole, QPalette.ColorGroup


class Theme(Enum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


def system_is_dark() -> bool:
    """Whether the desktop asks for a dark scheme (Unknown, e.g. no desktop: light)."""
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def wants_dark(theme: Theme) -> bool:
    return theme is Theme.DARK or (theme is Theme.SYSTEM and system_is_dark())


def _palette(colors: dict[Role, str], disabled: str) -> QPalette:
    palette = QPalette()
    for role, value in colors.items():
        palette.setColor(role, QColor(value))
    for role in (Role.WindowText, Role.Text, Role.ButtonText):
        palette.setColor(Group.Disabled, role, QColor(disabled))
    return palette


def light_palette() -> QPalette:
    return _palette({
        Role.Window: "#efefef", Role.WindowText: "#1e1e1e", Role.Base: "#ffffff",
        Role.AlternateBase: "#f4f5f7", Role.Text: "#1e1e1e", Role.Button: "#efefef",
        Role.ButtonText: "#1e1e1e", Role.BrightText: "#ffffff", Role.Light: "#ffffff",
        Role.Midlight: "#e3e3e3", Role.Mid: "#b8b8b8", Role.Dark: "#9f9f9f",
        Role.Shadow: "#767676", Role.Highlight: "#2a6fb0", Role.HighlightedText: "#ffffff",
        Role.Link: "#0b5394", Role.LinkVisited: "#6a3d9a", Role.ToolTipBase: "#ffffdc",
        Role.ToolTipText: "#1e1e1e", Role.PlaceholderText: "#767676",
    }, disabled="#9a9a9a")


def dark_palette() -> QPalette:
    return _palette({
        Role.Window: "#2b2e33", Role.WindowText: "#e4e6ea", Role.Base: "#1f2226",
        Role.AlternateBase: "#272b30", Role.Text: "#e4e6ea", Role.Button: "#353940",
        Role.ButtonText: "#e4e6ea", Role.BrightText: "#ffffff", Role.Light: "#4a4f57",
        Role.Midlight: "#3e434a", Role.Mid: "#2a2d32", Role.Dark: "#1a1c20",
        Role.Shadow: "#0d0e10", Role.Highlight: "#2f66ad", Role.HighlightedText: "#ffffff",
        Role.Link: "#8cc4ff", Role.LinkVisited: "#c5a3ff", Role.ToolTipBase: "#353940",
        Role.ToolTipText: "#e4e6ea", Role.PlaceholderText: "#8a919b",
    }, disabled="#767b83")


class _State:
    choice: Theme | None = None
    applied: bool | None = None      # dark? (None: no palette set yet)
    listening = False


def apply_theme(theme: Theme) -> bool:
    """Give the application the palette ``theme`` asks for; returns whether it is dark.

    With SYSTEM it follows later changes of the desktop's scheme too."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return False
    _State.choice = theme
    hints = QGuiApplication.styleHints()
    # Qt 6.8+: tell the platform too (window decorations); System hands it back.
    if theme is Theme.SYSTEM and hasattr(hints, "unsetColorScheme"):
        hints.unsetColorScheme()
    elif theme is not Theme.SYSTEM and hasattr(hints, "setColorScheme"):
        hints.setColorScheme(Qt.ColorScheme.Dark if theme is Theme.DARK
                             else Qt.ColorScheme.Light)
    if not _State.listening:
        hints.colorSchemeChanged.connect(_scheme_changed)
        _State.listening = True
    dark = wants_dark(theme)
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    # Setting a palette repaints every widget: only when it changes.
    if dark != _State.applied or dark != is_dark(app.palette()):
        app.setPalette(dark_palette() if dark else light_palette())
        restyle_error_texts(app.allWidgets())
        _State.applied = dark
    return dark


def _scheme_changed(_scheme: Qt.ColorScheme) -> None:
    if _State.choice is Theme.SYSTEM:
        apply_theme(Theme.SYSTEM)


def add_theme_menu(window: MainWindow, menu: QMenu) -> dict[Theme, QAction]:
    """View ▸ Theme: System / Light / Dark, saved in the window's settings and applied now."""
    sub = menu.addMenu("&Theme")
    group = QActionGroup(window)
    actions = {}
    for theme, text in ((Theme.SYSTEM, "Follow the &system"), (Theme.LIGHT, "&Light"),
                        (Theme.DARK, "&Dark")):
        action = QAction(text, window, checkable=True)
        action.setData(theme.value)
        action.triggered.connect(lambda _=False, t=theme: _choose(window, t))
        group.addAction(action)
        sub.addAction(action)
        actions[theme] = action
    saved = Theme(window.settings.theme())
    actions[saved].setChecked(True)
    apply_theme(saved)
    return actions


def _choose(window: MainWindow, theme: Theme) -> None:
    window.settings.set_theme(theme.value)
    dark = apply_theme(theme)
    shade = "dark" if dark else "light"
    text = f"following the system ({shade})" if theme is Theme.SYSTEM else shade
    window.statusBar().showMessage(f"Theme: {text}", 5000)


__all__ = ["Theme", "add_theme_menu", "apply_theme", "dark_palette", "light_palette",
           "system_is_dark", "wants_dark"]
