"""Reports to share (issue 31): one self-contained HTML file for compare, run and diff, and
Model Explorer's node data JSON."""

from __future__ import annotations

from hexscope.engine.graph import Graph
from hexscope.engine.nodes import Node


def drawn_nodes(graph: Graph) -> list[Node]:
    """The nodes a run's report draws: the prepared graph's (the ids runs and compares
    report), or the graph as authored when prepare refuses it."""
    from hexscope.engine.errors import EngineError
    from hexscope.engine.prepare import prepare

    try:
        return list(prepare(graph).nodes.values())
    except (EngineError, ValueError, KeyError):
        return list(graph)



__all__ = ["drawn_nodes"]
