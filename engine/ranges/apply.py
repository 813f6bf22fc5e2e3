"""Write calibrated ranges into a graph: the four rewrites that make a run-time range fixed.

* ``QuantizeDownAndShrinkRange_32to8`` becomes ``Requantize_32to8`` with Const min and max;
* a ``Requantize_32to8`` reading a ``RequantizationRange_32`` reads Consts instead (the range
  op, then unread, goes);
* a Supernode's infinite (find-it-at-run-time) output range ends become finite Consts;
* a ``Quantize`` fed by ``Min_f``/``Max_f`` reads Consts (prepare no longer makes it an
  AutoQuantize; Min_f, Max_f and what only they read go).

A node's range is its output 0's entry in the file; a requantize whose only reader is a Relu,
ReluX or Clamp (which pass their input's range on) takes that reader's entry when it has none
itself, which is how a calibration of the prepared graph names it (prepare fused the chain
under the Relu's id). Every range includes 0. Nodes the file does not name stay as they are.

After the rewrite, prepare follows as nnlib's does: a Relu after a Requantize_32to8 with a
const max becomes a ReluX of that max, which the Supernode fusion then takes as its output
range (:mod:`hexscope.engine.prepare.range_ops`). What each op then makes of the range (R1 for
Requantize_32to8, R2 for Quantize: the nudge that makes 0.0 an exact code) is given as the
range actually used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.d32_ops import flat_form
from hexscope.engine.graph import Edit, Graph
from hexscope.engine.nodes import Node, OutputDef, const_tensor
from hexscope.engine.prepare import Prepared
from hexscope.engine.quant import adjust_range, adjust_range_for_zero
from hexscope.engine.ranges.encodings import Encoding, Key, RangesFile

QDOWN = "QuantizeDownAndShrinkRange_32to8"
REQUANT = "Requantize_32to8"
RANGE_OPS = ("RequantizationRange_32", "RequantizationRange_32_ref")
PASS_THROUGH = ("QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8")
#: with their d32 forms (prepare's, the device's), which take the same inputs
SUPERNODES = ("Supernode_8x8p8to8", "Supernode_8x8p32to8", "DepthwiseSupernode_8x8p8to8",
              "DepthwiseSupernode_8x8p32to8", "Supernode_8x8p8to8_ref")
_DEAD_IF_UNREAD = ("Min_f", "Max_f", "Flatten", "Const", *RANGE_OPS)


@dataclass(frozen=True, slots=True)
class Change:
    """One node given fixed ranges."""

    node_id: int
    pattern: str                    # "requantize", "range-op", "supernode" or "quantize"
    before: str                     # the op before and after
    after: str
    given: tuple[float, float]      # the file's range, 0 included
    used: tuple[float, float]       # what the op makes of it
    source: Key                     # the file's entry it came from
    consts: tuple[int, ...] = ()    # new Const ids
    removed: tuple[int, ...] = ()   # nodes that went with the run-time range

    def describe(self) -> str:
        lo, hi = self.given
        text = f"0x{self.node_id:x} {self.before}"
        if self.after != self.before:
            text += f" → {self.after}"
        text += f": [{lo:.6g}, {hi:.6g}]"
        if self.used != self.given:
            text += f", used as [{self.used[0]:.6g}, {self.used[1]:.6g}]"
        if self.source[0] != self.node_id:
            text += f" (the range of 0x{self.source[0]:x}, which passes it on)"
        if self.removed:
            text += "; removed " + ", ".join(f"0x{i:x}" for i in self.removed)
        return text


@dataclass
class Applied:
    """What :func:`apply_ranges` did: the edits (one undo step together) and the changes."""

    edits: list[Edit] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    left: list[str] = field(default_factory=list)     # run-time range nodes the file misses


def range_for(graph: Graph, node_id: int, ranges: RangesFile) -> tuple[Key, Encoding] | None:
    """The file's entry for ``node_id``'s output 0, or its only reader's if that reader
    passes its range on (Relu, ReluX, Clamp)."""
    key = (node_id, 0)
    if key in ranges.encodings:
        return key, ranges.encodings[key]
    readers = {dst for dst, _, _ in graph.consumers(node_id)}
    if len(readers) == 1:
        (reader,) = readers
        if graph.node(reader).op in PASS_THROUGH and (reader, 0) in ranges.encodings:
            return (reader, 0), ranges.encodings[(reader, 0)]
    return None


def apply_ranges(graph: Graph, ranges: RangesFile) -> Applied:
    """Rewrite ``graph`` in place (see the module doc); on an error nothing is changed."""
    applied = Applied()
    try:
        for node in list(graph):
            _apply_one(graph, node, ranges, applied)
    except Exception:
        for edit in reversed(applied.edits):
            graph.apply(edit.inverse())
        raise
    return applied


def _apply_one(graph: Graph, node: Node, ranges: RangesFile, applied: Applied) -> None:
    pattern = _pattern(graph, node)
    if pattern is None:
        return
    found = range_for(graph, node.node_id, ranges)
    if found is None:
        applied.left.append(f"0x{node.node_id:x} {node.op}: no range in the file")
        return
    key, enc = found
    lo, hi = min(0.0, enc.min), max(0.0, enc.max)
    if pattern == "supernode":
        lo_ref, hi_ref = node.inputs[10], node.inputs[11]
        lo = lo if _infinite(graph, lo_ref) else _const_value(graph, lo_ref)
        hi = hi if _infinite(graph, hi_ref) else _const_value(graph, hi_ref)
    lo_id, hi_id = _add_scalar(graph, node, lo, "min", applied), \
        _add_scalar(graph, node, hi, "max", applied)
    old_sources = {src for src, _ in node.inputs}
    new = _rewired(node, pattern, (lo_id, 0), (hi_id, 0))
    applied.edits.append(graph.replace_node(new, f"fixed range of 0x{node.node_id:x}"))
    removed = _remove_unread(graph, old_sources, applied)
    applied.changes.append(Change(node.node_id, pattern, node.op, new.op, (lo, hi),
                                  _used(new.op, lo, hi), key, (lo_id, hi_id),
                                  tuple(removed)))


def _pattern(graph: Graph, node: Node) -> str | None:
    if node.op == QDOWN:
        return "requantize"
    if node.op == REQUANT and len(node.inputs) == 5:
        (a, i), (b, j) = node.inputs[3], node.inputs[4]
        if a == b and (i, j) == (0, 1) and a in graph and graph.node(a).op in RANGE_OPS:
            return "range-op"
    if is_supernode(node.op) and len(node.inputs) >= 12 and \
            (_infinite(graph, node.inputs[10]) or _infinite(graph, node.inputs[11])):
        return "supernode"
    if node.op == "Quantize" and len(node.inputs) == 3:
        ops = [graph.node(s).op if s in graph else "" for s, _ in node.inputs[1:3]]
        if ops == ["Min_f", "Max_f"]:
            return "quantize"
    return None


def is_supernode(op: str) -> bool:
    """A Supernode, flat or in a d32 form (``_d32``, ``InputSupernode_..._outd32``)."""
    return flat_form(op) in SUPERNODES


def _const_value(graph: Graph, ref: tuple[int, int]) -> float:
    node = graph.node(ref[0]) if ref[0] in graph else None
    if node is None or node.const is None or not node.const.has_data:
        return math.nan
    return float(np.asarray(node.const.array, np.float64).reshape(-1)[0])


def _infinite(graph: Graph, ref: tuple[int, int]) -> bool:
    return math.isinf(_const_value(graph, ref))


def _add_scalar(graph: Graph, node: Node, value: float, what: str, applied: Applied) -> int:
    const_id = graph.free_id(node.node_id + 1)
    const = Node(const_id, "Const", outputs=(OutputDef((1, 1, 1, 1), 4),),
                 const=const_tensor(np.full((1, 1, 1, 1), value, np.float32)),
                 label=f"calibrated {what} of 0x{node.node_id:x}")
    applied.edits.append(graph.add_node(const, graph.order.index(node.node_id)))
    return const_id


def _rewired(node: Node, pattern: str, lo: tuple[int, int], hi: tuple[int, int]) -> Node:
    if pattern == "requantize":
        return node.with_(op=REQUANT, inputs=(*node.inputs[:3], lo, hi))
    if pattern == "range-op":
        return node.with_(inputs=(*node.inputs[:3], lo, hi))
    if pattern == "supernode":
        return node.with_(inputs=(*node.inputs[:10], lo, hi, *node.inputs[12:]))
    return node.with_(inputs=(node.inputs[0], lo, hi))


def _remove_unread(graph: Graph, candidates: set[int], applied: Applied) -> list[int]:
    """Remove the candidates nothing reads any more (range ops, Min_f/Max_f, the Flatten
    and Consts only they read), and then their own sources likewise."""
    removed: list[int] = []
    todo = sorted(candidates)
    while todo:
        node_id = todo.pop()
        if node_id not in graph or graph.consumers(node_id):
            continue
        node = graph.node(node_id)
        if node.op not in _DEAD_IF_UNREAD:
            continue
        applied.edits.append(graph.remove_node(node_id))
        removed.append(node_id)
        todo.extend(src for src, _ in node.inputs)
    return sorted(removed)


def _used(op: str, lo: float, hi: float) -> tuple[float, float]:
    """The range the op makes of [lo, hi] (quantized-ops spec §1.5, §17.2)."""
    if op == REQUANT:
        return adjust_range(lo, hi)
    if op == "Quantize":
        f32 = np.float32
        mx = max(f32(f32(lo) + f32(1e-18)), f32(hi))
        return adjust_range_for_zero(lo, float(mx)) if lo < 0 else (lo, float(mx))
    return lo, hi


def runtime_range_nodes(prepared: Prepared) -> list[tuple[int, str]]:
    """The nodes of a prepared graph that find a range at run time, with what they are:
    shrinking requantizes, range ops, AutoQuantize, Supernodes with an infinite end."""
    found: list[tuple[int, str]] = []
    for node_id in prepared.plan:
        node = prepared.nodes[node_id]
        if node.op in (QDOWN, "AutoQuantize", *RANGE_OPS):
            found.append((node_id, node.op))
        elif is_supernode(node.op) and len(node.inputs) >= 12:
            ends = [prepared.nodes.get(src) for src, _ in node.inputs[10:12]]
            if any(c is not None and c.const is not None and c.const.has_data and
                   math.isinf(float(c.const.array.reshape(-1)[0])) for c in ends):
                found.append((node_id, f"{node.op} with an infinite output range"))
    return found


__all__ = ["Applied", "Change", "apply_ranges", "is_supernode", "range_for",
           "runtime_range_nodes"]
