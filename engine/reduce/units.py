"""The units of a reduction: prepare's groups, in the order the prepared graph runs them.

A unit is never cut apart: a convolution chain that prepare fuses into one Supernode, an
AutoQuantize with its Min_f and Max_f, run on the device as one node, so a candidate that
kept half of one would run something the original never ran. Consts are no units (a kept
node keeps the Consts it reads), nor are INPUT and OUTPUT (the cut makes its own), nor the
nodes prepare removes as dead.
"""

from __future__ import annotations

from dataclasses import dataclass

from hexscope.engine.graph import Graph
from hexscope.engine.prepare import Prepared

#: ops a candidate makes for itself: never units
IO_OPS = ("INPUT", "OUTPUT")


@dataclass(frozen=True, slots=True)
class Unit:
    """One prepared group: ``group`` is the id it runs under, ``members`` the authored
    nodes it was made of (in append order), ``op`` what the device runs."""

    group: int
    members: tuple[int, ...]
    op: str


def group_map(prepared: Prepared) -> dict[int, int]:
    """Authored node id -> the id of the group it runs in (itself when prepare left it)."""
    return {r.node_id: r.into for r in prepared.rewrites
            if r.kind == "fused" and r.into is not None}


def units_of(graph: Graph, prepared: Prepared) -> list[Unit]:
    """The graph's units in the prepared plan's order (groups without a planned node, which
    should not happen, go after, in append order)."""
    into = group_map(prepared)
    removed = {r.node_id for r in prepared.rewrites if r.kind == "removed"}
    members: dict[int, list[int]] = {}
    for node in graph:
        if node.is_const or node.op in IO_OPS or node.node_id in removed:
            continue
        group = into.get(node.node_id, node.node_id)
        members.setdefault(group, []).append(node.node_id)
    rank = {node_id: k for k, node_id in enumerate(prepared.plan)}
    late = len(rank)
    groups = sorted(members, key=lambda g: (rank.get(g, late), graph.order.index(g)
                                            if g not in rank else 0))
    return [Unit(g, tuple(members[g]),
                 prepared.nodes[g].op if g in prepared.nodes else graph.node(g).op)
            for g in groups]
