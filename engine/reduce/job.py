"""One reduction from a description of the check: the command line and the app both say
what "fails" means with a :class:`CheckSpec`, and :func:`prepare_reduction` runs the original
graph on each input set, keeps the worst, and makes the check and the reducer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from hexscope.engine.executor import CancelToken
from hexscope.engine.graph import Graph
from hexscope.engine.reduce.checks import (
    CommandCheck,
    CompareCheck,
    NodeFailureCheck,
    OriginalRun,
    run_original,
)
from hexscope.engine.reduce.cut import cut_graph
from hexscope.engine.reduce.search import (
    Check,
    NotFailing,
    Progress,
    ReduceError,
    Reducer,
    Verdict,
    content_key,
    read_replay,
)
from hexscope.engine.tensor import Tensor

#: what a check can be: a node raising (the original's failing node), a Check/Close failing,
#: a command, or a divergence from another graph, another backend or the float reference
KINDS = ("node-error", "check-failed", "command", "against", "backend-b", "reference")


@dataclass(frozen=True)
class CheckSpec:
    """What "still fails" means. ``kind`` is one of :data:`KINDS`."""

    kind: str = "node-error"
    command: str = ""
    fail_regex: str | None = None
    timeout: float | None = None
    timeout_fails: bool = True
    other: Graph | None = None
    backend_b: str = ""
    analysis: str = "isolated"
    tolerance: float = 1.0

    def describe(self) -> str:
        return {"node-error": "the same node raises an error",
                "check-failed": "the same Check/Close fails",
                "command": f"`{self.command}` exits non-zero"
                           + (f" with output matching /{self.fail_regex}/"
                              if self.fail_regex else "")
                           + (f" (a run over {self.timeout:g} s "
                              f"{'fails' if self.timeout_fails else 'passes'})"
                              if self.timeout is not None else ""),
                "against": f"diverges from the other graph beyond {self.tolerance:g} LSB",
                "backend-b": f"diverges from {self.backend_b} beyond {self.tolerance:g} LSB",
                "reference": f"diverges from the float reference ({self.analysis}) beyond "
                             f"{self.tolerance:g} LSB"}[self.kind]


def make_check(spec: CheckSpec, run: OriginalRun, backend: str = "sim",
               seed: int = 0, cancel: CancelToken | None = None) -> Check:
    """The check for ``spec``; raises ReduceError when it cannot apply to this run (no node
    failed, or the failing node is no Check)."""
    if spec.kind in ("node-error", "check-failed"):
        if run.failed_node is None:
            raise ReduceError("the graph runs to the end without an error: nothing to reduce "
                              "for a node error (say what fails with --check, --against, "
                              "--backend-b or --reference)")
        if spec.kind == "check-failed" and not run.failed_check:
            raise ReduceError(f"the run stops at {run.message}, which is no Check or Close")
        return NodeFailureCheck(run.failed_node, backend, seed)
    if spec.kind == "command":
        return CommandCheck(spec.command, fail_regex=spec.fail_regex, timeout=spec.timeout,
                            timeout_fails=spec.timeout_fails, cancel=cancel)
    if spec.kind in ("against", "backend-b", "reference"):
        return CompareCheck(spec.tolerance, backend, seed,
                            backend_b=spec.backend_b or None if spec.kind == "backend-b"
                            else None,
                            other=spec.other if spec.kind == "against" else None,
                            analysis=spec.analysis)
    raise ValueError(f"unknown check {spec.kind!r}; choose one of {', '.join(KINDS)}")


@dataclass
class Reduction:
    """The chosen input set's original run, its check and the reducer ready to run."""

    run: OriginalRun
    check: Check
    reducer: Reducer
    input_index: int
    first: Verdict


def prepare_reduction(graph: Graph, input_sets: Sequence[Sequence[Tensor]], spec: CheckSpec,
                      *, backend: str = "sim", seed: int = 0, mode: str = "bisect",
                      replay: str | PathLike[str] | None = None,
                      progress: Callable[[Progress], None] | None = None,
                      cancel: CancelToken | None = None) -> Reduction:
    """Run the original on every input set and keep the worst: the first that fails, or
    with a divergence, the one that diverges the most (one input set for every candidate).

    Raises
    ------
    ReduceError
        No input set fails.
    """
    chosen: tuple[float, int, OriginalRun, Check, Verdict] | None = None
    last = ""
    known = read_replay(Path(replay) if replay is not None else None, spec.describe())
    for k, tensors in enumerate(input_sets):
        run = run_original(graph, tensors, backend, seed)
        try:
            check = make_check(spec, run, backend, seed, cancel)
        except ReduceError as exc:
            if spec.kind not in ("node-error", "check-failed"):
                raise                   # the check itself is wrong, not this input set
            last = str(exc)
            continue
        if not run.units:
            raise ReduceError("the graph has no node to reduce (only Consts, INPUT and OUTPUT)")
        if spec.kind == "against" and spec.other is not None and \
                not any(m in spec.other for u in run.units for m in u.members):
            raise ReduceError("the other graph has none of this graph's node ids: --against "
                              "compares each kept node with the node of the same id there")
        whole = cut_graph(graph, run.units, range(len(run.units)), run.value_of, run.reads)
        verdict = known.get(content_key(whole)) or check(whole)
        last = verdict.detail
        if verdict.failing and (chosen is None or verdict.score > chosen[0]):
            chosen = (verdict.score, k, run, check, verdict)
        if verdict.failing and spec.kind not in ("against", "backend-b", "reference"):
            break
    if chosen is None:
        raise NotFailing(f"the graph does not fail ({spec.describe()}) on "
                          f"{'its input' if len(input_sets) == 1 else 'any input set'}: "
                          f"{last or 'no detail'}")
    _, k, run, check, verdict = chosen
    reducer = Reducer(graph, run.units, run.value_of, check, mode=mode, replay=replay,
                      groups=run.groups, progress=progress, cancel=cancel,
                      check_name=spec.describe(), reads=run.reads)
    # the whole graph was just checked: the search starts from that verdict
    whole = cut_graph(graph, run.units, range(len(run.units)), run.value_of, run.reads)
    reducer.cache[content_key(whole)] = verdict
    return Reduction(run, check, reducer, k, verdict)
