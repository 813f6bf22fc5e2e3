"""Disconnecting: click a wire, press Delete. hexagon_nn's inputs are positional, so only a
node's last input can be removed; a middle one is refused with a message."""

from __future__ import annotations

from nop_graphs import BRANCH, JOIN, B
from PySide6.QtCore import Qt

from hexscope.widgets.graph_canvas.edge_item import EdgeItem


def _edge(window, dst: int, port: int) -> EdgeItem:
    return next(i for i in window.scene.items() if isinstance(i, EdgeItem)
                and i.dst.node_id == dst and i.dst_port == port)


def _click_wire(qtbot, window, edge: EdgeItem) -> None:
    window.canvas.centerOn(edge.path().pointAtPercent(0.5))
    point = window.canvas.mapFromScene(edge.path().pointAtPercent(0.5))
    qtbot.mouseClick(window.canvas.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_click_the_last_inputs_wire_and_delete_disconnects_it_undoably(qtbot, shown, graph_file):
    w = shown
    w.files.open_graph(graph_file)
    _click_wire(qtbot, w, _edge(w, JOIN, 1))
    assert w.scene.selected_ids() == [] and len(w.scene.selected_edges()) == 1
    qtbot.keyClick(w.canvas, Qt.Key.Key_Delete)
    assert w.graph.node(JOIN).inputs == ((BRANCH, 0),)
    assert not any(e.dst.node_id == JOIN and e.dst_port == 1 for e in w.scene.items()
                   if isinstance(e, EdgeItem))
    qtbot.keyClick(w.canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert w.graph.node(JOIN).inputs == ((BRANCH, 0), (B, 0))


def test_a_middle_input_cannot_be_removed_and_the_status_bar_says_so(qtbot, shown, graph_file):
    w = shown
    w.files.open_graph(graph_file)
    _click_wire(qtbot, w, _edge(w, JOIN, 0))
    qtbot.keyClick(w.canvas, Qt.Key.Key_Delete)
    assert w.graph.node(JOIN).inputs == ((BRANCH, 0), (B, 0))
    assert "only the last input" in w.statusBar().currentMessage()
    assert w.undo_stack.count() == 0
