"""Graph model: append order, ids, edits and their inverses (issue 2, graph spec §2.3, §2.13)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph, GraphError, Node, OutputDef, Padding


def snapshot(g: Graph):
    return [(n.node_id, n.op, n.inputs, n.outputs, n.padding, n.label, n.position,
             None if n.const is None or not n.const.has_data else n.const.buffer.tobytes())
            for n in g]


def edges_match_inputs(g: Graph) -> bool:
    """The networkx edges are exactly the resolvable input references."""
    expected = {(s, n.node_id, port) for n in g for port, (s, _) in enumerate(n.inputs)
                if s in g}
    return set(g.nx.edges(keys=True)) == expected


def test_append_order_is_remembered(chain_graph):
    assert chain_graph.order == (0x100, 0x101, 0x102, 0x103, 0x200)
    assert [n.op for n in chain_graph] == ["INPUT", "Nop", "Nop", "Nop", "OUTPUT"]


def test_node_id_zero_is_rejected():
    g = Graph()
    with pytest.raises(GraphError, match="0 is rejected"):
        g.append_node(0, "Nop")
    with pytest.raises(GraphError, match="node id 0"):
        g.append_node(5, "Nop", inputs=[(0, 0)])


def test_reserved_id_warns():
    g = Graph()
    with pytest.warns(UserWarning, match="internal range"):
        g.append_node(0xF0000001, "INPUT", outputs=1)


def test_const_padded_to_4d_and_float64_becomes_float32():
    g = Graph()
    node = g.append_const_node(0x10, np.array([[1.5, 2.5]]))
    assert node.const.shape == (1, 1, 1, 2)
    assert node.const.array.dtype == np.float32
    assert node.outputs == (OutputDef((1, 1, 1, 2), 4),)
    shape_only = g.append_const_node(0x11, shape=(1, 2, 2, 1))
    assert not shape_only.const.has_data and shape_only.outputs[0].elementsize == 0


def test_edit_inverse_restores_the_graph(chain_graph):
    g = chain_graph
    before = snapshot(g)
    edits = [
        g.set_padding(0x101, "SAME"),
        g.set_label(0x102, "middle"),
        g.set_input(0x103, 0, (0x101, 0)),
        g.add_node(Node(0x300, "Nop", ((0x100, 0),), (OutputDef(),))),
        g.renumber(0x102, 0x1102),
        g.remove_node(0x300),
        g.move({0x100: (10, 20)}),
    ]
    assert g.node(0x101).padding is Padding.SAME
    assert g.node(0x103).inputs == ((0x101, 0),)
    for edit in reversed(edits):
        g.apply(edit.inverse())
    assert snapshot(g) == before


def test_renumber_updates_every_reference(chain_graph):
    chain_graph.renumber(0x101, 0x5101)
    assert chain_graph.node(0x102).inputs == ((0x5101, 0),)
    assert 0x101 not in chain_graph and 0x5101 in chain_graph
    assert chain_graph.consumers(0x5101) == [(0x102, 0, 0)]


def test_editor_edits_keep_a_valid_order():
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_node(2, "Nop", inputs=[(1, 0)], outputs=1)
    g.append_node(3, "Nop", inputs=[(1, 0)], outputs=1)
    g.append_node(4, "OUTPUT", inputs=[(2, 0)])
    # 2 now reads 3, which was appended after it: 3 moves up, everything else keeps its place
    g.set_input(2, 0, (3, 0))
    assert g.order == (1, 3, 2, 4)


def test_edit_that_makes_a_cycle_is_refused_and_changes_nothing(chain_graph):
    before = snapshot(chain_graph)
    with pytest.raises(GraphError, match="cycle"):
        chain_graph.set_input(0x101, 0, (0x103, 0))
    assert snapshot(chain_graph) == before


def test_edit_reports_what_changed(chain_graph):
    edit = chain_graph.renumber(0x102, 0x9)
    assert edit.changed == {0x102, 0x9, 0x103}
    events = []
    chain_graph.edited.connect(events.append)
    chain_graph.set_label(0x9, "x")
    assert events[0].changed == {0x9}


def test_downstream(chain_graph):
    assert chain_graph.downstream([0x102]) == {0x102, 0x103, 0x200}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["pad", "label", "wire", "add", "remove", "const"]),
                          st.integers(0, 50)), max_size=12))
def test_any_edit_sequence_undoes_to_the_start(steps):
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_const_node(2, np.arange(3, dtype=np.float32))
    g.append_node(3, "Nop", inputs=[(1, 0)], outputs=1)
    g.append_node(4, "OUTPUT", inputs=[(3, 0)])
    start = snapshot(g)
    done = []
    for kind, k in steps:
        ids = list(g.order)
        target = ids[k % len(ids)]
        state = snapshot(g)
        try:
            if kind == "pad":
                done.append(g.set_padding(target, Padding(k % 6)))
            elif kind == "label":
                done.append(g.set_label(target, f"n{k}"))
            elif kind == "wire" and g.node(target).inputs:
                done.append(g.set_input(target, 0, (ids[(k * 7) % len(ids)], 0)))
            elif kind == "add":
                done.append(g.add_node(Node(g.free_id(100), "Nop", ((1, 0),), (OutputDef(),))))
            elif kind == "remove" and len(ids) > 1:
                done.append(g.remove_node(target))
            elif kind == "const" and g.node(target).is_const:
                done.append(g.set_const(target, np.full(k % 4 + 1, k, np.int32)))
        except GraphError:
            assert snapshot(g) == state  # a refused edit leaves no trace
        assert edges_match_inputs(g)
    for edit in reversed(done):
        g.apply(edit.inverse())
    assert snapshot(g) == start
    assert edges_match_inputs(g)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "remove", "undo"]),
                          st.integers(1, 12), st.lists(st.integers(1, 12), max_size=2),
                          st.booleans()), max_size=25))
def test_an_edit_leaves_the_stable_topological_order(steps):
    """After any add (at the end or inside, reading earlier, later or missing nodes), removal
    or undo, the order is the one Kahn's algorithm gives taking the earliest ready node of
    the order the edit proposed (networkx's lexicographical sort by that rank: an independent
    reference); adds that keep the order skip that pass."""
    import networkx as nx

    g = Graph()
    done = []
    for kind, node_id, srcs, inside in steps:
        proposed = list(g.order)
        try:
            if kind == "add" and node_id not in g:
                node = Node(node_id, "Nop", tuple((s, 0) for s in srcs), (OutputDef(),))
                index = len(proposed) // 2 if inside else len(proposed)
                proposed.insert(index, node_id)
                done.append(g.add_node(node, index))
            elif kind == "remove" and node_id in g:
                proposed.remove(node_id)
                done.append(g.remove_node(node_id))
            elif kind == "undo" and done:
                g.apply(done.pop().inverse())
                continue
            else:
                continue
        except GraphError:
            continue                                   # a cycle: refused, nothing changed
        rank = {i: k for k, i in enumerate(proposed)}
        dag = nx.DiGraph()
        dag.add_nodes_from(proposed)
        dag.add_edges_from((s, n.node_id) for n in g for s, _ in n.inputs if s in g)
        assert list(g.order) == list(nx.lexicographical_topological_sort(dag, key=rank.get))


def test_adding_a_node_after_its_inputs_takes_no_sort(monkeypatch):
    from hexscope.engine import graph as graph_module

    g = Graph()
    for i in range(1, 50):
        g.add_node(Node(i, "Nop", ((i - 1, 0),) if i > 1 else (), (OutputDef(),)))
    sorts = []
    real = graph_module._stable_topological
    monkeypatch.setattr(graph_module, "_stable_topological",
                        lambda *a: sorts.append(1) or real(*a))
    g.add_node(Node(100, "Nop", ((7, 0),), (OutputDef(),)))          # the palette's add
    g.add_node(Node(101, "Nop", (), (OutputDef(),)), 3)
    assert sorts == []
    g.add_node(Node(102, "Nop", ((100, 0),), (OutputDef(),)), 0)     # before its input
    assert sorts == [1]
    assert g.order.index(102) > g.order.index(100)
