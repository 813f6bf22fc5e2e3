"""Both colour sets keep every text legible (WCAG 2 contrast) on the ground it is drawn on."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from hexscope.app.theme import dark_palette, light_palette
from hexscope.widgets.graph_canvas.node_item import CATEGORY_COLORS, STATUS_COLORS
from hexscope.widgets.theme_colors import DARK, LIGHT, contrast, ink_on, is_dark, theme_colors

TEXT = 4.5          # WCAG AA for normal text
MARKS = 3.0         # WCAG AA for graphics (ports, grid is decoration and not checked)


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_theme_colors_text_is_legible_on_its_ground(colors):
    palette = dark_palette() if colors.dark else light_palette()
    base = palette.color(palette.ColorRole.Base)
    assert contrast(colors.body_text, colors.body) >= TEXT
    assert contrast(colors.folded_text, colors.body) >= TEXT
    assert contrast(colors.hint, colors.canvas) >= TEXT
    tooltip = palette.color(palette.ColorRole.ToolTipBase)
    for text in (colors.error_text, colors.warning_text, colors.faint_text):
        assert contrast(text, base) >= TEXT, text.name()
    for text in (colors.error_text, colors.warning_text):       # node tooltips
        assert contrast(text, tooltip) >= TEXT, text.name()
    assert contrast(colors.port, colors.body) >= MARKS
    assert contrast(colors.edge, colors.canvas) >= MARKS
    assert contrast(colors.selection, colors.canvas) >= MARKS
    assert contrast(colors.muted, colors.body) >= MARKS


@pytest.mark.parametrize("palette", [light_palette, dark_palette], ids=["light", "dark"])
def test_the_palettes_text_roles_are_legible(palette):
    p = palette()
    roles = p.ColorRole
    for text, ground in ((roles.WindowText, roles.Window), (roles.Text, roles.Base),
                         (roles.ButtonText, roles.Button), (roles.Text, roles.AlternateBase),
                         (roles.HighlightedText, roles.Highlight), (roles.Link, roles.Base),
                         (roles.ToolTipText, roles.ToolTipBase)):
        assert contrast(p.color(text), p.color(ground)) >= TEXT, (text, ground)
    assert is_dark(p) is (palette is dark_palette)
    assert theme_colors(p) is (DARK if palette is dark_palette else LIGHT)


def test_node_headers_carry_legible_white_text():
    # The header colours are the same in both themes: white op names on them.
    for category, color in CATEGORY_COLORS.items():
        assert contrast(QColor("white"), QColor(color)) >= TEXT, category


def test_tags_pick_the_ink_that_reads():
    for status, color in STATUS_COLORS.items():
        assert contrast(ink_on(color), color) >= TEXT, status
    assert ink_on(QColor("#ff9f1c")) != QColor("white")     # the orange "next" tag
    assert ink_on(QColor("#1f78d1")) == QColor("white")


def test_the_application_set_follows_every_palette_change(qapp):
    # kept between paints (every node and edge asks), cleared when the palette changes
    before = qapp.palette()
    try:
        qapp.setPalette(dark_palette())
        assert theme_colors() is DARK and theme_colors() is DARK
        qapp.setPalette(light_palette())
        assert theme_colors() is LIGHT
        qapp.setPalette(dark_palette())
        assert theme_colors() is DARK
    finally:
        qapp.setPalette(before)
    assert theme_colors() is (DARK if is_dark(before) else LIGHT)
