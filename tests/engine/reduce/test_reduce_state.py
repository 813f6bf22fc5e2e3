"""Variable state across a cut: each kept reader reads what it read in the original run, and
a kept Assign keeps its Variable, which starts from the state's value at the cut."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph, Session
from hexscope.engine.analysis.compare import run_trace
from hexscope.engine.nodes import OutputDef
from hexscope.engine.reduce import Reducer, cut_graph, run_original
from hexscope.engine.reduce.search import Verdict

F = np.float32
VAR, A1, R1, A2, R2 = 0x20, 0x24, 0x21, 0x22, 0x23


def two_assigns() -> Graph:
    """Variable [1, 2]; A1 writes [3, 4]; R1 reads it; A2 writes the input; R2 reads that."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 1, 1, 2), 4)])
    g.append_const_node(0x1, np.array([1.0, 2.0], F))
    g.append_const_node(0x2, np.array([3.0, 4.0], F))
    g.append_node(VAR, "Variable", inputs=[(0x1, 0)], outputs=[OutputDef((1, 1, 1, 2), 4)])
    g.append_node(A1, "Assign", inputs=[(VAR, 0), (0x2, 0)], outputs=0)
    g.append_node(R1, "Flatten", inputs=[(VAR, 0)], outputs=1)
    g.append_node(A2, "Assign", inputs=[(VAR, 0), (0x10, 0)], outputs=0)
    g.append_node(R2, "Flatten", inputs=[(VAR, 0)], outputs=1)
    g.append_node(0x30, "OUTPUT", inputs=[(R1, 0), (R2, 0)])
    return g


def _run(candidate) -> dict[int, list[float]]:
    session = Session(candidate.graph)
    try:
        trace = run_trace(session, list(candidate.inputs))
    finally:
        session.close()
    return {i: outs[0].array.reshape(-1).tolist() for i, outs in trace.outputs.items()
            if i in (R1, R2)}


def _original():
    return run_original(two_assigns(), [np.array([[[[5.0, 6.0]]]], F)])


def _at(run, *ids):
    return [k for k, u in enumerate(run.units) if u.group in ids]


def test_a_reader_after_a_dropped_assign_reads_what_it_read():
    run = _original()
    assert [u.group for u in run.units] == [VAR, A1, R1, A2, R2]
    candidate = cut_graph(run.graph, run.units, _at(run, R2), run.value_of, run.reads)
    assert VAR not in candidate.graph
    # the Variable's trace output is [1, 2]; R2 read A2's [5, 6] from the store
    assert _run(candidate) == {R2: [5.0, 6.0]}


def test_a_kept_assign_keeps_its_variable_starting_from_the_state_at_the_cut():
    run = _original()
    candidate = cut_graph(run.graph, run.units, _at(run, R1, A2, R2), run.value_of, run.reads)
    graph = candidate.graph
    assert graph.node(VAR).op == "Variable" and VAR in candidate.kept
    (init,) = graph.node(VAR).inputs
    # the state at the cut is A1's [3, 4] (A1 was dropped), not the Variable's first [1, 2]
    assert graph.node(init[0]).const.array.reshape(-1).tolist() == [3.0, 4.0]
    # R1 and R2 read the Variable itself; the kept A2 writes it between them
    assert graph.node(R1).inputs == ((VAR, 0),) and graph.node(R2).inputs == ((VAR, 0),)
    assert graph.node(A2).inputs[0] == (VAR, 0)
    assert _run(candidate) == {R1: [3.0, 4.0], R2: [5.0, 6.0]}


def test_a_failure_read_from_state_reduces_to_its_reader():
    """Fails while R2 reads [5, 6]: R2 alone, with what it read frozen, is the answer (with
    the Variable's first value frozen instead, R2 alone passes and the result is larger)."""
    run = _original()

    def check(candidate):
        return Verdict(_run(candidate).get(R2) == [5.0, 6.0], "")

    result = Reducer(run.graph, run.units, run.value_of, check, groups=run.groups,
                     reads=run.reads).run()
    assert result.best.units == (R2,)
