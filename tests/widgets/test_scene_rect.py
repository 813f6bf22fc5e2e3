"""The scene keeps its own rect (issue 32). Left to Qt, a scene without a view works out the
bounds of every item again after items are added or moved, calling Python's boundingRect
once per node: after every slice of a scene built between events, which made the build
quadratic (28 s for 10,000 nodes with their consts)."""

from __future__ import annotations

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication

from hexscope.widgets.graph_canvas import GraphScene
from hexscope.widgets.graph_canvas.node_item import NodeItem
from support.large_graph import residual_graph


def test_a_scene_built_between_events_measures_each_node_a_few_times(qtbot, monkeypatch):
    calls = [0]
    real = NodeItem.boundingRect

    def counting(self):
        calls[0] += 1
        return real(self)

    monkeypatch.setattr(NodeItem, "boundingRect", counting)  # before any item: Qt caches it
    scene = GraphScene(residual_graph(3000), build=False)
    for _ in scene.build_steps(chunk=50):
        QApplication.processEvents()           # as between the app's slices
    scene.items(scene.sceneRect().center())    # Qt indexes the items (once)
    shown = len(scene.items_by_id)
    assert calls[0] < 5 * shown                # linear; it was once per node per slice
    scene.close()


def test_the_rect_holds_every_node_and_grows_when_one_moves_out(qtbot):
    scene = GraphScene(residual_graph(300))
    rect = scene.sceneRect()
    for item in scene.items_by_id.values():
        assert rect.contains(item.sceneBoundingRect())
    item = next(iter(scene.items_by_id.values()))
    item.setPos(QPointF(rect.right() + 5000, rect.bottom() + 5000))
    assert scene.sceneRect().contains(item.sceneBoundingRect())
    assert scene.sceneRect().contains(rect)                 # it never shrinks
    scene.close()
