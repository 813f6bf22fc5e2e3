"""Compare two runs node by node, and find the first divergence (issue 12).

A :class:`Trace` is what one run produced: the plan and every node's outputs. Two traces
come from two backends on the same graph and inputs, a pinned run and the current one, or
two graph files. Nodes are matched by id, then (for the rest) by label; the unmatched are
listed. Per output: bit identical or not (every byte, d32 padding included), the logical
elements whose codes differ, the largest code difference, the error metrics in LSB of A's
range, and the first differing element. d32 padding bytes are counted separately: they
never make a node diverge (hexagon_nn leaves most of them undefined).

The float-reference analyses (``float_run``) give the same :class:`OutputDiff` records, so
one :class:`Comparison` holds either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.analysis.diff import (
    OutputDiff,
    data_slots,
    differing_codes,
    lsb_of,
    padding_differing,
    range_slots,
    unit_of,
    values,
)
from hexscope.engine.analysis.metrics import error_metrics
from hexscope.engine.analysis.run_snapshot import RunSnapshot
from hexscope.engine.nodes import Node
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

MODES = ("isolated", "accumulated", "trace")


@dataclass
class Trace:
    """One run's results: nodes in plan order with their outputs."""

    name: str
    plan: tuple[int, ...]
    nodes: dict[int, Node]
    outputs: dict[int, tuple[Tensor, ...]]

    @classmethod
    def from_session(cls, session: Session, name: str = "") -> Trace:
        """The nodes that have run (a pinned run keeps these tensors; runs make new ones)."""
        ex = session.executor
        outputs = {i: r.outputs for i, r in ex.trace.items() if i not in ex.stale}
        return cls(name or session.backend.name, session.plan,
                   dict(session.prepared.nodes), outputs)


@dataclass
class Comparison:
    """B against A per node output, in A's plan order."""

    mode: str
    a_name: str
    b_name: str
    tolerance_lsb: float
    outputs: list[OutputDiff] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)      # node -> why not compared
    unmatched_a: list[str] = field(default_factory=list)
    unmatched_b: list[str] = field(default_factory=list)

    @property
    def first_divergence(self) -> OutputDiff | None:
        return next((d for d in self.outputs if d.exceeds), None)

    @property
    def exceeding(self) -> list[OutputDiff]:
        return [d for d in self.outputs if d.exceeds]

    def worst_first(self) -> list[OutputDiff]:
        """Outputs by decreasing error (LSB where known, else real units)."""
        def key(d: OutputDiff) -> tuple[bool, float]:
            m = d.metrics
            if m is None:
                return (not d.exceeds, 0.0)
            score = m.max_lsb if m.max_lsb is not None else m.max_abs
            return (not d.exceeds, -score)
        return sorted(self.outputs, key=key)

    def by_node(self) -> dict[int, list[OutputDiff]]:
        nodes: dict[int, list[OutputDiff]] = {}
        for d in self.outputs:
            nodes.setdefault(d.node_id, []).append(d)
        return nodes


def match_nodes(a: Trace, b: Trace, *, consts: bool = False
                ) -> tuple[dict[int, int], list[int], list[int]]:
    """A id -> B id: by id, then the rest by label (labels unique in B). The op may differ
    (a node swapped for another implementation is what a comparison looks for). A Const of
    B is matched by id only with ``consts`` (a structural diff, whose plans hold them)."""
    pairs: dict[int, int] = {}
    for i in a.plan:
        if i in b.nodes and (consts or b.nodes[i].op != "Const"):
            pairs[i] = i
    taken = set(pairs.values())
    by_label: dict[str, list[int]] = {}
    for j in b.plan:
        if j not in taken and b.nodes[j].label:
            by_label.setdefault(b.nodes[j].label, []).append(j)
    for i in a.plan:
        label = a.nodes[i].label
        if i not in pairs and label and len(by_label.get(label, ())) == 1:
            pairs[i] = by_label[label][0]
            taken.add(pairs[i])
    unmatched_a = [i for i in a.plan if i not in pairs]
    unmatched_b = [j for j in b.plan if j not in taken]
    return pairs, unmatched_a, unmatched_b


def compare_outputs(node: Node, a_out: tuple[Tensor, ...], b_out: tuple[Tensor, ...],
                    tolerance_lsb: float) -> list[OutputDiff]:
    """Each data output of one node in two runs."""
    diffs = []
    ranges = range_slots(a_out)
    for k in data_slots(a_out):
        ta = a_out[k]
        d = OutputDiff(node.node_id, node.op, node.title, k, tuple(ta.shape))
        diffs.append(d)
        if k >= len(b_out):
            d.note, d.exceeds = "B has no such output", True
            continue
        tb = b_out[k]
        if not (ta.has_data and tb.has_data):
            d.note = "shape-only output"
            continue
        if ta.shape != tb.shape or ta.dtype is not tb.dtype:
            d.note = f"A is {ta.describe()}, B is {tb.describe()}"
            d.exceeds, d.bit_identical = True, False
            continue
        ca, cb = ta.array, tb.array
        mask = differing_codes(ca, cb)
        d.differing = int(np.count_nonzero(mask))
        d.bit_identical = (d.differing == 0 and ta.layout is tb.layout
                           and ta.nbytes == tb.nbytes
                           and bool(np.array_equal(ta.buffer, tb.buffer)))
        d.padding_differing = padding_differing(ta, tb)
        d.max_code_diff = 0.0
        if d.differing:         # (a pass over float64 copies: only when some code differs)
            with np.errstate(invalid="ignore", over="ignore"):
                code_diff = np.abs(ca.astype(np.float64) - cb.astype(np.float64))
            d.max_code_diff = float(np.max(code_diff, initial=0.0, where=mask))
        mn_a, mx_a = (a_out[ranges[k][0]], a_out[ranges[k][1]]) if k in ranges else (None,) * 2
        b_ranges = range_slots(b_out)
        mn_b, mx_b = (b_out[b_ranges[k][0]], b_out[b_ranges[k][1]]) if k in b_ranges \
            else (mn_a, mx_a)
        va, vb = values(ta, mn_a, mx_a), values(tb, mn_b, mx_b)
        lsb = lsb_of(ta, mn_a, mx_a)
        d.metrics = error_metrics(va, vb, lsb, tolerance_lsb)
        d.unit = unit_of(ta, lsb)
        d.source = _reader(ta, mn_a, mx_a, tb, mn_b, mx_b)
        if d.differing:
            first = int(np.flatnonzero(mask.reshape(-1))[0])
            d.first_index = tuple(int(i) for i in np.unravel_index(first, ca.shape))
            d.first_a = float(ca.reshape(-1)[first])
            d.first_b = float(cb.reshape(-1)[first])
        # bit exact by default: any differing code diverges; else beyond the tolerance
        d.exceeds = d.differing > 0 if tolerance_lsb <= 0 else d.metrics.beyond > 0
    return diffs


def _reader(ta: Tensor, mn_a: Tensor | None, mx_a: Tensor | None, tb: Tensor,
            mn_b: Tensor | None, mx_b: Tensor | None
            ) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    return lambda: (values(ta, mn_a, mx_a), values(tb, mn_b, mx_b))


def compare_traces(a: Trace, b: Trace, tolerance_lsb: float = 0.0) -> Comparison:
    """B against A node by node, in A's plan order."""
    pairs, only_a, only_b = match_nodes(a, b)
    result = Comparison("trace", a.name, b.name, tolerance_lsb,
                        unmatched_a=[a.nodes[i].title for i in only_a],
                        unmatched_b=[b.nodes[j].title for j in only_b])
    for i in a.plan:
        if i not in pairs:
            continue
        j = pairs[i]
        if i not in a.outputs or j not in b.outputs:
            result.skipped[i] = f"{'A' if i not in a.outputs else 'B'} has not run this node"
            continue
        diffs = compare_outputs(a.nodes[i], a.outputs[i], b.outputs[j], tolerance_lsb)
        if b.nodes[j].op != a.nodes[i].op or j != i:
            what = f"B is {b.nodes[j].title} ({b.nodes[j].op})"
            for d in diffs:
                d.note = f"{d.note}; {what}" if d.note else what
        result.outputs += diffs
    return result


def compare_reference(session: Session | RunSnapshot, mode: str = "isolated",
                      tolerance_lsb: float = 1.0) -> Comparison:
    """The run in ``session`` (or a snapshot of it) against the float reference, isolated
    or accumulated."""
    from hexscope.engine.analysis import float_run

    analyses: dict[str, Callable[..., tuple[list[OutputDiff], dict[int, str]]]] = {
        "isolated": float_run.isolated, "accumulated": float_run.accumulated}
    if mode not in analyses:
        raise ValueError(f"unknown analysis {mode!r}; choose isolated or accumulated")
    diffs, skipped = analyses[mode](session, tolerance_lsb)
    return Comparison(mode, f"float reference ({mode})", session.backend.name,
                      tolerance_lsb, diffs, skipped)


def run_trace(session: Session, inputs: Sequence[Tensor | np.ndarray] | None = None,
              name: str = "") -> Trace:
    """Execute ``session`` once and keep its trace."""
    session.execute(inputs)
    return Trace.from_session(session, name)
