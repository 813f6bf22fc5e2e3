"""Edges that pass over a node other than their own ends are found at any graph size (they
are drawn above the nodes with a halo); the grid behind it, and the scene keeping it."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainterPath, QPainterPathStroker

from hexscope.engine import Graph
from hexscope.widgets.graph_canvas import GraphScene
from hexscope.widgets.graph_canvas.crossings import CELL, STEP, NodeGrid
from hexscope.widgets.graph_canvas.edge_item import EdgeItem, curve_segments
from support.large_graph import residual_graph


class _Box:
    def __init__(self, x: float, y: float, w: float = 190, h: float = 80) -> None:
        self.rect = (x, y, w, h)

    def body_rect(self) -> tuple[float, float, float, float]:
        return self.rect


def _straight(x0: float, y0: float, x1: float, y1: float) -> list:
    return [(x0, y0, x0, y0, x1, y1, x1, y1)]


def test_grid_finds_an_edge_over_a_third_node_and_not_one_in_the_gap():
    a, b, c = _Box(0, 0), _Box(1000, 0), _Box(500, 0)
    grid = NodeGrid()
    grid.rebuild([a, b, c])
    over = (a, b, _straight(190, 40, 1000, 40))             # straight through c
    gap = (a, b, _straight(190, 98, 1000, 98))              # 18 units below every body
    own = (a, c, _straight(190, 40, 500, 40))               # into its own end only
    assert grid.crossing([over, gap, own]).tolist() == [True, False, False]
    c.rect = (500, 400, 190, 80)                            # c moves out of the way
    assert grid.place(c)
    assert grid.crossing([over]).tolist() == [False]
    grid.remove(c)
    c.rect = (500, 0, 190, 80)
    assert grid.crossing([over]).tolist() == [False]        # removed: not in the grid
    assert not grid.place(_Box(10_000_000, 0))             # far outside: caller rebuilds


def test_grid_follows_the_curve_not_its_chord():
    a, b = _Box(0, 0), _Box(1000, 600)
    c = _Box(300, -200, 150, 310)            # y up to 110, right of a
    grid = NodeGrid()
    grid.rebuild([a, b, c])
    segments = curve_segments(190, 40, 1000, 640)
    # The S-curve leaves a horizontally: at x = 300..390 it is at y = 57..102, inside c,
    # where the straight chord is already below y = 121.
    assert grid.crossing([(a, b, segments)]).tolist() == [True]
    assert grid.crossing([(a, b, _straight(190, 40, 1000, 640))]).tolist() == [False]


def _stroke(path: QPainterPath) -> QPainterPath:
    """The drawn line (QPainterPath.intersects treats an open path as filled)."""
    stroker = QPainterPathStroker()
    stroker.setWidth(1)
    return stroker.createStroke(path)


def _node_bodies(scene: GraphScene, edge: EdgeItem, margin: float) -> list[QRectF]:
    """The other nodes' bodies, grown by ``margin`` (shrunk when negative)."""
    return [QRectF(*item.body_rect()).adjusted(-margin, -margin, margin, margin)
            for item in scene.items_by_id.values() if item not in (edge.src, edge.dst)]


def test_crossings_are_found_in_a_graph_of_thousands_of_nodes(qtbot):
    scene = GraphScene(residual_graph(3000))          # over the old limit of 1,500
    edges = [e for item in scene.items_by_id.values() for e in item.edges if e.dst is item]
    crossing = [e for e in edges if e.crossing]
    assert crossing and len(crossing) < len(edges)
    # Qt's own geometry agrees. A grid cell counts when its centre is inside a body, so a
    # flagged edge passes within half a cell of one; an edge through a body's inner part
    # (a sample step and half a cell from its border) is never missed.
    for edge in crossing[:20]:
        stroke = _stroke(edge.path())
        assert any(stroke.intersects(b) for b in _node_bodies(scene, edge, CELL / 2))
        assert edge.zValue() > 1                     # above the nodes (z 1)
    for edge in [e for e in edges if not e.crossing][:40]:
        stroke = _stroke(edge.path())
        inner = _node_bodies(scene, edge, -(STEP + CELL) / 2)
        assert not any(stroke.intersects(b) for b in inner if b.isValid())
    scene.close()


def test_moving_an_end_over_or_off_a_node_restacks_its_edge(qtbot):
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_node(2, "Nop", inputs=[(1, 0)], outputs=1)
    g.append_node(3, "Nop", inputs=[(1, 0)], outputs=1)
    g.move({1: (0.0, 0.0), 2: (400.0, 300.0), 3: (400.0, 0.0)})
    scene = GraphScene(g)
    edge = next(e for e in scene.items_by_id[2].edges if e.src.node_id == 1)
    assert not edge.crossing and edge.zValue() < scene.items_by_id[3].zValue()
    g.move({2: (900.0, 0.0)})                 # now the edge runs through node 3
    assert edge.crossing and edge.zValue() > scene.items_by_id[3].zValue()
    g.move({2: (400.0, 300.0)})
    assert not edge.crossing
    scene.close()
