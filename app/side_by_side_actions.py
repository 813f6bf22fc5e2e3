"""View ▸ Compare graphs side by side… and View ▸ Authored vs prepared side by side: a
window with the two graphs and their differences (widgets/side_by_side.py)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu, QMessageBox, QWidget

from hexscope.engine.errors import EngineError
from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.io.any_graph import load_any
from hexscope.engine.prepare import prepare
from hexscope.engine.structural_diff import structural_diff
from hexscope.widgets.side_by_side import SideBySideView

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

FILTERS = "Graphs (*.hexgraph *.c *.tflite);;All files (*)"


class SideBySideWindow(QMainWindow):
    """One comparison; its toolbar makes another (a file, or authored vs prepared)."""

    def __init__(self, actions: SideBySideActions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.actions = actions
        self.view: SideBySideView | None = None
        self.resize(1280, 800)
        bar = self.addToolBar("Compare")
        bar.setObjectName("side-by-side-toolbar")
        self.prepared_action = bar.addAction("Authored vs prepared",
                                             actions.authored_vs_prepared)
        self.file_action = bar.addAction("Compare with a graph file…", actions.choose_file)
        self.swap_action = bar.addAction("Swap A and B", self.swap)

    def show_diff(self, a: Graph, b: Graph, a_name: str, b_name: str) -> SideBySideView:
        """Replace what the window shows with A against B."""
        diff = structural_diff(a, b, a_name, b_name)
        old, self.view = self.view, SideBySideView(a, b, diff, self)
        self.setCentralWidget(self.view)
        if old is not None:
            old.close_scenes()
            old.deleteLater()
        self.setWindowTitle(f"Side by side: {os.path.basename(a_name)} ↔ "
                            f"{os.path.basename(b_name)}")
        self._pair = (a, b, a_name, b_name)
        return self.view

    def swap(self) -> None:
        if self.view is not None:
            a, b, a_name, b_name = self._pair
            self.show_diff(b, a, b_name, a_name)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if self.view is not None:
            self.view.close_scenes()
        super().closeEvent(event)


class SideBySideActions:
    """The View menu's two entries and the window they open (one, reused)."""

    def __init__(self, window: MainWindow, menu: QMenu) -> None:
        self.w = window
        self.window: SideBySideWindow | None = None
        self.compare = QAction("Compare graphs side by side…", window)
        self.compare.triggered.connect(self.choose_file)
        self.prepared = QAction("Authored vs prepared side by side", window)
        self.prepared.triggered.connect(self.authored_vs_prepared)
        menu.addActions([self.compare, self.prepared])

    def _name(self) -> str:
        path = getattr(getattr(self.w, "files", None), "path", None)
        return str(path) if path else "this graph"

    def _window(self) -> SideBySideWindow:
        if self.window is None:
            self.window = SideBySideWindow(self, self.w)
        self.window.show()
        self.window.raise_()
        return self.window

    def choose_file(self) -> SideBySideView | None:
        path, _ = QFileDialog.getOpenFileName(self.w, "Compare side by side with", "", FILTERS)
        return self.compare_with(path) if path else None

    def compare_with(self, path: str) -> SideBySideView | None:
        """The window's graph (A) against the graph in ``path`` (B)."""
        try:
            other = load_any(path)
        except EngineError as exc:
            QMessageBox.warning(self.w, "Compare side by side", str(exc))
            return None
        return self._window().show_diff(self._copy(), other, self._name(), path)

    def authored_vs_prepared(self) -> SideBySideView | None:
        """The window's graph as authored (A) and as prepare leaves it (B)."""
        authored = self._copy()
        try:
            done = prepare(authored)
        except (EngineError, ValueError) as exc:
            QMessageBox.warning(self.w, "Authored vs prepared",
                                f"prepare refuses this graph: {exc}")
            return None
        prepared = Graph.from_snapshot(GraphSnapshot(tuple(done.nodes[i] for i in done.order),
                                                     (), {}))
        name = self._name()
        return self._window().show_diff(authored, prepared, f"{name} (authored)",
                                        f"{name} (prepared)")

    def _copy(self) -> Graph:
        # the editor's graph keeps changing; the comparison shows it as it was
        return Graph.from_snapshot(self.w.graph.snapshot())


def add_side_by_side_actions(window: MainWindow, menu: QMenu) -> SideBySideActions:
    window.side_by_side = SideBySideActions(window, menu)  # type: ignore[attr-defined]
    return window.side_by_side  # type: ignore[attr-defined]


__all__ = ["SideBySideActions", "SideBySideWindow", "add_side_by_side_actions"]
