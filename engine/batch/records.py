"""What a batch run records: each run's outcome, nodes and checks, and the batch's result
(the ``hexscope run`` report is made from these)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from hexscope.engine.errors import EngineError
from hexscope.engine.graph import Graph
from hexscope.engine.inputs import InputSource, make_inputs
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
        return ORDER.index(self)


ORDER = [Outcome.PASSED, Outcome.CHECK_FAILED, Outcome.INVALID, Outcome.BACKEND_ERROR]


def worst(outcomes: Sequence[Outcome]) -> Outcome:
    return max(outcomes, key=ORDER.index, default=Outcome.PASSED)


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


def lost_run(input_set: InputSet, why: str) -> RunRecord:
    """The record of a run whose worker died or failed outside the graph."""
    return RunRecord(input_set.name, list(input_set.sources), Outcome.BACKEND_ERROR,
                     message=f"run lost: {why}")
