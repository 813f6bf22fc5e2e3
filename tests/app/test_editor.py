"""The editor: undo/redo, files, connections, palette, inspector, search, validation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from nop_graphs import BRANCH, CONST, INPUT, JOIN, OUT, A, B, nop_graph
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QMessageBox

from hexscope.engine import Graph
from support.titles import shown_title


def test_undo_and_redo_a_rewire(window, graph_file):
    window.files.open_graph(graph_file)
    assert window.edits.connect(A, 0, JOIN, 0)
    assert window.graph.node(JOIN).inputs[0] == (A, 0)
    assert window.files.modified and shown_title(window).startswith("nops.hexgraph*")
    window.undo_stack.undo()
    assert window.graph.node(JOIN).inputs[0] == (BRANCH, 0)
    assert not window.files.modified
    window.undo_stack.redo()
    assert window.graph.node(JOIN).inputs[0] == (A, 0)
    # the canvas follows: JOIN's input 0 edge now comes from A
    edges = [(e.src.node_id, e.dst_port) for e in window.scene.items_by_id[JOIN].edges
             if e.dst.node_id == JOIN]
    assert (A, 0) in edges and (BRANCH, 0) not in edges


def test_moves_and_layout_are_undo_steps(window, graph_file):
    window.files.open_graph(graph_file)
    before = window.graph.node(A).position
    window.edits.move({A: (1234.0, 55.0)})
    assert window.scene.items_by_id[A].pos() == QPointF(1234.0, 55.0)
    window.edits.auto_layout()
    assert window.graph.node(A).position == before      # the layout puts it back
    window.undo_stack.undo()
    assert window.graph.node(A).position == (1234.0, 55.0)
    window.undo_stack.undo()
    assert window.graph.node(A).position == before
    assert window.scene.items_by_id[A].pos() == QPointF(*before)


def test_refused_edit_does_not_reach_the_stack(window, graph_file):
    window.files.open_graph(graph_file)
    # OUT reads JOIN: wiring JOIN from OUT would make a cycle
    assert window.scene.connection_problem((OUT, 0), A, 0) is not None
    count = window.undo_stack.count()
    assert not window.edits.connect(JOIN, 0, A, 0)
    assert window.undo_stack.count() == count
    assert "cycle" in window.statusBar().currentMessage()


def test_connection_rules_shown_while_dragging(window, graph_file):
    window.files.open_graph(graph_file)
    scene = window.scene
    # inputs are appended in order: input 3 of JOIN before input 2 is refused
    assert "first" in scene.connection_problem((A, 0), JOIN, 3)
    assert scene.connection_problem((A, 0), JOIN, 2) is None
    assert "cycle" in scene.connection_problem((JOIN, 0), A, 0)


def test_drag_from_output_to_input_connects(qtbot, window, graph_file):
    window.files.open_graph(graph_file)
    scene = window.scene
    src, dst = scene.items_by_id[A], scene.items_by_id[JOIN]
    with qtbot.waitSignal(scene.connect_requested, timeout=2000) as blocker:
        _mouse(scene, "press", src.output_pos(0))
        _mouse(scene, "move", dst.input_pos(2))
        assert scene.drag_problem is None
        _mouse(scene, "release", dst.input_pos(2))
    assert blocker.args == [A, 0, JOIN, 2]
    assert window.graph.node(JOIN).inputs[2] == (A, 0)


def _mouse(scene, kind: str, pos: QPointF) -> None:
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtWidgets import QGraphicsSceneMouseEvent

    types = {"press": QEvent.Type.GraphicsSceneMousePress,
             "move": QEvent.Type.GraphicsSceneMouseMove,
             "release": QEvent.Type.GraphicsSceneMouseRelease}
    event = QGraphicsSceneMouseEvent(types[kind])
    event.setScenePos(pos)
    event.setButton(Qt.MouseButton.LeftButton if kind != "move" else Qt.MouseButton.NoButton)
    event.setButtons(Qt.MouseButton.LeftButton)
    getattr(scene, {"press": "mousePressEvent", "move": "mouseMoveEvent",
                    "release": "mouseReleaseEvent"}[kind])(event)


def test_corrupt_file_shows_an_error_dialog(window, tmp_path, monkeypatch):
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(QMessageBox, "critical",
                        lambda parent, title, text, *a: shown.append((title, text)))
    bad = tmp_path / "broken.hexgraph"
    bad.write_bytes(b"PK\x03\x04 this is not a zip")
    assert not window.files.open_graph(str(bad))
    assert len(shown) == 1 and "broken.hexgraph" in shown[0][1]
    assert len(window.graph) == 0        # the window keeps its (empty) graph and works on
    assert window.edits.add_op("Nop") is not None


def test_save_open_and_recent_files(window, tmp_path):
    window.edits.add_op("INPUT")
    path = tmp_path / "mine.hexgraph"
    assert window.files.save_graph_as(str(path))
    assert not window.files.modified
    assert window.settings.recent_files()[0] == str(path)
    window.files.new_graph()
    assert len(window.graph) == 0
    window.files.open_graph(str(path))
    assert [n.op for n in window.graph] == ["INPUT"]
    assert window.files.recent_menu.actions()[0].text() == str(path)


@pytest.mark.parametrize("answer, expect_new", [
    (QMessageBox.StandardButton.Cancel, False), (QMessageBox.StandardButton.Discard, True)])
def test_unsaved_work_prompt(window, monkeypatch, answer, expect_new):
    asked: list[str] = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda parent, title, text, *a: asked.append(title) or answer)
    window.edits.add_op("Nop")
    window.files.new_graph()
    assert asked == ["Unsaved changes"]
    assert (len(window.graph) == 0) is expect_new


def test_palette_search_and_add(window):
    window.palette.search.setText("nop")
    assert "Nop" in window.palette.visible_ops()
    assert "INPUT" not in window.palette.visible_ops()
    node_id = window.edits.add_op("Nop", QPointF(10, 20))
    assert node_id == window.graph.order[-1]
    assert window.graph.node(node_id).position == (10.0, 20.0)
    assert window.scene.selected_ids() == [node_id]
    window.undo_stack.undo()
    assert node_id not in window.graph


def test_inspector_edits_a_const_cell_and_loads_npy(window, graph_file, tmp_path):
    window.show_consts.setChecked(True)        # consts as nodes, so one can be selected
    window.files.open_graph(graph_file)
    window.select_node(CONST)
    insp = window.inspector
    assert insp.node_id == CONST and insp.table.columnCount() == 3
    insp.table.item(0, 1).setText("5.5")
    assert np.array_equal(window.graph.node(CONST).const.array.reshape(-1), [1, 5.5, 3])
    npy = tmp_path / "c.npy"
    np.save(npy, np.array([4.0, 4.0, 4.0], np.float32))
    insp.load_npy_file(str(npy))
    assert np.array_equal(window.graph.node(CONST).const.array.reshape(-1), [4, 4, 4])
    window.undo_stack.undo()
    assert window.graph.node(CONST).const.array.reshape(-1)[1] == 5.5


def test_consts_fold_onto_ports_and_toggle(window, graph_file):
    window.files.open_graph(graph_file)
    scene = window.scene
    assert CONST not in scene.items_by_id and scene.folded == {CONST: BRANCH}
    assert scene.items_by_id[BRANCH].inputs[0].folded == "[1 2 3]"
    window.show_consts.setChecked(True)
    assert CONST in window.scene.items_by_id
    assert window.scene.items_by_id[BRANCH].inputs[0].folded == ""


def test_a_file_saved_with_consts_folded_opens_unchanged_with_consts_shown(window, tmp_path):
    """Found by the session machine (seed 407793782): with "Show consts as nodes" on, opening
    a file whose consts were saved folded (no positions) laid the whole graph out again, so
    the opened graph differed from the file. The consts go beside their consumer instead."""
    example = Path(__file__).parents[2] / "resources" / "examples" / "saturating_range.hexgraph"
    window.files.open_graph(str(example))
    path = tmp_path / "saved.hexgraph"
    assert window.files.save_graph_as(str(path))
    window.show_consts.setChecked(True)
    window.files.open_graph(str(path))
    assert window.graph.to_bytes() == path.read_bytes()
    items = window.scene.items_by_id
    for node in window.graph:
        if node.is_const and node.position is None:
            consumer = items[next(iter(window.graph.consumers(node.node_id)))[0]]
            assert items[node.node_id].pos().x() < consumer.pos().x()   # left of it, not 0,0
            # near it (several consts of one consumer stack up beside it: issue 32)
            assert abs(items[node.node_id].pos().y() - consumer.pos().y()) < 450


def test_search_finds_by_id_label_and_op(window, graph_file):
    window.files.open_graph(graph_file)
    assert window.edits.find_next("0x103") == B
    assert window.edits.find_next("join") == JOIN
    assert window.edits.find_next("INPUT") == INPUT
    assert window.scene.selected_ids() == [INPUT]


def test_validation_marks_nodes_and_problem_click_selects(window, graph_file):
    window.files.open_graph(graph_file)
    window.edits.edit("remove_node", A)       # B now reads a missing node
    window.revalidate()
    assert any(i.node_id == B and i.code == "dangling" for i in window.issues)
    assert window.scene.looks[B].problems
    window.problems.node_activated.emit(B)
    assert window.scene.selected_ids() == [B]
    window.undo_stack.undo()
    window.revalidate()
    assert not window.scene.looks[B].problems


def test_dead_nodes_are_marked_always_and_the_prepared_toggle_hides_them(window):
    g = nop_graph()
    g.append_node(0x300, "Nop", inputs=[(A, 0)], outputs=1)       # nothing reads it
    window.set_graph(g, None)
    look = window.scene.looks[0x300]           # marked in the authored view, no toggle
    assert look.rewrite == "removed" and "dead" in look.rewrite_reason
    assert "dead" in window.scene.items_by_id[0x300].toolTip()
    assert window.scene.looks[A].rewrite == ""
    window.show_prepared.setChecked(True)
    assert not window.scene.items_by_id[0x300].isVisible()
    assert window.scene.items_by_id[A].isVisible()
    window.show_prepared.setChecked(False)
    assert window.scene.items_by_id[0x300].isVisible()
    window.edits.connect(0x300, 0, B, 0)       # now something reads it: no longer dead
    window.revalidate()
    assert window.scene.looks[0x300].rewrite == ""


def test_loaded_graph_without_positions_is_laid_out_left_to_right(window):
    g: Graph = nop_graph()
    assert all(n.position is None for n in g)
    window.set_graph(g, None)
    x = {n.node_id: n.position[0] for n in window.graph if n.node_id != CONST}
    assert x[INPUT] < x[A] < x[B] < x[JOIN] < x[OUT]
    assert x[BRANCH] < x[JOIN]
