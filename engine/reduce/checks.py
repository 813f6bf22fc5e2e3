"""What "still fails" means for a candidate: the original run, and the checks a reduction
can use (a node that raises, a Check/Close that fails, a divergence from another graph,
backend or the float reference, or a command of the user's).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hexscope.engine.analysis.compare import (
    Comparison,
    compare_reference,
    compare_traces,
    run_trace,
)
from hexscope.engine.d32_ops import conversion_owner, is_d32_form
from hexscope.engine.dtypes import Layout
from hexscope.engine.errors import Cancelled, NodeError
from hexscope.engine.events import NodeStarted
from hexscope.engine.executor import CancelToken
from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.ops.registry import REGISTRY, Category
from hexscope.engine.prepare import Prepared
from hexscope.engine.reduce.cut import Candidate, Ref
from hexscope.engine.reduce.files import write_candidate
from hexscope.engine.reduce.search import ReduceError, Verdict
from hexscope.engine.reduce.state import variable_ids
from hexscope.engine.reduce.units import Unit, group_map, units_of
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor


@dataclass
class OriginalRun:
    """The graph's own run: its units, prepare's groups, every tensor it computed, and the
    node that failed (None when it ran to the end)."""

    graph: Graph
    prepared: Prepared
    units: list[Unit]
    groups: dict[int, int]
    tensors: dict[int, tuple[Tensor, ...]]
    failed_node: int | None = None
    failed_op: str = ""
    message: str = ""
    #: (node, input) -> what that input read from a Variable (see :mod:`state`)
    reads: dict[tuple[int, int], Tensor] = field(default_factory=dict)

    def value_of(self, ref: Ref) -> Tensor | None:
        """The tensor the authored graph's readers of ``ref`` read in this run. Where
        prepare made the node its d32 form, they read it through a Convert_from_d32: the
        logical (flat) values, which a candidate's own prepare converts again as needed."""
        outputs = self.tensors.get(ref[0])
        if outputs is None or ref[1] >= len(outputs):
            return None
        tensor = outputs[ref[1]]
        if tensor.layout is Layout.D32 and _made_d32(self.graph, self.prepared, ref[0]):
            return tensor.to_flat()
        return tensor

    @property
    def failed_check(self) -> bool:
        """Whether the failing node is a Check or a Close (a test's mismatch)."""
        op = self.failed_op
        return bool(op) and op in REGISTRY and REGISTRY.get(op).category is Category.CHECK


def run_original(graph: Graph, inputs: Sequence[Tensor], backend: str = "sim",
                 seed: int = 0) -> OriginalRun:
    """Run ``graph`` once and keep what a reduction needs (a failing node is no error)."""
    session = Session(graph, backend, seed=seed)
    reads: dict[tuple[int, int], Tensor] = {}

    def note_reads(event: object) -> None:
        # a Variable's readers read the store, which each Assign changes: keep what each
        # one read (the trace has only the Variable's value when it ran)
        if isinstance(event, NodeStarted):
            executor = session.executor
            node = executor.prepared.nodes.get(event.node_id)
            for j, ref in enumerate(node.inputs if node is not None else ()):
                if ref in executor.store:
                    reads[(event.node_id, j)] = executor.store[ref]

    if variable_ids(graph):
        session.events.connect(note_reads)
    try:
        failed: NodeError | None = None
        try:
            session.execute(list(inputs))
        except NodeError as exc:
            failed = exc
        trace = session.executor.trace
        run = OriginalRun(graph, session.prepared, units_of(graph, session.prepared),
                          group_map(session.prepared),
                          {i: r.outputs for i, r in trace.items()}, reads=reads)
    finally:
        session.close()
    if failed is not None:
        # a conversion prepare made fails as part of its d32 node (new ids differ per cut)
        owner = conversion_owner(run.prepared.nodes, failed.node_id)
        run.failed_node, run.failed_op, run.message = owner, failed.op, str(failed)
    return run


def _made_d32(graph: Graph, prepared: Prepared, node_id: int) -> bool:
    """Whether prepare turned the authored node into its d32 form."""
    node = prepared.nodes.get(node_id)
    return (node is not None and node_id in graph and is_d32_form(node.op)
            and not is_d32_form(graph.node(node_id).op))


class NodeFailureCheck:
    """Fails while the same node (by id) fails: the error the original run stopped at."""

    def __init__(self, node_id: int, backend: str = "sim", seed: int = 0) -> None:
        self.node_id, self.backend, self.seed = node_id, backend, seed

    def __call__(self, candidate: Candidate) -> Verdict:
        session = Session(candidate.graph, self.backend, seed=self.seed)
        try:
            session.execute(list(candidate.inputs))
        except NodeError as exc:
            owner = conversion_owner(session.prepared.nodes, exc.node_id)
            return Verdict(owner == self.node_id, str(exc))
        finally:
            session.close()
        return Verdict(False, "ran to the end")


class CompareCheck:
    """Fails while the first divergence is beyond ``tolerance`` LSB: against the float
    reference (``analysis``), another backend (``backend_b``) or another graph with the
    same node ids (``other``: each kept node runs as ``other`` has it)."""

    def __init__(self, tolerance: float, backend: str = "sim", seed: int = 0, *,
                 backend_b: str | None = None, other: Graph | None = None,
                 analysis: str = "isolated") -> None:
        self.tolerance, self.backend, self.seed = tolerance, backend, seed
        self.backend_b, self.other, self.analysis = backend_b, other, analysis

    def comparison(self, candidate: Candidate) -> Comparison:
        a = Session(candidate.graph, self.backend, seed=self.seed)
        try:
            trace = run_trace(a, list(candidate.inputs), self.backend)
            if self.other is None and self.backend_b is None:
                return compare_reference(a, self.analysis, self.tolerance)
            graph = (swap_nodes(candidate, self.other) if self.other is not None
                     else candidate.graph)
            b = Session(graph, self.backend_b or self.backend, seed=self.seed)
            try:
                other = run_trace(b, list(candidate.inputs), "B")
            finally:
                b.close()
            return compare_traces(trace, other, self.tolerance)
        finally:
            a.close()

    def __call__(self, candidate: Candidate) -> Verdict:
        try:
            comparison = self.comparison(candidate)
        except NodeError as exc:
            return Verdict(False, f"did not run: {exc}")
        first = comparison.first_divergence
        if first is None:
            return Verdict(False, f"no output beyond {self.tolerance:g} LSB")
        worst = first.metrics.max_lsb if first.metrics is not None else None
        size = f" ({worst:.3g} LSB)" if worst is not None else ""
        return Verdict(True, f"first divergence {first.label} {first.op}{size}", worst or 0.0)


def swap_nodes(candidate: Candidate, other: Graph) -> Graph:
    """The candidate with each kept node as ``other`` has it (op, padding, outputs, const
    data), wired as in the candidate."""
    nodes = []
    for node in candidate.graph:
        if node.node_id in candidate.kept and node.node_id in other:
            theirs = other.node(node.node_id)
            node = node.with_(op=theirs.op, padding=theirs.padding, outputs=theirs.outputs,
                              const=theirs.const)
        nodes.append(node)
    return Graph.from_snapshot(GraphSnapshot(tuple(nodes), (), dict(candidate.graph.meta)))


class CommandCheck:
    """Runs ``command`` on the candidate saved as a .hexgraph (``{}`` in the command is its
    path, else it goes last): a non-zero exit fails (with ``fail_regex``, only when the
    output matches it too). A command still running after ``timeout`` seconds is killed with
    its process group and counts as failing, or as passing with ``timeout_fails=False``."""

    def __init__(self, command: str, *, fail_regex: str | None = None,
                 timeout: float | None = None, timeout_fails: bool = True,
                 workdir: str | os.PathLike[str] | None = None,
                 cancel: CancelToken | None = None) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ReduceError(f"--check {command!r}: {exc}") from None
        if not self.argv:
            raise ReduceError("--check: the command is empty")
        if shutil.which(self.argv[0]) is None:
            raise ReduceError(f"--check: the command {self.argv[0]!r} was not found")
        try:
            self.regex = re.compile(fail_regex) if fail_regex else None
        except re.error as exc:
            raise ReduceError(f"--fail-regex {fail_regex!r}: {exc}") from None
        self.timeout, self.timeout_fails = timeout, timeout_fails
        self.workdir = workdir
        self.cancel = cancel

    def arguments(self, path: str) -> list[str]:
        if any("{}" in a for a in self.argv):
            return [a.replace("{}", path) for a in self.argv]
        return [*self.argv, path]

    def __call__(self, candidate: Candidate) -> Verdict:
        with tempfile.TemporaryDirectory(prefix="hexscope-reduce-", dir=self.workdir) as tmp:
            path = Path(tmp) / "candidate.hexgraph"
            write_candidate(candidate, path)
            process = subprocess.Popen(self.arguments(str(path)), stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
            try:
                out = self._wait(process)
            except subprocess.TimeoutExpired:
                counted = "failing" if self.timeout_fails else "passing"
                return Verdict(self.timeout_fails, f"timed out after {self.timeout:g} s "
                               f"(killed; counted as {counted})")
        text = out.decode("utf-8", "replace")
        failing = process.returncode != 0 and (self.regex is None
                                               or self.regex.search(text) is not None)
        last = text.strip().splitlines()[-1:] or [""]
        return Verdict(failing, f"exit {process.returncode}: {last[0][:200]}")

    def _wait(self, process: subprocess.Popen[bytes]) -> bytes:
        """The command's output once it exits. Past the timeout, or when the reduction is
        cancelled (checked every POLL_S), its whole process group is killed: a shell
        script's own children would keep the pipe open."""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            try:
                out, _ = process.communicate(timeout=POLL_S)
                return out
            except subprocess.TimeoutExpired:
                cancelled = self.cancel is not None and self.cancel.cancelled
                if cancelled or (deadline is not None and time.monotonic() > deadline):
                    _kill_group(process)
                    process.communicate()
                    if cancelled:
                        raise Cancelled("the reduction was cancelled") from None
                    raise
            except BaseException:
                # Ctrl+C, SIGTERM: its own session does not get the terminal's signals, so
                # it goes with us
                _kill_group(process)
                raise


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):      # it may have ended meanwhile
        os.killpg(process.pid, signal.SIGKILL)


#: how often a running check command looks at the cancel token
POLL_S = 0.1
