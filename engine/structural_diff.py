"""What changed between two graphs, structurally (issue 31): nodes added, removed and changed.

Nodes are matched as Compare matches them (:func:`~hexscope.engine.analysis.compare.
match_nodes`: by id, then the rest by a label unique in B), consts included. A matched pair
differs in its op, padding, inputs (compared through the matching: an input from the node
matched to the same source is no change), output declarations, label, or const data (the
number of bytes that differ and the largest change of a value). Positions are layout, not
structure: a node that only moved is no difference here (``engine/graph_diff.py`` tells an
autosave's moves apart).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.analysis.compare import Trace, match_nodes
from hexscope.engine.nodes import Node, OutputDef
from hexscope.engine.tensor import Tensor

FORMAT = "hexscope-diff"
VERSION = 1
ADDED, REMOVED, CHANGED = "added", "removed", "changed"
#: how every view marks each kind (the HTML report's drawing, the app's side-by-side view)
KIND_COLOURS = {REMOVED: "#ef8a8a", CHANGED: "#ffc46b", ADDED: "#7fb8f0"}


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of a matched node that differs: A's value, B's value, and for const data
    the numbers behind it."""

    field: str          # "op", "padding", "inputs", "outputs", "const", "label"
    a: str
    b: str
    detail: str = ""
    differing_bytes: int | None = None
    largest_change: float | None = None

    def text(self) -> str:
        return f"{self.field}: {self.a} → {self.b}" + (f" ({self.detail})" if self.detail
                                                       else "")


@dataclass(frozen=True, slots=True)
class NodeDiff:
    """A node only in A (removed), only in B (added), or in both but different (changed)."""

    kind: str
    a_id: int | None
    b_id: int | None
    title: str
    op: str
    changes: tuple[FieldChange, ...] = ()

    def text(self) -> str:
        head = f"{self.kind:8} {self.title} ({self.op})"
        return head + "".join(f"\n           {c.text()}" for c in self.changes)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "a": _hex(self.a_id), "b": _hex(self.b_id),
                "title": self.title, "op": self.op,
                "changes": [{"field": c.field, "a": c.a, "b": c.b, "detail": c.detail,
                             "differing_bytes": c.differing_bytes,
                             "largest_change": c.largest_change} for c in self.changes]}


@dataclass(frozen=True)
class StructuralDiff:
    """B against A: the differing nodes in A's order (then B's added ones), and the pairs."""

    a_name: str
    b_name: str
    pairs: dict[int, int]
    entries: tuple[NodeDiff, ...]
    a_count: int = 0
    b_count: int = 0
    by_a: dict[int, NodeDiff] = field(default_factory=dict, repr=False)
    by_b: dict[int, NodeDiff] = field(default_factory=dict, repr=False)

    @property
    def same(self) -> bool:
        return not self.entries

    def of_kind(self, kind: str) -> list[NodeDiff]:
        return [e for e in self.entries if e.kind == kind]

    def summary(self) -> str:
        if self.same:
            return f"no structural difference ({self.a_count} nodes)"
        counts = {k: len(self.of_kind(k)) for k in (ADDED, REMOVED, CHANGED)}
        return (f"{counts[CHANGED]} changed, {counts[REMOVED]} removed, {counts[ADDED]} added "
                f"({self.a_count} nodes in A, {self.b_count} in B, {len(self.pairs)} matched)")

    def to_json(self) -> dict[str, object]:
        return {"format": FORMAT, "version": VERSION, "a": self.a_name, "b": self.b_name,
                "same": self.same,
                "summary": {"nodes_a": self.a_count, "nodes_b": self.b_count,
                            "matched": len(self.pairs), "added": len(self.of_kind(ADDED)),
                            "removed": len(self.of_kind(REMOVED)),
                            "changed": len(self.of_kind(CHANGED))},
                "nodes": [e.to_json() for e in self.entries]}


def structural_diff(a: Iterable[Node], b: Iterable[Node], a_name: str = "A",
                    b_name: str = "B") -> StructuralDiff:
    """B against A (a Graph iterates its nodes; so does ``prepare(g).nodes.values()``)."""
    a_nodes = {n.node_id: n for n in a}
    b_nodes = {n.node_id: n for n in b}
    ta = Trace(a_name, tuple(a_nodes), a_nodes, {})
    tb = Trace(b_name, tuple(b_nodes), b_nodes, {})
    pairs, only_a, only_b = match_nodes(ta, tb, consts=True)
    removed = set(only_a)
    entries: list[NodeDiff] = []
    for i, node in a_nodes.items():
        if i in removed:
            entries.append(NodeDiff(REMOVED, i, None, node.title, node.op))
            continue
        other = b_nodes[pairs[i]]
        changes = node_changes(node, other, pairs, a_nodes, b_nodes)
        if changes:
            entries.append(NodeDiff(CHANGED, i, other.node_id, node.title, node.op, changes))
    entries += [NodeDiff(ADDED, None, j, b_nodes[j].title, b_nodes[j].op) for j in only_b]
    return StructuralDiff(a_name, b_name, pairs, tuple(entries), len(a_nodes), len(b_nodes),
                          {e.a_id: e for e in entries if e.a_id is not None},
                          {e.b_id: e for e in entries if e.b_id is not None})


def node_changes(a: Node, b: Node, pairs: dict[int, int], a_nodes: dict[int, Node],
                 b_nodes: dict[int, Node]) -> tuple[FieldChange, ...]:
    """Every field of ``b`` that differs from ``a``'s (inputs through ``pairs``)."""
    out: list[FieldChange] = []
    if a.node_id != b.node_id:
        out.append(FieldChange("id", f"0x{a.node_id:x}", f"0x{b.node_id:x}",
                               "matched by label"))
    if a.op != b.op:
        out.append(FieldChange("op", a.op, b.op))
    if a.padding != b.padding:
        out.append(FieldChange("padding", a.padding.name, b.padding.name))
    out += _input_changes(a, b, pairs, a_nodes, b_nodes)
    if a.outputs != b.outputs:
        out.append(FieldChange("outputs", _outputs_text(a.outputs), _outputs_text(b.outputs)))
    if a.label != b.label:
        out.append(FieldChange("label", repr(a.label), repr(b.label)))
    if a.const is not None or b.const is not None:
        change = const_change(a.const, b.const)
        if change is not None:
            out.append(change)
    return tuple(out)


def _input_changes(a: Node, b: Node, pairs: dict[int, int], a_nodes: dict[int, Node],
                   b_nodes: dict[int, Node]) -> list[FieldChange]:
    out = []
    for k in range(max(len(a.inputs), len(b.inputs))):
        ra = a.inputs[k] if k < len(a.inputs) else None
        rb = b.inputs[k] if k < len(b.inputs) else None
        # a source matched in neither graph keeps its id (a dangling reference to a node
        # removed from B is the same reference, not a rewiring)
        mapped = None if ra is None else (pairs.get(ra[0], ra[0]), ra[1])
        if mapped != rb:
            out.append(FieldChange(f"input {k}", _ref_text(ra, a_nodes),
                                   _ref_text(rb, b_nodes),
                                   "rewired" if ra is not None and rb is not None else ""))
    return out


def _ref_text(ref: tuple[int, int] | None, nodes: dict[int, Node]) -> str:
    if ref is None:
        return "none"
    src = nodes.get(ref[0])
    return f"{src.title if src else f'0x{ref[0]:x} (missing)'}:{ref[1]}"


def _outputs_text(outputs: tuple[OutputDef, ...]) -> str:
    return "[" + ", ".join("x".join(map(str, o.max_sizes)) + f"/{o.elementsize}B"
                           for o in outputs) + "]"


def const_change(ta: Tensor | None, tb: Tensor | None) -> FieldChange | None:
    """How B's const differs from A's: its type or shape, or the bytes that differ and the
    largest change of a value (in the const's own type); None when they are the same."""
    if ta is None or tb is None:
        return FieldChange("const", "none" if ta is None else ta.describe(),
                           "none" if tb is None else tb.describe())
    if ta.dtype is not tb.dtype or ta.shape != tb.shape or ta.layout is not tb.layout:
        return FieldChange("const", ta.describe(), tb.describe())
    if ta.has_data != tb.has_data:
        return FieldChange("const", _data_text(ta), _data_text(tb))
    if not ta.has_data or ta.same_as(tb):
        return None
    ba, bb = ta.buffer, tb.buffer
    differing = int(np.count_nonzero(ba != bb))
    with np.errstate(invalid="ignore", over="ignore"):
        delta = np.abs(ta.array.astype(np.float64) - tb.array.astype(np.float64))
    finite = np.where(np.isfinite(delta), delta, -1.0)
    k = int(np.argmax(finite))
    where = tuple(int(i) for i in np.unravel_index(k, ta.shape))
    largest = float(delta.reshape(-1)[k])
    va, vb = ta.array.reshape(-1)[k].item(), tb.array.reshape(-1)[k].item()
    detail = (f"{differing} of {ba.size} byte(s) differ; largest change {largest:.7g} at "
              f"{list(where)}: {_value(va)} → {_value(vb)}")
    return FieldChange("const", ta.describe(), tb.describe(), detail, differing, largest)


def _value(v: float | int) -> str:
    # float32 values read as float64 would show digits the const never had
    return f"{v:.7g}" if isinstance(v, float) else str(v)


def _data_text(t: Tensor) -> str:
    return t.describe() + ("" if t.has_data else " (shape only)")


def _hex(node_id: int | None) -> str | None:
    return None if node_id is None else f"0x{node_id:x}"


__all__ = ["ADDED", "CHANGED", "FORMAT", "KIND_COLOURS", "REMOVED", "VERSION", "FieldChange",
           "NodeDiff", "StructuralDiff", "const_change", "node_changes", "structural_diff"]
