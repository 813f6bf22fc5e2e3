"""The Compare panel's controller (issue 12): makes the comparisons the panel shows.

B is the float reference (isolated or accumulated), a pinned run ("Pin this run" in the
Debug menu, Ctrl+Shift+P), another graph file, or another backend by name. The comparison
is made again when the run moves on (stepping, or a run finishing), so the table and the
canvas colours follow the run; it only reads the session while the worker is idle.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QInputDialog

from hexscope.engine.analysis.compare import (
    Comparison,
    Trace,
    compare_reference,
    compare_traces,
)
from hexscope.engine.analysis.compare_report import row_text
from hexscope.engine.errors import EngineError
from hexscope.engine.graph import Graph
from hexscope.engine.session import Session
from hexscope.widgets.compare_panel import ComparePanel

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

DOCK = Qt.DockWidgetArea


class CompareController(QObject):
    """See the module docstring."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.panel = ComparePanel()
        self.dock = window.add_dock("Compare", self.panel, DOCK.BottomDockWidgetArea)
        self.pinned: Trace | None = None
        self.other_graph: Graph | None = None
        self.other_path = ""
        self.other_backend = ""
        self.active = False                 # a comparison is shown and follows the run
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self.refresh)
        self.pin_action = QAction("&Pin this run", window)
        self.pin_action.setShortcut(QKeySequence("Ctrl+Shift+P"))
        self.pin_action.setToolTip("Keep this run to compare later runs against (Compare panel)")
        self.pin_action.triggered.connect(self.pin)
        debug_menu = getattr(getattr(window, "debug", None), "menu", None) or next(
            (a.menu() for a in window.menuBar().actions() if a.text() == "&Debug"), None)
        if debug_menu is not None:
            debug_menu.addSeparator()
            debug_menu.addAction(self.pin_action)
        window.addAction(self.pin_action)
        self.panel.compare_requested.connect(self.compare)
        self.panel.node_activated.connect(window.select_node)
        self.panel.overlay_changed.connect(self._overlay)
        window.node_selected.connect(self._on_node)
        window.results_changed.connect(self._later)
        window.session_changed.connect(lambda _s: self._later())
        window.controller.idle.connect(lambda _k: self._later())

    # actions --------------------------------------------------------------------------------
    def pin(self) -> None:
        session = self.w.session
        if session is None or not session.executor.trace:
            self.w.statusBar().showMessage("Nothing to pin: run the graph first (F5)", 6000)
            return
        self.pinned = Trace.from_session(session, "pinned run")
        n = len(self.pinned.outputs)
        self.w.statusBar().showMessage(f"Pinned this run ({n} node(s)); later runs compare "
                                       "against it in the Compare panel", 8000)
        self.panel.set_target("pinned")

    def compare(self, key: str) -> None:
        """Compare against B = ``key`` (asks for the file or backend name when needed)."""
        if key == "graph" and not self._choose_graph():
            return
        if key == "backend" and not self._choose_backend():
            return
        self.panel.set_target(key)
        self.active = True
        self.dock.raise_()
        self.refresh()

    def _choose_graph(self) -> bool:
        path, _ = QFileDialog.getOpenFileName(self.w, "Compare with another graph", "",
                                              "Hexscope graphs (*.hexgraph);;All files (*)")
        if not path:
            return False
        try:
            self.other_graph, self.other_path = Graph.load(path), path
        except EngineError as exc:
            self.panel.set_comparison(None, f"Cannot open {html.escape(path)}: "
                                            f"{html.escape(str(exc))}")
            return False
        return True

    def _choose_backend(self) -> bool:
        name, ok = QInputDialog.getText(self.w, "Compare with another backend",
                                        "Backend name (sim, dsp://HOST:PORT, …):",
                                        text=self.other_backend or "sim")
        if not ok or not name.strip():
            return False
        self.other_backend = name.strip()
        return True

    # following the run ----------------------------------------------------------------------
    def _later(self) -> None:
        if self.active:
            self._timer.start()

    def refresh(self) -> None:
        """Make the comparison again from the current run (only while the worker is idle)."""
        if not self.active:
            return
        if self.w.controller.busy:
            self._timer.start()
            return
        session = self.w.session
        if session is None or not session.executor.trace:
            self.panel.set_comparison(None, "No run yet: run (F5) or step (F10) the graph.")
            return
        try:
            comparison, note = self._make(session)
        except EngineError as exc:
            self.panel.set_comparison(None, html.escape(str(exc)))
            return
        self.panel.set_comparison(comparison, note)

    def _make(self, session: Session) -> tuple[Comparison | None, str]:
        key = self.panel.target_key
        tolerance = self.panel.tolerance.value()
        if key in ("isolated", "accumulated"):
            return compare_reference(session, key, tolerance), ""
        current = Trace.from_session(session, "this run")
        if key == "pinned":
            if self.pinned is None:
                return None, "No pinned run: Debug ▸ Pin this run (Ctrl+Shift+P) first."
            pinned = Trace(self.pinned.name, self.pinned.plan, self.pinned.nodes,
                           self.pinned.outputs)
            return compare_traces(pinned, current, tolerance), ""
        if key == "graph":
            if self.other_graph is None:
                return None, "Choose the other graph file (Compare)."
            other = Session(self.other_graph, _same_device(session, session.backend.name))
            name = self.other_path
        else:
            name = self.other_backend or "sim"
            other = Session(self.w.graph, _same_device(session, name))
        try:
            other.execute(session.inputs)
            b = Trace.from_session(other, name)
        finally:
            other.close()
        return compare_traces(current, b, tolerance), ""

    def _on_node(self, node_id: int) -> None:
        if node_id >= 0 and self.panel.comparison is not None:
            self.panel.show_output(node_id)

    def _overlay(self, colors: object, legend: object) -> None:
        self.w.set_overlay(colors, legend)  # type: ignore[arg-type]
        comparison = self.panel.comparison
        notes: dict[int, list[str]] = {}
        if colors and comparison is not None:
            for d in comparison.outputs:
                notes.setdefault(d.node_id, []).append(f"output {d.index}: "
                                                       + html.escape(row_text(d)))
        for node_id in self.w.graph.order:
            text = "<br>".join(notes.get(node_id, ()))
            self.w.scene.set_look(node_id, overlay_note=(
                f"<i>compare ({html.escape(comparison.b_name)})</i><br>{text}"
                if text and comparison else ""))


def _same_device(session: Session, name: str) -> str | object:
    """``name``, or, when it is the device this session runs on, a sibling backend on the
    same connection (a device agent serves one client: a second connection would be BUSY)."""
    backend = session.backend
    if getattr(backend, "runs_graph", False) and getattr(backend, "name", "") == name:
        return backend.sibling()  # type: ignore[attr-defined]
    return name


def install_compare(window: MainWindow) -> CompareController:
    controller = CompareController(window)
    window.compare = controller  # type: ignore[attr-defined]
    return controller
