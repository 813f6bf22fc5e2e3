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


def _counting_bounds(monkeypatch) -> list[int]:
    calls = [0]
    real = NodeItem.boundingRect

    def counting(self):
        calls[0] += 1
        return real(self)

    monkeypatch.setattr(NodeItem, "boundingRect", counting)  # before any item: Qt caches it
    return calls


def test_a_query_of_a_small_rect_measures_only_the_nodes_near_it(qtbot, monkeypatch):
    """The item index learns the rect set while the build blocks the scene's signals (it
    kept the build's first 1 x 1 rect: every query measured every node)."""
    calls = _counting_bounds(monkeypatch)
    scene = GraphScene(residual_graph(2000), build=False)
    for _ in scene.build_steps():
        pass
    scene.items(scene.sceneRect().center())     # Qt indexes the items (once)
    item = next(iter(scene.items_by_id.values()))
    calls[0] = 0
    assert item in scene.items(item.sceneBoundingRect().center())
    assert calls[0] < 20 < len(scene.items_by_id)
    scene.close()


def test_a_graph_just_built_is_fitted_without_measuring_every_item(qtbot, monkeypatch):
    from hexscope.widgets.graph_canvas.view import GraphCanvas

    scene = GraphScene(residual_graph(600))
    view = GraphCanvas(scene)
    qtbot.addWidget(view)
    calls: list[int] = []
    real = scene.itemsBoundingRect
    monkeypatch.setattr(scene, "itemsBoundingRect", lambda: calls.append(1) or real())
    nodes = [i.sceneBoundingRect() for i in scene.items_by_id.values()]
    view.zoom_to_fit()
    shown = view.visible_scene_rect()
    assert calls == [] and all(shown.contains(r.center()) for r in nodes)
    item = next(iter(scene.items_by_id.values()))
    item.setPos(QPointF(-9000, -9000))           # a node moved: measured again
    assert scene.content_rect().contains(item.sceneBoundingRect()) and calls
    scene.close()


def test_showing_a_scene_sends_no_event_to_each_item(qtbot, monkeypatch):
    """A view that shows or stops showing a scene, in an active window, made Qt send an
    activation event to every item (a call into Python each)."""
    from PySide6.QtCore import QEvent

    from hexscope.widgets.graph_canvas.view import GraphCanvas

    seen: list[QEvent.Type] = []
    real = NodeItem.sceneEvent

    def counting(self, event):
        seen.append(event.type())
        return real(self, event)

    monkeypatch.setattr(NodeItem, "sceneEvent", counting)
    first, second = GraphScene(residual_graph(300)), GraphScene(residual_graph(300))
    view = GraphCanvas(first)
    qtbot.addWidget(view)
    view.show()
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    view.set_scene(second)
    view.set_scene(first)
    activation = {QEvent.Type.WindowActivate, QEvent.Type.WindowDeactivate}
    assert not activation & set(seen)
    for scene in (first, second):
        scene.close()


def test_the_index_of_a_built_scene_never_strokes_an_edge(qtbot, monkeypatch):
    """Qt's bounds of a path item with a pen are those of its shape(): a Python call that
    strokes the curve, for every edge at the first paint (0.3 s at 10,000 nodes)."""
    from hexscope.widgets.graph_canvas.edge_item import EdgeItem

    stroked = [0]
    real = EdgeItem.shape

    def counting(self):
        stroked[0] += 1
        return real(self)

    monkeypatch.setattr(EdgeItem, "shape", counting)
    scene = GraphScene(residual_graph(600), build=False)
    for _ in scene.build_steps():
        pass
    edges = [i for i in scene.items() if isinstance(i, EdgeItem)]
    assert len(edges) > 500 and stroked[0] == 0
    for edge in edges[:50]:         # the bounds hold the curve and the band clicks hit
        assert edge.boundingRect().contains(edge.shape().controlPointRect().adjusted(
            1, 1, -1, -1))
    scene.close()


def test_consts_shown_beside_their_consumers_are_placed_a_chunk_at_a_time(qtbot,
                                                                         monkeypatch):
    """"Show consts as nodes" on a graph saved with its consts folded (they have no
    place): the placed nodes' rectangles went into the free-space grid in one step (50-70
    ms of the toggle's longest gap at 10,000 nodes). Counted per step, not timed."""
    from hexscope.widgets.graph_canvas import scene as scene_module

    graph = residual_graph(400)
    folded = GraphScene(graph)                  # laid out with the consts folded
    graph.move(folded.item_positions())
    folded.close()
    added = [0]
    real = scene_module.FreeSpace.add
    monkeypatch.setattr(scene_module.FreeSpace, "add",
                        lambda self, rect: (added.__setitem__(0, added[0] + 1),
                                            real(self, rect))[1])
    scene = GraphScene(graph, show_consts=True, build=False)
    per_step = []
    for _ in scene.build_steps(chunk=25):
        per_step.append(added[0])
        added[0] = 0
    assert sum(per_step) > 100 and max(per_step) <= 2 * 25
    consts = [i for i in scene.items_by_id.values() if i.node.is_const]
    assert consts and len({(i.x(), i.y()) for i in consts}) == len(consts)   # not piled up
    scene.close()
