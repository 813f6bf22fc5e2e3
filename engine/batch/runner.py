"""Batch runs: one graph over many input sets, unattended (the ``hexscope run`` command).

Each input set runs from the state prepare left (``Session.reset_state``), so the
result of a set does not depend on the sets before it. Per run and per node the batch keeps
the status, wall time, output shapes, value ranges and saturation, warnings (such as a
declared output size smaller than what the op produced), and every Check/Close result with
the log lines the node wrote. Ranges over all runs (min, max, percentiles) are gathered for
calibration and the range views. ``dump_dir`` writes every node's outputs as ``.npy`` files
whose bytes depend only on the graph and the inputs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import numpy as np

from hexscope.engine.backends import Backend, make_backend
from hexscope.engine.batch.parallel import run_parallel
from hexscope.engine.batch.stats import RangeAccumulator, RangePartial, tensor_stats
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
from hexscope.engine.inputs import InputSource, declared_shapes, make_inputs
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

CHECK_PREFIXES = ("Check", "Close")


class Outcome(Enum):
    """How a run (or the whole batch) ended, in increasing order of severity."""

    PASSED = "passed"
    CHECK_FAILED = "check-failed"
    INVALID = "invalid"
    BACKEND_ERROR = "backend-error"

    @property
    def exit_code(self) -> int:
        return _ORDER.index(self)


_ORDER = [Outcome.PASSED, Outcome.CHECK_FAILED, Outcome.INVALID, Outcome.BACKEND_ERROR]


def worst(outcomes: Sequence[Outcome]) -> Outcome:
    return max(outcomes, key=_ORDER.index, default=Outcome.PASSED)


def is_check_op(op: str) -> bool:
    return op.startswith(CHECK_PREFIXES)


@dataclass
class InputSet:
    """The tensors of one run (one per INPUT output), or why they could not be loaded.

    Given a ``recipe`` instead (where each input comes from, and the folder relative paths
    start from), the tensors are made when the run starts, in the process that runs it: a
    batch of 50,000 images holds one image at a time (per worker), not all of them, and a
    worker is sent the recipe, not the pixels."""

    name: str
    tensors: list[Tensor] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    error: str = ""
    recipe: tuple[str, list[InputSource]] | None = None     # (base dir, sources)

    def loaded(self, graph: Graph) -> InputSet:
        """This set with its tensors made (or the error that stopped them)."""
        if self.recipe is None or self.error:
            return self
        base_dir, sources = self.recipe
        try:
            tensors = make_inputs(graph, base_dir, sources)
        except EngineError as exc:
            return InputSet(self.name, sources=self.sources, error=str(exc))
        return InputSet(self.name, tensors, self.sources)


@dataclass
class NodeRecord:
    node_id: int
    op: str
    label: str
    status: str                  # "done", "failed" or "not-run"
    seconds: float = 0.0
    outputs: list[dict[str, object]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    message: str = ""
    device_counter: int | None = None   # a connected device's per-node counter (cycles)


@dataclass
class CheckRecord:
    node_id: int
    op: str
    label: str
    status: str                  # "passed", "failed", "error" or "not-run"
    message: str = ""
    log: list[str] = field(default_factory=list)


@dataclass
class RunRecord:
    name: str
    sources: list[str]
    outcome: Outcome
    seconds: float = 0.0
    message: str = ""
    failed_node: int | None = None
    nodes: list[NodeRecord] = field(default_factory=list)
    checks: list[CheckRecord] = field(default_factory=list)

    @property
    def warnings(self) -> list[tuple[int, str]]:
        return [(n.node_id, w) for n in self.nodes for w in n.warnings]


@dataclass
class BatchResult:
    graph_name: str
    backend: str
    outcome: Outcome = Outcome.PASSED
    message: str = ""
    runs: list[RunRecord] = field(default_factory=list)
    ranges: list[dict[str, object]] = field(default_factory=list)
    rewrites: list[dict[str, object]] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    seconds: float = 0.0
    node_count: int = 0
    device: dict[str, object] | None = None    # the connected device, when there is one

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code


class _Recorder:
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


Progress = Callable[[int, int, "RunRecord | None", str], None]


def run_batch(graph: Graph, input_sets: Sequence[InputSet], backend: str | Backend = "sim", *,
              graph_name: str = "graph", dump_dir: str | Path | None = None,
              progress: Progress | None = None, seed: int = 0, jobs: int = 1,
              fusions: bool = True, scheduler: str | None = None) -> BatchResult:
    """Run ``graph`` once per input set; never raises for graph, input or backend trouble
    (the result's outcome says what went wrong). ``jobs`` > 1 runs the sets in that many
    worker processes (a backend given by name only); the result is the same. ``fusions``
    False runs the graph as authored (no Supernode fusion in prepare). ``scheduler``
    (``tcp://HOST:PORT``) sends the sets to that Dask distributed cluster instead (the
    optional extra ``hexscope[cluster]``); the result is the same again."""
    start = time.perf_counter()
    backend_name = backend if isinstance(backend, str) else getattr(backend, "name", "?")
    result = BatchResult(graph_name, backend_name, node_count=len(graph))
    session = _open_session(graph, backend, seed, result, fusions)
    if session is None:
        result.seconds = time.perf_counter() - start
        return result
    recorder: _Recorder = session.backend  # type: ignore[assignment]
    result.rewrites = [{"node": r.node_id, "kind": r.kind, "reason": r.reason}
                       for r in session.rewrites]
    ranges = RangeAccumulator()
    runs: list[RunRecord | None] = [None] * len(input_sets)
    dump_errors: list[str] = [""] * len(input_sets)
    finished = 0

    def done(k: int, run: RunRecord, partial: RangePartial, dump_error: str) -> None:
        nonlocal finished
        runs[k], dump_errors[k] = run, dump_error
        ranges.merge_in_order(k, partial)
        finished += 1
        if progress:
            progress(finished, len(input_sets), run, input_sets[k].name)

    try:
        # a device agent serves one client at a time: its runs go one after another
        remote = getattr(recorder.inner, "runs_graph", False)
        if scheduler is not None:
            if not isinstance(backend, str) or remote:
                raise BackendError("--scheduler runs the simulator, given by name, only")
            from hexscope.engine.batch.cluster import run_on_cluster

            run_on_cluster(graph.to_bytes(), input_sets, backend, seed,
                           None if dump_dir is None else str(dump_dir), scheduler, done,
                           fusions=fusions)
        elif jobs > 1 and len(input_sets) > 1 and isinstance(backend, str) and not remote:
            run_parallel(graph, input_sets, backend, seed,
                         None if dump_dir is None else str(dump_dir), jobs, done,
                         fusions=fusions)
        else:
            for k, input_set in enumerate(input_sets):
                if progress:
                    progress(k, len(input_sets), None, input_set.name)
                run = _run_one(session, recorder, input_set)
                dump_error = ""
                if dump_dir is not None and not any(dump_errors):
                    dump_error = _dumped(dump_dir, _dump_run, Path(dump_dir), k, run, session)
                done(k, run, ranges.partial(session, run.nodes), dump_error)
    except BackendError as exc:          # the cluster cannot be reached: nothing ran
        result.outcome, result.message = Outcome.BACKEND_ERROR, str(exc)
        result.seconds = time.perf_counter() - start
        return result
    finally:
        session.close()
    # In run order, whatever order they finished in: the same result for any jobs.
    result.runs = [run for run in runs if run is not None]
    dump_error = next((e for e in dump_errors if e), "")
    if dump_dir is not None and not dump_error:
        dump_error = _dumped(dump_dir, _dump_manifest, Path(dump_dir), result)
    result.ranges = ranges.records(session)
    result.device = _device(recorder.inner)
    result.outcome = worst([r.outcome for r in result.runs])
    failed = [r for r in result.runs if r.outcome is result.outcome and r.message]
    result.message = failed[0].message if failed and result.outcome is not Outcome.PASSED else ""
    if dump_error and _ORDER.index(result.outcome) <= _ORDER.index(Outcome.INVALID):
        # The runs are kept and reported; the missing dump makes the batch invalid (exit 2).
        result.outcome, result.message = Outcome.INVALID, dump_error
    result.seconds = time.perf_counter() - start
    return result


def _dumped(dump_dir: str | Path, write: Callable[..., None], *args: object) -> str:
    """Run a dump step; '' when it worked, else why it could not write (a full disk, a file
    where a folder should be): the batch goes on without dumping."""
    try:
        write(*args)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"cannot write the dump to {dump_dir}: {where}{exc.strerror or exc}"
    return ""


def _open_session(graph: Graph, backend: str | Backend, seed: int,
                  result: BatchResult, fusions: bool = True) -> Session | None:
    try:
        inner = make_backend(backend)
        session = Session(graph, _Recorder(inner), seed=seed,  # type: ignore[arg-type]
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


def _device(backend: Backend) -> dict[str, object] | None:
    status = getattr(backend, "connection_status", None)
    if not getattr(backend, "runs_graph", False) or status is None:
        return None
    info = status()
    kind = getattr(backend, "counter_kind", 0)
    return {"address": info.address, "agent": info.description,
            "hexagon_nn_version": f"0x{info.hexagon_nn_version:08x}",
            "counter": "simulated-ns" if kind == 1 else "cycles"}


def _run_one(session: Session, recorder: _Recorder, input_set: InputSet) -> RunRecord:
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


def _check_record(node: NodeRecord, recorder: _Recorder, lines: Sequence[object]
                  ) -> CheckRecord:
    log = [line.text for line in lines if getattr(line, "node_id", None) == node.node_id]
    status = {"done": "passed", "not-run": "not-run"}.get(node.status)
    if status is None:
        error = recorder.errors.get(node.node_id)
        status = "failed" if isinstance(error, CheckFailed) else "error"
    return CheckRecord(node.node_id, node.op, node.label, status, node.message, log)


# dumps ------------------------------------------------------------------------------------
def run_dir_name(index: int) -> str:
    return f"run-{index + 1:04d}"


def _dump_run(root: Path, index: int, run: RunRecord, session: Session) -> None:
    """``root/run-NNNN/0x<id>_<k>.npy`` (logical NHWC data) for every output that ran, plus
    ``.d32.npy`` (memory order, padding included) for d32 tensors, and ``outputs.json``."""
    folder = root / run_dir_name(index)
    folder.mkdir(parents=True, exist_ok=True)
    entries: dict[str, list[dict[str, object]]] = {}
    for node in run.nodes:
        result = session.result(node.node_id) if node.status == "done" else None
        if result is None:
            continue
        files = []
        for k, tensor in enumerate(result.outputs):
            info = tensor_stats(tensor, k, result.outputs)
            if tensor.has_data:
                name = f"0x{node.node_id:x}_{k}.npy"
                _save_npy(folder / name, np.ascontiguousarray(tensor.array))
                info["file"] = name
                if tensor.layout.name == "D32":
                    mem_name = f"0x{node.node_id:x}_{k}.d32.npy"
                    _save_npy(folder / mem_name, np.ascontiguousarray(tensor.memory))
                    info["memory_file"] = mem_name
            files.append(info)
        entries[f"0x{node.node_id:x}"] = files
    document = {"run": run.name, "sources": run.sources, "outcome": run.outcome.value,
                "outputs": entries}
    _write_json(folder / "outputs.json", document)


def _dump_manifest(root: Path, result: BatchResult) -> None:
    runs = [{"dir": run_dir_name(k), "name": r.name, "outcome": r.outcome.value}
            for k, r in enumerate(result.runs)]
    _write_json(root / "manifest.json", {"format": "hexscope-dump", "version": 1,
                                         "graph": result.graph_name, "runs": runs})


def _save_npy(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as handle:
        np.save(handle, array, allow_pickle=False)


def _write_json(path: Path, document: object) -> None:
    path.write_text(json.dumps(document, indent=1, sort_keys=True, allow_nan=False) + "\n",
                    encoding="utf-8")
