"""Prepare as hexagon_nn prepares (graph spec §2.5): the rewrites users can observe.

* Quantize fed by Min_f (input 1) and Max_f (input 2) becomes AutoQuantize under the same id;
* dead nodes (no consumer, not retained) are removed, whole chains at once;
* Consts move to the front, keeping the relative order of the rest.

The d32 conversions and supernode fusions of the library are meant to leave results unchanged
and are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from hexscope.engine.graph import Graph
from hexscope.engine.nodes import Node
from hexscope.engine.ops.registry import REGISTRY, OpRegistry


@dataclass(frozen=True, slots=True)
class Rewrite:
    """What prepare did to an authored node, and why."""

    node_id: int
    kind: str          # "fused", "removed" or "replaced"
    reason: str
    into: int | None = None


@dataclass(frozen=True)
class Prepared:
    nodes: dict[int, Node]
    order: tuple[int, ...]       # every surviving node, Consts first
    plan: tuple[int, ...]        # the nodes that run, in order
    rewrites: tuple[Rewrite, ...]

    def rewrite_of(self, node_id: int) -> Rewrite | None:
        return self.rewrite_index.get(node_id)

    @cached_property
    def rewrite_index(self) -> dict[int, Rewrite]:
        """The rewrites by authored node id (a view asks once per node: keep it O(1))."""
        return {r.node_id: r for r in self.rewrites}


def prepare(graph: Graph, registry: OpRegistry = REGISTRY) -> Prepared:
    """Rewrite a valid graph as hexagon_nn's prepare would."""
    nodes = {node.node_id: node for node in graph}
    order = list(graph.order)
    rewrites: list[Rewrite] = []
    if any(n.op == "Quantize" for n in nodes.values()):
        rewrites += _fuse_autoquantize(nodes)
    removed = _remove_dead(nodes, order, registry)
    # source -> the first fused Quantize it fed: one pass, not one scan of rewrites per node
    fed: dict[int, int] = {}
    for r in rewrites:
        if r.kind == "replaced":
            for src in _quantize_sources(graph.node(r.node_id)):
                fed.setdefault(src, r.node_id)
    for node_id in removed:
        fused_into = fed.get(node_id)
        why = ("its only consumer was fused into AutoQuantize" if fused_into is not None
               else "nothing reads its outputs (dead node)")
        rewrites.append(Rewrite(node_id, "fused" if fused_into else "removed", why, fused_into))
    order = [i for i in order if i not in removed]
    consts = [i for i in order if nodes[i].is_const]
    rest = [i for i in order if not nodes[i].is_const]
    kept = {i: nodes[i] for i in consts + rest}
    return Prepared(kept, tuple(consts + rest), tuple(rest), tuple(rewrites))


def _quantize_sources(node: Node) -> set[int]:
    return {src for src, _ in node.inputs[1:3]}


def _fuse_autoquantize(nodes: dict[int, Node]) -> list[Rewrite]:
    # Only the producers' ops are tested, as in try_make_autoquantize.
    rewrites = []
    for node_id, node in list(nodes.items()):
        if node.op != "Quantize" or len(node.inputs) < 3:
            continue
        lo, hi = nodes.get(node.inputs[1][0]), nodes.get(node.inputs[2][0])
        if lo is not None and hi is not None and lo.op == "Min_f" and hi.op == "Max_f":
            nodes[node_id] = node.with_(op="AutoQuantize", inputs=node.inputs[:1])
            rewrites.append(Rewrite(node_id, "replaced", "Quantize fed by Min_f and Max_f "
                                    "becomes AutoQuantize (hexagon_nn prepare)"))
    return rewrites


def _remove_dead(nodes: dict[int, Node], order: list[int], registry: OpRegistry) -> set[int]:
    refs = dict.fromkeys(order, 0)
    for node_id in order:
        for src, _ in nodes[node_id].inputs:
            if src in refs:
                refs[src] += 1
    removed: set[int] = set()
    for node_id in reversed(order):
        node = nodes[node_id]
        spec = registry.get(node.op) if node.op in registry else None
        retained = spec.never_dead if spec else True
        if refs[node_id] == 0 and not retained:
            removed.add(node_id)
            for src, _ in node.inputs:
                if src in refs:
                    refs[src] -= 1
    return removed
