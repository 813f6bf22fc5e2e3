"""A run paused part-way, a Const edited, the run continued: its results equal a fresh
session's on the edited graph from the state the run began with. Prepare's own nodes (the
d32 conversions around a fused Supernode) read the edited results too; before
``stale_results`` the ``Convert_from_d32`` after classic_quantized's Supernode kept its old
output and the continued run read it (issue 32's session machine found it)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph, Session
from hexscope.engine.events import RunStatus
from hexscope.engine.inputs import make_inputs

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
GRAPHS = ("classic_quantized", "d32_pipeline")


def _load(name: str) -> Graph:
    return Graph.load(EXAMPLES / f"{name}.hexgraph")


def _edited(const: np.ndarray) -> np.ndarray:
    if const.dtype.kind == "f":
        return (const * np.float32(3) + np.float32(0.25)).astype(const.dtype)
    return (const.astype(np.int64) + 7).astype(const.dtype)     # wraps: still a code


def _results(session: Session) -> dict[int, list[bytes]]:
    out = {}
    for node_id in session.plan:
        result = session.result(node_id)
        if result is not None:
            out[node_id] = [t.raw.tobytes() if t.has_data else b"" for t in result.outputs]
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(GRAPHS))
def test_a_run_continued_after_an_edit_equals_a_fresh_run(data, name):
    graph = _load(name)
    session = Session(graph)
    session.set_inputs(make_inputs(graph, EXAMPLES))
    plan = [i for i in session.plan if i in graph]
    pause = data.draw(st.sampled_from(plan[:-1]), "pause after")
    assert session.run_to(pause).status is RunStatus.PAUSED
    began = copy.deepcopy(session._snapshot)     # noqa: SLF001 - the state the run began with
    consts = [n.node_id for n in graph if n.is_const and n.const is not None
              and n.const.has_data]
    const_id = data.draw(st.sampled_from(consts), "const")
    graph.set_const(const_id, _edited(graph.node(const_id).const.array))
    finished = session.run()
    if finished.status is not RunStatus.FINISHED:
        return                  # the edit made the graph fail to run: nothing to compare
    fresh = Session(Graph.from_snapshot(graph.snapshot()))
    fresh.set_inputs(session.inputs)
    fresh.executor.states.update(began[0])
    fresh.executor.store.update(began[1])
    assert fresh.run().status is RunStatus.FINISHED
    got, want = _results(session), _results(fresh)
    assert got.keys() == want.keys()
    for node_id in want:
        assert got[node_id] == want[node_id], f"0x{node_id:x} after 0x{const_id:x} edited"


def test_the_conversion_after_an_edited_supernode_runs_again():
    """The case the machine found, by hand: pause after the max pool, triple the filter's
    min, continue."""
    graph = _load("classic_quantized")
    session = Session(graph)
    session.set_inputs(make_inputs(graph, EXAMPLES))
    session.run_to(0x10023)
    before = _results(session)
    graph.set_const(0x10011, graph.node(0x10011).const.array * np.float32(3))
    session.run()
    fresh = Session(Graph.from_snapshot(graph.snapshot()))
    fresh.set_inputs(session.inputs)
    fresh.run()
    conversions = [i for i in session.plan if i not in graph]
    assert conversions, "prepare made no node of its own here: the test tests nothing"
    got, want = _results(session), _results(fresh)
    assert got == want
    assert any(got[i] != before[i] for i in conversions if i in before)
