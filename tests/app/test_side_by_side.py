"""View ▸ Compare graphs side by side…, used as a user would (issue 31): the differences
marked in both canvases, a click in the list selecting in both, selection, zoom and scroll
kept in step, and authored vs prepared in one click."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFileDialog, QToolButton

from hexscope.engine.structural_diff import KIND_COLOURS
from support.diff_graphs import CONV2, CONV2_FMIN, FILTER, three_edits


def _open(window, qtbot, tmp_path, monkeypatch):
    a, b = three_edits()
    pa, pb = tmp_path / "a.hexgraph", tmp_path / "b.hexgraph"
    a.save(pa)
    b.save(pb)
    window.files.open_graph(str(pa))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args, **kw: (str(pb), ""))
    action = next(a for a in window.view_menu.actions()
                  if a.text() == "Compare graphs side by side…")
    action.trigger()
    side = window.side_by_side.window
    qtbot.waitUntil(lambda: side.view is not None and side.view.is_ready, timeout=10000)
    return side, side.view


def _selected(scene) -> set[int]:
    return set(scene.selected_ids())


def test_side_by_side_marks_lists_and_selects_in_both(window, qtbot, tmp_path, monkeypatch):
    side, view = _open(window, qtbot, tmp_path, monkeypatch)
    assert view.differences.topLevelItemCount() == 3
    changed = QColor(KIND_COLOURS["changed"])
    # marked in both: the rewired conv in A and in B, the removed const in A only
    assert view.scene_a.looks[CONV2].overlay == changed == view.scene_b.looks[CONV2].overlay
    assert view.scene_a.looks[CONV2_FMIN].overlay == QColor(KIND_COLOURS["removed"])
    assert CONV2_FMIN not in view.scene_b.items_by_id
    assert "rewired" in view.scene_a.looks[CONV2].overlay_note
    # a click on the rewired conv's row selects it in both
    row = next(view.differences.topLevelItem(k) for k in range(3)
               if view.differences.topLevelItem(k).text(1) == f"0x{CONV2:x}")
    rect = view.differences.visualItemRect(row)
    qtbot.mouseClick(view.differences.viewport(), Qt.MouseButton.LeftButton,
                     pos=rect.center())
    assert _selected(view.scene_a) == {CONV2} and _selected(view.scene_b) == {CONV2}
    # a click on a node of A selects its match in B
    item = view.scene_a.items_by_id[0x1009]
    view.canvas_a.centerOn(item)
    at = view.canvas_a.mapFromScene(item.sceneBoundingRect().center())
    qtbot.mouseClick(view.canvas_a.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert _selected(view.scene_a) == {0x1009} and _selected(view.scene_b) == {0x1009}
    side.close()


def test_side_by_side_keeps_zoom_and_scroll_in_step(window, qtbot, tmp_path, monkeypatch):
    side, view = _open(window, qtbot, tmp_path, monkeypatch)
    view.canvas_a.zoom_by(2.0)
    assert abs(view.canvas_b.zoom - view.canvas_a.zoom) < 1e-9
    item_a = view.scene_a.items_by_id[0x100b]
    view.canvas_a.centerOn(item_a)
    # B shows the same node where A shows it
    item_b = view.scene_b.items_by_id[0x100b]
    pa = view.canvas_a.mapFromScene(item_a.pos())
    pb = view.canvas_b.mapFromScene(item_b.pos())
    assert (pa - pb).manhattanLength() <= 2
    side.close()


def test_authored_vs_prepared_is_one_click(window, qtbot, tmp_path, monkeypatch):
    side, view = _open(window, qtbot, tmp_path, monkeypatch)
    button = next(b for b in side.findChildren(QToolButton)
                  if b.defaultAction() is side.prepared_action)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: side.view is not view and side.view.is_ready, timeout=10000)
    diff = side.view.diff
    assert diff.by_a[0x1004].changes[0].b == "AutoQuantize"
    assert {e.a_id for e in diff.of_kind("removed")} >= {0x1002, 0x1003}
    assert "(prepared)" in side.view.title_b.text()
    assert FILTER in side.view.scene_a.items_by_id or FILTER in side.view.scene_a.folded
    side.close()


def test_side_by_side_says_when_the_other_file_is_bad(window, qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    bad = tmp_path / "bad.hexgraph"
    bad.write_text("nope")
    told = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: told.append(a[2]))
    assert window.side_by_side.compare_with(str(bad)) is None
    assert told and "bad.hexgraph" in told[0]




def test_a_changed_folded_const_marks_its_consumer(window, qtbot, tmp_path, monkeypatch):
    import numpy as np

    from support.diff_graphs import copy_graph
    from support.large_graph import residual_graph

    a = residual_graph(24)
    b = copy_graph(a)
    b.set_const(CONV2_FMIN, np.array([-2.0], np.float32))      # a tiny const: folded
    window.files.open_graph(_save(a, tmp_path / "a.hexgraph"))
    view = window.side_by_side.compare_with(_save(b, tmp_path / "b.hexgraph"))
    qtbot.waitUntil(lambda: view.is_ready, timeout=10000)
    assert view.scene_a.folded[CONV2_FMIN] == CONV2
    for scene in (view.scene_a, view.scene_b):
        assert scene.looks[CONV2].overlay == QColor(KIND_COLOURS["changed"])
        assert "0x100d" in scene.looks[CONV2].overlay_note
    window.side_by_side.window.close()


def _save(graph, path) -> str:
    graph.save(path)
    return str(path)


def test_the_arrow_keys_walk_the_differences_in_both_panes(window, qtbot, tmp_path,
                                                          monkeypatch):
    side, view = _open(window, qtbot, tmp_path, monkeypatch)
    view.differences.setFocus()
    view.differences.setCurrentItem(view.differences.topLevelItem(0))
    assert _selected(view.scene_a) == {FILTER} and _selected(view.scene_b) == {FILTER}
    # the removed const, only in A and folded there onto the conv that read it
    qtbot.keyClick(view.differences, Qt.Key.Key_Down)
    assert view.scene_a.folded[CONV2_FMIN] == CONV2
    assert _selected(view.scene_a) == {CONV2} and _selected(view.scene_b) == set()
    qtbot.keyClick(view.differences, Qt.Key.Key_Down)
    assert _selected(view.scene_a) == {CONV2} and _selected(view.scene_b) == {CONV2}
    side.close()
