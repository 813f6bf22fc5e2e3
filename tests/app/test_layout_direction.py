"""View > Layout direction: top to bottom lays the open graph out again as one undo step, is
kept in the settings, and lays out graphs opened without positions."""

from __future__ import annotations

from nop_graphs import INPUT, A, B, nop_graph
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainterPath, QPainterPathStroker
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from hexscope.app.main_window import MainWindow
from hexscope.widgets.graph_canvas.layout import LEFT_TO_RIGHT, TOP_TO_BOTTOM
from support.large_graph import residual_graph


def _choose(window: MainWindow, direction: str) -> None:
    """Through the View menu, as a user picks it."""
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    sub = next(a.menu() for a in view.actions() if a.text() == "Layout &direction")
    next(a for a in sub.actions() if a.data() == direction).trigger()
    QApplication.processEvents()


def _flows_down(window: MainWindow) -> bool:
    """Every producer (not a const) ends above the top of each of its consumers, or (a
    long graph wrapped into columns) the consumer starts a column further right."""
    items = window.scene.items_by_id
    pairs = [(items[src], item) for item in items.values()
             for src, _ in item.node.inputs if src in items and not items[src].node.is_const]
    down = [p.y() + p.height <= c.y() for p, c in pairs]
    wrapped = [c.x() > p.x() + p.width for p, c in pairs]
    return (bool(pairs) and all(d or w for d, w in zip(down, wrapped, strict=True))
            and sum(down) > 0.75 * len(pairs))


def _stroke(path: QPainterPath) -> QPainterPath:
    """The drawn line (QPainterPath.intersects treats an open path as filled)."""
    stroker = QPainterPathStroker()
    stroker.setWidth(1)
    return stroker.createStroke(path)


def test_top_to_bottom_lays_the_open_graph_out_as_one_undo_step(qtbot, window):
    window.set_graph(nop_graph(), None)
    window.edits.move({A: (-500.0, 900.0)})             # placed by hand
    before = {n.node_id: n.position for n in window.graph}
    _choose(window, TOP_TO_BOTTOM)
    assert _flows_down(window)
    assert window.undo_stack.undoText() == "lay out top to bottom"
    window.undo_stack.undo()                              # the hand placement comes back
    assert {n.node_id: n.position for n in window.graph} == before
    window.undo_stack.redo()
    _choose(window, LEFT_TO_RIGHT)
    assert not _flows_down(window)
    assert window.undo_stack.undoText() == "lay out left to right"


def test_the_direction_is_kept_and_lays_out_graphs_opened_without_positions(
        qtbot, window, settings, tmp_path):
    _choose(window, TOP_TO_BOTTOM)
    assert settings.layout_direction() == TOP_TO_BOTTOM
    path = tmp_path / "script.hexgraph"
    residual_graph(300).save(path)                        # a script's graph: no positions
    again = MainWindow(settings)
    try:
        assert again.layout_direction.actions[TOP_TO_BOTTOM].isChecked()
        again.files.open_graph(str(path))
        assert _flows_down(again)
        rect = again.scene.itemsBoundingRect()
        assert rect.width() > rect.height()          # long: wrapped into columns side by side
    finally:
        again.undo_stack.setClean()
        again.shutdown()
        again.close()
        again.deleteLater()


def test_top_to_bottom_edges_turn_in_the_gap_between_layers(qtbot, window):
    window.set_graph(nop_graph(), None)
    _choose(window, TOP_TO_BOTTOM)
    edges = [e for item in window.scene.items_by_id.values() for e in item.edges
             if e.dst is item and not e.src.node.is_const]
    routed = [e for e in edges if len(e.segments) == 2]
    assert routed
    for edge in routed:                  # never through its own nodes' bodies
        for node in (edge.src, edge.dst):
            body = QRectF(*node.body_rect()).adjusted(3, 3, -3, -3)
            assert not _stroke(edge.path()).intersects(body), (hex(edge.src.node_id),
                                                      hex(edge.dst.node_id))


def test_arrows_follow_the_graph_down_when_it_is_laid_out_top_to_bottom(qtbot, shown):
    w = shown
    w.set_graph(nop_graph(), None)
    _choose(w, TOP_TO_BOTTOM)
    w.select_node(A)
    w.canvas.setFocus()
    QTest.keyClick(w.canvas, Qt.Key.Key_Down)            # to the consumer, below
    assert w.scene.selected_ids() == [B]
    QTest.keyClick(w.canvas, Qt.Key.Key_Up)
    QTest.keyClick(w.canvas, Qt.Key.Key_Up)              # to the producer, above
    assert w.scene.selected_ids() == [INPUT]
