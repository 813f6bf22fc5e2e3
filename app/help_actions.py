"""Help menu: the user guide (from the installed files), the keyboard shortcuts (read from
the window's own actions, so the page cannot drift from the keys), the welcome page, and
About with the versions of what runs."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import TYPE_CHECKING

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QMessageBox, QTextBrowser, QVBoxLayout

from hexscope.widgets.guide_view import GuideView

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow


def shortcut_rows(window: MainWindow) -> list[tuple[str, str, str]]:
    """(menu, action, keys) for every action of the window's menus that has a shortcut."""
    rows = []
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if menu is None:
            continue
        for action in menu.actions():
            keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText)
                             for k in action.shortcuts())
            if keys:
                rows.append((menu_action.text().replace("&", ""),
                             action.text().replace("&", "").replace("…", ""), keys))
    return rows


def versions() -> list[tuple[str, str]]:
    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"
    return [("Hexscope", version("hexscope")), ("Python", platform.python_version()),
            ("Qt", qVersion()), ("PySide6", pyside_version), ("numpy", version("numpy")),
            ("networkx", version("networkx")), ("llvmlite", version("llvmlite"))]


class HelpActions:
    def __init__(self, window: MainWindow) -> None:
        self.w = window
        menu = window.menuBar().addMenu("&Help")
        self.guide = QAction("&User guide", window, shortcut=QKeySequence("F1"))
        self.guide.triggered.connect(self.show_guide)
        self.guide_view: GuideView | None = None
        self.shortcuts = QAction("&Keyboard shortcuts", window,
                                 shortcut=QKeySequence("Ctrl+/"))
        self.shortcuts.triggered.connect(self.show_shortcuts)
        self.welcome = QAction("&Welcome page", window)
        self.welcome.triggered.connect(window.show_welcome)
        self.about = QAction("&About Hexscope", window)
        self.about.triggered.connect(self.show_about)
        menu.addActions([self.guide, self.shortcuts, self.welcome, self.about])
        window.addAction(self.shortcuts)
        window.addAction(self.guide)
        self.dialog: QDialog | None = None

    def show_guide(self) -> None:
        """The guide shipped with the app (installed files; no network)."""
        if self.guide_view is None:
            self.guide_view = GuideView(self.w)
        try:
            self.guide_view.show_page()
        except OSError as exc:
            self.w.statusBar().showMessage(f"The user guide is not installed: {exc}", 10000)
            return
        self.guide_view.show()
        self.guide_view.raise_()

    def shortcuts_html(self) -> str:
        rows = "".join(f"<tr><td>{m}</td><td>{a}</td><td><b>{k}</b></td></tr>"
                       for m, a, k in shortcut_rows(self.w))
        canvas = ("<p>On the canvas: arrows move the selection along the graph, Enter follows "
                  "an input to its producer, Delete removes the selected nodes or disconnects "
                  "a selected wire.</p>"
                  "<p>Run to selected (Ctrl+F10) stops <i>before</i> that node, as a "
                  "breakpoint does; F10 then runs it. Edits (Delete, undo, redo, a drop from "
                  "the palette) are accepted during a run and reach the next step or run.</p>")
        return (f"<h2>Keyboard shortcuts</h2><table cellpadding='4'><tr><th align='left'>"
                f"Menu</th><th align='left'>Action</th><th align='left'>Keys</th></tr>{rows}"
                f"</table>{canvas}")

    def show_shortcuts(self) -> None:
        if self.dialog is None:
            self.dialog = QDialog(self.w)
            self.dialog.setWindowTitle("Keyboard shortcuts — Hexscope")
            self.dialog.text = QTextBrowser()  # type: ignore[attr-defined]
            layout = QVBoxLayout(self.dialog)
            layout.addWidget(self.dialog.text)  # type: ignore[attr-defined]
            self.dialog.resize(560, 620)
        self.dialog.text.setHtml(self.shortcuts_html())  # type: ignore[attr-defined]
        self.dialog.show()
        self.dialog.raise_()

    def show_about(self) -> None:
        rows = "".join(f"<tr><td>{name}</td><td>{value}</td></tr>"
                       for name, value in versions())
        QMessageBox.about(self.w, "About Hexscope",
                          "<h3>Hexscope</h3><p>A debugger for hexagon_nn graphs.</p>"
                          f"<table>{rows}</table>")


__all__ = ["HelpActions", "shortcut_rows", "versions"]
