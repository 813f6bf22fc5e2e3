"""Reading an imported graph in tests: nodes by op, the const behind an input."""

from __future__ import annotations

import numpy as np

from hexscope.engine.graph import Graph
from hexscope.engine.nodes import Node


def ops(graph: Graph, name: str) -> list[Node]:
    return [n for n in graph if n.op == name]


def one(graph: Graph, name: str) -> Node:
    (node,) = ops(graph, name)
    return node


def const_of(graph: Graph, ref: tuple[int, int]) -> np.ndarray:
    node = graph.node(ref[0])
    assert node.is_const, f"{node.title} is {node.op}, not a Const"
    return node.const.array if node.const.has_data else None


def scalar(graph: Graph, ref: tuple[int, int]) -> float:
    return float(const_of(graph, ref).reshape(-1)[0])


def shape_of(graph: Graph, ref: tuple[int, int]) -> tuple[int, ...]:
    return graph.node(ref[0]).const.shape
