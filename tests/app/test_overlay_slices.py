"""Compare's (and the other views') canvas tints on a large graph are set a slice at a
time between events: at 10,000 nodes setting every node's overlay in one call held the GUI
thread 120-200 ms (issue 32). Counted in calls, never timed."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from hexscope.widgets.graph_canvas import GraphScene, look_slices
from support.large_graph import residual_graph


def _open_big(window, tmp_path, nodes: int) -> None:
    path = tmp_path / "big.hexgraph"
    residual_graph(nodes).save(path)
    assert window.files.open_graph(str(path))


def test_a_large_graph_s_tints_come_a_slice_at_a_time(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr(look_slices, "AT_ONCE", 100)
    monkeypatch.setattr(look_slices, "SLICE_NODES", 60)
    _open_big(window, tmp_path, 300)
    order = list(window.graph.order)
    assert len(order) > 2 * look_slices.SLICE_NODES
    turns: list[int] = []              # set_look calls of tints, per turn of the event loop
    real = GraphScene.set_look

    def counted(scene, node_id, **kw):
        if "overlay" in kw:
            turns[-1] += 1
        return real(scene, node_id, **kw)

    monkeypatch.setattr(GraphScene, "set_look", counted)
    one_slice = look_slices.LookSlices._slice      # each timer turn: a new count
    monkeypatch.setattr(look_slices.LookSlices, "_slice",
                        lambda self: (turns.append(0), one_slice(self)))
    red = QColor("#e76f51")
    turns.append(0)
    window.set_overlay({nid: red for nid in order}, [("off", red)],
                       {nid: "note" for nid in order})
    assert turns == [0]                            # nothing in the caller's turn
    qtbot.waitUntil(lambda: not window._overlay_slices.busy, timeout=5000)
    QApplication.processEvents()
    assert 0 < max(turns) <= look_slices.SLICE_NODES < len(order)   # never all at once
    assert sum(turns) >= len(order)
    looks = window.scene.looks
    assert all(looks[nid].overlay == red and looks[nid].overlay_note == "note"
               for nid in order)
    assert "off" in window.run_label.text()


def test_tints_cleared_mid_way_end_cleared_and_a_new_graph_stops_them(qtbot, window,
                                                                     tmp_path, monkeypatch):
    monkeypatch.setattr(look_slices, "AT_ONCE", 100)
    monkeypatch.setattr(look_slices, "SLICE_NODES", 60)
    _open_big(window, tmp_path, 300)
    order = list(window.graph.order)
    red = QColor("#e76f51")
    window.set_overlay({nid: red for nid in order}, [("off", red)])
    window.set_overlay(None)                      # cleared before the tints were all in
    qtbot.waitUntil(lambda: not window._overlay_slices.busy, timeout=5000)
    assert all(window.scene.looks[nid].overlay is None for nid in order)
    window.set_overlay({nid: red for nid in order}, [("off", red)])
    assert window._overlay_slices.busy
    window.files.new_graph()                      # another graph: the old tints stop
    assert not window._overlay_slices.busy


def test_a_small_graph_s_tints_are_set_at_once(qtbot, window, graph_file):
    assert window.files.open_graph(graph_file)
    red = QColor("#e76f51")
    window.set_overlay({nid: red for nid in window.graph.order})
    assert all(window.scene.looks[nid].overlay == red for nid in window.graph.order)


def test_a_node_s_tooltip_is_made_when_hovered_not_at_each_look(qtbot, window, graph_file,
                                                                monkeypatch):
    """A run's end or Compare sets every node's look: each made its HTML tooltip again
    (~8 us a node, 10,000 nodes); now the hover makes it, and a look set while hovered
    keeps it true."""
    from hexscope.widgets.graph_canvas.node_item import NodeItem

    assert window.files.open_graph(graph_file)
    item = next(iter(window.scene.items_by_id.values()))
    made: list[int] = []
    real = NodeItem._node_tooltip
    monkeypatch.setattr(NodeItem, "_node_tooltip", lambda self: (made.append(1), real(self))[1])
    window.scene.set_look(item.node_id, status="failed", error="boom")
    assert made == []                               # not hovered: nothing made
    assert "failed: boom" in item.toolTip()         # asked for: as it is now
    item._hovered = True
    window.scene.set_look(item.node_id, error="bang")
    assert "failed: bang" in super(NodeItem, item).toolTip()   # what Qt would show
