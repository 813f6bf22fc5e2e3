"""Mouse gestures on the real canvas: drop an op from the palette, drag to connect."""

from __future__ import annotations

from nop_graphs import BRANCH, JOIN, OUT, A, B
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from hexscope.widgets.graph_canvas import OP_MIME
from hexscope.widgets.graph_canvas.scene import BAD_COLOR, OK_COLOR

LEFT = Qt.MouseButton.LeftButton
NO_MOD = Qt.KeyboardModifier.NoModifier


def _palette_item(palette, name: str):
    items = palette.tree.findItems(name, Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)
    assert len(items) == 1, name
    return items[0]


def _drop(canvas, mime: QMimeData, at: QPoint) -> QDropEvent:
    """Deliver enter, move and drop to the canvas's viewport, as a drag from the palette does."""
    viewport = canvas.viewport()
    action = Qt.DropAction.CopyAction
    enter = QDragEnterEvent(at, action, mime, LEFT, NO_MOD)
    QApplication.sendEvent(viewport, enter)
    move = QDragMoveEvent(at, action, mime, LEFT, NO_MOD)
    QApplication.sendEvent(viewport, move)
    drop = QDropEvent(QPointF(at), action, mime, LEFT, NO_MOD)
    QApplication.sendEvent(viewport, drop)
    return drop


def test_drop_an_op_from_the_palette_adds_it_at_the_drop_point(shown, graph_file):
    w = shown
    w.files.open_graph(graph_file)
    before = set(w.graph.order)
    item = _palette_item(w.palette, "Nop")
    mime = w.palette.tree.mimeData([item])         # what the palette's drag carries
    assert mime.hasFormat(OP_MIME)
    at = QPoint(220, 160)
    expected = w.canvas.mapToScene(at)
    drop = _drop(w.canvas, mime, at)
    assert drop.isAccepted()
    added = set(w.graph.order) - before
    assert len(added) == 1
    node_id = added.pop()
    node = w.graph.node(node_id)
    assert node.op == "Nop" and node_id not in before
    assert node.position == (expected.x(), expected.y())
    assert w.scene.selected_ids() == [node_id] and node_id in w.scene.items_by_id
    assert w.inspector.node_id == node_id
    # a second drop gets another fresh id
    _drop(w.canvas, w.palette.tree.mimeData([item]), QPoint(260, 200))
    second = (set(w.graph.order) - before - {node_id}).pop()
    assert second != node_id
    w.undo_stack.undo()
    w.undo_stack.undo()
    assert set(w.graph.order) == before and node_id not in w.scene.items_by_id


def test_a_drop_that_is_not_an_op_adds_nothing(shown, graph_file):
    w = shown
    w.files.open_graph(graph_file)
    mime = QMimeData()
    mime.setText("Nop")
    before = list(w.graph.order)
    _drop(w.canvas, mime, QPoint(220, 160))
    assert list(w.graph.order) == before and w.undo_stack.count() == 0


def _view_pos(canvas, scene_pos: QPointF) -> QPoint:
    return canvas.mapFromScene(scene_pos)


def test_drag_from_output_to_input_with_the_mouse_connects(qtbot, shown, graph_file):
    w = shown
    w.files.open_graph(graph_file)
    w.canvas.center_on_node(B)
    vp, scene = w.canvas.viewport(), w.scene
    src, dst = scene.items_by_id[A], scene.items_by_id[JOIN]
    QTest.mousePress(vp, LEFT, NO_MOD, _view_pos(w.canvas, src.output_pos(0)))
    QTest.mouseMove(vp, _view_pos(w.canvas, dst.input_pos(2)))
    assert scene.drag_problem is None
    assert scene.drag_feedback() == (f"connect to 0x{JOIN:x} input 2", OK_COLOR.name())
    QTest.mouseRelease(vp, LEFT, NO_MOD, _view_pos(w.canvas, dst.input_pos(2)))
    assert w.graph.node(JOIN).inputs[2] == (A, 0)
    assert scene.drag_feedback() is None                  # the rubber line is gone
    w.undo_stack.undo()
    assert len(w.graph.node(JOIN).inputs) == 2


def test_a_refused_connection_says_why_while_dragging_and_adds_nothing(qtbot, shown, graph_file):
    w = shown
    w.files.open_graph(graph_file)
    w.canvas.center_on_node(B)
    vp, scene = w.canvas.viewport(), w.scene
    join, a = scene.items_by_id[JOIN], scene.items_by_id[A]
    before = [w.graph.node(n).inputs for n in (A, B, JOIN, OUT)]
    QTest.mousePress(vp, LEFT, NO_MOD, _view_pos(w.canvas, join.output_pos(0)))
    QTest.mouseMove(vp, _view_pos(w.canvas, a.input_pos(0)))
    text, color = scene.drag_feedback()
    assert "cycle" in text and color == BAD_COLOR.name()      # JOIN depends on A
    # the message sits clear of the target node, whose port names it would cover
    label = scene._drag_label.sceneBoundingRect()
    assert not label.intersects(a.mapToScene(a.shape()).boundingRect().adjusted(0, 14, 0, 0))
    # off any port: the line follows the mouse and says where to go
    QTest.mouseMove(vp, _view_pos(w.canvas, a.input_pos(0) + QPointF(-200, -150)))
    assert scene.drag_problem == "not over an input port"
    QTest.mouseMove(vp, _view_pos(w.canvas, a.input_pos(0)))
    QTest.mouseRelease(vp, LEFT, NO_MOD, _view_pos(w.canvas, a.input_pos(0)))
    assert [w.graph.node(n).inputs for n in (A, B, JOIN, OUT)] == before
    assert w.undo_stack.count() == 0 and scene.drag_feedback() is None
    status = w.statusBar().currentMessage()                   # the refusal is reported
    assert status.startswith(f"Not connected: 0x{A:x} input 0") and "cycle" in status
    assert w.graph.node(JOIN).inputs[0] == (BRANCH, 0)
