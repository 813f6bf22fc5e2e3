"""Debug ▸ Reduce to the failing part… (issue 28): choose what "fails" means, watch the
reduction on a worker thread (cancel stops it between candidates), then see the kept nodes
and the cut points on this window's canvas (the overlay) and the reduced graph in a window of
its own.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QWidget,
)

from hexscope.engine.errors import Cancelled, EngineError
from hexscope.engine.executor import CancelToken
from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.inputs import make_inputs
from hexscope.engine.reduce import Progress, ReduceResult, write_c, write_candidate, write_json
from hexscope.engine.reduce.job import CheckSpec, prepare_reduction

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

KEPT = QColor("#2e9e4f")
CUT = QColor("#e08a1e")
#: the choices of the dialog: (CheckSpec kind, what the user reads)
CHOICES = (("node-error", "The node the run stops at raises again"),
           ("check-failed", "The Check/Close the run stops at fails again"),
           ("reference", "Diverges from the float reference"),
           ("backend-b", "Diverges from another backend"),
           ("against", "Diverges from another graph file"),
           ("command", "A command fails on it"))


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


class ReduceDialog(QDialog):
    """What fails, how to search, and where the reduced graph goes."""

    def __init__(self, out: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reduce to the failing part")
        self._build_ui(out)

    def _build_ui(self, out: str) -> None:
        form = self._form = QFormLayout(self)
        self.setMinimumWidth(560)
        self.kind = QComboBox()
        for key, text in CHOICES:
            self.kind.addItem(text, key)
        self.detail = QLineEdit()
        self.regex = QLineEdit()
        self.regex.setPlaceholderText("(any non-zero exit fails)")
        self.timeout = QDoubleSpinBox(minimum=0.0, maximum=86400.0, decimals=1, value=0.0)
        self.timeout.setSpecialValueText("none")
        self.timeout.setSuffix(" s")
        self.tolerance = QDoubleSpinBox(minimum=0.0, maximum=1e6, decimals=2, value=1.0)
        self.tolerance.setSuffix(" LSB")
        self.mode = QComboBox()
        self.mode.addItems(["bisect", "linear"])
        self.out = QLineEdit(out)
        browse = QPushButton("…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.out)
        row.addWidget(browse)
        form.addRow("Fails when", self.kind)
        form.addRow("Command", self.detail)
        form.addRow("Fail regex", self.regex)
        form.addRow("Timeout (a hang fails)", self.timeout)
        form.addRow("Tolerance", self.tolerance)
        form.addRow("Search", self.mode)
        form.addRow("Reduced graph", row)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Reduce")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.kind.currentIndexChanged.connect(self._on_kind)
        self._on_kind()

    def _on_kind(self) -> None:
        key = self.kind.currentData()
        self.detail.setEnabled(key in ("command", "backend-b", "against"))
        label = self._form.labelForField(self.detail)
        label.setText({"backend-b": "Backend", "against": "Other graph"}.get(key, "Command"))
        self.detail.setPlaceholderText({"command": "e.g. hexscope run {}  ({} is the candidate)",
                                        "backend-b": "e.g. dsp://192.168.1.20:7700",
                                        "against": "another .hexgraph with the same node ids"
                                        }.get(key, ""))
        self.regex.setEnabled(key == "command")
        self.timeout.setEnabled(key == "command")
        self.tolerance.setEnabled(key in ("reference", "backend-b", "against"))
        self.tolerance.setValue(1.0 if key == "reference" else 0.0)

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Reduced graph", self.out.text(),
                                              "Hexscope graphs (*.hexgraph)")
        if path:
            self.out.setText(path)

    def spec(self) -> CheckSpec:
        key, text = self.kind.currentData(), self.detail.text().strip()
        tolerance = self.tolerance.value()
        if key == "command":
            return CheckSpec("command", command=text, fail_regex=self.regex.text() or None,
                             timeout=self.timeout.value() or None)
        if key == "backend-b":
            return CheckSpec("backend-b", backend_b=text, tolerance=tolerance)
        if key in ("reference", "against"):
            return CheckSpec(key, tolerance=tolerance)
        return CheckSpec(key)


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
        dialog = ReduceDialog(self._default_out(), self.w)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        self.start(dialog.spec(), dialog.mode.currentText(), dialog.out.text(),
                   dialog.detail.text().strip())

    def _default_out(self) -> str:
        path = self.w.files.path
        if path:
            return str(Path(path).with_name(Path(path).stem + ".reduced.hexgraph"))
        return os.path.join(tempfile.mkdtemp(prefix="hexscope-reduce-"), "reduced.hexgraph")

    def start(self, spec: CheckSpec, mode: str = "bisect", out: str = "",
              other_path: str = "") -> None:
        """Reduce on the worker thread, with a progress dialog whose Cancel stops it."""
        if self.job is not None:
            return
        path = self.w.files.path
        base = os.path.dirname(os.path.abspath(path)) if path else None
        # the simulator: a device agent serves one client, the window's own session
        self.job = ReduceJob(self.w.graph.snapshot(), base, spec, other_path, mode,
                             out or self._default_out(), "sim", CancelToken())
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
