"""The Compare panel's worker: makes one comparison off the GUI thread (issue 12).

The GUI thread describes a comparison as a :class:`CompareJob`, made while the execution
worker is idle: what it needs of the run is copied then (the trace, the inputs, the graph's
immutable nodes), so the comparison never reads the live session, which a step may change
meanwhile. The worker makes B (a float reference, a pinned run, another graph file or another
backend) and the comparison, and sends a :class:`CompareOutcome` back; the controller drops
an outcome whose generation is no longer current (the run moved on, or it was cancelled).

A job against the device the window runs on shares the window's connection (an agent serves
one client), so it runs on the session's own thread: Qt delivers the job and the window's
steps there one after the other, and the connection is never used by two threads at once.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal, Slot

from hexscope.app.gil import give_way
from hexscope.app.graph_diff import graph_differences
from hexscope.engine.analysis.compare import (
    Comparison,
    Trace,
    compare_reference,
    compare_traces,
)
from hexscope.engine.analysis.run_snapshot import RunSnapshot
from hexscope.engine.backends import make_backend
from hexscope.engine.errors import Cancelled, EngineError
from hexscope.engine.events import NodeFailed, NodeFinished, RunStatus
from hexscope.engine.executor import CancelToken
from hexscope.engine.gc_pause import gc_paused
from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

#: Seconds between two progress messages of B's run (a message per node would flood Qt).
PROGRESS_EVERY = 0.1


@dataclass(frozen=True)
class GraphFile:
    """B's graph file, and the graph last read from it (read again when the file changes)."""

    path: str
    stamp: tuple[float, int] | None = None
    graph: Graph | None = None


@dataclass
class CompareJob:
    """One comparison, as the GUI thread describes it (everything copied while idle)."""

    generation: int
    key: str                            # a TARGETS key of the panel
    b_name: str                         # how messages name B
    tolerance: float
    token: CancelToken = field(default_factory=CancelToken)
    current: Trace | None = None        # A, for traces compared with B
    reference: RunSnapshot | None = None  # A, for the float reference
    pinned: Trace | None = None
    graph: GraphSnapshot | None = None  # the window's graph, for "backend" and "graph"
    graph_file: GraphFile | None = None
    inputs: tuple[Tensor, ...] = ()
    backend: object = None              # B's backend name, or the window's backend (sibling)
    model_path: str = ""                # "tflite": the .tflite model; "device": the yaml


@dataclass
class CompareOutcome:
    generation: int
    comparison: Comparison | None = None
    note: str = ""
    error: str = ""
    cancelled: bool = False
    graph_file: GraphFile | None = None   # B's file as read, to keep for the next job
    differences: list[str] = field(default_factory=list)  # B's graph against this one


class CompareWorker(QObject):
    """Lives on a worker thread; makes the jobs it is sent, one at a time."""

    progress = Signal(int, str)        # generation, what it is doing
    finished = Signal(object)          # CompareOutcome

    def __init__(self) -> None:
        super().__init__()
        # B's backend while B runs, and whether its connection is the window's own
        self._b_backend: object = None
        self._b_shared = False

    def abort(self, shared_too: bool = False) -> None:
        """Break B's device connection, from any thread: a cancelled job that waits for a
        device reply then ends at once instead of at the reply timeout (up to minutes).
        The window's own connection is left alone unless ``shared_too`` (it is closing)."""
        backend = self._b_backend
        if backend is not None and (shared_too or not self._b_shared):
            _abort_connection(backend)

    @Slot(object)
    def make(self, job: CompareJob) -> None:
        outcome = CompareOutcome(job.generation)
        try:
            if job.token.cancelled:
                raise Cancelled
            # B's session, its graph and the float run are many new objects: a full
            # collection meanwhile holds the GIL long enough to freeze the window (160-560 ms
            # measured on a 5,000-node graph; 11-40 ms without it; engine/gc_pause.py)
            with gc_paused():
                outcome.comparison, outcome.note = self._make(job, outcome)
        except Cancelled:
            outcome.cancelled = True
        except EngineError as exc:
            outcome.error = f"Cannot compare against {job.b_name}: {exc}"
        except Exception as exc:  # noqa: BLE001 - the window must survive any engine bug
            outcome.error = (f"Cannot compare against {job.b_name}: internal error: "
                             f"{type(exc).__name__}: {exc}")
        self.finished.emit(outcome)

    def _make(self, job: CompareJob, outcome: CompareOutcome) -> tuple[Comparison | None, str]:
        if job.key in ("isolated", "accumulated"):
            self.progress.emit(job.generation, "computing the float reference…")
            return compare_reference(job.reference, job.key, job.tolerance), ""  # type: ignore[arg-type]
        if job.key in ("tflite", "tflite_float"):
            from hexscope.engine.io.tflite.reference import (
                compare_with_tflite,
                model_inputs_of_run,
            )

            assert job.graph is not None
            self.progress.emit(job.generation, "running the model in TFLite and here…")
            graph = Graph.from_snapshot(job.graph)
            # the run's own input, so the table shows the run on the canvas
            inputs = model_inputs_of_run(graph, job.model_path, job.inputs or ())
            note = "" if inputs is not None else (
                "TFLite ran on seeded random input codes: this graph's inputs are not the "
                "model's (or none was set)")
            comparison = compare_with_tflite(
                graph, job.model_path, inputs, tolerance_lsb=job.tolerance,
                float_mode="accumulated" if job.key == "tflite_float" else "")
            # a node nnlib cannot run: the rows before it, and where and why it stopped
            return comparison, " ".join(t for t in (comparison.stopped[:1].upper()
                                                     + comparison.stopped[1:], note) if t)
        if job.key == "device":
            from hexscope.engine.device.dump_compare import compare_dump_file

            assert job.graph is not None
            self.progress.emit(job.generation, "running the graph on the dump's inputs…")
            return compare_dump_file(Graph.from_snapshot(job.graph), job.model_path,
                                     job.tolerance)
        assert job.current is not None
        if job.key == "pinned":
            assert job.pinned is not None
            return compare_traces(job.pinned, job.current, job.tolerance), ""
        if job.key == "graph":
            assert job.graph_file is not None
            outcome.graph_file = _read(job.graph_file)
            graph = outcome.graph_file.graph
            if job.graph is not None and graph is not None:
                # the node the user changed (a const), which the first divergence (often
                # the Supernode it is fused into) does not name
                outcome.differences = graph_differences(Graph.from_snapshot(job.graph), graph)
        else:
            assert job.graph is not None
            # a graph of its own: B's session never reads (or follows the edits of) the
            # graph the window edits
            graph = Graph.from_snapshot(job.graph)
        assert graph is not None
        b, failure = self._run_b(job, graph)
        self.progress.emit(job.generation, "comparing…")
        comparison = compare_traces(job.current, b, job.tolerance)
        if failure and not comparison.outputs:
            raise EngineError(failure)            # nothing to show but why
        if failure:
            failure += f"; the {len(b.outputs)} node(s) B ran before it are compared"
        return comparison, failure

    def _run_b(self, job: CompareJob, graph: Graph) -> tuple[Trace, str]:
        """Run B to its end (or its first failure); returns its trace and why it stopped."""
        self.progress.emit(job.generation, "preparing B…")
        shared = getattr(job.backend, "runs_graph", False)
        backend = job.backend.sibling() if shared else make_backend(job.backend)  # type: ignore[union-attr, arg-type]
        self._b_backend, self._b_shared = backend, shared
        try:
            if job.token.cancelled:
                raise Cancelled
            other = Session(graph, backend)
        except BaseException:
            self._b_backend = None
            backend.close()
            raise
        total, done, last = len(other.plan), [0], [0.0]

        def progress(event: object) -> None:
            if isinstance(event, NodeFinished | NodeFailed):
                give_way()              # the window's turn between B's nodes (app/gil.py)
                done[0] += 1
                now = time.monotonic()
                if now - last[0] >= PROGRESS_EVERY:
                    last[0] = now
                    self.progress.emit(job.generation,
                                       f"running B: {done[0]} of {total} node(s)…")

        other.events.connect(progress)
        try:
            self.progress.emit(job.generation, "running B…")
            other.set_inputs(job.inputs)
            finished = other.run(cancel=job.token)
            if job.token.cancelled:
                raise Cancelled
            failure = ""
            if finished.status is RunStatus.FAILED and finished.failed_node is not None:
                node = other.prepared.nodes[finished.failed_node]
                failure = (f"B failed at {node.title} ({node.op}): "
                           f"{other.executor.failed.get(node.node_id, finished.message)}")
            return Trace.from_session(other, job.b_name), failure
        finally:
            self._b_backend = None
            other.close()


def _abort_connection(backend: object) -> None:
    abort = getattr(backend, "abort", None)       # a device backend; the simulator has none
    if abort is not None:
        abort()


def _read(graph_file: GraphFile) -> GraphFile:
    """B's graph file, read again only when it changed since ``graph_file`` was read."""
    try:
        st = os.stat(graph_file.path)
    except OSError as exc:
        raise EngineError(f"B's graph file {graph_file.path} cannot be read: "
                          f"{exc.strerror or exc}") from None
    stamp = (st.st_mtime, st.st_size)
    if graph_file.graph is not None and graph_file.stamp == stamp:
        return graph_file
    return GraphFile(graph_file.path, stamp, Graph.load(graph_file.path))


__all__ = ["CompareJob", "CompareOutcome", "CompareWorker", "GraphFile"]
