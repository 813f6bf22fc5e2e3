"""Help ▸ About lists the plugins loaded, with their ops (issue 33): their code runs in the
app, so the user can see whose."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from hexscope.engine.plugins import bundled_plugin_dir, load_standard_plugins, unload_plugin


def test_about_lists_the_loaded_plugins(qtbot, window, monkeypatch):
    # what the app does at start (bundled: peek_left.py); left registered, a later test's
    # own load of the bundled plugins found its op declared already
    specs = load_standard_plugins([])
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append(text))
    try:
        window.help.about.trigger()
    finally:
        unload_plugin(specs)
    (text,) = shown
    assert "Plugins loaded (their Python code runs in Hexscope)" in text
    assert f"{(bundled_plugin_dir() / 'peek_left.py').resolve()}: PeekLeft_8_d32" in text
