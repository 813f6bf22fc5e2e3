"""Canvas model, layout and scene: data behind the pixels."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph
from hexscope.widgets.graph_canvas import GraphScene
from hexscope.widgets.graph_canvas.layout import ROW_GAP, layered_layout, layers
from hexscope.widgets.graph_canvas.model import const_text, folded_consts, input_ports


def _ranges_graph() -> Graph:
    g = Graph()
    g.append_node(0x1, "INPUT", outputs=1)
    g.append_const_node(0x10, np.array([-1.0], np.float32))          # used once: folds
    g.append_const_node(0x11, np.array([6.0], np.float32))           # shared: stays
    g.append_const_node(0x12, shape=(1, 3, 3, 1))                    # shape-only: folds
    g.append_const_node(0x13, np.zeros((1, 1, 1, 64), np.float32))   # too big: stays
    g.append_node(0x2, "Nop", inputs=[(0x1, 0), (0x10, 0), (0x11, 0), (0x12, 0), (0x13, 0)],
                  outputs=5)
    g.append_node(0x3, "Nop", inputs=[(0x2, 0), (0x11, 0)], outputs=2)
    g.append_node(0x4, "OUTPUT", inputs=[(0x3, 0)])
    return g


def test_folding_keeps_shared_and_large_consts():
    assert folded_consts(_ranges_graph()) == {0x10: 0x2, 0x12: 0x2}


def test_const_text_is_compact():
    g = _ranges_graph()
    assert const_text(g.node(0x10)) == "-1"
    assert const_text(g.node(0x12)) == "shape 1x3x3x1"
    assert const_text(g.node(0x13)) == "float32 1x1x1x64"


def test_input_ports_name_declared_ports_and_fold_values():
    g = _ranges_graph()
    ports, can_append = input_ports(g, g.node(0x2), folded_consts(g))
    assert [p.name for p in ports] == [f"x[{k}]" for k in range(5)]
    assert [p.folded for p in ports] == ["", "-1", "", "shape 1x3x3x1", ""]
    assert can_append        # Nop takes any number of inputs


def test_layers_put_each_node_right_of_its_producers_and_consts_left_of_consumers():
    g = _ranges_graph()
    col = layers(g, [n.node_id for n in g])
    assert col[0x1] == 0 and col[0x2] == 1 and col[0x3] == 2 and col[0x4] == 3
    assert col[0x11] == 0 and col[0x13] == 0     # one column left of their first consumer


def test_layout_columns_do_not_overlap():
    g = _ranges_graph()
    pos = layered_layout(g, [n.node_id for n in g], lambda nid: (100.0, 50.0))
    by_x: dict[float, list[float]] = {}
    for x, y in pos.values():
        by_x.setdefault(x, []).append(y)
    for ys in by_x.values():
        ys.sort()
        assert all(b - a >= 50.0 + ROW_GAP - 1e-9 for a, b in zip(ys, ys[1:], strict=False))
    assert pos[0x1][0] < pos[0x2][0] < pos[0x3][0] < pos[0x4][0]


def chain(n: int) -> Graph:
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    for k in range(2, n):
        g.append_const_node(0x100000 + k, np.array([float(k)], np.float32))
        g.append_node(k, "Nop", inputs=[(k - 1, 0), (0x100000 + k, 0)], outputs=2)
    g.append_node(n, "OUTPUT", inputs=[(n - 1, 0)])
    return g


def test_scene_builds_and_lays_out_1000_nodes(qtbot):
    # the time is measured in bench/layout_bench.py, not asserted here
    g = chain(1000)
    scene = GraphScene(g)
    g.move(scene.layout_positions())
    assert len(scene.items_by_id) == 1000          # 998 consts folded
    pos = [g.node(i).position for i in range(1, 1001)]
    # a chain lays out left to right, wrapped into bands read top to bottom like lines
    steps = list(zip(pos, pos[1:], strict=False))
    assert all(b[0] > a[0] or b[1] > a[1] for a, b in steps)
    assert sum(b[0] < a[0] for a, b in steps) >= 2
    assert len(set(pos)) == 1000
    scene.close()


@pytest.mark.parametrize("show", [False, True])
def test_scene_edges_match_the_graph(qtbot, show):
    g = _ranges_graph()
    scene = GraphScene(g)
    if show:
        scene.show_consts = True
        scene.rebuild()
    edges = {(e.src.node_id, e.src_port, e.dst.node_id, e.dst_port)
             for item in scene.items_by_id.values() for e in item.edges}
    expected = {(s, o, n.node_id, k) for n in g for k, (s, o) in enumerate(n.inputs)
                if show or s not in (0x10, 0x12)}
    assert edges == expected
    scene.close()


def test_scene_follows_edits_and_undo(qtbot):
    g = _ranges_graph()
    scene = GraphScene(g)
    edit = g.set_input(0x4, 0, (0x2, 1))
    assert {(e.src.node_id, e.src_port) for e in scene.items_by_id[0x4].edges} == {(0x2, 1)}
    g.apply(edit.inverse())
    assert {(e.src.node_id, e.src_port) for e in scene.items_by_id[0x4].edges} == {(0x3, 0)}
    g.remove_node(0x3)
    assert 0x3 not in scene.items_by_id
    scene.close()


def test_port_hit_testing(qtbot):
    g = _ranges_graph()
    scene = GraphScene(g)
    item = scene.items_by_id[0x2]
    assert item.port_at(item.input_pos(3)) == ("in", 3)
    assert item.port_at(item.output_pos(4)) == ("out", 4)
    assert item.port_at(item.mapToScene(item.boundingRect().center())) is None
    scene.close()


def test_top_to_bottom_layout_puts_layers_in_rows_without_overlap():
    from hexscope.widgets.graph_canvas.layout import TOP_TO_BOTTOM

    g = _ranges_graph()
    size = (100.0, 50.0)
    pos = layered_layout(g, [n.node_id for n in g], lambda nid: size, direction=TOP_TO_BOTTOM)
    col = layers(g, [n.node_id for n in g])
    for node in g:                    # each layer is a row, below the one before
        for src, _ in node.inputs:
            if col[src] < col[node.node_id]:
                assert pos[src][1] + size[1] <= pos[node.node_id][1]
    by_y: dict[float, list[float]] = {}
    for x, y in pos.values():
        by_y.setdefault(y, []).append(x)
    for xs in by_y.values():          # side by side within a row
        xs.sort()
        assert all(b - a >= size[0] for a, b in zip(xs, xs[1:], strict=False))
    with pytest.raises(ValueError, match="layout direction"):
        layered_layout(g, [n.node_id for n in g], lambda nid: size, direction="diagonal")
