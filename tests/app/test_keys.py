"""The debugger and undo keys pressed on the real, active window, as a user presses them.

Each key goes through Qt's shortcut machinery (QTest key events on the focused canvas), so a
binding that is shadowed, disabled or attached to the wrong widget fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from nop_graphs import BRANCH, CONST, GATES, INPUT, JOIN, OUT, A, B, gate_graph
from PySide6.QtCore import Qt

from hexscope.engine import NodeStatus
from hexscope.engine.events import RunStatus
from support.titles import shown_title

KEY = Qt.Key
MOD = Qt.KeyboardModifier


def press(qtbot, window, key: Qt.Key, mods: Qt.KeyboardModifier = MOD.NoModifier) -> None:
    """Press a debugger key and wait until the worker has handled the request."""
    with qtbot.waitSignal(window.controller.idle, timeout=5000):
        qtbot.keyClick(window.canvas, key, mods)


def next_highlighted(window) -> list[int]:
    return [n for n, look in window.scene.looks.items() if look.is_next]


@pytest.fixture
def opened(shown, graph_file):
    assert shown.files.open_graph(graph_file)
    shown.canvas.setFocus()
    return shown


def test_f10_steps_one_node_at_a_time(qtbot, opened):
    w = opened
    press(qtbot, w, KEY.Key_F10)
    assert w.session.status(INPUT) is NodeStatus.DONE
    assert w.session.status(A) is NodeStatus.PENDING
    assert next_highlighted(w) == [A]
    press(qtbot, w, KEY.Key_F10)
    press(qtbot, w, KEY.Key_F10)
    # the plan is INPUT, A, BRANCH, B, JOIN, OUT: three steps leave B next
    assert [w.session.status(n) for n in (INPUT, A, BRANCH, B)] == [NodeStatus.DONE] * 3 + [
        NodeStatus.PENDING]
    assert next_highlighted(w) == [B] and w.scene.looks[BRANCH].status == "done"
    assert "Next: 0x103" in w.statusBar().currentMessage()


def test_f9_breakpoint_then_f5_stops_there_and_f5_continues(qtbot, opened):
    w = opened
    w.select_node(JOIN)
    qtbot.keyClick(w.canvas, KEY.Key_F9)
    assert w.debug.breakpoints == {JOIN} and w.scene.looks[JOIN].breakpoint
    press(qtbot, w, KEY.Key_F5)
    assert w.session.status(B) is NodeStatus.DONE
    assert w.session.status(JOIN) is NodeStatus.PENDING and next_highlighted(w) == [JOIN]
    press(qtbot, w, KEY.Key_F5)
    assert w.session.status(OUT) is NodeStatus.DONE and next_highlighted(w) == []
    assert np.array_equal(w.session.graph_outputs()[0].array.reshape(-1), [1.0, 2.0, 3.0])
    # F9 again removes the breakpoint: the next run goes through
    qtbot.keyClick(w.canvas, KEY.Key_F9)
    assert w.debug.breakpoints == set() and not w.scene.looks[JOIN].breakpoint
    press(qtbot, w, KEY.Key_F5)
    assert w.session.status(OUT) is NodeStatus.DONE


def test_ctrl_f10_runs_to_the_selected_node_and_stops_before_it(qtbot, opened):
    w = opened
    w.select_node(B)
    press(qtbot, w, KEY.Key_F10, MOD.ControlModifier)
    assert w.session.status(A) is NodeStatus.DONE
    assert w.session.status(B) is NodeStatus.PENDING and next_highlighted(w) == [B]


def test_ctrl_shift_f5_restarts(qtbot, opened):
    w = opened
    press(qtbot, w, KEY.Key_F10)
    press(qtbot, w, KEY.Key_F10)
    assert w.session.status(A) is NodeStatus.DONE
    press(qtbot, w, KEY.Key_F5, MOD.ControlModifier | MOD.ShiftModifier)
    assert all(w.session.status(n) is NodeStatus.PENDING for n in (INPUT, A))
    assert next_highlighted(w) == [INPUT]
    assert w.scene.looks[A].status == "pending"


def test_ctrl_z_and_ctrl_shift_z_undo_and_redo_an_edit(qtbot, opened):
    w = opened
    assert w.edits.connect(A, 0, JOIN, 0)
    assert w.graph.node(JOIN).inputs[0] == (A, 0)
    qtbot.keyClick(w.canvas, KEY.Key_Z, MOD.ControlModifier)
    assert w.graph.node(JOIN).inputs[0] == (BRANCH, 0)
    assert not w.files.modified
    qtbot.keyClick(w.canvas, KEY.Key_Z, MOD.ControlModifier | MOD.ShiftModifier)
    assert w.graph.node(JOIN).inputs[0] == (A, 0)
    assert shown_title(w).startswith("nops.hexgraph*")


def test_ctrl_z_undoes_a_const_edit_and_the_rerun_follows(qtbot, opened):
    w = opened
    press(qtbot, w, KEY.Key_F5)
    w.edits.set_const(CONST, np.array([7.0, 8.0, 9.0], np.float32))
    assert w.scene.looks[JOIN].status == "stale"
    qtbot.keyClick(w.canvas, KEY.Key_Z, MOD.ControlModifier)
    assert np.array_equal(w.graph.node(CONST).const.array.reshape(-1), [1.0, 2.0, 3.0])
    press(qtbot, w, KEY.Key_F5)
    assert np.array_equal(w.session.graph_outputs()[0].array.reshape(-1), [1.0, 2.0, 3.0])


def test_shift_f5_stops_a_long_run_between_nodes(qtbot, shown, gate):
    w = shown
    w.set_graph(gate_graph(), None)
    w.canvas.setFocus()
    first = GATES[0]
    with qtbot.waitSignal(w.controller.node_started, timeout=5000,
                          check_params_cb=lambda e: e.node_id == first):
        qtbot.keyClick(w.canvas, KEY.Key_F5)
    # a node is running: progress shows node 2 of 7 (within the bar's 50 ms between two
    # repaints), stepping is refused
    qtbot.waitUntil(lambda: w.progress.value() == 2, timeout=1000)
    assert w.controller.busy and w.progress.isVisible()
    assert (w.progress.value(), w.progress.maximum()) == (2, 7)
    assert "node 2 of 7" in w.statusBar().currentMessage()
    assert not w.debug.actions["step"].isEnabled() and w.debug.actions["stop"].isEnabled()
    finished: list[object] = []
    w.controller.run_finished.connect(finished.append)
    with qtbot.waitSignal(w.controller.idle, timeout=5000):
        qtbot.keyClick(w.canvas, KEY.Key_F5, MOD.ShiftModifier)
        gate.set()              # the running node finishes; the run stops before the next
    assert [e.status for e in finished] == [RunStatus.PAUSED]
    assert w.session.status(first) is NodeStatus.DONE
    assert w.session.status(GATES[1]) is NodeStatus.PENDING
    assert next_highlighted(w) == [GATES[1]] and not w.progress.isVisible()
    # F5 continues from there to the end
    press(qtbot, w, KEY.Key_F5)
    assert all(w.session.status(n) is NodeStatus.DONE for n in (*GATES, OUT))


def test_delete_during_a_run_is_taken_like_undo_and_the_next_run_uses_it(qtbot, shown, gate):
    """One rule for edits during a run: Delete is accepted as Ctrl+Z is (issue 32)."""
    w = shown
    w.set_graph(gate_graph(), None)
    w.canvas.setFocus()
    with qtbot.waitSignal(w.controller.node_started, timeout=5000,
                          check_params_cb=lambda e: e.node_id == GATES[0]):
        qtbot.keyClick(w.canvas, KEY.Key_F5)
    assert w.controller.busy
    w.select_node(OUT)
    w.canvas.setFocus()
    qtbot.keyClick(w.canvas, KEY.Key_Delete)
    assert OUT not in w.graph and w.undo_stack.undoText().startswith("delete 1 node")
    with qtbot.waitSignal(w.controller.idle, timeout=5000):
        gate.set()
    press(qtbot, w, KEY.Key_F5)                # the next run prepares the edited graph
    assert OUT not in w.session.prepared.nodes
    qtbot.keyClick(w.canvas, KEY.Key_Z, MOD.ControlModifier)
    press(qtbot, w, KEY.Key_F5)
    assert w.session.status(OUT) is NodeStatus.DONE
