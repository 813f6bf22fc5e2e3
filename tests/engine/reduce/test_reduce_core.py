"""The reduction core: units, cuts and the search (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Session
from hexscope.engine.analysis.compare import run_trace
from hexscope.engine.reduce import (
    CompareCheck,
    NodeFailureCheck,
    NotFailing,
    Reducer,
    cut_graph,
    run_original,
)
from hexscope.engine.reduce.search import Verdict
from support.large_graph import input_tensor, residual_graph

from .conftest import trapped


def _reducer(run, check, **options):
    return Reducer(run.graph, run.units, run.value_of, check, groups=run.groups, **options)


def test_units_keep_autoquantize_with_its_min_and_max():
    run = run_original(residual_graph(40), [input_tensor()])
    first = run.units[0]
    ops = [run.graph.node(m).op for m in first.members]
    assert first.op == "AutoQuantize" and sorted(ops) == ["Max_f", "Min_f", "Quantize"]
    assert all(not run.graph.node(m).is_const for u in run.units for m in u.members)


def test_a_cut_reproduces_the_kept_nodes_outputs_bit_for_bit():
    graph = residual_graph(60)
    run = run_original(graph, [input_tensor()])
    kept = range(3, 7)
    candidate = cut_graph(graph, run.units, kept, run.value_of)
    session = Session(candidate.graph)
    trace = run_trace(session, list(candidate.inputs))
    for k in kept:
        node_id = run.units[k].group
        for ours, theirs in zip(trace.outputs[node_id], run.tensors[node_id], strict=True):
            assert np.array_equal(ours.array, theirs.array)
    # the cut data comes in through the INPUT, its range through Consts
    kinds = {c.kind for c in candidate.cuts}
    assert kinds == {"input", "const"}
    assert all(candidate.graph.node(c.into[0]).op == ("INPUT" if c.kind == "input" else "Const")
               for c in candidate.cuts)
    assert [n.op for n in candidate.graph].count("OUTPUT") == 1


def test_a_dropped_side_branch_becomes_a_const_under_its_own_id():
    graph = residual_graph(60)
    run = run_original(graph, [input_tensor()])
    candidate = cut_graph(graph, run.units, [2, 4], run.value_of)
    dropped = run.units[3].group
    assert candidate.graph.node(dropped).op == "Const"
    assert any(c.ref == (dropped, 0) and c.kind == "const" for c in candidate.cuts)


def test_a_raising_op_deep_in_500_nodes_reduces_to_that_node_and_its_frozen_inputs(trap_op):
    graph, trap = trapped(500)
    run = run_original(graph, [input_tensor()])
    assert run.failed_node == trap
    result = _reducer(run, NodeFailureCheck(trap)).run()
    reduced = result.best.graph
    assert result.best.units == (trap,)
    assert sorted(n.op for n in reduced) == ["Const", "Const", "INPUT", "OUTPUT", trap_op]
    assert reduced.node(trap).inputs[0] == (reduced.order[0], 0)
    assert result.iterations[-1].verdict in ("fail", "pass")
    assert len(result.iterations) < 40          # bisection, not one candidate per unit
    # the reduced graph fails the same way on its own
    with pytest.raises(Exception, match="trap"):
        Session(reduced).execute(list(result.best.inputs))
    assert result.min_good is None or result.min_good.size >= result.best.size


def test_linear_mode_finds_the_same_node(trap_op):
    graph, trap = trapped(80, at=0.5)
    run = run_original(graph, [input_tensor()])
    result = _reducer(run, NodeFailureCheck(trap), mode="linear").run()
    assert result.best.units == (trap,)


def test_a_graph_that_does_not_fail_is_refused():
    run = run_original(residual_graph(40), [input_tensor()])
    with pytest.raises(NotFailing, match="does not fail"):
        _reducer(run, lambda c: Verdict(False, "fine")).run()


def test_candidates_are_cached_by_content_and_replayed(tmp_path):
    graph = residual_graph(120)
    run = run_original(graph, [input_tensor()])
    target = run.units[len(run.units) // 2].group
    calls = []

    def check(candidate):
        calls.append(candidate.size)
        return Verdict(target in candidate.units, "")

    replay = tmp_path / "replay.json"
    first = _reducer(run, check, replay=replay).run()
    assert first.best.units == (target,)
    assert replay.exists()
    ran = len(calls)
    calls.clear()
    again = _reducer(run, check, replay=replay).run()
    assert again.best.units == first.best.units and not calls
    assert {i.source for i in again.iterations} <= {"replay", "cache"} and ran > 0


def test_the_float_reference_divergence_reduces_to_the_diverging_node(trap_op):
    from support.compare_graphs import RELU_ID, chain, chain_input

    run = run_original(chain("SkewRelu_8"), [chain_input()])
    result = _reducer(run, CompareCheck(1.0)).run()
    assert result.best.units == (RELU_ID,)
    assert f"0x{RELU_ID:x}" in result.iterations[0].detail
    # the same chain with the true relu has nothing beyond 1 LSB
    fine = run_original(chain(), [chain_input()])
    with pytest.raises(NotFailing, match="does not fail"):
        _reducer(fine, CompareCheck(1.0)).run()


def test_side_branches_between_two_needed_units_are_removed_and_frozen():
    graph = residual_graph(120)
    run = run_original(graph, [input_tensor()])
    a, b = run.units[3].group, run.units[len(run.units) - 4].group

    def check(candidate):
        return Verdict(a in candidate.units and b in candidate.units, "")

    result = _reducer(run, check).run()
    assert result.best.units == (a, b)
    assert any(i.phase == "branches" and i.verdict == "fail" for i in result.iterations)
    # what b read from the removed units between comes from Consts, under their own ids
    reduced = result.best.graph
    for src, _ in reduced.node(b).inputs:
        assert src == a or reduced.node(src).op in ("Const", "INPUT")
    assert len(reduced) < 20


def test_a_cut_d32_tensor_comes_in_with_its_padding_bytes():
    from pathlib import Path

    from hexscope.engine import Graph
    from hexscope.engine.dtypes import Layout
    from hexscope.engine.inputs import make_inputs

    examples = Path(__file__).resolve().parents[3] / "resources" / "examples"
    graph = Graph.load(examples / "d32_pipeline.hexgraph")
    run = run_original(graph, make_inputs(graph, examples))
    add = next(k for k, u in enumerate(run.units) if u.op == "QuantizedAdd_8p8to8_d32")
    candidate = cut_graph(graph, run.units, [add], run.value_of)
    (fed,) = [t for t in candidate.inputs if t.layout is Layout.D32]
    poisoned = run.tensors[0x20002][0]
    assert np.array_equal(fed.buffer, poisoned.buffer)          # padding bytes included
    trace = run_trace(Session(candidate.graph), list(candidate.inputs))
    node_id = run.units[add].group
    assert np.array_equal(trace.outputs[node_id][0].buffer, run.tensors[node_id][0].buffer)


def test_a_supernode_chain_is_one_unit_and_stays_whole():
    from hexscope.engine.inputs import make_inputs
    from support.supernode_graphs import chain_graph

    graph = chain_graph("relu")
    run = run_original(graph, make_inputs(graph))
    (unit,) = run.units
    # the unit is what the device runs: the Supernode in the d32 form prepare makes of it
    # (filter depth 3: the flat-input form); its Convert_from_d32 is no unit of its own
    assert unit.op == "InputSupernode_8x8p8to8_outd32" and sorted(unit.members) == [
        0x20, 0x21, 0x22, 0x23, 0x24]
    assert [run.prepared.nodes[i].op for i in run.prepared.plan].count("Convert_from_d32") == 1
    result = _reducer(run, lambda c: Verdict(True, "")).run()
    assert set(unit.members) <= result.best.kept
    # the candidate ran as the device runs the original: one Supernode
    assert result.iterations[0].source == "run"
    assert f"0x{unit.group:x} {unit.op}" in result.iterations[0].prepared


def test_a_cut_after_a_d32_supernode_freezes_the_flat_values_its_readers_read():
    from hexscope.engine.dtypes import Layout
    from support.range_graphs import data_set, four_patterns

    graph = four_patterns()
    run = run_original(graph, data_set(1)[0].tensors)
    conv = next(k for k, u in enumerate(run.units) if u.group == 0x30)
    assert run.units[conv - 1].op == "InputSupernode_8x8p8to8_outd32"    # 0x25, dropped
    (after,) = [i for i in run.prepared.plan if run.prepared.nodes[i].inputs == ((0x25, 0),)]
    candidate = cut_graph(graph, run.units, [conv], run.value_of)
    (fed,) = [t for t in candidate.inputs if t.dtype.name == "QUINT8"]
    # the authored conv read the Supernode's output through the Convert_from_d32: flat
    assert fed.layout is Layout.FLAT and run.tensors[0x25][0].layout is Layout.D32
    assert np.array_equal(fed.array, run.tensors[after][0].array)
    session = Session(candidate.graph)
    try:
        trace = run_trace(session, list(candidate.inputs))
    finally:
        session.close()
    assert np.array_equal(trace.outputs[0x30][0].array, run.tensors[0x30][0].array)


def test_a_failing_conversion_fails_as_its_d32_node():
    from dataclasses import replace

    from hexscope.engine.errors import KernelError
    from hexscope.engine.inputs import make_inputs
    from hexscope.engine.ops.registry import REGISTRY
    from support.supernode_graphs import chain_graph

    def refuse(ctx, x):
        raise KernelError("unsupported: input tensor has depth_before !=0")

    spec = REGISTRY.get("Convert_from_d32")
    REGISTRY.register(replace(spec, kernel=refuse), replace=True)
    try:
        graph = chain_graph("relu")
        run = run_original(graph, make_inputs(graph))
        # prepare's new ids count down past every id in use: they differ from cut to cut
        assert run.failed_node == 0x24 and run.failed_op == "Convert_from_d32"
        whole = cut_graph(graph, run.units, [0], run.value_of)
        assert NodeFailureCheck(run.failed_node)(whole).failing
    finally:
        REGISTRY.register(spec, replace=True)
