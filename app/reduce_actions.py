"""Debug ▸ Reduce to the failing part… (issue 28): choose what "fails" means (the dialog is
:mod:`reduce_dialog`), watch the reduction on a worker thread (cancel stops it between
candidates), then see the kept nodes and the cut points on this window's canvas (the
overlay) and the reduced graph in a window of its own.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import QDialog, QMessageBox, QProgressDialog

from hexscope.app.reduce_dialog import ReduceDefaults, ReduceDialog
from hexscope.engine.backends.remote import TOKEN_ENV
from hexscope.engine.errors import Cancelled, EngineError
from hexscope.engine.executor import CancelToken
from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.inputs import make_inputs
from hexscope.engine.ops.registry import REGISTRY, Category
from hexscope.engine.reduce import Progress, ReduceResult, write_c, write_candidate, write_json
from hexscope.engine.reduce.job import CheckSpec, prepare_reduction

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

KEPT = QColor("#2e9e4f")
CUT = QColor("#e08a1e")


@dataclass(frozen=True)
class ReduceJob:
    """One reduction as the GUI thread describes it (the graph copied while idle)."""

    graph: GraphSnapshot
    base_dir: str | None
    spec: CheckSpec
    other_path: str
    mode: str
    out: str
    backend: str
    token: CancelToken
    agent_token: str = ""       # the device's token, when candidates or B run on one


class ReduceWorker(QObject):
    """Lives on the reduction thread; runs one job at a time."""

    progress = Signal(object)      # Progress
    finished = Signal(object)      # ReduceResult, or the error text
    start_requested = Signal(object)   # a ReduceJob, from the GUI thread

    def __init__(self) -> None:
        super().__init__()
        self.start_requested.connect(self.run)

    @Slot(object)
    def run(self, job: ReduceJob) -> None:
        try:
            self.finished.emit(self._reduce(job))
        except Cancelled:
            self.finished.emit("cancelled")
        except EngineError as exc:
            self.finished.emit(str(exc))
        except OSError as exc:
            self.finished.emit(f"{job.out}: {exc.strerror or exc}")

    def _reduce(self, job: ReduceJob) -> ReduceResult:
        graph = Graph.from_snapshot(job.graph)
        spec = job.spec
        if spec.kind == "against":
            from hexscope.engine.io.any_graph import load_any

            spec = CheckSpec("against", other=load_any(job.other_path),
                             tolerance=spec.tolerance)
        if job.agent_token:
            # the checks make their dsp:// backends by name: the token goes as the command
            # line's --token does
            os.environ[TOKEN_ENV] = job.agent_token
        inputs = make_inputs(graph, job.base_dir)
        out = Path(job.out)
        reduction = prepare_reduction(graph, [inputs], spec, backend=job.backend,
                                      mode=job.mode, replay=out.with_suffix(".replay.json"),
                                      progress=self.progress.emit, cancel=job.token)
        result = reduction.reducer.run()
        write_candidate(result.best, out)
        c_file = write_c(result.best, out.with_suffix(".c"))
        write_json({"check": spec.describe(), **result.summary(),
                    "c_export": c_file.problem or "written", "c_notes": list(c_file.notes)},
                   out.with_name("reduce.json"))
        return result


class ReduceActions(QObject):
    """The menu action, the dialog, the thread and what a result shows. A QObject of the
    GUI thread, so that the worker's signals arrive here queued."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.windows: list[object] = []          # the reduced graphs' windows, kept alive
        self.result: ReduceResult | None = None
        self.job: ReduceJob | None = None
        self.last_job: ReduceJob | None = None
        self._give_back: tuple[str, str] | None = None
        self._thread = QThread()                 # no parent: shutdown() decides when it goes
        self._thread.setObjectName("hexscope-reduce")
        self._worker = ReduceWorker()
        self._worker.moveToThread(self._thread)
        self._worker.progress.connect(self._on_progress)
        self._worker.finished.connect(self._on_finished)
        self._thread.start()
        self.dialog: QProgressDialog | None = None
        self.action = QAction("Reduce to the &failing part…", window)
        self.action.setToolTip("Cut the graph down to the smallest part that still fails")
        self.action.triggered.connect(self.ask)
        debug = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Debug")
        debug.addSeparator()
        debug.addAction(self.action)

    def ask(self) -> None:
        """Ask what fails, then start."""
        dialog = ReduceDialog(self.defaults(), self.w)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        self.start(dialog.spec(), dialog.search_mode, dialog.out.text().strip(),
                   dialog.other_path, dialog.run_on)

    def defaults(self) -> ReduceDefaults:
        """The dialog's suggestions: what the window's last run says, its device."""
        device = self.w.backend.spec if self.w.backend.spec != "sim" else ""
        session = self.w.session
        kind = "node-error"
        if session is not None and not self.w.controller.busy:
            failed = [i for i in session.executor.failed if i in session.prepared.nodes]
            if failed:
                op = session.prepared.nodes[failed[0]].op
                is_check = op in REGISTRY and REGISTRY.get(op).category is Category.CHECK
                kind = "check-failed" if is_check else "node-error"
            elif session.executor.finished:
                kind = "reference"        # it ran to the end: an accuracy question
        return ReduceDefaults(self._default_out(), kind, device)

    def _default_out(self) -> str:
        path = self.w.files.path
        if path:
            return str(Path(path).with_name(Path(path).stem + ".reduced.hexgraph"))
        return os.path.join(tempfile.mkdtemp(prefix="hexscope-reduce-"), "reduced.hexgraph")

    def start(self, spec: CheckSpec, mode: str = "bisect", out: str = "",
              other_path: str = "", backend: str = "sim") -> None:
        """Reduce on the worker thread, with a progress dialog whose Cancel stops it.
        Candidates run on ``backend``; when it (or backend B) is the window's own device,
        the window lets go of it until the reduction ends (an agent serves one client)."""
        if self.job is not None:
            return
        path = self.w.files.path
        base = os.path.dirname(os.path.abspath(path)) if path else None
        device = self.w.backend.spec
        uses_device = device != "sim" and device in (backend, spec.backend_b)
        self.job = ReduceJob(self.w.graph.snapshot(), base, spec, other_path, mode,
                             out or self._default_out(), backend, CancelToken(),
                             self.w.backend.token if uses_device else "")
        self._give_back = (device, self.w.backend.token) if uses_device else None
        if uses_device:
            self.w.backend.use_simulator()
        self.dialog = QProgressDialog("Running the graph once…", "Cancel", 0, 0, self.w)
        self.dialog.setWindowTitle("Reducing")
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(0)
        self.dialog.canceled.connect(self.cancel)
        self.dialog.show()
        self._worker.start_requested.emit(self.job)

    def cancel(self) -> None:
        if self.job is not None:
            self.job.token.cancel()

    @Slot(object)
    def _on_progress(self, p: Progress) -> None:
        if self.dialog is not None:
            self.dialog.setLabelText(f"Candidate {p.iteration} ({p.phase}): {p.nodes} nodes\n"
                                     f"smallest failing so far: {p.best_nodes} nodes")

    @Slot(object)
    def _on_finished(self, outcome: object) -> None:
        job, self.job = self.job, None
        self.last_job = job
        if self._give_back is not None:
            self.w.backend.connect_to(*self._give_back)     # the window's device again
            self._give_back = None
        if self.dialog is not None:
            self.dialog.canceled.disconnect(self.cancel)
            self.dialog.close()
            self.dialog.deleteLater()
            self.dialog = None
        if not isinstance(outcome, ReduceResult) or job is None:
            self.w.statusBar().showMessage(f"Reduce: {outcome}", 15000)
            if outcome != "cancelled":
                QMessageBox.warning(self.w, "Cannot reduce", str(outcome))
            return
        self.result = outcome
        self.show_result(outcome)
        self.open_reduced(job.out)

    def show_result(self, result: ReduceResult) -> None:
        """The kept nodes and the cut points on this window's canvas."""
        cut_at: dict[int, list[str]] = {}
        for c in result.best.cuts:
            what = "an INPUT" if c.kind == "input" else "a Const"
            cut_at.setdefault(c.ref[0], []).append(f"output {c.ref[1]} frozen as {what}")
        colors = {i: KEPT for i in result.best.kept if i in self.w.graph}
        colors.update({i: CUT for i in cut_at if i in self.w.graph})
        self.w.set_overlay(colors, [("kept", KEPT), ("cut (frozen)", CUT)])
        for node_id in colors:
            note = ("cut: " + "; ".join(cut_at[node_id]) if node_id in cut_at
                    else "kept in the reduced graph")
            self.w.scene.set_look(node_id, overlay_note=note)
        if result.best.units and result.best.units[0] in self.w.graph:
            self.w.canvas.center_on_node(result.best.units[0])
        self.w.statusBar().showMessage(
            f"Reduced {result.original_nodes} nodes to {result.best.size} in "
            f"{len(result.iterations)} candidates ({result.seconds:.1f} s)", 30000)

    def open_reduced(self, path: str) -> None:
        from hexscope.app.main_window import MainWindow

        window = MainWindow(self.w.settings)
        window.show()
        window.files.open_graph(path)
        self.windows.append(window)

    @property
    def thread_running(self) -> bool:
        return self._thread.isRunning()

    def shutdown(self) -> None:
        """Stop the reduction in flight (between candidates) and its thread."""
        self.cancel()
        for window in self.windows:
            window.shutdown()           # type: ignore[attr-defined]
        self._thread.quit()
        self._thread.wait(30000)


def install_reduce(window: MainWindow) -> ReduceActions:
    window.reduce = ReduceActions(window)       # type: ignore[attr-defined]
    return window.reduce                        # type: ignore[attr-defined]
