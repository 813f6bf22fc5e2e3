"""Variable state across a cut: what a kept node read from a Variable is what it read in the
original run, not the Variable's first output.

A Variable's output holds the value of the last Assign that ran (graph spec §4.28-§4.29), so
two readers of the same output can read different values, and the trace's Variable output
(its value when the Variable ran) is not what a reader after an Assign read. So:

- A kept Assign keeps its Variables (an Assign must be wired to one), and a kept (or kept
  for an Assign) Variable starts with the state's value at the cut: the value the first kept
  node touching it read in the original run, as a Const it copies (a Const init is copied).
- A kept reader reads the Variable as it is while every Assign to that output that ran
  between the cut and the reader is kept too; otherwise (or when the Variable is dropped)
  its input is frozen to the exact tensor it read.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from hexscope.engine.dtypes import Layout
from hexscope.engine.graph import Graph
from hexscope.engine.tensor import Tensor

Ref = tuple[int, int]
#: (node id, input index) -> the tensor that input read from a Variable in the original run
Reads = Mapping[tuple[int, int], Tensor]


@dataclass
class StateCut:
    """The Variables a candidate holds, the value each output starts from, and the kept
    inputs that must be frozen to what they read."""

    variables: set[int] = field(default_factory=set)        # kept or pulled in
    start: dict[Ref, Tensor] = field(default_factory=dict)  # (variable, output) -> value
    frozen: dict[tuple[int, int], Tensor] = field(default_factory=dict)   # (node, input)


def variable_ids(graph: Graph) -> set[int]:
    return {n.node_id for n in graph if n.op == "Variable"}


def plan_state(graph: Graph, order: Mapping[int, int], kept_ids: Collection[int],
               reads: Reads) -> StateCut:
    """What the cut keeping ``kept_ids`` does with state; ``order`` ranks authored nodes
    in the order the original run ran them."""
    variables = variable_ids(graph)
    cut = StateCut()
    if not variables:
        return cut
    kept = set(kept_ids)
    writes: dict[Ref, list[int]] = {}
    touches: dict[Ref, list[tuple[int, int]]] = {}      # ref -> (node, input) readers
    for node in graph:
        if node.node_id in variables:
            continue
        for j, ref in enumerate(node.inputs):
            if ref[0] not in variables:
                continue
            touches.setdefault(ref, []).append((node.node_id, j))
            if node.op == "Assign" and j % 2 == 0:
                writes.setdefault(ref, []).append(node.node_id)
                if node.node_id in kept:
                    cut.variables.add(ref[0])
    cut.variables |= variables & kept
    late = len(order)
    for ref, readers in touches.items():
        readers = sorted(readers, key=lambda r: order.get(r[0], late))
        kept_readers = [r for r in readers if r[0] in kept]
        if not kept_readers:
            continue
        first = kept_readers[0]
        value = reads.get(first)
        live = (ref[0] in cut.variables and value is not None and value.has_data
                and value.layout is Layout.FLAT
                and ref[1] < len(graph.node(ref[0]).inputs))
        if live:
            cut.start[ref] = value               # type: ignore[assignment]
        assigns = sorted(writes.get(ref, []), key=lambda a: order.get(a, late))
        for reader in kept_readers:
            at = order.get(reader[0], late)
            between = [a for a in assigns if order.get(first[0], late) <= order.get(a, late) < at]
            is_port = graph.node(reader[0]).op == "Assign" and reader[1] % 2 == 0
            if is_port:
                continue                          # an Assign's Variable port stays wired
            if not (live and all(a in kept for a in between)):
                read = reads.get(reader)
                if read is not None:
                    cut.frozen[reader] = read
    return cut
