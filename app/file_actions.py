"""File menu: New, Open, Save, Save As, recent files, the unsaved-work prompt, autosave."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QFileDialog, QLabel, QMenu, QMessageBox

from hexscope.app.autosave import Autosaver, orphaned_slots
from hexscope.engine.errors import EngineError, GraphFileError
from hexscope.engine.events import LogLine
from hexscope.engine.graph import Graph
from hexscope.engine.graph_diff import diff_graphs
from hexscope.engine.io.any_graph import is_c_file, is_tflite_file
from hexscope.engine.io.c_export import export_c

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

FILTER = "Hexscope graphs (*.hexgraph);;All files (*)"
C_FILTER = "hexagon_nn graph-init C (*.c *.h *.cc *.cpp)"
TFLITE_FILTER = "TFLite models, as the Hexagon delegate builds them (*.tflite)"
OPEN_FILTER = f"Graphs (*.hexgraph *.c *.h *.cc *.cpp *.tflite);;{FILTER.split(';;')[0]};;" \
    f"{C_FILTER};;{TFLITE_FILTER};;All files (*)"


class FileActions:
    """Owns the document's path and the autosave timer of one window."""

    def __init__(self, window: MainWindow) -> None:
        self.w = window
        self.path: str | None = None
        self.imported_from: str | None = None   # a graph-init C file the graph came from
        self._meta_dirty = False
        self.autosaver = Autosaver(window.settings.autosave_dir, window)
        self.autosaver.failed.connect(lambda text: window.statusBar().showMessage(text, 8000))
        if self.autosaver.off_reason:       # for as long as the window is open, not 8 s
            off = QLabel("Autosave off", window)
            off.setObjectName("autosave_off")
            off.setToolTip(self.autosaver.off_reason)
            window.statusBar().addPermanentWidget(off)
        self._build_actions()

    def _build_actions(self) -> None:
        w = self.w
        menu = w.menuBar().addMenu("&File")
        self.new = _action(w, "&New", QKeySequence.StandardKey.New, self.new_graph)
        self.open = _action(w, "&Open…", QKeySequence.StandardKey.Open, lambda: self.open_graph())
        self.save = _action(w, "&Save", QKeySequence.StandardKey.Save, self.save_graph)
        self.save_as = _action(w, "Save &As…", QKeySequence.StandardKey.SaveAs,
                               lambda: self.save_graph_as())
        self.import_c = _action(w, "&Import hexagon_nn C…", QKeySequence("Ctrl+Shift+O"),
                                lambda: self.open_graph(c_only=True))
        self.export_c = _action(w, "&Export hexagon_nn C…", QKeySequence("Ctrl+Shift+E"),
                                lambda: self.export_graph_c())
        self.recent_menu = QMenu("Open &Recent", w)
        menu.addActions([self.new, self.open])
        menu.addMenu(self.recent_menu)
        menu.addSeparator()
        menu.addActions([self.save, self.save_as])
        menu.addSeparator()
        menu.addActions([self.import_c, self.export_c])
        menu.addSeparator()
        menu.addAction(_action(w, "&Quit", QKeySequence.StandardKey.Quit, w.close))
        self.update_recent_menu()

    # state ------------------------------------------------------------------------------------
    @property
    def modified(self) -> bool:
        return not self.w.undo_stack.isClean() or self._meta_dirty

    @property
    def meta_dirty(self) -> bool:
        """Unsaved changes outside the undo stack (input settings, restored work)."""
        return self._meta_dirty

    @meta_dirty.setter
    def meta_dirty(self, value: bool) -> None:
        self._meta_dirty = value
        self.note_change()

    def note_change(self) -> None:
        """After any change of the document: autosave soon, or forget the autosave."""
        if self.modified:
            self.autosaver.edited(self.w.graph, os.path.abspath(self.path) if self.path
                                  else None)
        else:
            self.autosaver.clean()

    def mark_baseline(self) -> None:
        """The graph as it stands is the opened or saved document (after New, Open, Save)."""
        self.autosaver.set_base(self.w.graph.snapshot())

    def name(self) -> str:
        if self.path:
            return os.path.basename(self.path)
        if self.imported_from:
            kind = "TFLite" if is_tflite_file(self.imported_from) else "C"
            return f"{os.path.basename(self.imported_from)} (imported {kind})"
        return "untitled"

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
    @staticmethod
    def dropped_file(event: QDropEvent | QDragEnterEvent) -> str | None:
        """The one local file a drag carries, if any."""
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if len(urls) == 1 and urls[0].isLocalFile():
            return urls[0].toLocalFile()
        return None

    def drag_enter(self, event: QDragEnterEvent) -> None:
        if self.dropped_file(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def drop(self, event: QDropEvent) -> None:
        """Open a dropped .hexgraph, graph-init C file or .tflite model, as File ▸ Open."""
        path = self.dropped_file(event)
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_graph(path)

    def new_graph(self) -> None:
        if self.maybe_save():
            self.w.set_graph(Graph(), None)

    def open_graph(self, path: str | None = None, c_only: bool = False) -> bool:
        """Open ``path`` (or ask for one): a .hexgraph file, or a hexagon_nn graph-init C
        file through the importer. A damaged file shows an error dialog naming the file
        (for C, its line and column)."""
        if not self.maybe_save():
            return False
        if path is None:
            title, filters = ("Import hexagon_nn C", C_FILTER) if c_only else \
                ("Open graph", OPEN_FILTER)
            path, _ = QFileDialog.getOpenFileName(self.w, title, "", filters)
            if not path:
                return False
        is_c = is_c_file(path) or is_tflite_file(path)    # imported: saved as .hexgraph
        try:
            read = self.w.loader.read(path, self.w)     # off the GUI thread (graph_loader.py)
        except GraphFileError as exc:
            QMessageBox.critical(self.w, "Cannot import" if is_c else
                                 "Cannot open graph", str(exc))
            return False
        if read is None:
            return False                                 # the user cancelled
        graph, notes = read.graph, read.notes
        # An imported C file or model is not where the graph is saved: Save asks for a
        # .hexgraph.
        if not self.w.set_graph(graph, None if is_c else path):
            return False
        self.imported_from = os.path.abspath(path) if is_c else None
        self.w.update_title()
        self.w.settings.add_recent(path)
        self.update_recent_menu()
        if is_c:
            self.w.statusBar().showMessage(
                f"Imported {len(graph)} nodes from {path}" + (f"; {notes[0]}" if notes else ""),
                15000)
            # every note in the Log (a TFLite model's refused operators, partitions left out)
            for note in notes:
                self.w.log_panel.append(LogLine(1, f"import: {note}"))
        # delegated operators the DSP cannot run (engine/io/tflite/device_limits.py): in
        # Problems before any run, as the run would fail there
        meta = graph.meta.get("tflite")
        refused = meta.get("device_refused", []) if isinstance(meta, dict) else []
        if refused:
            self.w.show_problems([f"TFLite operator {i} {code}: the DSP cannot run it: {why}"
                                  for i, code, why in refused])
        return True

    def export_graph_c(self, path: str | None = None) -> bool:
        """Write the graph as a graph-init C file (hexagon_nn's own form)."""
        base = self.path or self.imported_from or "graph.hexgraph"
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self.w, "Export hexagon_nn C", str(Path(base).with_suffix(".c")), C_FILTER)
            if not path:
                return False
        try:
            export_c(self.w.graph, path, Path(base).stem)
        except (EngineError, OSError) as exc:
            QMessageBox.critical(self.w, "Cannot export C", f"{path}: {exc}")
            return False
        self.w.statusBar().showMessage(f"Exported {len(self.w.graph)} nodes to {path}", 8000)
        return True

    def save_graph(self) -> bool:
        if self.path is None:
            return self.save_graph_as()
        return self._write(self.path)

    def save_graph_as(self, path: str | None = None) -> bool:
        if path is None:
            default = self.path or (str(Path(self.imported_from).with_suffix(".hexgraph"))
                                    if self.imported_from else "untitled.hexgraph")
            path, _ = QFileDialog.getSaveFileName(self.w, "Save graph as", default, FILTER)
            if not path:
                return False
            if not os.path.splitext(path)[1]:
                path += ".hexgraph"
        return self._write(path)

    def _write(self, path: str) -> bool:
        try:
            self.w.loader.save(self.w.graph, path, self.w)      # off the GUI thread
        except GraphFileError as exc:
            QMessageBox.critical(self.w, "Cannot save graph", str(exc))
            return False
        self.path = path
        self.imported_from = None
        self.mark_baseline()
        self.w.undo_stack.setClean()
        self.meta_dirty = False
        self.w.settings.add_recent(path)
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
    def discard_unsaved(self) -> None:
        """The user answered the unsaved-changes prompt: nothing is left to restore."""
        self._meta_dirty = False
        self.w.undo_stack.setClean()
        self.autosaver.clean()

    def autosave_now(self) -> bool:
        """Write the unsaved graph to this window's autosave slot now and wait for it."""
        if not self.modified:
            return False
        self.note_change()
        self.autosaver.save_now()
        self.autosaver.wait()
        return self.autosaver.slot.info() is not None

    def offer_restore(self) -> bool:
        """At start: offer the newest autosave that an instance which is gone left behind
        (it crashed or was killed); True if it was restored. Running instances' autosaves
        are never offered."""
        slots = orphaned_slots(self.w.settings.autosave_dir)
        graph = None
        while slots and graph is None:
            slot = slots.pop(0)
            try:
                graph = Graph.load(slot.graph_path)
            except GraphFileError as exc:
                kept = slot.set_aside()     # never deleted: it may be recovered by hand
                where = (f"It was kept as {kept}." if kept
                         else f"It was left at {slot.graph_path}.")
                QMessageBox.critical(self.w, "Cannot restore", f"{exc}\n\n{where}")
                slot.release()
        if graph is None:
            return False
        older = slots
        for other in older:
            other.unlock()          # offered at a later start
        info = slot.info() or {}
        original = str(info["original"]) if info.get("original") else None
        base = _load_or_none(slot.base_path) or _load_or_none(original)
        answer = QMessageBox.question(
            self.w, "Restore unsaved work?",
            _restore_text(info, original, graph, base, len(older)),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.Yes)
        slot.release()
        if answer != QMessageBox.StandardButton.Yes:
            return False
        if not self.w.set_graph(graph, original):
            return False                   # the drawing was cancelled: offered again
        if base is not None:       # still compared with what it was opened as, not with itself
            self.autosaver.set_base(base.snapshot())
        self.meta_dirty = True     # restored work is unsaved until the user saves it
        self.autosaver.save_now()  # and lives in this instance's slot from now on
        self.autosaver.wait()
        self.w.update_title()
        return True


def _load_or_none(path: str | os.PathLike[str] | None) -> Graph | None:
    try:
        return Graph.load(path) if path is not None and os.path.exists(path) else None
    except GraphFileError:
        return None


def _restore_text(info: dict[str, object], original: str | None, graph: Graph,
                  base: Graph | None, n_older: int) -> str:
    """What the restore offer says: which file, from when, and what the unsaved work
    changed since the graph was opened or last saved."""
    when = time.strftime("%Y-%m-%d %H:%M:%S",
                         time.localtime(float(info.get("time", 0) or 0)))  # type: ignore[arg-type]
    what = original or "an untitled graph"
    if base is not None:
        diff = "unsaved changes: " + diff_graphs(base, graph).summary()
    else:
        diff = f"{len(graph)} node(s); the graph it started from cannot be read"
    text = (f"Hexscope did not exit cleanly. Restore the unsaved work on {what}, "
            f"autosaved at {when}?\n\n{diff}.")
    if info.get("problem"):
        text += f"\n\n{info['problem']}"
    if n_older:
        text += f"\n\n{n_older} older autosave(s) will be offered at the next start."
    return text


def _action(parent: object, text: str, shortcut: object, slot: object) -> QAction:
    act = QAction(text, parent)  # type: ignore[arg-type]
    if shortcut is not None:
        act.setShortcut(shortcut)  # type: ignore[arg-type]
    act.triggered.connect(slot)  # type: ignore[arg-type]
    return act
