"""Pairs of graphs for the structural diff's tests (engine, command line, app)."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph
from support.large_graph import residual_graph

FILTER, CONV2, CONV2_FMIN, CONV1_FMIN = 0x1005, 0x1010, 0x100D, 0x1006


def copy_graph(g: Graph) -> Graph:
    return Graph.from_snapshot(g.snapshot())


def three_edits() -> tuple[Graph, Graph]:
    """A residual block, and a copy with one filter byte changed by 17, the second conv's
    filter-min input rewired to the first conv's, and the const it read removed."""
    a = residual_graph(24)
    b = copy_graph(a)
    data = np.array(b.node(FILTER).const.array)
    data[0, 0, 2, 3] = (int(data[0, 0, 2, 3]) + 17) % 256
    b.set_const(FILTER, data)
    b.set_input(CONV2, 4, (CONV1_FMIN, 0))
    b.remove_node(CONV2_FMIN)
    return a, b


