"""Passes over large graphs are linear: counted, not timed (bench/graph_size.py times them)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph, Session
from hexscope.engine.prepare import prepare
from hexscope.engine.validate import Validator, find_cycle, validate
from support.large_graph import BLOCK_NODES, residual_graph


def test_the_generated_network_is_valid_prepares_and_runs():
    g = residual_graph(200)
    assert validate(g) == []
    kinds = {r.node_id: r.kind for r in prepare(g).rewrites}
    quantize = next(n.node_id for n in g if n.op == "Quantize")
    assert kinds[quantize] == "replaced"                  # Min_f/Max_f -> AutoQuantize
    out = Session(g).execute([np.zeros((1, 8, 8, 8), np.float32)])
    assert out[0].shape == (1, 8, 8, 8)


def test_the_generator_scales_by_whole_blocks():
    small, big = residual_graph(1000), residual_graph(2000)
    assert abs(len(small) - 1000) < BLOCK_NODES and abs(len(big) - 2000) < BLOCK_NODES


def _chain(n: int) -> dict[int, list[int]]:
    return {i: [i + 1] if i + 1 < n else [] for i in range(n)}


def test_cycle_search_expands_each_node_once_even_on_a_long_chain():
    n = 20_000                                     # deeper than Python's recursion limit
    edges = _chain(n)
    calls: list[int] = []

    def successors(i: int) -> list[int]:
        calls.append(i)
        return edges[i]

    assert find_cycle(range(n), successors) is None
    assert sorted(calls) == list(range(n))         # once each, from any start order
    edges[n - 1] = [n // 2]                        # a back edge closes a loop
    calls.clear()
    cycle = find_cycle(reversed(range(n)), successors)
    assert cycle is not None and sorted(cycle) == list(range(n // 2, n))
    assert len(calls) == len(set(calls))


def test_validate_reports_a_cycle_in_a_large_graph_naming_its_nodes():
    g = residual_graph(2000)
    last_relu = [n.node_id for n in g if n.op == "QuantizedRelu_8"][-1]
    first_conv = next(n.node_id for n in g if n.op == "QuantizedConv2d_8x8to32")
    node = g.node(first_conv)
    g._put(node.with_(inputs=((last_relu, 0), *node.inputs[1:])))   # as a bad file would
    cycles = [i for i in validate(g) if i.code == "cycle"]
    assert len(cycles) == 1 and f"0x{first_conv:x}" in cycles[0].message
    assert f"0x{last_relu:x}" in cycles[0].message


def test_incremental_validation_checks_only_what_an_edit_touched():
    g = residual_graph(1000)
    v = Validator()
    assert v.validate(g) == [] and v.checked == len(g)
    assert v.validate(g) == [] and v.checked == 0
    conv = [n.node_id for n in g if n.op == "QuantizedConv2d_8x8to32"][10]
    g.set_label(conv, "renamed")
    v.validate(g)
    readers = {d for d, _, _ in g.consumers(conv)}
    assert v.checked == 1 + len(readers)           # the node and the nodes that read it


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 5)), min_size=1, max_size=10))
def test_incremental_validation_equals_a_full_one_after_any_edits(edits):
    g = residual_graph(120)
    v = Validator()
    v.validate(g)
    ids = list(g.order)
    undo = []
    for pick, kind in edits:
        if kind == 4 and undo:                     # undo a removal: the node comes back
            g.apply(undo.pop())
            assert v.validate(g) == validate(g)
            continue
        nid = ids[pick % len(ids)]
        if nid not in g:
            continue
        if kind == 0:
            undo.append(g.remove_node(nid).inverse())
        elif kind == 5:                            # re-append at the end: order changes
            node = g.node(nid)
            g.remove_node(nid)
            g.add_node(node)
        elif kind == 1:
            g.set_label(nid, f"l{pick}")
        elif kind == 2 and not g.node(nid).is_const:
            g.set_op(nid, "Nop")
        elif kind == 3:
            g.replace_node(g.node(nid).with_(inputs=g.node(nid).inputs[:1]))
        assert v.validate(g) == validate(g)


def test_deleting_a_node_and_undoing_it_checks_only_its_neighbours():
    """A delete and its undo change the order but not the others' relative order: at 10,000
    nodes a full check on each (hundreds of ms on the GUI thread) is not needed."""
    g = residual_graph(1000)
    v = Validator()
    v.validate(g)
    conv = [n.node_id for n in g if n.op == "QuantizedConv2d_8x8to32"][10]
    readers = {d for d, _, _ in g.consumers(conv)}
    inverse = g.remove_node(conv).inverse()
    assert v.validate(g) == validate(g) and v.checked == len(readers)
    g.apply(inverse)
    assert v.validate(g) == validate(g) == [] and v.checked == 1 + len(readers)


def test_prepare_looks_rewrites_up_by_id():
    g = residual_graph(300)
    p = prepare(g)
    for r in p.rewrites:
        assert p.rewrite_of(r.node_id) is r
    assert p.rewrite_of(0x20) is None


def test_relabel_and_remove_keep_the_order_without_a_reorder(monkeypatch):
    import hexscope.engine.graph as graph_module

    g: Graph = residual_graph(500)
    calls = []
    real = graph_module._stable_topological
    monkeypatch.setattr(graph_module, "_stable_topological",
                        lambda *a: calls.append(1) or real(*a))
    conv = next(n.node_id for n in g if n.op == "QuantizedConv2d_8x8to32")
    g.set_label(conv, "x")
    g.remove_node(conv)
    assert calls == []
    assert [i for i in g.order] == [i for i in g.order if i != conv]
    with pytest.raises(Exception, match="cycle"):
        relu = [n.node_id for n in g if n.op == "QuantizedRelu_8"][-1]
        first = next(n for n in g if n.op == "QuantizedRelu_8")
        g.set_input(first.node_id, 0, (relu, 0))   # a rewire still reorders and checks
    assert calls
