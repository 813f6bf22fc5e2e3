"""The Compare panel makes its comparisons off the GUI thread (issue 12): the window stays
responsive, a step drops a stale result, Cancel abandons one, errors show in the panel, and
closing the window or opening another graph mid-comparison is safe."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from nop_graphs import INPUT, OUT, nop_graph
from PySide6.QtCore import QThread, QTimer
from PySide6.QtWidgets import QFileDialog, QInputDialog

from hexscope.app import compare_actions
from hexscope.engine import Graph, NodeStatus, OutputDef
from hexscope.engine.ops.registry import REGISTRY, Category, Port, op
from support.agent_process import start_agent

SLOW_OP = "TestCompareGate"
GATES = (0x301, 0x302, 0x303)
CLASSIC = Path(__file__).resolve().parents[2] / "resources" / "examples" / \
    "classic_quantized.hexgraph"


class BGate:
    """Controls ``TestCompareGate``: in B's run (on the compare thread) it waits for
    ``release()`` (5 s at most), or fails when ``fail`` is set; A's run never waits."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.fail = False
        self.waiting = threading.Event()       # B is held at a gate now

    def release(self) -> None:
        self.open.set()


@pytest.fixture
def b_gate():
    gate = BGate()

    @op(SLOW_OP, Category.USER, inputs=(Port("x", None, layout=None),),
        outputs=(Port("y", None, layout=None),), user=True)
    def _gate(ctx, x):
        """Passes x through; in a comparison's B run it waits for the test's go."""
        if QThread.currentThread().objectName() == "hexscope-compare":
            if gate.fail:
                raise ValueError("B's gate refused")
            gate.waiting.set()
            gate.open.wait(5)
        return (x,)

    yield gate
    gate.release()
    REGISTRY.unregister(SLOW_OP)


def gated_graph() -> Graph:
    """INPUT -> three TestCompareGate nodes -> OUTPUT."""
    g = Graph()
    g.append_node(INPUT, "INPUT", outputs=[OutputDef((1, 2, 2, 3), 4)])
    src = INPUT
    for node_id in GATES:
        g.append_node(node_id, SLOW_OP, inputs=[(src, 0)], outputs=1, label=f"g{node_id:x}")
        src = node_id
    g.append_node(OUT, "OUTPUT", inputs=[(src, 0)])
    return g


def _do(qtbot, window, action: str) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions[action].trigger()


def _compare_with_backend(qtbot, window, monkeypatch, name: str) -> None:
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (name, True))
    panel = window.compare.panel
    panel.tolerance.setValue(0.0)
    panel.target.setCurrentIndex(panel.target.findData("backend"))
    panel.compare_button.click()


def _settled(window) -> bool:
    c = window.compare
    return c.running is None and not c.panel.busy and not c._timer.isActive() \
        and not window.controller.busy


def _shown(panel) -> list:
    """Every comparison the panel is given from now on."""
    seen: list = []
    original = panel.set_comparison

    def spy(comparison, note=""):
        seen.append(comparison)
        original(comparison, note)

    panel.set_comparison = spy
    return seen


def test_compare_waits_off_the_gui_thread_and_the_window_stays_responsive(
        qtbot, window, b_gate, monkeypatch):
    window.set_graph(gated_graph(), None)
    _do(qtbot, window, "run")                         # A's gates never wait
    panel = window.compare.panel
    _compare_with_backend(qtbot, window, monkeypatch, "sim")
    assert b_gate.waiting.wait(5), "B's run did not reach its gate"
    fired = []
    QTimer.singleShot(20, lambda: fired.append(True))
    qtbot.waitUntil(lambda: bool(fired), timeout=2000)   # the event loop turns meanwhile
    qtbot.waitUntil(lambda: "running B" in panel.busy_label.text(), timeout=2000)
    qtbot.waitUntil(lambda: panel.busy_bar.isVisibleTo(panel), timeout=2000)
    assert panel.busy and panel.cancel_button.isVisibleTo(panel)
    assert "Comparing against sim" in panel.busy_label.text()
    assert window.compare.running is not None
    window.select_node(GATES[0])                       # the canvas answers meanwhile
    assert window.scene.selected_ids() == [GATES[0]]
    b_gate.release()
    qtbot.waitUntil(lambda: _settled(window), timeout=10000)
    assert not panel.busy_row.isVisibleTo(panel)
    comparison = panel.comparison
    assert comparison is not None, panel.summary.text()
    assert comparison.b_name == "sim" and comparison.first_divergence is None
    assert {d.node_id for d in comparison.outputs} >= set(GATES)


def test_a_step_during_a_comparison_drops_the_stale_result(qtbot, window, b_gate,
                                                           monkeypatch):
    window.set_graph(gated_graph(), None)
    _do(qtbot, window, "step")                        # A has run INPUT only
    panel = window.compare.panel
    seen = _shown(panel)
    _compare_with_backend(qtbot, window, monkeypatch, "sim")
    assert b_gate.waiting.wait(5)
    stale_generation = window.compare.running.generation
    _do(qtbot, window, "step")                        # A runs the first gate meanwhile
    assert window.session.status(GATES[0]) is NodeStatus.DONE
    assert window.compare.generation != stale_generation
    b_gate.release()
    qtbot.waitUntil(lambda: _settled(window) and panel.comparison is not None, timeout=10000)
    shown = [c for c in seen if c is not None]
    assert shown, panel.summary.text()
    # the result made from the one-node run never reached the panel: every one shown
    # includes the gate the second step ran
    for comparison in shown:
        assert GATES[0] in {d.node_id for d in comparison.outputs}
    assert GATES[1] not in {d.node_id for d in panel.comparison.outputs}   # A's run only


def test_cancel_abandons_the_comparison_and_a_new_one_waits_for_it(qtbot, window, b_gate,
                                                                   monkeypatch):
    window.set_graph(gated_graph(), None)
    _do(qtbot, window, "run")
    panel = window.compare.panel
    _compare_with_backend(qtbot, window, monkeypatch, "sim")
    assert b_gate.waiting.wait(5)
    panel.cancel_button.click()
    assert not panel.busy and panel.comparison is None
    assert "cancelled" in panel.summary.text()
    assert not window.compare.active                  # it no longer follows the run
    # Compare again before the abandoned job ends: never two at once, the new one waits
    panel.compare_button.click()
    assert panel.busy and "Waiting for the last comparison" in panel.busy_label.text()
    seen = _shown(panel)
    b_gate.release()
    qtbot.waitUntil(lambda: _settled(window) and panel.comparison is not None, timeout=10000)
    assert [c for c in seen if c is not None] == [panel.comparison]   # only the new one
    assert panel.comparison.first_divergence is None


def test_cancel_abandons_a_result_that_arrives_later(qtbot, window, b_gate, monkeypatch):
    window.set_graph(gated_graph(), None)
    _do(qtbot, window, "run")
    panel = window.compare.panel
    _compare_with_backend(qtbot, window, monkeypatch, "sim")
    assert b_gate.waiting.wait(5)
    panel.cancel_button.click()
    b_gate.release()
    qtbot.waitUntil(lambda: window.compare.running is None, timeout=10000)
    qtbot.wait(50)
    assert panel.comparison is None and "cancelled" in panel.summary.text()
    assert not panel.busy


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_device_says_so_in_the_panel(qtbot, window, monkeypatch):
    window.set_graph(nop_graph(), None)
    _do(qtbot, window, "run")
    address = f"dsp://127.0.0.1:{_closed_port()}"
    _compare_with_backend(qtbot, window, monkeypatch, address)
    panel = window.compare.panel
    qtbot.waitUntil(lambda: _settled(window), timeout=20000)
    text = panel.summary.text()
    assert panel.comparison is None
    assert f"Cannot compare against {address}" in text and "cannot connect" in text, text
    _do(qtbot, window, "restart")                     # the window goes on
    _do(qtbot, window, "run")
    assert window.session.status(OUT) is NodeStatus.DONE


def test_b_failing_on_a_node_names_it_and_compares_the_nodes_before(qtbot, window, b_gate,
                                                                    monkeypatch):
    window.set_graph(gated_graph(), None)
    _do(qtbot, window, "run")
    b_gate.fail = True
    _compare_with_backend(qtbot, window, monkeypatch, "sim")
    panel = window.compare.panel
    qtbot.waitUntil(lambda: _settled(window), timeout=10000)
    text = panel.summary.text()
    assert "B failed at 0x301" in text and SLOW_OP in text, text
    assert "the 1 node(s) B ran before it are compared" in text
    assert "B&#x27;s gate refused" in text or "B's gate refused" in text
    assert panel.comparison is not None
    assert {d.node_id for d in panel.comparison.outputs} == {INPUT}   # before the failure


def test_a_graph_file_gone_says_so_when_the_comparison_follows_the_run(qtbot, window,
                                                                       tmp_path, monkeypatch):
    window.set_graph(nop_graph(), None)
    other = tmp_path / "other.hexgraph"
    nop_graph().save(other)
    _do(qtbot, window, "run")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(other), ""))
    panel = window.compare.panel
    panel.target.setCurrentIndex(panel.target.findData("graph"))
    panel.compare_button.click()
    qtbot.waitUntil(lambda: _settled(window), timeout=10000)
    assert panel.comparison is not None and panel.comparison.first_divergence is None
    other.unlink()
    _do(qtbot, window, "restart")
    _do(qtbot, window, "run")                         # the comparison follows the run
    qtbot.waitUntil(lambda: _settled(window) and panel.comparison is None, timeout=10000)
    text = panel.summary.text()
    assert str(other) in text and "cannot be read" in text and "No such file" in text, text


def test_closing_the_window_mid_comparison_is_clean(qtbot, window, b_gate, monkeypatch):
    window.set_graph(gated_graph(), None)
    _do(qtbot, window, "run")
    panel = window.compare.panel
    _compare_with_backend(qtbot, window, monkeypatch, "sim")
    assert b_gate.waiting.wait(5)
    threading.Timer(0.3, b_gate.release).start()       # B's node ends while the window waits
    window.undo_stack.setClean()
    window.files.meta_dirty = False
    assert window.close()
    assert not window.compare.thread_running
    assert not window.controller.thread_running
    assert panel.comparison is None                    # the abandoned result was not shown
    assert not compare_actions._DETACHED


def test_a_comparison_that_outlives_the_window_ends_detached(qtbot, window, b_gate,
                                                            monkeypatch):
    window.set_graph(gated_graph(), None)
    _do(qtbot, window, "run")
    _compare_with_backend(qtbot, window, monkeypatch, "sim")
    assert b_gate.waiting.wait(5)
    monkeypatch.setattr(compare_actions.CompareController, "SHUTDOWN_WAIT_MS", 50)
    started = time.monotonic()
    window.shutdown()
    assert time.monotonic() - started < 2            # no wait for B's slow node
    assert window.compare.thread_running and compare_actions._DETACHED
    b_gate.release()
    qtbot.waitUntil(lambda: not compare_actions._DETACHED, timeout=10000)
    assert not window.compare.thread_running


def test_opening_another_graph_mid_comparison_drops_its_result(qtbot, window, b_gate,
                                                               monkeypatch):
    window.set_graph(gated_graph(), None)
    _do(qtbot, window, "run")
    panel = window.compare.panel
    _compare_with_backend(qtbot, window, monkeypatch, "sim")
    assert b_gate.waiting.wait(5)
    window.set_graph(nop_graph(), None)
    b_gate.release()
    qtbot.waitUntil(lambda: _settled(window), timeout=10000)
    assert panel.comparison is None
    assert "No run yet" in panel.summary.text()
    _do(qtbot, window, "run")                         # the new graph's run is compared
    qtbot.waitUntil(lambda: _settled(window) and panel.comparison is not None, timeout=10000)
    assert not set(GATES) & {d.node_id for d in panel.comparison.outputs}


@pytest.fixture
def slow_agent():
    agent = start_agent("--slow-ms", "60")
    yield agent
    agent.kill()


def test_a_slow_device_is_compared_off_the_gui_thread_and_its_loss_is_named(
        qtbot, window, slow_agent, monkeypatch):
    assert window.files.open_graph(str(CLASSIC))
    _do(qtbot, window, "run")
    panel = window.compare.panel
    _compare_with_backend(qtbot, window, monkeypatch, slow_agent.address)
    qtbot.waitUntil(lambda: "running B" in panel.busy_label.text(), timeout=10000)
    fired = []
    QTimer.singleShot(20, lambda: fired.append(True))
    qtbot.waitUntil(lambda: bool(fired), timeout=1000)    # while the device works
    assert window.compare.running is not None
    slow_agent.kill()                                      # the device goes away mid-run
    qtbot.waitUntil(lambda: _settled(window), timeout=30000)
    text = panel.summary.text()
    assert slow_agent.address in text and "lost" in text, text
    if panel.comparison is None:        # the device returned nothing before it went
        assert text.startswith(f"Cannot compare against {slow_agent.address}: B failed")
    assert window.debug.actions["step"].isEnabled()        # the window goes on


def test_a_device_comparison_shows_no_difference(qtbot, window, monkeypatch):
    agent = start_agent()
    try:
        assert window.files.open_graph(str(CLASSIC))
        _do(qtbot, window, "run")
        _compare_with_backend(qtbot, window, monkeypatch, agent.address)
        qtbot.waitUntil(lambda: _settled(window), timeout=30000)
        panel = window.compare.panel
        assert panel.comparison is not None, panel.summary.text()
        assert panel.comparison.first_divergence is None
        assert panel.comparison.b_name == agent.address
    finally:
        agent.kill()


def test_a_quick_comparison_never_shows_the_busy_row(qtbot, window, monkeypatch):
    window.set_graph(nop_graph(), None)
    _do(qtbot, window, "run")
    panel = window.compare.panel
    shown = []
    original = panel.busy_row.setVisible
    monkeypatch.setattr(panel.busy_row, "setVisible",
                        lambda v: (shown.append(v), original(v))[1])
    panel._busy_timer.setInterval(5000)                 # far longer than this comparison
    _compare_with_backend(qtbot, window, monkeypatch, "sim")
    assert panel.busy                                   # in flight at once
    qtbot.waitUntil(lambda: _settled(window) and panel.comparison is not None, timeout=5000)
    assert True not in shown and not panel.busy_row.isVisibleTo(panel)


@pytest.fixture
def very_slow_agent():
    agent = start_agent("--slow-ms", "1000")          # classic_quantized: about 8 s
    yield agent
    agent.kill()


def _comparing_on_device(qtbot, window, agent, monkeypatch) -> None:
    assert window.files.open_graph(str(CLASSIC))
    _do(qtbot, window, "run")
    _compare_with_backend(qtbot, window, monkeypatch, agent.address)
    qtbot.waitUntil(lambda: "running B" in window.compare.panel.busy_label.text(),
                    timeout=10000)


def test_cancel_breaks_the_device_connection_of_b_at_once(qtbot, window, very_slow_agent,
                                                          monkeypatch):
    _comparing_on_device(qtbot, window, very_slow_agent, monkeypatch)
    started = time.monotonic()
    window.compare.panel.cancel_button.click()
    qtbot.waitUntil(lambda: window.compare.running is None, timeout=5000)
    assert time.monotonic() - started < 3               # not the device's 8 s
    assert window.compare.panel.comparison is None
    assert very_slow_agent.alive()


def test_closing_the_window_mid_device_comparison_does_not_wait_for_the_device(
        qtbot, window, very_slow_agent, monkeypatch):
    _comparing_on_device(qtbot, window, very_slow_agent, monkeypatch)
    window.undo_stack.setClean()
    window.files.meta_dirty = False
    started = time.monotonic()
    assert window.close()
    assert time.monotonic() - started < 3
    assert not window.compare.thread_running and not compare_actions._DETACHED


EXIT_SCRIPT = """
import sys, time, tempfile
sys.path[:0] = [{app!r}, {tests!r}]
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QInputDialog
from hexscope.app import compare_actions
from hexscope.app.main_window import MainWindow
from hexscope.app.settings import AppSettings
import test_compare_async as t

from hexscope.engine.ops.registry import Category, Port, op
from PySide6.QtCore import QThread

gate = t.BGate()             # never released: B's node holds the compare thread 2 s

@op(t.SLOW_OP, Category.USER, inputs=(Port("x", None, layout=None),),
    outputs=(Port("y", None, layout=None),), user=True)
def _gate(ctx, x):
    '''Holds B.'''
    if QThread.currentThread().objectName() == "hexscope-compare":
        gate.waiting.set()
        gate.open.wait(2)
    return (x,)

app = QApplication([])
tmp = tempfile.mkdtemp()
w = MainWindow(AppSettings(QSettings(tmp + "/s.ini", QSettings.Format.IniFormat), root=tmp))
w.set_graph(t.gated_graph(), None)
w.debug.actions["run"].trigger()
while w.controller.busy or w.session is None:
    app.processEvents()
    time.sleep(0.01)
QInputDialog.getText = staticmethod(lambda *a, **k: ("sim", True))
w.compare.panel.target.setCurrentIndex(w.compare.panel.target.findData("backend"))
w.compare.panel.compare_button.click()
assert gate.waiting.wait(5)
compare_actions.CompareController.SHUTDOWN_WAIT_MS = 1
w.undo_stack.setClean()
w.files.meta_dirty = False
w.close()
print("detached", len(compare_actions._DETACHED), flush=True)
"""


def test_the_app_exits_cleanly_with_a_comparison_still_running(tmp_path):
    """A comparison that outlived its window is waited for at exit: Qt aborts a process
    whose QThread is destroyed while it runs (exit 134, "QThread: Destroyed while ...")."""
    import os
    import subprocess
    import sys

    here = Path(__file__).resolve().parent
    script = EXIT_SCRIPT.format(app=str(here), tests=str(here.parent))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert "detached 1" in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Destroyed while thread" not in proc.stderr


def test_a_bug_making_the_job_shows_in_the_panel_not_in_qts_event_loop(qtbot, window,
                                                                       monkeypatch):
    window.set_graph(nop_graph(), None)
    _do(qtbot, window, "run")

    def broken(session):
        raise KeyError("a bug")

    monkeypatch.setattr(window.compare, "_job_for", broken)
    window.compare.compare("isolated")                 # pytest-qt fails on a slot's raise
    panel = window.compare.panel
    assert "internal error: KeyError" in panel.summary.text()
    assert window.compare.running is None and not panel.busy
