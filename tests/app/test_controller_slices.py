"""The worker's messages reach the GUI thread a slice at a time, with events in between
(issue 32: a 10,000-node run posts ~8,000 messages; delivered in one go they stopped the
window for 0.1-0.8 s at a time)."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer

from hexscope.app import execution_controller


def test_a_run_is_followed_between_events_in_order(qtbot, window, graph_file, monkeypatch):
    monkeypatch.setattr(execution_controller, "DELIVER_SLICE_S", 0.0)   # one message a turn
    assert window.files.open_graph(graph_file)
    c = window.controller
    seen: list[object] = []
    c.node_started.connect(lambda e: seen.append(("started", e.node_id)))
    c.node_finished.connect(lambda e: seen.append(("finished", e.node_id)))
    c.run_finished.connect(lambda e: seen.append("run finished"))
    c.idle.connect(lambda kind: seen.append(f"idle {kind}"))
    tick = QTimer(interval=0)
    tick.timeout.connect(lambda: seen.append("tick"))
    with qtbot.waitSignal(c.idle, timeout=5000):
        window.debug.actions["run"].trigger()
        # a busy GUI thread: the whole run's messages wait for it
        end = time.monotonic() + 5
        while not (c._inbox and c._inbox[-1][0] == c._done) and time.monotonic() < end:
            time.sleep(0.01)
        tick.start()
    tick.stop()
    plan = window.session.plan
    assert [m for m in seen if m != "tick"] == [
        m for nid in plan for m in (("started", nid), ("finished", nid))] + [
        "run finished", "idle run"]
    # the window answered (the timer ticked) between any two of them
    assert all(seen[k + 1] == "tick" for k, m in enumerate(seen[:-1]) if m != "tick")
