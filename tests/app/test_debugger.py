"""Drive the real window: open a graph, step, breakpoints, stale re-runs, failures."""

from __future__ import annotations

import numpy as np
from nop_graphs import BRANCH, CONST, INPUT, JOIN, OUT, A, B, nop_graph
from PySide6.QtGui import QKeySequence

from hexscope.engine import NodeStatus


def _do(qtbot, window, action: str) -> None:
    """Trigger a debug action and wait until the worker has handled it."""
    with qtbot.waitSignal(window.controller.idle, timeout=5000):
        window.debug.actions[action].trigger()


def _looks(window) -> dict[int, str]:
    return {nid: look.status for nid, look in window.scene.looks.items()}


def test_debugger_keys_follow_the_usual_convention(window):
    keys = {k: a.shortcut().toString() for k, a in window.debug.actions.items()}
    assert keys["run"] == QKeySequence("F5").toString()
    assert keys["step"] == "F10"
    assert keys["run_to"] == QKeySequence("Ctrl+F10").toString()
    assert keys["breakpoint"] == "F9"
    assert keys["restart"] == QKeySequence("Ctrl+Shift+F5").toString()
    assert keys["stop"] == QKeySequence("Shift+F5").toString()


def test_step_three_nodes_highlights_the_next(qtbot, window, graph_file):
    assert window.files.open_graph(graph_file)
    for _ in range(3):
        _do(qtbot, window, "step")
    s = window.session
    assert s is not None
    assert [s.status(n) for n in (INPUT, A, BRANCH)] == [NodeStatus.DONE] * 3
    assert [s.status(n) for n in (B, JOIN, OUT)] == [NodeStatus.PENDING] * 3
    looks = window.scene.looks
    assert [looks[n].status for n in (INPUT, A, BRANCH)] == ["done"] * 3
    assert window.next_node == B
    assert [n for n, look in looks.items() if look.is_next] == [B]
    assert looks[A].seconds is not None and looks[A].seconds >= 0
    # the timing table lists exactly the nodes that ran
    assert sorted(window.timing.node_ids()) == sorted([INPUT, A, BRANCH])


def test_breakpoint_stops_before_its_node_then_continue_finishes(qtbot, window, graph_file):
    window.files.open_graph(graph_file)
    window.select_node(JOIN)
    window.debug.actions["breakpoint"].trigger()
    assert window.scene.looks[JOIN].breakpoint
    _do(qtbot, window, "run")
    s = window.session
    assert s.status(JOIN) is NodeStatus.PENDING
    assert s.status(B) is NodeStatus.DONE
    assert window.next_node == JOIN and window.scene.looks[JOIN].is_next
    _do(qtbot, window, "run")
    assert all(s.status(n) is NodeStatus.DONE for n in (JOIN, OUT))
    assert window.next_node is None
    outputs = s.graph_outputs()
    assert np.array_equal(outputs[0].array.reshape(-1), [1.0, 2.0, 3.0])


def test_const_edit_reruns_only_downstream_nodes(qtbot, window, graph_file):
    window.files.open_graph(graph_file)
    _do(qtbot, window, "run")
    assert window.next_node is None
    window.edits.set_const(CONST, np.array([7.0, 8.0, 9.0], np.float32))
    looks = _looks(window)
    assert {n for n, st in looks.items() if st == "stale"} == {BRANCH, JOIN, OUT}
    assert looks[A] == "done" and looks[B] == "done"
    rerun: list[int] = []
    window.controller.node_finished.connect(lambda e: rerun.append(e.node_id))
    _do(qtbot, window, "run")
    assert rerun == [BRANCH, JOIN, OUT]
    assert np.array_equal(window.session.graph_outputs()[0].array.reshape(-1), [7, 8, 9])
    assert set(_looks(window).values()) <= {"done", ""}


def test_moving_or_relabelling_a_node_keeps_its_results(qtbot, window, graph_file):
    window.files.open_graph(graph_file)
    for _ in range(3):
        _do(qtbot, window, "step")
    window.edits.move({A: (500.0, 500.0)})
    window.edits.set_label(A, "renamed")
    assert window.scene.looks[A].status == "done"
    ran: list[int] = []
    window.controller.node_finished.connect(lambda e: ran.append(e.node_id))
    _do(qtbot, window, "step")
    assert ran == [B]
    assert window.session.status(A) is NodeStatus.DONE


def test_failing_node_turns_red_and_app_keeps_working(qtbot, window, graph_file):
    window.files.open_graph(graph_file)
    # Nop with one input and two outputs fails on the device: "inputs != outputs"
    window.edits.edit("set_input", JOIN, 1, None)
    assert len(window.graph.node(JOIN).inputs) == 1
    _do(qtbot, window, "run")
    look = window.scene.looks[JOIN]
    assert look.status == "failed" and "inputs != outputs" in look.error
    assert window.session.status(JOIN) is NodeStatus.FAILED
    assert window.next_node == JOIN
    # the log shows the failure, and the outputs panel the error
    assert any("inputs != outputs" in line.text for line in window.log_panel.lines)
    window.select_node(JOIN)
    assert "inputs != outputs" in window.outputs_panel.header.text()
    # fix it with undo, continue: the failed node runs again and succeeds
    window.undo_stack.undo()
    _do(qtbot, window, "run")
    assert window.session.status(JOIN) is NodeStatus.DONE
    assert window.scene.looks[JOIN].status == "done"


def test_run_to_selected_stops_before_that_node_as_a_breakpoint_does(qtbot, window,
                                                                     graph_file):
    window.files.open_graph(graph_file)
    window.select_node(B)
    _do(qtbot, window, "run_to")
    s = window.session
    assert s.status(BRANCH) is NodeStatus.DONE and s.status(B) is NodeStatus.PENDING
    assert window.next_node == B and window.scene.looks[B].is_next
    assert "Paused before 0x103" in window.statusBar().currentMessage()
    assert not window.debug.breakpoints        # no breakpoint left behind
    # again on the same node: it is already next, so nothing runs and the bar says so
    window.debug.actions["run_to"].trigger()
    assert not window.controller.busy and "F10 runs it" in window.statusBar().currentMessage()
    # a node further on: stops before it; a node already run: a word, no run
    window.select_node(OUT)
    _do(qtbot, window, "run_to")
    assert s.status(JOIN) is NodeStatus.DONE and window.next_node == OUT
    window.select_node(A)
    window.debug.actions["run_to"].trigger()
    assert not window.controller.busy and "already run" in window.statusBar().currentMessage()


def test_restart_clears_results_and_stop_ends_the_session(qtbot, window, graph_file):
    window.files.open_graph(graph_file)
    _do(qtbot, window, "step")
    _do(qtbot, window, "restart")
    assert window.session.status(INPUT) is NodeStatus.PENDING
    assert window.next_node == INPUT
    with qtbot.waitSignal(window.session_changed, timeout=5000) as blocker:
        window.debug.actions["stop"].trigger()
    assert blocker.args == [None] and window.session is None
    assert all(look.status == "" for look in window.scene.looks.values())


def test_progress_reports_node_k_of_n(qtbot, window, graph_file):
    window.files.open_graph(graph_file)
    seen: list[tuple[int, int]] = []
    window.controller.node_started.connect(lambda e: seen.append((e.index + 1, e.total)))
    _do(qtbot, window, "run")
    assert seen == [(k, 6) for k in range(1, 7)]
    assert window.progress.maximum() == 6


def test_opening_graphs_reuses_one_worker_and_steps_the_new_graph(qtbot, window, graph_file,
                                                                  tmp_path):
    """The worker object lives as long as the controller (deleting QObjects on the worker
    thread can deadlock PySide6 against the GUI thread); each graph opened after it is the
    one the next step runs, and the old session is closed."""
    worker = window.controller._worker
    assert window.files.open_graph(graph_file)
    _do(qtbot, window, "step")
    first = window.session
    assert first is not None and first.status(INPUT) is NodeStatus.DONE
    other = tmp_path / "other.hexgraph"
    g = nop_graph()
    g.set_label(A, "renamed")
    g.save(other)
    with qtbot.waitSignal(window.controller.session_changed, timeout=5000):
        assert window.files.open_graph(str(other))
    assert window.session is None
    _do(qtbot, window, "step")
    second = window.session
    assert second is not None and second is not first
    assert second.graph.node(A).label == "renamed"
    assert window.controller._worker is worker


def test_run_to_a_node_added_since_the_last_run_runs_up_to_it(qtbot, window, graph_file):
    """After an edit the session prepares again: a node it has not seen yet is no reason to
    refuse Ctrl+F10 (it was named as fused or removed)."""
    from hexscope.app.edit_actions import new_node

    window.files.open_graph(graph_file)
    _do(qtbot, window, "run")
    added = window.graph.free_id()
    assert window.edits.edit("add_node", new_node(added, "Nop", (900.0, 0.0)))
    assert window.edits.connect(B, 0, added, 0)
    window.select_node(added)
    _do(qtbot, window, "run_to")          # (refused, nothing ran and idle never came)
    assert "does not run" not in window.statusBar().currentMessage()
