"""The Compare panel's controller (issue 12): makes the comparisons the panel shows.

B is the float reference (isolated or accumulated), a pinned run ("Pin this run" in the
Debug menu, Ctrl+Shift+P), another graph file, or another backend by name. The comparison
is made again when the run moves on (stepping, or a run finishing), so the table and the
canvas colours follow the run.

Comparisons are made off the GUI thread (``compare_worker``), one at a time: what a job
needs of the run is copied while the execution worker is idle. A step or run while a job
is in flight makes its result stale (a generation counter): it is dropped, and a new job
starts once the worker is idle and the old one has ended. Cancel abandons a job (it may
end in the background; its result is ignored).
"""

from __future__ import annotations

import atexit
import html
import logging
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QInputDialog

from hexscope.app import kernel_preload
from hexscope.app.compare_worker import (
    CompareJob,
    CompareOutcome,
    CompareWorker,
    GraphFile,
)
from hexscope.engine.analysis.compare import Trace
from hexscope.engine.analysis.compare_report import row_text
from hexscope.engine.analysis.run_snapshot import RunSnapshot
from hexscope.engine.session import Session
from hexscope.widgets.compare_panel import TARGETS, ComparePanel
from hexscope.widgets.theme_colors import theme_colors

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow
    from hexscope.engine.analysis.diff import OutputDiff

DOCK = Qt.DockWidgetArea
START = "Run the graph, then Compare."
READY = "The run is ready: choose B and press Compare."
_LOG = logging.getLogger("hexscope.compare")

#: Threads of comparisons still running when their window closed, with their workers.
_DETACHED: dict[QThread, CompareWorker] = {}


def _wait_for_detached() -> None:
    # At exit: Qt aborts the process when a QThread is destroyed while it runs, so the
    # interpreter waits for them (B's socket timeouts bound the wait).
    for thread in list(_DETACHED):
        thread.wait()


class CompareController(QObject):
    """See the module docstring."""

    #: How long closing the window waits for a comparison (a device reply may take longer).
    SHUTDOWN_WAIT_MS = 10000

    _job = Signal(object)              # to the worker on the compare thread
    _shared_job = Signal(object)       # to the worker on the session's thread (same device)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.panel = ComparePanel()
        self.dock = window.add_dock("Compare", self.panel, DOCK.BottomDockWidgetArea)
        split = window.settings.splitter("compare")     # where the user dragged it last
        if split is not None:
            self.panel.restore_split(split)
        self.panel.split_moved.connect(lambda: window.settings.set_splitter(
            "compare", self.panel.split_state()))
        # brought to the front, it gets room for its table and pictures, as the views do
        self.dock.visibilityChanged.connect(lambda shown: shown and self._make_room())
        self.pinned: Trace | None = None
        self.other_file: GraphFile | None = None
        self.other_backend = ""
        self.tflite_model = ""              # "tflite": a model chosen by hand
        self.device_dump = ""               # "device": a <prefix>_graph.yaml (issue 30)
        self.active = False                 # a comparison is shown and follows the run
        self.generation = 0                 # bumped whenever the run moves on
        self.running: CompareJob | None = None
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self.refresh)
        self._thread = QThread()            # no parent: shutdown() decides when it goes
        self._thread.setObjectName("hexscope-compare")
        self._worker = self._start_worker(self._job)
        self._worker.moveToThread(self._thread)
        self._thread.start()
        self._shared: CompareWorker | None = None
        self._build_actions()
        self.panel.compare_requested.connect(self.compare)
        self.panel.change_requested.connect(lambda key: self.compare(key, choose=True))
        self.panel.cancel_requested.connect(self.cancel)
        self.panel.node_activated.connect(window.select_node)
        self.panel.overlay_changed.connect(self._overlay)
        window.node_selected.connect(self._on_node)
        window.results_changed.connect(self._later)
        window.session_changed.connect(lambda _s: self._later())
        window.controller.idle.connect(lambda _k: self._later())
        window.controller.busy_changed.connect(self._on_busy)

    def _build_actions(self) -> None:
        window = self.w
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

    def _start_worker(self, signal: Signal) -> CompareWorker:
        worker = CompareWorker()
        signal.connect(worker.make)                 # queued: runs on the worker's thread
        worker.progress.connect(self._progress)     # queued: arrive on the GUI thread
        worker.finished.connect(self._arrived)
        return worker

    # actions --------------------------------------------------------------------------------
    def pin(self) -> None:
        session = self.w.session
        if self.w.controller.busy:      # the worker is changing the trace: not now
            self.w.statusBar().showMessage("The graph is running: pin it once it pauses", 6000)
            return
        if session is None or not session.executor.trace:
            self.w.statusBar().showMessage("Nothing to pin: run the graph first (F5)", 6000)
            return
        self.pinned = Trace.from_session(session, "pinned run")
        n = len(self.pinned.outputs)
        self.w.statusBar().showMessage(f"Pinned this run ({n} node(s)); later runs compare "
                                       "against it in the Compare panel", 8000)
        self.panel.set_target("pinned")

    def compare(self, key: str, choose: bool = False) -> None:
        """Compare against B = ``key``; the other graph file or backend is asked for the
        first time, or when ``choose`` (picked again in the list: change it), and kept."""
        if key == "graph" and (choose or self.other_file is None) and not self._choose_graph():
            return
        if key == "backend" and (choose or not self.other_backend) \
                and not self._choose_backend():
            return
        if key in ("tflite", "tflite_float") and (choose or not self._tflite_model()) \
                and not self._choose_tflite_model():
            return
        if key == "device" and (choose or not self.device_dump):
            self.w.device.open_device_dump()    # type: ignore[attr-defined]  # asks, compares
            return
        self.panel.set_target(key)
        self.active = True
        self.generation += 1                # B, or its tolerance, may have changed
        self.dock.raise_()
        self.refresh()

    def cancel(self) -> None:
        """Abandon the comparison in flight; the panel stops following the run."""
        if self.running is not None:
            self.running.token.cancel()
            self._abort(shared_too=False)
        self.active = False
        self.generation += 1
        self._timer.stop()
        self.panel.set_comparison(None, "Comparison cancelled: Compare makes it again.")
        self.panel.set_busy(None)

    def _choose_graph(self) -> bool:
        start = self.other_file.path if self.other_file is not None else ""
        path, _ = QFileDialog.getOpenFileName(self.w, "Compare with another graph", start,
                                              "Hexscope graphs (*.hexgraph);;All files (*)")
        if not path:
            return False
        if self.other_file is None or self.other_file.path != path:
            self.other_file = GraphFile(path)       # read on the worker
        self.panel.set_target_text("graph", f"Other graph: {os.path.basename(path)} "
                                   "(pick again to change)")
        return True

    def _tflite_model(self) -> str:
        """The .tflite file the graph came from: the one opened, the one chosen, or the
        model the graph's meta names beside its saved file ('' when none is found)."""
        candidates = [self.tflite_model, self.w.files.imported_from or ""]
        meta = self.w.graph.meta.get("tflite")
        if isinstance(meta, dict) and meta.get("model") and self.w.files.path:
            candidates.append(os.path.join(os.path.dirname(self.w.files.path),
                                           str(meta["model"])))
        return next((c for c in candidates if c.endswith(".tflite") and os.path.isfile(c)),
                    "")

    def _choose_tflite_model(self) -> bool:
        path, _ = QFileDialog.getOpenFileName(self.w, "The TFLite model this graph came from",
                                              self._tflite_model(),
                                              "TFLite models (*.tflite);;All files (*)")
        if not path:
            return False
        self.tflite_model = path
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
        self.generation += 1
        if self.active:
            self._timer.start()
        else:
            # what to do next, as the run moves on ("Run the graph" stayed after a run)
            session = self.w.session
            ran = session is not None and bool(session.executor.trace)
            self.panel.show_hint(READY if ran else START)

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.generation += 1            # a step or run begins: the job in flight is stale

    def refresh(self) -> None:
        """Start a comparison of the current run, unless one is in flight (then the next
        starts when it ends) or the execution worker is busy (then when it is idle)."""
        if not self.active or getattr(self.w, "_shut_down", False):
            return
        if self.running is not None:
            if self.running.generation != self.generation:
                self.panel.set_busy("Waiting for the last comparison to end…")
            return
        if self.w.controller.busy:
            self.panel.set_busy("Comparing when the run pauses…")
            self._timer.start()
            return
        session = self.w.session
        try:
            # a device dump is B and A both (its inputs): no run of the window's is needed
            job, note = (None, "No run yet: run (F5) or step (F10) the graph.") \
                if (session is None or not session.executor.trace) \
                and self.panel.target_key != "device" else self._job_for(session)
            if job is not None:
                self._send(job)
        except Exception as exc:  # noqa: BLE001 - never into Qt's event loop (a timer's slot)
            job, note = None, html.escape(f"Cannot compare: internal error: "
                                          f"{type(exc).__name__}: {exc}")
        if job is None:
            self.panel.set_busy(None)
            self.panel.set_comparison(None, note)

    def _send(self, job: CompareJob) -> None:
        if job.backend is not None and not isinstance(job.backend, str):
            signal = self._shared_job               # on the window's own connection
            self._shared_worker()
        else:
            signal = self._job
        self.running = job
        self.panel.set_busy(f"Comparing against {job.b_name}…")
        kernel_preload.hurry()          # the comparison may need a kernel it is loading
        signal.emit(job)

    def _job_for(self, session: Session | None) -> tuple[CompareJob | None, str]:
        """The job for the panel's target, copied from the idle session (or why none)."""
        key = self.panel.target_key
        job = CompareJob(self.generation, key, _target_text(key),
                         self.panel.tolerance.value())
        if key in ("isolated", "accumulated"):
            job.reference = RunSnapshot.of(session, job.token)
            return job, ""
        if key == "device":
            job.model_path = self.device_dump
            job.b_name = f"device dump {os.path.basename(self.device_dump)}"
            job.graph = self.w.graph.snapshot()
            return job, ""
        assert session is not None
        job.current = Trace.from_session(session, "this run")
        if key == "pinned":
            if self.pinned is None:
                return None, "No pinned run: Debug ▸ Pin this run (Ctrl+Shift+P) first."
            job.pinned = Trace(self.pinned.name, self.pinned.plan, self.pinned.nodes,
                               self.pinned.outputs)
            return job, ""
        job.inputs = session.inputs
        if key in ("tflite", "tflite_float"):
            job.model_path = self._tflite_model()
            if not job.model_path:
                return None, "Choose the .tflite model this graph came from (Compare)."
            job.b_name = os.path.basename(job.model_path)
            job.graph = self.w.graph.snapshot()
            return job, ""
        if key == "graph":
            if self.other_file is None:
                return None, "Choose the other graph file (Compare)."
            job.graph_file = self.other_file
            job.b_name = os.path.basename(self.other_file.path)
            job.graph = self.w.graph.snapshot()
            job.backend = _same_device(session, session.backend.name)
        else:
            job.b_name = self.other_backend or "sim"
            job.graph = self.w.graph.snapshot()
            job.backend = _same_device(session, job.b_name)
        return job, ""

    def _shared_worker(self) -> CompareWorker:
        """A worker on the session's thread, for jobs on the window's own connection."""
        if self._shared is None:
            thread = self.w.controller.findChild(QThread, "hexscope-session")
            if thread is None:
                raise RuntimeError("the execution controller has no session thread")
            self._shared = self._start_worker(self._shared_job)
            self._shared.moveToThread(thread)
        return self._shared

    # results from the worker ----------------------------------------------------------------
    def _progress(self, generation: int, text: str) -> None:
        job = self.running
        if job is not None and job.generation == generation == self.generation:
            self.panel.set_busy(f"Comparing against {job.b_name}: {text}")

    def _arrived(self, outcome: CompareOutcome) -> None:
        job, self.running = self.running, None
        if outcome.graph_file is not None and self.other_file is not None \
                and outcome.graph_file.path == self.other_file.path:
            self.other_file = outcome.graph_file        # read once, until the file changes
        if getattr(self.w, "_shut_down", False):
            return
        current = (job is not None and not outcome.cancelled and self.active
                   and outcome.generation == self.generation)
        if not current:
            if self.active:
                self.refresh()                          # the run moved on: compare again
            else:
                self.panel.set_busy(None)
            return
        self.panel.set_busy(None)
        if outcome.error:
            self.panel.set_comparison(None, html.escape(outcome.error))
        else:
            note = html.escape(outcome.note)
            if note:        # B stopped short: say so as loudly as the rows beyond tolerance
                note = f"<span style='color:{theme_colors().error_text.name()}'>{note}</span>"
            if outcome.differences:
                note += ("<br>B's graph differs from this one: "
                         + "; ".join(html.escape(d) for d in outcome.differences))
            self.panel.set_comparison(outcome.comparison, note)
        # the summary may have grown a line or two: room for it and the pictures still
        QTimer.singleShot(0, self, self._make_room)

    def _make_room(self) -> None:
        if self.dock.isVisible() and hasattr(self.w, "make_room_for"):
            self.w.make_room_for(self.dock)

    def wait(self, timeout_ms: int = 30000) -> bool:
        """Process events until no comparison is due or in flight (scripts, screenshots)."""
        from PySide6.QtCore import QDeadlineTimer, QEventLoop
        from PySide6.QtWidgets import QApplication

        deadline = QDeadlineTimer(timeout_ms)
        while (self.running is not None or self._timer.isActive()
               or self.w.controller.busy) and not deadline.hasExpired():
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        return self.running is None

    def shutdown(self) -> None:
        """Abandon the job in flight and stop the compare thread (the window is closing).

        A job that does not end within ``SHUTDOWN_WAIT_MS`` (a device that does not answer)
        keeps its thread, detached from the window, until it ends."""
        self.active = False
        self.generation += 1
        self._timer.stop()
        if self.running is not None:
            self.running.token.cancel()
            self._abort(shared_too=True)        # the window's connection goes anyway
        thread = self._thread
        thread.quit()
        if thread.wait(self.SHUTDOWN_WAIT_MS):
            return
        _LOG.warning("a comparison is still running as the window closes; it ends on its own")
        if not _DETACHED:
            atexit.register(_wait_for_detached)
        _DETACHED[thread] = self._worker
        thread.finished.connect(lambda: _DETACHED.pop(thread, None),
                                Qt.ConnectionType.QueuedConnection)

    def _abort(self, shared_too: bool) -> None:
        for worker in (self._worker, self._shared):
            if worker is not None:
                worker.abort(shared_too)

    @property
    def thread_running(self) -> bool:
        return self._thread.isRunning()

    # the selection and the canvas -----------------------------------------------------------
    def _on_node(self, node_id: int) -> None:
        if node_id >= 0 and self.panel.comparison is not None:
            self.panel.show_output(node_id)

    def _overlay(self, colors: object, legend: object) -> None:
        comparison = self.panel.comparison
        outputs: dict[int, list[OutputDiff]] = {}
        if colors and comparison is not None:
            for d in comparison.outputs:
                outputs.setdefault(d.node_id, []).append(d)
        head = f"<i>compare ({html.escape(comparison.b_name)})</i><br>" if comparison else ""
        self.w.set_overlay(colors, legend, _Notes(head, outputs))  # type: ignore[arg-type]


class _Notes(Mapping[int, str]):
    """Each tinted node's hover note, written when the canvas sets it (a slice at a time
    on a large graph): all 4,000 of a 10,000-node comparison written at once were 20-30 ms
    of Compare's longest gap."""

    def __init__(self, head: str, outputs: dict[int, list[OutputDiff]]) -> None:
        self._head, self._outputs = head, outputs

    def __getitem__(self, node_id: int) -> str:
        return self._head + "<br>".join(f"output {d.index}: " + html.escape(row_text(d))
                                        for d in self._outputs[node_id])

    def __iter__(self) -> Iterator[int]:
        return iter(self._outputs)

    def __len__(self) -> int:
        return len(self._outputs)


def _target_text(key: str) -> str:
    text = dict(TARGETS).get(key, key)
    return text[0].lower() + text[1:] if key in ("isolated", "accumulated", "pinned") else text


def _same_device(session: Session, name: str) -> str | object:
    """``name``, or, when it is the device this session runs on, the session's backend: B
    then runs on a sibling on the same connection (a device agent serves one client: a
    second connection would be BUSY), on the session's thread."""
    backend = session.backend
    if getattr(backend, "runs_graph", False) and getattr(backend, "name", "") == name:
        return backend
    return name


def install_compare(window: MainWindow) -> CompareController:
    controller = CompareController(window)
    window.compare = controller  # type: ignore[attr-defined]
    return controller
