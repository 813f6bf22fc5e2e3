"""One run of a batch, in whatever process runs it: the session that runs the graph, the run
of one input set on it, and what it records of each node and check."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from hexscope.engine.backends import Backend, make_backend
from hexscope.engine.batch.records import (
    BatchResult,
    CheckRecord,
    InputSet,
    NodeRecord,
    Outcome,
    RunRecord,
    is_check_op,
)
from hexscope.engine.batch.stats import tensor_stats
from hexscope.engine.errors import (
    BackendError,
    CheckFailed,
    EngineError,
    GraphError,
    InputError,
    NotSimulatedError,
)
from hexscope.engine.events import NodeFailed, RunStatus
from hexscope.engine.executor import NodeStatus
from hexscope.engine.graph import Graph
from hexscope.engine.inputs import declared_shapes
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.session import Session


class Recorder:
    """Wraps a backend to keep the exception each failing node raised (its type decides
    whether a check failed, the graph is wrong, or the backend broke)."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name
        self.errors: dict[int, BaseException] = {}

    def prepare(self, prepared: object) -> None:
        self.inner.prepare(prepared)  # type: ignore[arg-type]

    def run_node(self, node, spec, inputs, ctx):  # type: ignore[no-untyped-def]
        try:
            return self.inner.run_node(node, spec, inputs, ctx)
        except BaseException as exc:
            self.errors[node.node_id] = exc
            raise

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> object:
        # a backend that runs whole graphs has more to say to the executor (begin_run,
        # set_target, runs_graph) and to the report (counters)
        return getattr(self.inner, name)


def open_session(graph: Graph, backend: str | Backend, seed: int,
                  result: BatchResult, fusions: bool = True) -> Session | None:
    try:
        inner = make_backend(backend)
        session = Session(graph, Recorder(inner), seed=seed,  # type: ignore[arg-type]
                          fusions=fusions)
    except BackendError as exc:
        result.outcome, result.message = Outcome.BACKEND_ERROR, str(exc)
        return None
    except GraphError as exc:
        result.outcome = Outcome.INVALID
        result.message = str(exc).splitlines()[0]
        result.issues = [str(i) for i in exc.issues]
        return None
    except EngineError as exc:
        result.outcome, result.message = Outcome.INVALID, str(exc)
        return None
    result.issues = [str(i) for i in session.issues]
    return session


def device_info(backend: Backend) -> dict[str, object] | None:
    status = getattr(backend, "connection_status", None)
    if not getattr(backend, "runs_graph", False) or status is None:
        return None
    info = status()
    kind = getattr(backend, "counter_kind", 0)
    return {"address": info.address, "agent": info.description,
            "hexagon_nn_version": f"0x{info.hexagon_nn_version:08x}",
            "counter": "simulated-ns" if kind == 1 else "cycles"}


def run_one(session: Session, recorder: Recorder, input_set: InputSet) -> RunRecord:
    input_set = input_set.loaded(session.graph)
    run = RunRecord(input_set.name, list(input_set.sources), Outcome.PASSED)
    if input_set.error:
        run.outcome, run.message = Outcome.INVALID, input_set.error
        return run
    recorder.errors.clear()
    failed_seconds: dict[int, float] = {}

    def on_event(event: object) -> None:
        if isinstance(event, NodeFailed):
            failed_seconds[event.node_id] = event.seconds

    first_line = len(session.log.lines)
    disconnect = session.events.connect(on_event)
    try:
        session.reset_state()
        session.set_inputs(input_set.tensors)
        start = time.perf_counter()
        finished = session.run()
        run.seconds = time.perf_counter() - start
    except InputError as exc:
        run.outcome, run.message = Outcome.INVALID, str(exc)
        return run
    finally:
        disconnect()
    lines = session.log.lines[first_line:]
    run.nodes = [_node_record(session, node_id, failed_seconds) for node_id in session.plan]
    counters = getattr(recorder.inner, "counters", None)
    if counters is not None and getattr(recorder.inner, "runs_graph", False):
        for record in run.nodes:
            if record.status == "done":
                record.device_counter = counters.get(record.node_id)
    run.checks = [_check_record(n, recorder, lines) for n in run.nodes if is_check_op(n.op)]
    if finished.status is not RunStatus.FINISHED:
        run.failed_node = finished.failed_node
        run.message = finished.message + _shape_note(session.graph, input_set)
        error = recorder.errors.get(finished.failed_node or -1)
        run.outcome = _classify(error)
    return run


def _shape_note(graph: Graph, input_set: InputSet) -> str:
    """When a run fails and an input's shape is not the one the INPUT node declares, say
    which: the node that fails is often far from the file that caused it."""
    notes = []
    for k, (tensor, declared) in enumerate(zip(input_set.tensors, declared_shapes(graph),
                                               strict=False)):
        if declared is not None and tuple(tensor.shape) != tuple(declared):
            source = input_set.sources[k] if k < len(input_set.sources) else f"input {k}"
            notes.append(f"input {k} ({source}) is {'x'.join(map(str, tensor.shape))}, the "
                         f"INPUT node declares {'x'.join(map(str, declared))}")
    return f" ({'; '.join(notes)})" if notes else ""


def _classify(error: BaseException | None) -> Outcome:
    if isinstance(error, CheckFailed):
        return Outcome.CHECK_FAILED
    if isinstance(error, NotSimulatedError | BackendError):
        return Outcome.BACKEND_ERROR
    if error is not None and not isinstance(error, EngineError):
        return Outcome.BACKEND_ERROR          # a bug in a kernel: the simulator broke
    return Outcome.INVALID


def _node_record(session: Session, node_id: int, failed_seconds: dict[int, float]
                 ) -> NodeRecord:
    node = session.prepared.nodes[node_id]
    status = session.status(node_id)
    record = NodeRecord(node_id, node.op, node.label, "not-run")
    if status is NodeStatus.FAILED:
        record.status = "failed"
        record.message = session.executor.failed.get(node_id, "")
        record.seconds = failed_seconds.get(node_id, 0.0)
    elif status is NodeStatus.DONE:
        result = session.result(node_id)
        assert result is not None
        record.status = "done"
        record.seconds = result.seconds
        record.warnings = list(result.warnings)
        record.outputs = [tensor_stats(t, k, result.outputs)
                          for k, t in enumerate(result.outputs)]
    return record


def _check_record(node: NodeRecord, recorder: Recorder, lines: Sequence[object]
                  ) -> CheckRecord:
    log = [line.text for line in lines if getattr(line, "node_id", None) == node.node_id]
    status = {"done": "passed", "not-run": "not-run"}.get(node.status)
    if status is None:
        error = recorder.errors.get(node.node_id)
        status = "failed" if isinstance(error, CheckFailed) else "error"
    return CheckRecord(node.node_id, node.op, node.label, status, node.message, log)


def plugin_files() -> list[str]:
    """The files this process's user ops came from: a fresh worker loads them too."""
    # user ops without an nnlib id that the engine declares itself (the TFLite delegate's
    # casts) name no file: the worker has them already
    files = {spec.source.rsplit(":", 1)[0] for spec in REGISTRY.specs()
             if spec.user and spec.source}
    return sorted(f for f in files if Path(f).is_file())
