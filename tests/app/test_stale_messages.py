"""Messages that stayed after what they were about had changed (issue 32)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from hexscope.app.compare_actions import READY, START

CLASSIC = Path(__file__).parents[2] / "resources" / "examples" / "classic_quantized.hexgraph"
CONV1, RELU = 0x10014, 0x1001b          # conv1 is fused into the Supernode that 'relu' becomes


def _run(qtbot, w) -> None:
    with qtbot.waitSignal(w.controller.idle, timeout=30000):
        qtbot.keyClick(w.canvas, Qt.Key.Key_F5)


def test_compare_says_the_run_is_ready_once_it_ran(qtbot, shown):
    assert shown.files.open_graph(str(CLASSIC))
    assert shown.compare.panel.summary.text() == START
    shown.canvas.setFocus()
    _run(qtbot, shown)
    qtbot.waitUntil(lambda: shown.compare.panel.summary.text() == READY, timeout=2000)


def test_run_finished_goes_with_new_and_open(qtbot, shown):
    assert shown.files.open_graph(str(CLASSIC))
    shown.canvas.setFocus()
    _run(qtbot, shown)
    assert shown.statusBar().currentMessage() == "Run finished"
    shown.files.new_graph()
    assert "Run finished" not in shown.statusBar().currentMessage()
    assert shown.files.open_graph(str(CLASSIC))
    shown.canvas.setFocus()
    _run(qtbot, shown)
    assert shown.files.open_graph(str(CLASSIC))
    assert "Run finished" not in shown.statusBar().currentMessage()


def test_a_fused_node_shows_the_node_it_was_fused_into(qtbot, shown):
    assert shown.files.open_graph(str(CLASSIC))
    shown.canvas.setFocus()
    _run(qtbot, shown)
    shown.select_node(CONV1)
    header = shown.outputs_panel.header.text()
    op = shown.session.prepared.nodes[RELU].op
    assert f"fused into {op} 0x{RELU:x}" in header and "has not run" not in header
    shown.select_node(RELU)
    relu_outputs = [t.array.tobytes() for t in shown.outputs_panel.outputs]
    shown.select_node(CONV1)
    assert [t.array.tobytes() for t in shown.outputs_panel.outputs] == relu_outputs != []
