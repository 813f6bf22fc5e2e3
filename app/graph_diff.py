"""What differs between two graphs, node by node, in words: for "Other graph file…"
compares, whose first divergence is often a fused node (a Supernode) that never names the
const or node the user actually changed."""

from __future__ import annotations

import numpy as np

from hexscope.engine.graph import Graph
from hexscope.engine.graph_diff import diff_graphs
from hexscope.engine.nodes import Node

MAX_LINES = 4


def graph_differences(a: Graph, b: Graph) -> list[str]:
    """Lines naming each node that differs (const values, op, inputs, padding), added or
    removed, in words (the engine's ``diff_graphs`` finds them; a move is no difference
    here); at most ``MAX_LINES`` and a count of the rest."""
    diff = diff_graphs(a, b)
    lines = [f"{a.node(i).title} ({a.node(i).op}) is only in this graph" for i in diff.removed]
    for node_id in diff.changed:
        why = _node_change(a.node(node_id), b.node(node_id))
        lines.append(f"{a.node(node_id).title} ({a.node(node_id).op}): {why or 'differs'}")
    lines += [f"{b.node(i).title} ({b.node(i).op}) is only in B" for i in diff.added]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"… and {len(lines) - MAX_LINES} more node(s)"]
    return lines


def _node_change(a: Node, b: Node) -> str:
    if a.op != b.op:
        return f"op {a.op} here, {b.op} in B"
    if a.inputs != b.inputs:
        return "its inputs differ"
    if a.padding != b.padding:
        return f"padding {a.padding.name} here, {b.padding.name} in B"
    if a.is_const:
        return _const_change(a, b)
    return ""


def _const_change(a: Node, b: Node) -> str:
    ta, tb = a.const, b.const
    if ta is None or tb is None:
        return "" if ta is tb else "const data differs"
    if ta.shape != tb.shape:
        return f"const shape {ta.shape} here, {tb.shape} in B"
    if ta.dtype != tb.dtype:
        return f"const type {ta.dtype.name} here, {tb.dtype.name} in B"
    if not (ta.has_data and tb.has_data):
        return "" if ta.has_data == tb.has_data else "const data differs"
    x, y = np.asarray(ta.array), np.asarray(tb.array)
    differ = np.flatnonzero((x != y).reshape(-1))
    if differ.size == 0:
        return ""
    k = int(differ[0])
    return (f"const values differ at {differ.size} of {x.size} element(s) (first at flat "
            f"index {k}: {x.reshape(-1)[k]} here, {y.reshape(-1)[k]} in B)")


__all__ = ["graph_differences"]
