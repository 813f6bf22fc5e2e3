"""A large scene built and then shown (Open, the const toggle; issue 32): its first change
reaches the Python slots as one rect, and the build's longest steps begin slices of their
own. Before, Qt handed each of the 40,000-60,000 items' rects to each slot of ``changed`` at
20,000 nodes, and a slice ran the tree's index step after its 30 ms."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QGraphicsScene

from hexscope.widgets.graph_canvas import GraphScene
from hexscope.widgets.graph_canvas.scene import HEAVY, WAITING
from hexscope.widgets.graph_canvas.view import GraphCanvas
from support.large_graph import residual_graph


def _built(nodes: int) -> GraphScene:
    """Built as the app builds a large graph's scene: events run between the steps."""
    scene = GraphScene(residual_graph(nodes), build=False)
    for _ in scene.build_steps(chunk=50):
        QApplication.processEvents()
    return scene


def test_a_new_scene_reaches_the_slots_of_changed_as_one_rect(qtbot):
    first, second = _built(60), _built(600)
    view = GraphCanvas(first)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    sizes: list[int] = []
    second.changed.connect(lambda rects: sizes.append(len(rects)))
    view.set_scene(second)                       # as the app swaps a new scene in
    qtbot.waitUntil(lambda: bool(sizes), timeout=5000)
    QApplication.processEvents()
    assert len(second.items()) > 1000
    assert max(sizes) <= 4, sizes                # was one rect per item (~1,900)
    for scene in (first, second):
        scene.close()


def test_the_item_index_is_made_in_a_slice_of_its_own_without_a_list_of_every_item(
        qtbot, monkeypatch):
    events: list[object] = []
    real_items = QGraphicsScene.items

    def items(self, *args, **kwargs):
        events.append("index" if args else "all items")
        return real_items(self, *args, **kwargs)

    monkeypatch.setattr(GraphScene, "items", items)
    scene = GraphScene(residual_graph(600), build=False)
    for step in scene.build_steps(chunk=50):
        events.append(step[0])
    where = events.index("index")
    assert events[where - 1] in (HEAVY, WAITING)  # the slice before it ends there
    assert "all items" not in events             # the tree's depth from the build's counts
    scene.close()
