"""New nodes land in free space (issue 32: a node added from the palette covered others;
"Show consts as nodes" piled the consts up)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest
from PySide6.QtCore import QRectF, Qt

from hexscope.widgets.graph_canvas.free_space import FreeSpace

EXAMPLES = Path(__file__).parents[2] / "resources" / "examples"


def _rect(item) -> QRectF:
    return QRectF(*item.body_rect())


def _overlaps(items) -> list[tuple[int, int]]:
    return [(a.node_id, b.node_id) for a, b in combinations(items, 2)
            if _rect(a).intersects(_rect(b))]


def test_free_space_finds_the_nearest_free_place():
    space = FreeSpace([(0, 0, 100, 50)])
    x, y = space.find(0, 0, 100, 50)
    assert not QRectF(x, y, 100, 50).intersects(QRectF(0, 0, 100, 50))
    assert abs(x) + abs(y) <= 200                        # near, not far away
    x2, y2 = space.find(0, 0, 100, 50)                   # the first one is taken now
    assert not QRectF(x2, y2, 100, 50).intersects(QRectF(x, y, 100, 50))


def test_a_node_from_the_palette_lands_near_the_centre_on_nothing(qtbot, shown):
    assert shown.files.open_graph(str(EXAMPLES / "classic_quantized.hexgraph"))
    shown.canvas.zoom_to(1.0)
    relu = shown.scene.items_by_id[0x1001b]
    shown.canvas.centerOn(relu.sceneBoundingRect().center())   # a busy place
    centre = shown.canvas.mapToScene(shown.canvas.viewport().rect().center())
    tree = shown.palette.tree
    item = tree.findItems("Nop", Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)[0]
    tree.itemDoubleClicked.emit(item, 0)                        # the user double-clicks
    new = shown.scene.items_by_id[shown.graph.order[-1]]
    assert new.node.op == "Nop"
    others = [i for i in shown.scene.items_by_id.values() if i is not new and i.isVisible()]
    assert not [i.node_id for i in others if _rect(i).intersects(_rect(new))]
    assert (_rect(new).center() - centre).manhattanLength() < 600


@pytest.mark.parametrize("name", ["classic_quantized.hexgraph", "saturating_range.hexgraph"])
def test_consts_shown_as_nodes_do_not_pile_up(qtbot, window, name):
    assert window.files.open_graph(str(EXAMPLES / name))
    window.show_consts.setChecked(True)
    consts = [i for i in window.scene.items_by_id.values() if i.node.is_const]
    assert len(consts) > 3
    items = list(window.scene.items_by_id.values())
    assert [p for p in _overlaps(items) if p[0] in {c.node_id for c in consts}
            or p[1] in {c.node_id for c in consts}] == []
    # each const still sits near its consumer
    for const in consts:
        dst = next(d for d, _, _ in window.graph.consumers(const.node_id))
        far = (_rect(const).center() - _rect(window.scene.items_by_id[dst]).center())
        assert far.manhattanLength() < 1500


def test_a_palette_node_reads_only_the_places_of_the_nodes_near_it(qtbot, shown,
                                                                    monkeypatch):
    """The free place was searched among every node's place: 20,000 Python calls at
    20,000 nodes for a search that reaches 1,200 units each way."""
    from hexscope.widgets.graph_canvas.node_item import NodeItem
    from support.large_graph import residual_graph

    shown.set_graph(residual_graph(1200), None)
    shown.canvas.zoom_to(1.0)
    middle = list(shown.scene.items_by_id.values())[len(shown.scene.items_by_id) // 2]
    shown.canvas.centerOn(middle.sceneBoundingRect().center())
    read: list[int] = []
    body_rect = NodeItem.body_rect
    monkeypatch.setattr(NodeItem, "body_rect",
                        lambda item: (read.append(item.node_id), body_rect(item))[1])
    shown.palette.op_activated.emit("Nop")
    monkeypatch.undo()
    new = shown.scene.items_by_id[shown.graph.order[-1]]
    assert new.node.op == "Nop"
    assert 0 < len(read) < len(shown.scene.items_by_id) / 4
    others = [i for i in shown.scene.items_by_id.values() if i is not new and i.isVisible()]
    assert not [i.node_id for i in others if _rect(i).intersects(_rect(new))]
