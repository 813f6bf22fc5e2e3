"""What differs between two graphs, node by node, in words: for "Other graph file…"
compares, whose first divergence is often a fused node (a Supernode) that never names the
const or node the user actually changed."""

from __future__ import annotations

import numpy as np

from hexscope.engine.graph import Graph
from hexscope.engine.nodes import Node

MAX_LINES = 4


def graph_differences(a: Graph, b: Graph) -> list[str]:
    """Lines naming each node that differs (const values, op, inputs, padding), added or
    removed; at most ``MAX_LINES`` and a count of the rest."""
    lines: list[str] = []
    b_ids = {node.node_id for node in b}
    for node in a:
        if node.node_id not in b_ids:
            lines.append(f"{node.title} ({node.op}) is only in this graph")
            continue
        why = _node_change(node, b.node(node.node_id))
        if why:
            lines.append(f"{node.title} ({node.op}): {why}")
    a_ids = {node.node_id for node in a}
    lines += [f"{node.title} ({node.op}) is only in B" for node in b if node.node_id not in a_ids]
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
