"""What the editor marks on each node that prepare rewrites, kept while the graph is invalid.

An edit that leaves the graph with errors (a deleted convolution leaves its readers
dangling) means it cannot be prepared. Dropping every mark then, and drawing them all again
on the next valid edit, repainted thousands of nodes twice for a one-node edit at 5,000
nodes, and showed the rest of the graph unfused meanwhile. The marks of the last prepared
graph are kept instead, except for each rewrite group (a Supernode's chain, an AutoQuantize
with its Min_f and Max_f) that has a node gone, changed or in error: its marks go.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from hexscope.engine.graph import Graph
from hexscope.engine.nodes import Node
from hexscope.engine.prepare.passes import Prepared


@dataclass(frozen=True)
class Mark:
    """One rewritten node's mark: ``kind`` and ``reason`` as in :class:`Rewrite`, the op a
    replaced node runs as, the group (the node the rewrite went into) and the node as it
    was when prepared."""

    kind: str
    reason: str
    runs_as: str
    group: int
    node: Node


def marks_of(graph: Graph, prepared: Prepared) -> dict[int, Mark]:
    marks = {}
    for r in prepared.rewrites:
        if r.node_id in graph:
            # a replaced node that prepare then removes as dead runs as nothing
            node = prepared.nodes.get(r.node_id)
            runs_as = node.op if r.kind == "replaced" and node is not None else ""
            group = r.into if r.into is not None else r.node_id
            marks[r.node_id] = Mark(r.kind, r.reason, runs_as, group, graph.node(r.node_id))
    return marks


def marks_kept(last: dict[int, Mark], graph: Graph, broken: Set[int]) -> dict[int, Mark]:
    """The marks of ``last`` that still hold for ``graph`` as far as can be told without
    preparing it: a group keeps its marks while all its nodes are there, unchanged and
    free of errors (``broken``). Linear in the number of marks."""
    gone = {m.group for nid, m in last.items()
            if nid in broken or nid not in graph or graph.node(nid) is not m.node}
    return {nid: m for nid, m in last.items() if m.group not in gone}
