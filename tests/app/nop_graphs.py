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


# Node ids of counter_graph(): a Variable that a sigmoid feeds back through an Assign.
VAR_INIT, VAR, SIGMOID, ASSIGN, VAR_OUT = 0x10, 0x20, 0x21, 0x22, 0x23


def counter_graph() -> Graph:
    """Variable v (init 0) -> Sigmoid_f -> Assign(v, ·): each execution sets v = sigmoid(v).

    The values after executions 1, 2, 3 are sigmoid(0) = 0.5, sigmoid(0.5) = 0.6224593,
    sigmoid(0.6224593) = 0.6507777 (graph spec §4.28-§4.29: later executions see the
    value the Assign wrote).
    """
    g = Graph()
    g.append_const_node(VAR_INIT, np.zeros((1, 1, 1, 2), np.float32))
    g.append_node(VAR, "Variable", inputs=[(VAR_INIT, 0)], outputs=[OutputDef((1, 1, 1, 2), 4)],
                  label="v")
    g.append_node(SIGMOID, "Sigmoid_f", inputs=[(VAR, 0)], outputs=[OutputDef((1, 1, 1, 2), 4)])
    g.append_node(ASSIGN, "Assign", inputs=[(VAR, 0), (SIGMOID, 0)], outputs=0)
    g.append_node(VAR_OUT, "OUTPUT", inputs=[(SIGMOID, 0)])
    return g


GATE_OP = "TestGate"
GATES = tuple(range(0x301, 0x306))


def gate_graph() -> Graph:
    """INPUT -> five TestGate nodes -> OUTPUT (see the ``gate`` fixture)."""
    g = Graph()
    g.append_node(INPUT, "INPUT", outputs=[OutputDef((1, 2, 2, 3), 4)])
    src = INPUT
    for node_id in GATES:
        g.append_node(node_id, GATE_OP, inputs=[(src, 0)], outputs=1)
        src = node_id
    g.append_node(OUT, "OUTPUT", inputs=[(src, 0)])
    return g
