"""File menu: New, Open, Save, Save As, recent files, the unsaved-work prompt, autosave."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from hexscope.app.settings import AUTOSAVE_SECONDS
from hexscope.engine.errors import EngineError, GraphFileError
from hexscope.engine.graph import Graph

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

FILTER = "Hexscope graphs (*.hexgraph);;All files (*)"


class FileActions:
    """Owns the document's path and the autosave timer of one window."""

    def __init__(self, window: MainWindow) -> None:
        self.w = window
        self.path: str | None = None
        self.meta_dirty = False
        self.autosave_timer = QTimer(window)
        self.autosave_timer.setInterval(AUTOSAVE_SECONDS * 1000)
        self.autosave_timer.timeout.connect(self.autosave_now)
        self.autosave_timer.start()
        self._build_actions()

    def _build_actions(self) -> None:
        w = self.w
        menu = w.menuBar().addMenu("&File")
        self.new = _action(w, "&New", QKeySequence.StandardKey.New, self.new_graph)
        self.open = _action(w, "&Open…", QKeySequence.StandardKey.Open, lambda: self.open_graph())
        self.save = _action(w, "&Save", QKeySequence.StandardKey.Save, self.save_graph)
        self.save_as = _action(w, "Save &As…", QKeySequence.StandardKey.SaveAs,
                               lambda: self.save_graph_as())
        self.recent_menu = QMenu("Open &Recent", w)
        menu.addActions([self.new, self.open])
        menu.addMenu(self.recent_menu)
        menu.addSeparator()
        menu.addActions([self.save, self.save_as])
        menu.addSeparator()
        menu.addAction(_action(w, "&Quit", QKeySequence.StandardKey.Quit, w.close))
        self.update_recent_menu()

    # state ------------------------------------------------------------------------------------
    @property
    def modified(self) -> bool:
        return not self.w.undo_stack.isClean() or self.meta_dirty

    def name(self) -> str:
        return os.path.basename(self.path) if self.path else "untitled"

    def title(self) -> str:
        name = self.name()
        # Qt draws the '*' for the [*] placeholder while the window is modified.
        return f"{name}[*] — Hexscope"

    def update_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.w.settings.recent_files()
        for path in files:
            act = self.recent_menu.addAction(path)
            act.triggered.connect(lambda _=False, p=path: self.open_graph(p))
        self.recent_menu.setEnabled(bool(files))

    # commands -------------------------------------------------------------------------------
    def new_graph(self) -> None:
        if self.maybe_save():
            self.w.set_graph(Graph(), None)

    def open_graph(self, path: str | None = None) -> bool:
        """Open ``path`` (or ask for one). A damaged file shows an error dialog."""
        if not self.maybe_save():
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self.w, "Open graph", "", FILTER)
            if not path:
                return False
        try:
            graph = Graph.load(path)
        except GraphFileError as exc:
            QMessageBox.critical(self.w, "Cannot open graph", str(exc))
            return False
        self.w.set_graph(graph, path)
        self.w.settings.add_recent(path)
        self.update_recent_menu()
        return True

    def save_graph(self) -> bool:
        if self.path is None:
            return self.save_graph_as()
        return self._write(self.path)

    def save_graph_as(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self.w, "Save graph as",
                                                  self.path or "untitled.hexgraph", FILTER)
            if not path:
                return False
            if not os.path.splitext(path)[1]:
                path += ".hexgraph"
        return self._write(path)

    def _write(self, path: str) -> bool:
        try:
            self.w.graph.save(path)
        except (OSError, EngineError) as exc:
            QMessageBox.critical(self.w, "Cannot save graph", f"{path}: {exc}")
            return False
        self.path = path
        self.meta_dirty = False
        self.w.undo_stack.setClean()
        self.w.settings.add_recent(path)
        self.w.settings.discard_autosave()
        self.update_recent_menu()
        self.w.update_title()
        self.w.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def maybe_save(self) -> bool:
        """Ask before losing unsaved work; False means the user cancelled."""
        if not self.modified:
            return True
        answer = QMessageBox.question(
            self.w, "Unsaved changes",
            f"{self.name()} has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save_graph()
        return answer == QMessageBox.StandardButton.Discard

    # autosave -------------------------------------------------------------------------------
    def autosave_now(self) -> bool:
        """Write the unsaved graph to the autosave file (only when modified)."""
        if not self.modified:
            return False
        try:
            self.w.settings.autosave(self.w.graph, self.path)
        except (OSError, EngineError) as exc:
            self.w.statusBar().showMessage(f"Autosave failed: {exc}", 8000)
            return False
        return True

    def offer_restore(self) -> bool:
        """At start: offer the autosave a crashed session left; True if it was restored."""
        info = self.w.settings.pending_autosave()
        if info is None:
            return False
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(info.get("time", 0))))
        original = info.get("original") or "an untitled graph"
        answer = QMessageBox.question(
            self.w, "Restore unsaved work?",
            f"Hexscope did not exit cleanly. Restore the autosave of {original} from {when}?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.Yes)
        if answer != QMessageBox.StandardButton.Yes:
            self.w.settings.discard_autosave()
            return False
        try:
            graph = Graph.load(self.w.settings.autosave_graph)
        except GraphFileError as exc:
            QMessageBox.critical(self.w, "Cannot restore", str(exc))
            return False
        self.w.set_graph(graph, str(info["original"]) if info.get("original") else None)
        self.meta_dirty = True     # restored work is unsaved until the user saves it
        self.w.update_title()
        return True


def _action(parent: object, text: str, shortcut: object, slot: object) -> QAction:
    act = QAction(text, parent)  # type: ignore[arg-type]
    if shortcut is not None:
        act.setShortcut(shortcut)  # type: ignore[arg-type]
    act.triggered.connect(slot)  # type: ignore[arg-type]
    return act
