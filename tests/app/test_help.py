"""Help: the shortcuts page lists every key the menus have; About names the versions."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from hexscope.app.help_actions import shortcut_rows, versions


def test_the_shortcuts_page_lists_every_menu_key(qtbot, window):
    keys = {a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            for menu in window.menuBar().actions() if menu.menu() is not None
            for a in menu.menu().actions() if not a.shortcut().isEmpty()}
    listed = {k for _, _, ks in shortcut_rows(window) for k in ks.split(", ")}
    assert keys <= listed
    assert {"F5", "F10", "F9", "Ctrl+F10", "Shift+F5", "Ctrl+Z", "Del"} <= listed
    window.help.shortcuts.trigger()
    text = window.help.dialog.text.toPlainText()
    assert "Run to selected" in text and "Ctrl+F10" in text and "Ctrl+/" in text


def test_about_names_the_versions_that_run():
    names = dict(versions())
    assert set(names) >= {"Hexscope", "Python", "Qt", "PySide6", "numpy"}
    assert names["Hexscope"] != "not installed"


def test_the_window_carries_the_shipped_icon(qtbot, window):
    from hexscope.app.app_icon import SIZES

    icon = window.windowIcon()
    assert not icon.isNull()
    got = {s.width() for s in icon.availableSizes()}
    assert got == set(SIZES)
    # Drawn, not blank: inside the hexagon, under its top corner, is opaque; a corner of the
    # square image is outside the hexagon, transparent.
    image = icon.pixmap(64, 64).toImage()
    assert image.pixelColor(32, 8).alpha() == 255
    assert image.pixelColor(2, 2).alpha() == 0


def test_the_shipped_icon_is_what_make_icon_draws():
    """packaging/make_icon.py is the icon's source: the SVG in resources is its output."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).parents[2]
    spec = importlib.util.spec_from_file_location("make_icon", root / "packaging" / "make_icon.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shipped = (root / "resources" / "icons" / "hexscope.svg").read_text(encoding="utf-8")
    assert shipped == module.icon_svg()


def test_the_shortcuts_page_and_the_guide_state_the_run_rules(qtbot, window):
    from pathlib import Path

    window.help.shortcuts.trigger()
    text = " ".join(window.help.dialog.text.toPlainText().split())
    assert "stops before that node, as a breakpoint does" in text
    assert "accepted during a run" in text
    guide = (Path(__file__).parents[2] / "docs" / "guide.md").read_text(encoding="utf-8")
    assert "**Stops are before a node.**" in guide
    assert "**Edits are accepted during a run**" in guide
