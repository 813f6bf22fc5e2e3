"""A small graph that runs with the foundation's kernels only (INPUT, Nop, OUTPUT)."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph, OutputDef

# Node ids of nop_graph(): a main chain and a branch that reads the const.
INPUT, A, BRANCH, B, JOIN, OUT, CONST = 0x100, 0x101, 0x102, 0x103, 0x104, 0x200, 0x10


def nop_graph() -> Graph:
    """INPUT -> A -> B -> JOIN -> OUTPUT, and CONST -> BRANCH -> JOIN.

    Runs with the foundation's kernels only (INPUT, Nop, OUTPUT); the plan is
    INPUT, A, BRANCH, B, JOIN, OUT (consts do not run).
    """
    g = Graph()
    g.append_node(INPUT, "INPUT", outputs=[OutputDef((1, 2, 2, 3), 4)], label="image")
    g.append_const_node(CONST, np.array([1.0, 2.0, 3.0], np.float32))
    g.append_node(A, "Nop", inputs=[(INPUT, 0)], outputs=1, label="a")
    g.append_node(BRANCH, "Nop", inputs=[(CONST, 0)], outputs=1, label="branch")
    g.append_node(B, "Nop", inputs=[(A, 0)], outputs=1)
    g.append_node(JOIN, "Nop", inputs=[(BRANCH, 0), (B, 0)], outputs=2, label="join")
    g.append_node(OUT, "OUTPUT", inputs=[(JOIN, 0), (JOIN, 1)])
    return g
