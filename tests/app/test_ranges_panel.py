"""The Ranges panel's Apply calibrated ranges and the sensitivity ranking, driven as a user
would (issue 29)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog

from hexscope.engine.ranges import Method, calibrate, write_ranges
from hexscope.engine.ranges.apply import apply_ranges
from support.range_graphs import QDOWN, REQUANT, data_set, four_patterns


def _run(qtbot, window) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions["run"].trigger()


def _undo(qtbot, window) -> None:
    action = next(a for a in window.findChildren(type(window.debug.actions["run"]))
                  if a.shortcut() == QKeySequence(QKeySequence.StandardKey.Undo))
    action.trigger()


@pytest.fixture
def files(tmp_path):
    g = four_patterns()
    g.save(tmp_path / "g.hexgraph")
    write_ranges(calibrate(g, data_set(3), Method.parse("minmax")).ranges,
                 tmp_path / "r.json")
    return tmp_path


def test_apply_calibrated_ranges_is_one_undo_step_shown_before_and_after(
        qtbot, window, files, monkeypatch):
    assert window.files.open_graph(str(files / "g.hexgraph"))
    _run(qtbot, window)
    original = window.graph.to_bytes()
    steps = window.undo_stack.count()
    panel = window.views.range_panel
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda *a, **k: (str(files / "r.json"), ""))
    qtbot.mouseClick(panel.apply_button, Qt.MouseButton.LeftButton)
    assert window.graph.node(QDOWN).op == "Requantize_32to8"
    assert window.undo_stack.count() == steps + 1          # one step for all the nodes
    assert panel.applied.isVisibleTo(panel) and panel.applied.rowCount() == 4
    rows = {panel.applied.item(r, 0).text(): [panel.applied.item(r, c).text()
                                              for c in range(panel.applied.columnCount())]
            for r in range(panel.applied.rowCount())}
    # the shrinking requantize was fused in the last run: its range then is the Relu's
    assert rows[f"0x{QDOWN:x}"][1:4:2] == ["QuantizeDownAndShrinkRange_32to8",
                                          "Requantize_32to8"]
    assert rows[f"0x{REQUANT:x}"][2].startswith("[")     # the range the run found
    _undo(qtbot, window)
    assert window.graph.to_bytes() == original
    assert not panel.applied.isVisibleTo(panel)
    window.undo_stack.redo()
    assert window.graph.node(QDOWN).op == "Requantize_32to8"
    _run(qtbot, window)                                     # the applied graph runs
    assert window.session.result(0x40) is not None


def test_a_bad_ranges_file_is_refused_with_a_message_and_no_edit(qtbot, window, files,
                                                                monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    (files / "bad.json").write_text("{}")
    assert window.files.open_graph(str(files / "g.hexgraph"))
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a: shown.append(a[2]))
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda *a, **k: (str(files / "bad.json"), ""))
    steps = window.undo_stack.count()
    qtbot.mouseClick(window.views.range_panel.apply_button, Qt.MouseButton.LeftButton)
    assert shown and "not an encodings file" in shown[0]
    assert window.undo_stack.count() == steps


def test_sensitivity_ranking_marks_the_mis_ranged_node_on_canvas_and_compare(
        qtbot, window, tmp_path):
    g = four_patterns()
    apply_ranges(g, calibrate(g, data_set(3), Method.parse("minmax")).ranges)
    for port in (3, 4):                      # the requantize's range 40x too wide
        src = g.node(REQUANT).inputs[port][0]
        g.set_const(src, g.node(src).const.array * np.float32(40))
    g.save(tmp_path / "bad.hexgraph")
    assert window.files.open_graph(str(tmp_path / "bad.hexgraph"))
    _run(qtbot, window)
    panel = window.views.range_panel
    qtbot.mouseClick(panel.sensitivity_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.ranges.ranking is not None, timeout=10000)
    assert window.ranges.ranking.nodes[0].node_id == REQUANT
    look = window.scene.looks[REQUANT]
    assert look.rank == "#1" and look.overlay is not None and "sensitivity #1" in \
        look.overlay_note
    label = window.compare.panel.sensitivity
    assert label.isVisibleTo(window.compare.panel) and f"#1 0x{REQUANT:x}" in label.text()
    with qtbot.waitSignal(window.compare.panel.node_activated) as blocker:
        label.linkActivated.emit(f"node:{REQUANT:x}")
    assert blocker.args == [REQUANT]
