"""The canvas on real-size graphs, used as a user would: keys, the View actions, the
minimap; and edits that touch only the items they change."""

from __future__ import annotations

import pytest
from nop_graphs import BRANCH, CONST, INPUT, JOIN, OUT, A, B, nop_graph
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from hexscope.widgets.graph_canvas.layout import layered_layout
from hexscope.widgets.graph_canvas.node_item import short_name
from hexscope.widgets.graph_canvas.view import OPEN_MIN_ZOOM
from support.large_graph import residual_graph


def _press(w, key) -> None:
    QTest.keyClick(w.canvas, key)
    QApplication.processEvents()


def test_arrows_and_enter_move_the_selection_along_the_graph(qtbot, shown):
    w = shown
    w.set_graph(nop_graph(), None)
    w.select_node(A)
    w.canvas.setFocus()
    _press(w, Qt.Key.Key_Right)                       # to the consumer
    assert w.scene.selected_ids() == [B]
    _press(w, Qt.Key.Key_Right)
    assert w.scene.selected_ids() == [JOIN]
    _press(w, Qt.Key.Key_Return)                      # Enter follows input 0 to its producer
    assert w.scene.selected_ids() == [BRANCH]
    _press(w, Qt.Key.Key_Right)
    _press(w, Qt.Key.Key_Right)
    assert w.scene.selected_ids() == [OUT]
    _press(w, Qt.Key.Key_Right)                       # the end: the selection stays
    assert w.scene.selected_ids() == [OUT]
    _press(w, Qt.Key.Key_Left)
    _press(w, Qt.Key.Key_Left)
    assert w.scene.selected_ids() == [BRANCH]
    _press(w, Qt.Key.Key_Left)                        # the const is folded: no stop there
    assert w.scene.selected_ids() in ([BRANCH], [CONST])


def test_up_and_down_go_to_siblings(qtbot, shown):
    g = nop_graph()
    g.append_node(0x300, "Nop", inputs=[(INPUT, 0)], outputs=1)     # A's sibling
    w = shown
    w.set_graph(g, None)
    w.select_node(A)
    w.canvas.setFocus()
    below = w.scene.items_by_id[0x300].y() > w.scene.items_by_id[A].y()
    _press(w, Qt.Key.Key_Down if below else Qt.Key.Key_Up)
    assert w.scene.selected_ids() == [0x300]
    _press(w, Qt.Key.Key_Up if below else Qt.Key.Key_Down)
    assert w.scene.selected_ids() == [A]


def test_zoom_to_100_percent_from_the_keyboard(qtbot, shown):
    w = shown
    w.set_graph(nop_graph(), None)
    w.canvas.zoom_by(0.3)
    assert abs(w.canvas.zoom - 1.0) > 0.1
    QTest.keyClick(w, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert abs(w.canvas.zoom - 1.0) < 1e-9
    assert w.zoom_actual.text().replace("&", "") == "Zoom to 100 %"


def test_a_large_graph_opens_fitted_wrapped_and_the_minimap_moves_the_view(qtbot, shown,
                                                                           tmp_path):
    path = tmp_path / "big.hexgraph"
    residual_graph(2000).save(path)
    w = shown
    w.files.open_graph(str(path))
    QApplication.processEvents()
    rect = w.scene.itemsBoundingRect()
    assert rect.width() / rect.height() < 4          # wrapped into bands, not a thin line
    mini = w.canvas.minimap
    # too large to name its blocks fitted: it opens at its start, the overview beside it
    assert w.canvas.zoom == pytest.approx(OPEN_MIN_ZOOM) and mini.isVisible()
    QTest.keyClick(w, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)     # Zoom to fit
    QApplication.processEvents()
    pixels = 2 / w.canvas.zoom
    assert w.canvas.visible_scene_rect().adjusted(-pixels, -pixels, pixels, pixels).contains(rect)
    assert not mini.isVisible()                     # the whole graph is in view
    w.canvas.zoom_to(1.0)
    QApplication.processEvents()
    assert mini.isVisible()                         # zoomed in: the overview appears
    target = QPoint(mini.width() // 4, mini.height() // 4)
    QTest.mouseClick(mini, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, target)
    QApplication.processEvents()
    seen = w.canvas.visible_scene_rect()
    clicked = mini.to_scene(QPointF(target))
    assert abs(seen.center().x() - clicked.x()) < 5 and abs(seen.center().y() - clicked.y()) < 5
    assert mini.view_rect().contains(QPointF(target))   # the outline follows
    # a data view opened below: the canvas gets short, the overview stays a corner of it
    vp = w.canvas.viewport()
    full = mini.size()
    w.views.docks["tensor"].raise_()
    qtbot.waitUntil(lambda: vp.height() < 400, timeout=3000)
    QApplication.processEvents()
    assert mini.height() <= vp.height() / 3 + 1 and mini.width() <= vp.width() / 4 + 1
    assert mini.height() < full.height()
    QTest.keyClick(w, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert not mini.isVisible()


def test_an_edit_rebuilds_only_the_changed_node_not_its_neighbours(qtbot, window):
    w = window
    w.set_graph(residual_graph(600), None)
    before = dict(w.scene.items_by_id)
    conv = [n.node_id for n in w.graph if n.op == "QuantizedConv2d_8x8to32"][5]
    w.edits.set_label(conv, "renamed")
    after = w.scene.items_by_id
    rebuilt = {i for i in after if after[i] is not before.get(i)}
    assert rebuilt == {conv}
    assert after[conv].node.label == "renamed"
    ends = {(e.src.node_id, e.dst.node_id) for e in after[conv].edges}
    assert ends == {(s, conv) for s, _ in w.graph.node(conv).inputs if s in after} | {
        (conv, d) for d, _, _ in w.graph.consumers(conv) if d in after}


def test_full_op_names_fit_the_header_and_prepare_marks_show_without_the_toggle(qtbot,
                                                                               window):
    from hexscope.widgets.graph_canvas.node_item import _header_metrics

    w = window
    w.set_graph(residual_graph(100), None)
    w.revalidate()
    for item in w.scene.items_by_id.values():
        assert _header_metrics().horizontalAdvance(item.node.op) <= item.width - 16
    quantize = next(n.node_id for n in w.graph if n.op == "Quantize")
    assert w.scene.looks[quantize].rewrite == "replaced"
    assert "AutoQuantize" in w.scene.items_by_id[quantize].toolTip()
    assert not w.show_prepared.isChecked()


def test_overview_names_are_short():
    assert short_name("QuantizedConv2d_8x8to32") == "Conv2d"
    assert short_name("QuantizeDownAndShrinkRange_32to8") == "Requantize"
    assert short_name("QuantizedRelu_8") == "Relu"
    assert short_name("INPUT") == "INPUT"


def test_the_layout_of_a_long_chain_wraps_and_keeps_its_order():
    g = residual_graph(3000)
    sizes = {n.node_id: (200.0, 100.0) for n in g}
    pos = layered_layout(g, sizes, sizes.__getitem__)
    flat = layered_layout(g, sizes, sizes.__getitem__, wrap=False)
    width = max(x for x, _ in pos.values()) + 200
    height = max(y for _, y in pos.values()) - min(y for _, y in pos.values()) + 100
    assert width / height < 4
    # reading order: left to right within a band, then the next band below it
    adds = [n.node_id for n in g if n.op == "QuantizedAdd_8p8to8"]
    wraps = 0
    for a, b in zip(adds, adds[1:], strict=False):
        if pos[b][0] < pos[a][0]:
            wraps += 1
            assert pos[b][1] > pos[a][1] + 100         # the next band starts lower
    assert wraps >= 2
    flat_x = [flat[i][0] for i in adds]
    assert flat_x == sorted(flat_x)


def test_the_selected_nodes_edges_are_drawn_above_the_nodes(qtbot, shown):
    w = shown
    w.set_graph(nop_graph(), None)
    w.select_node(JOIN)
    edges = w.scene.items_by_id[JOIN].edges
    assert edges and all(e.highlighted and e.zValue() > w.scene.items_by_id[A].zValue()
                         for e in edges)
    others = [e for e in w.scene.items_by_id[A].edges if e not in edges]
    assert others and not any(e.highlighted for e in others)
    w.edits.set_label(JOIN, "renamed")          # the item is re-made: still highlighted
    assert all(e.highlighted for e in w.scene.items_by_id[JOIN].edges)
    w.select_node(A)
    assert not any(e.highlighted for e in w.scene.items_by_id[JOIN].edges
                   if e.src.node_id != A)


def test_a_first_run_says_it_is_preparing(qtbot, shown):
    w = shown
    w.set_graph(nop_graph(), None)
    said: list[str] = []
    w.statusBar().messageChanged.connect(said.append)
    with qtbot.waitSignal(w.controller.idle, timeout=10000):
        QTest.keyClick(w, Qt.Key.Key_F5)
    assert any(m.startswith("Preparing the graph (") for m in said)


def test_an_edge_that_passes_over_another_node_is_drawn_above_it(qtbot, window):
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "resources" / "examples"
    window.files.open_graph(str(examples / "saturating_range.hexgraph"))
    out = next(n for n in window.graph if n.op == "OUTPUT")
    relu = window.scene.items_by_id[0x1003]
    edge = next(e for e in window.scene.items_by_id[out.node_id].edges
                if e.src.node_id == 0x1002)
    assert edge.path().intersects(relu.sceneBoundingRect())   # the layout puts it there
    assert edge.crossing and edge.zValue() > relu.zValue()
    plain = next(e for e in relu.edges if e.dst is relu)
    assert not plain.crossing and plain.zValue() < relu.zValue()
