"""Fixtures of the reduction tests: the trap plugin and graphs with a trap deep inside."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hexscope.engine import Graph
from hexscope.engine.plugins import load_plugin, unload_plugin
from support.large_graph import residual_graph

TRAP_PLUGIN = Path(__file__).resolve().parent / "trap_plugin.py"


@pytest.fixture
def trap_op() -> Iterator[str]:
    specs = load_plugin(TRAP_PLUGIN)
    try:
        yield "TrapRelu_8"
    finally:
        unload_plugin(specs)


def trapped(nodes: int, at: float = 0.8) -> tuple[Graph, int]:
    """A residual graph whose relu at fraction ``at`` of its relus is the trap op."""
    graph = residual_graph(nodes)
    relus = [n.node_id for n in graph if n.op == "QuantizedRelu_8"]
    trap = relus[int(len(relus) * at)]
    graph.set_op(trap, "TrapRelu_8")
    return graph, trap
