"""The reduction: bisect the end, then the start, then delta-debug the side branches.

As Polygraphy's ``debug reduce`` does in its two phases, the graph's units (prepared groups,
in plan order) are first cut from the end while the candidate still fails, then from the
start; what is left between is then thinned by delta debugging (ddmin, removing complements)
over single units. ``mode="linear"`` removes one unit at a time instead of bisecting, for
failures that do not behave monotonically. Every candidate is validated and prepared before
it is checked (a candidate that prepare fuses differently from the original is not run), its
verdict is cached by the candidate's content, and the cache goes to a replay file after each
iteration so that an interrupted reduction resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from os import PathLike
from pathlib import Path

from hexscope.engine.errors import Cancelled, EngineError, GraphError
from hexscope.engine.executor import CancelToken
from hexscope.engine.graph import Graph
from hexscope.engine.io.atomic import atomic_write
from hexscope.engine.nodes import Node
from hexscope.engine.reduce.cut import Candidate, ValueOf, cut_graph
from hexscope.engine.reduce.state import Reads
from hexscope.engine.reduce.units import Unit, group_map
from hexscope.engine.validate import errors, validate

MODES = ("bisect", "linear")


class ReduceError(EngineError):
    """A reduction cannot start or go on (the check command is missing, ...)."""


class NotFailing(ReduceError):
    """The graph does not fail the check as given: there is nothing to reduce."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a check said of one candidate: ``failing`` it still shows the failure."""

    failing: bool
    detail: str = ""
    score: float = 0.0      # how badly it fails (a divergence's LSB): picks the worst input set


#: the check: does this candidate still fail?
Check = Callable[[Candidate], Verdict]


@dataclass
class Iteration:
    """One candidate tried: its phase, size, verdict ("fail", "pass" or "invalid"), where
    the verdict came from ("run", "cache" or "replay"), and the prepared form it ran as."""

    number: int
    phase: str
    units: int
    nodes: int
    verdict: str
    source: str
    seconds: float
    detail: str = ""
    prepared: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Progress:
    """Sent before each candidate is checked."""

    iteration: int
    phase: str
    nodes: int          # the candidate's node count
    best_nodes: int     # the smallest failing candidate's so far


@dataclass
class ReduceResult:
    original_nodes: int
    best: Candidate
    min_good: Candidate | None
    iterations: list[Iteration]
    seconds: float
    mode: str

    def summary(self) -> dict[str, object]:
        """What reduce.json holds."""
        return {"mode": self.mode, "original_nodes": self.original_nodes,
                "reduced_nodes": self.best.size, "reduced_units": len(self.best.units),
                "kept_units": [f"0x{g:x}" for g in self.best.units],
                "min_good_nodes": self.min_good.size if self.min_good else None,
                "iterations": len(self.iterations),
                "checked": sum(i.source == "run" for i in self.iterations),
                "seconds": round(self.seconds, 3),
                "cuts": [{"tensor": f"0x{c.ref[0]:x}:{c.ref[1]}", "as": c.kind,
                          "into": f"0x{c.into[0]:x}:{c.into[1]}"} for c in self.best.cuts],
                "log": [asdict(i) for i in self.iterations]}


class Reducer:
    """Reduce ``graph`` (its ``units`` and the original run's tensors, ``value_of``) to a
    smallest candidate that ``check`` still finds failing."""

    def __init__(self, graph: Graph, units: Sequence[Unit], value_of: ValueOf, check: Check,
                 *, mode: str = "bisect", replay: str | PathLike[str] | None = None,
                 groups: dict[int, int] | None = None,
                 progress: Callable[[Progress], None] | None = None,
                 cancel: CancelToken | None = None, check_name: str = "",
                 reads: Reads | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose bisect or linear")
        self.graph, self.units, self.value_of, self.check = graph, list(units), value_of, check
        self.reads = reads or {}
        self.mode = mode
        self.groups = groups or {}
        self.progress, self.cancel = progress, cancel
        self.replay = Path(replay) if replay is not None else None
        self.cache: dict[str, Verdict] = {}
        self._memo: dict[int, tuple[object, bytes]] = {}
        # a replay file of another check is not reused (its verdicts answer another question)
        self.check_name = check_name
        self.replayed: dict[str, Verdict] = read_replay(self.replay, check_name)
        self.iterations: list[Iteration] = []
        self.best: Candidate | None = None
        self.passing: list[Candidate] = []

    # the search ---------------------------------------------------------------------------
    def run(self) -> ReduceResult:
        """Raises NotFailing when the whole graph, as cut for reduction, does not fail."""
        start = time.perf_counter()
        n = len(self.units)
        if n == 0:
            raise GraphError("the graph has no node to reduce (only Consts, INPUT and OUTPUT)")
        if not self._fails(range(n), "whole graph"):
            last = self.iterations[-1]
            raise NotFailing("the graph does not fail the check as given, so there is nothing "
                             f"to reduce ({last.verdict}: {last.detail or 'no detail'})")
        end = self._cut_end(n)
        begin = self._cut_start(end)
        kept = self._thin(list(range(begin, end + 1)))
        assert self.best is not None and set(self.best.units) == {self.units[k].group
                                                                   for k in kept}
        return ReduceResult(len(self.graph), self.best, self._min_good(),
                            self.iterations, time.perf_counter() - start, self.mode)

    def _cut_end(self, n: int) -> int:
        if self.mode == "linear":
            end = n - 1
            while end > 0 and self._fails(range(end), "end"):
                end -= 1
            return end
        lo, hi = 0, n - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if self._fails(range(mid + 1), "end"):
                hi = mid
            else:
                lo = mid + 1
        return hi

    def _cut_start(self, end: int) -> int:
        if self.mode == "linear":
            begin = 0
            while begin < end and self._fails(range(begin + 1, end + 1), "start"):
                begin += 1
            return begin
        lo, hi = 0, end
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._fails(range(mid, end + 1), "start"):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _thin(self, kept: list[int]) -> list[int]:
        """Delta debugging over the units between the start and the end: remove chunks
        (complements of ddmin) while the candidate still fails; one unit at a time in
        linear mode."""
        chunks = len(kept) if self.mode == "linear" else 2
        while len(kept) >= 2:
            size = -(-len(kept) // chunks)
            parts = [kept[k:k + size] for k in range(0, len(kept), size)]
            for part in parts:
                rest = [k for k in kept if k not in part]
                if self._fails(rest, "branches"):
                    kept = rest
                    chunks = max(chunks - 1, 2) if self.mode == "bisect" else len(kept)
                    break
            else:
                if chunks >= len(kept):
                    break
                chunks = min(len(kept), chunks * 2)
        return kept

    def _min_good(self) -> Candidate | None:
        """The largest passing candidate that holds only kept units of the result's, else
        the passing one nearest the result in size."""
        assert self.best is not None
        best = set(self.best.units)
        inside = [c for c in self.passing if set(c.units) <= best]
        if inside:
            return max(inside, key=lambda c: c.size)
        if not self.passing:
            return None
        return min(self.passing, key=lambda c: abs(c.size - self.best.size))  # type: ignore

    # one candidate -----------------------------------------------------------------------
    def _fails(self, kept: Sequence[int] | range, phase: str) -> bool:
        if self.cancel is not None and self.cancel.cancelled:
            raise Cancelled("the reduction was cancelled")
        begin = time.perf_counter()
        number = len(self.iterations) + 1
        try:
            candidate = cut_graph(self.graph, self.units, list(kept), self.value_of,
                                  self.reads)
        except EngineError as exc:
            self._log(number, phase, len(kept), 0, "invalid", "run", begin, str(exc))
            return False
        if self.progress is not None:
            self.progress(Progress(number, phase, candidate.size,
                                   self.best.size if self.best else len(self.graph)))
        key = content_key(candidate, self._memo)
        prepared: list[str] = []
        if key in self.cache:
            verdict, source = self.cache[key], "cache"
        elif key in self.replayed:
            verdict, source = self.replayed[key], "replay"
        else:
            problem, prepared = self._validate(candidate)
            verdict = Verdict(False, INVALID + problem) if problem else self.check(candidate)
            source = "run"
        self.cache[key] = verdict
        invalid = verdict.detail.startswith(INVALID)
        word = "invalid" if invalid else "fail" if verdict.failing else "pass"
        self._log(number, phase, len(kept), candidate.size, word, source, begin,
                  verdict.detail, prepared)
        if verdict.failing:
            # the search only ever moves to a failing candidate: the last is the result
            self.best = candidate
        elif not verdict.failing and not invalid:
            self.passing.append(candidate)
        self._write_replay()
        return verdict.failing

    def _validate(self, candidate: Candidate) -> tuple[str, list[str]]:
        """Why the candidate cannot stand for the original ('' when it can), and its
        prepared form."""
        from hexscope.engine.prepare import prepare

        problems = errors(validate(candidate.graph))
        if problems:
            return f"{len(problems)} problem(s): {problems[0]}", []
        try:
            prepared = prepare(candidate.graph)
        except EngineError as exc:
            return f"prepare failed: {exc}", []
        form = [f"0x{i:x} {prepared.nodes[i].op}" for i in prepared.plan]
        mine = group_map(prepared)
        for node_id in candidate.kept:
            if mine.get(node_id) != self.groups.get(node_id):
                return (f"prepare groups 0x{node_id:x} differently from the original (a unit "
                        "would be cut apart)"), form
        return "", form

    def _log(self, number: int, phase: str, units: int, nodes: int, verdict: str,
             source: str, begin: float, detail: str, prepared: list[str] | None = None) -> None:
        self.iterations.append(Iteration(number, phase, units, nodes, verdict, source,
                                         round(time.perf_counter() - begin, 4), detail,
                                         (prepared or [])[:MAX_FORM]))

    def _write_replay(self) -> None:
        if self.replay is None:
            return
        verdicts = {k: asdict(v) for k, v in self.cache.items()}
        document = {"version": 1, "check": self.check_name, "verdicts": verdicts}
        with atomic_write(self.replay, "w", encoding="utf-8") as handle:
            json.dump(document, handle)


#: a verdict's detail starts with this when the candidate never ran
INVALID = "invalid: "
#: how much of a candidate's prepared form the log keeps
MAX_FORM = 64


def content_key(candidate: Candidate, memo: dict[int, tuple[object, bytes]] | None = None
                ) -> str:
    """A digest of what a check sees: every node (id, op, wiring, padding, outputs, const
    bytes, in append order) and the inputs' bytes. Each node's part is worked out once per
    node object when ``memo`` is given (candidates share the original's nodes): saving each
    candidate's file to hash it took half of a reduction's time at 2,000 nodes."""
    digest = hashlib.sha256()
    for node in candidate.graph:
        known = memo.get(id(node)) if memo is not None else None
        if known is None or known[0] is not node:
            known = (node, _node_digest(node))
            if memo is not None:
                memo[id(node)] = known
        digest.update(known[1])
    for tensor in candidate.inputs:
        digest.update(repr((tensor.shape, tensor.dtype.name, tensor.layout.name,
                            tensor.padding)).encode())
        digest.update(tensor.raw.tobytes())
    return digest.hexdigest()


def _node_digest(node: Node) -> bytes:
    part = hashlib.sha256(repr((node.node_id, node.op, node.inputs, node.padding.value,
                                node.outputs, node.label)).encode())
    if node.const is not None:
        part.update(repr((node.const.shape, node.const.dtype.name)).encode())
        if node.const.has_data:
            part.update(node.const.raw.tobytes())
    return part.digest()


def read_replay(path: Path | None, check_name: str = "") -> dict[str, Verdict]:
    """The verdicts a replay file holds by content key (none when it does not exist yet, or
    was written for another check)."""
    if path is None or not path.exists():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("check", "") != check_name:
            return {}
        return {str(k): Verdict(bool(v["failing"]), str(v.get("detail", "")),
                                float(v.get("score", 0.0)))
                for k, v in document["verdicts"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise GraphError(f"{path}: not a reduce replay file ({exc})") from None
