"""The padding check: which nodes read d32 padding, found without a FillPadding node.

hexagon_nn leaves padding undefined, so an op whose valid output depends on it gives results
that change from run to run on the device. The check runs the graph once per pattern, with
the padding of every d32 output overwritten by that pattern, and reports each node whose
valid output changed although the valid data of all its inputs did not: the first place a
difference appears. Nodes further down only inherit it.

>>> report = check_padding(graph)
>>> report.readers            # [0x2003]
>>> print("\\n".join(report.lines()))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hexscope.engine.errors import InputError
from hexscope.engine.graph import Graph
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

DEFAULT_PATTERNS = (0x00, 0xFF)


@dataclass(frozen=True, slots=True)
class PaddingFinding:
    """One node that reads padding: its outputs that changed, and how much."""

    node_id: int
    op: str
    outputs: tuple[int, ...]
    changed: int                 # elements of valid output that differ between the runs
    total: int                   # elements of valid output in those outputs
    first: tuple[int, int, int, int] | None   # (b, h, w, d) of the first difference
    note: str = ""

    def describe(self) -> str:
        where = f" first at (b,h,w,d)={self.first}" if self.first is not None else ""
        outs = ",".join(map(str, self.outputs))
        text = (f"0x{self.node_id:x} {self.op}: output {outs} changed in {self.changed} of "
                f"{self.total} valid elements{where}")
        return text + (f" ({self.note})" if self.note else "")


@dataclass
class PaddingReport:
    """The outcome of :func:`check_padding`."""

    patterns: tuple[int, ...]
    findings: list[PaddingFinding] = field(default_factory=list)
    inherited: list[int] = field(default_factory=list)   # changed only because an input did
    d32_outputs: int = 0                                  # d32 outputs whose padding was set
    nodes_run: int = 0
    failures: dict[int, str] = field(default_factory=dict)

    @property
    def readers(self) -> list[int]:
        """Ids of the nodes that read padding, in execution order."""
        return [f.node_id for f in self.findings]

    def lines(self) -> list[str]:
        pats = " and ".join(f"0x{p:02x}" for p in self.patterns)
        head = (f"padding check: {self.nodes_run} nodes run with the padding of "
                f"{self.d32_outputs} d32 output(s) set to {pats}")
        out = [head]
        if not self.findings:
            out.append("no node reads padding")
        else:
            out.append(f"{len(self.findings)} node(s) read padding:")
            out += ["  " + f.describe() for f in self.findings]
        if self.inherited:
            out.append("changed only through their inputs: "
                       + ", ".join(f"0x{i:x}" for i in self.inherited))
        for node_id, reason in self.failures.items():
            out.append(f"0x{node_id:x} failed in one run: {reason}")
        return out


def _valid_bytes(t: Tensor) -> bytes | None:
    """The valid data as bytes (NaNs compare by their bits), or None if shape-only."""
    if not t.has_data:
        return None
    return np.ascontiguousarray(t.array).tobytes()


def _run(graph: Graph, inputs: Sequence[Tensor], pattern: int) -> Session:
    session = Session(graph, padding_override=pattern)
    session.set_inputs(list(inputs))
    session.run()
    return session


def _outputs(session: Session, node_id: int) -> tuple[Tensor, ...] | None:
    result = session.result(node_id)
    return None if result is None else result.outputs


def _diff_mask(a: Tensor, b: Tensor) -> np.ndarray | None:
    """Per-element difference of the valid data, or None when shapes or types differ."""
    if a.shape != b.shape or a.dtype is not b.dtype:
        return None
    x = np.ascontiguousarray(a.array).view(np.uint8).reshape(*a.shape, -1)
    y = np.ascontiguousarray(b.array).view(np.uint8).reshape(*b.shape, -1)
    return (x != y).any(axis=-1)


def _compare_node(runs: list[Session], node_id: int) -> tuple[list[int], int, int, tuple | None,
                                                               str]:
    """Outputs of ``node_id`` whose valid data differs from run 0 in any run; the number of
    differing elements (union over the runs), their total, and the first difference."""
    base = _outputs(runs[0], node_id)
    masks: dict[int, np.ndarray] = {}
    note = ""
    for other in runs[1:]:
        outs = _outputs(other, node_id)
        if (base is None) != (outs is None):
            note = "ran in one run and failed in another"
        if base is None or outs is None:
            continue
        for k, (a, b) in enumerate(zip(base, outs, strict=False)):
            if _valid_bytes(a) == _valid_bytes(b):
                continue
            mask = _diff_mask(a, b)
            if mask is None:
                mask = np.ones(b.shape, bool)
                note = "output shape or type changed"
            masks[k] = masks[k] | mask if k in masks and masks[k].shape == mask.shape else mask
    count = sum(int(m.sum()) for m in masks.values())
    total = sum(int(m.size) for m in masks.values())
    first = None
    for k in sorted(masks):
        idx = np.argwhere(masks[k])
        if idx.size:
            first = tuple(int(v) for v in idx[0])
            break
    return sorted(masks), count, total, first, note


def check_padding(graph: Graph, inputs: Sequence[Tensor | np.ndarray] | None = None,
                  patterns: Sequence[int] = DEFAULT_PATTERNS,
                  base_dir: str | Path | None = None) -> PaddingReport:
    """Find the nodes whose valid output depends on the contents of d32 padding.

    Parameters
    ----------
    graph
        The graph to check; it is validated and prepared as for a normal run.
    inputs
        One tensor per INPUT output; default: the graph's saved input sources
        (:func:`hexscope.engine.inputs.make_inputs`).
    patterns
        Two or more byte values written into the padding of every d32 output, one run each.
    base_dir
        Where relative input paths are resolved (the graph file's folder).

    Returns
    -------
    PaddingReport
        ``readers`` lists the nodes that read padding; ``lines()`` describes the result.

    Raises
    ------
    GraphError
        The graph is invalid.
    InputError
        The inputs cannot be made, or fewer than two patterns were given.
    """
    pats = tuple(int(p) & 0xFF for p in patterns)
    if len(pats) < 2 or len(set(pats)) < 2:
        raise InputError(f"the padding check needs two different patterns, got {list(patterns)}")
    if inputs is None:
        from hexscope.engine.inputs import make_inputs

        inputs = make_inputs(graph, base_dir)
    from hexscope.engine.session import as_input_tensor

    tensors = [as_input_tensor(x) for x in inputs]
    runs = [_run(graph, tensors, p) for p in pats]
    return _report(runs, pats)


def _report(runs: list[Session], pats: tuple[int, ...]) -> PaddingReport:
    from hexscope.engine.dtypes import Layout

    report = PaddingReport(pats)
    plan = runs[0].plan
    prepared = runs[0].prepared.nodes
    differing: set[tuple[int, int]] = set()
    for node_id in plan:
        node = prepared[node_id]
        if node.is_const:
            continue
        outs = _outputs(runs[0], node_id)
        if outs is not None:
            report.nodes_run += 1
            report.d32_outputs += sum(t.layout is Layout.D32 for t in outs)
        changed, count, total, first, note = _compare_node(runs, node_id)
        if not changed and not note:
            continue
        n_out = len(node.outputs)
        differing.update((node_id, k) for k in (changed if not note else range(n_out)))
        if any(ref in differing for ref in node.inputs):
            report.inherited.append(node_id)
            continue
        report.findings.append(PaddingFinding(node_id, node.op, tuple(changed), count, total,
                                              first, note))
    for session in runs:
        for node_id, reason in session.executor.failed.items():
            report.failures.setdefault(node_id, reason)
        session.close()
    return report
