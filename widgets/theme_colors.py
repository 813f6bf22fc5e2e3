"""The colours the widgets paint themselves, for a light and a dark palette.

Widgets never hard-code a text or background colour that must contrast with the palette:
they ask :func:`theme_colors`, which picks the set that matches the application's palette
(the app switches palettes for its light and dark themes; see hexscope.app.theme). The
category colours of the nodes' headers carry white text and read on both sets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QWidget


@dataclass(frozen=True, slots=True)
class ThemeColors:
    """One consistent set; every text colour has at least 4.5:1 contrast on its ground."""

    dark: bool
    canvas: QColor          # the graph canvas's background
    grid: QColor            # its dot grid
    hint: QColor            # text on the empty canvas
    body: QColor            # a node's port area
    body_text: QColor       # port names on it
    folded_text: QColor     # a const value folded onto a port
    muted: QColor           # the "+" port, dashed outlines, fused/removed tags
    port: QColor            # a connected port's dot and its rim
    port_hollow: QColor     # an unconnected port's dot
    outline: QColor         # a node's outline when nothing marks it
    edge: QColor
    halo: QColor            # drawn under an edge where it crosses others
    minimap: QColor
    minimap_frame: QColor
    selection: QColor
    error_text: QColor      # list and label text on the palette's base
    warning_text: QColor
    faint_text: QColor      # log lines of low importance


LIGHT = ThemeColors(
    dark=False, canvas=QColor("#eceef1"), grid=QColor("#d3d7de"), hint=QColor("#5f6878"),
    body=QColor("#f7f7f4"), body_text=QColor("#333333"), folded_text=QColor("#0b5394"),
    muted=QColor("#767676"), port=QColor("#444444"), port_hollow=QColor("#ffffff"),
    outline=QColor("#555555"), edge=QColor("#6b7a8f"), halo=QColor(255, 255, 255, 230),
    minimap=QColor(255, 255, 255, 225), minimap_frame=QColor("#8a93a3"),
    selection=QColor("#1f78d1"), error_text=QColor("#c1121f"), warning_text=QColor("#8a5a00"),
    faint_text=QColor("#666666"),
)

DARK = ThemeColors(
    dark=True, canvas=QColor("#1e2227"), grid=QColor("#353b44"), hint=QColor("#a4adbb"),
    body=QColor("#2d3239"), body_text=QColor("#e4e6ea"), folded_text=QColor("#8cc4ff"),
    muted=QColor("#9aa1ab"), port=QColor("#c9ced6"), port_hollow=QColor("#2d3239"),
    outline=QColor("#8a93a3"), edge=QColor("#8d9bb0"), halo=QColor(30, 34, 39, 230),
    minimap=QColor(37, 41, 47, 230), minimap_frame=QColor("#5c6573"),
    selection=QColor("#4da3ff"), error_text=QColor("#ff7b7b"), warning_text=QColor("#f0b84a"),
    faint_text=QColor("#a0a0a0"),
)

def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio of two opaque colours (1 to 21)."""
    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return (0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF())
                + 0.0722 * channel(c.blueF()))
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


_WHITE, _INK = QColor("#ffffff"), QColor("#1a1a1a")


def ink_on(ground: QColor) -> QColor:
    """White or near-black, whichever reads better on ``ground`` (tags, blocks)."""
    return _WHITE if contrast(_WHITE, ground) >= contrast(_INK, ground) else _INK


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether ``palette`` (default: the application's) has a dark window colour."""
    palette = palette if palette is not None else QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def theme_colors(palette: QPalette | None = None) -> ThemeColors:
    """The set for ``palette`` (default: the application's)."""
    if palette is not None:
        return DARK if is_dark(palette) else LIGHT
    return DARK if _application_is_dark() else LIGHT


class _Application:
    """Whether the application's palette is dark, kept until it changes: every node and
    edge painted asks (23,000 times at the end of a 5,000-node run, 8 us each)."""

    dark: bool | None = None
    watching: object = None        # the application whose paletteChanged clears ``dark``


def _application_is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return is_dark()
    if _Application.watching is not app:
        app.paletteChanged.connect(_palette_changed)
        _Application.watching, _Application.dark = app, None
    if _Application.dark is None:
        _Application.dark = is_dark()
    return _Application.dark


def _palette_changed(_palette: QPalette) -> None:
    _Application.dark = None




ERROR_TEXT = "hexscopeErrorText"     # a widget property: its text is an error message


def mark_error_text(widget: QWidget) -> None:
    """Show ``widget``'s text in the theme's error colour, now and after a theme switch
    (the app calls :func:`restyle_error_texts` when it changes the palette)."""
    widget.setProperty(ERROR_TEXT, True)
    widget.setStyleSheet(f"color: {theme_colors().error_text.name()}")


def restyle_error_texts(widgets: Iterable[QWidget]) -> None:
    for widget in widgets:
        if widget.property(ERROR_TEXT):
            widget.setStyleSheet(f"color: {theme_colors().error_text.name()}")


__all__ = ["DARK", "LIGHT", "ThemeColors", "contrast", "ink_on", "is_dark", "mark_error_text",
           "restyle_error_texts", "theme_colors"]
