"""The backend selector, the connection status and a connected DSP in the real window,
against hexscope-agent as a process: the device's version, its counters in the Timing panel,
a dropped connection (the app stays usable) and reconnecting without a restart."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hexscope.engine import NodeStatus, RunStatus
from support.agent_process import AgentProcess, running_agent, start_agent

CLASSIC = Path(__file__).resolve().parents[2] / "resources" / "examples" / \
    "classic_quantized.hexgraph"


def _do(qtbot, window, action: str, timeout: int = 20000) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=timeout):
        window.debug.actions[action].trigger()


def _connect(qtbot, window, address: str) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=20000):
        window.backend.connect_to(address)


def _agent_on(port: int) -> AgentProcess:
    proc = subprocess.Popen([sys.executable, "-m", "hexscope.engine.remote.agent", "--listen",
                             f"127.0.0.1:{port}"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None and str(port) in proc.stdout.readline()
    return AgentProcess(proc, port)


@pytest.fixture
def agent():
    a = start_agent()
    yield a
    a.kill()


def test_the_simulator_is_the_default_and_says_so(window):
    assert window.backend.selector.currentText() == "Simulator"
    assert "Simulator" in window.backend.indicator.text()
    assert not window.backend.reconnect_action.isEnabled()


def test_a_connected_dsp_runs_the_graph_and_shows_its_counters(qtbot, window, agent):
    assert window.files.open_graph(str(CLASSIC))
    _connect(qtbot, window, agent.address)
    text = window.backend.indicator.text()
    assert "connected" in text and "hexagon_nn 2.20.1" in text
    assert window.backend.selector.currentText() == "Connected DSP…"
    _do(qtbot, window, "step")
    assert "the device ran the graph up to 0x10000" in window.statusBar().currentMessage()
    _do(qtbot, window, "run")
    session = window.session
    assert all(session.status(n) is NodeStatus.DONE for n in session.plan)
    table = window.timing.table
    assert not table.isColumnHidden(4)
    assert table.horizontalHeaderItem(4).text() == "agent ns"     # not cycles: the simulator
    counters = [table.item(r, 4).text() for r in range(table.rowCount())]
    assert sum(bool(c) for c in counters) >= len(session.plan) - 1
    window.select_node(0x10023)
    assert "the device ran the graph" in window.outputs_panel.header.text()


def test_a_dropped_connection_fails_the_run_and_reconnect_brings_it_back(qtbot, window,
                                                                        agent):
    assert window.files.open_graph(str(CLASSIC))
    _connect(qtbot, window, agent.address)
    port = agent.port
    _do(qtbot, window, "run")
    agent.kill()                                          # the device goes away
    with qtbot.waitSignal(window.controller.run_finished, timeout=20000) as finished:
        _do(qtbot, window, "restart")
        window.debug.actions["run"].trigger()
    assert finished.args[0].status is RunStatus.FAILED
    qtbot.waitUntil(lambda: not window.controller.busy, timeout=20000)
    assert "not connected" in window.backend.indicator.text() or \
        "lost" in window.backend.indicator.text() or "cannot connect" in \
        window.backend.indicator.text()
    assert window.debug.actions["step"].isEnabled()        # the app stays usable
    back = _agent_on(port)
    try:
        with qtbot.waitSignal(window.controller.idle, timeout=20000):
            window.backend.reconnect_action.trigger()
        assert "connected" in window.backend.indicator.text()
        _do(qtbot, window, "run")
        session = window.session
        assert all(session.status(n) is NodeStatus.DONE for n in session.plan)
    finally:
        back.kill()


def test_back_to_the_simulator(qtbot, window, agent):
    _connect(qtbot, window, agent.address)
    with qtbot.waitSignal(window.controller.idle, timeout=20000):
        window.backend.selector.activated.emit(0)
    assert "Simulator" in window.backend.indicator.text()
    assert window.backend.sim_action.isChecked()


def test_compare_on_the_device_the_window_runs_on_shares_its_connection(qtbot, window, agent,
                                                                        monkeypatch):
    """The Compare panel runs B as a second session: on the same device it shares the
    connection (an agent serves one client; a second one would be told BUSY)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QInputDialog

    assert window.files.open_graph(str(CLASSIC))
    _connect(qtbot, window, agent.address)
    _do(qtbot, window, "run")
    panel = window.compare.panel
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (agent.address, True))
    panel.tolerance.setValue(0.0)
    panel.target.setCurrentIndex(panel.target.findData("backend"))
    qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.compare.running is None and not panel.busy, timeout=20000)
    comparison = panel.comparison
    assert comparison is not None, panel.summary.text()
    assert comparison.first_divergence is None
    assert "no output beyond 0 LSB" in panel.summary.text()
    _do(qtbot, window, "restart")                          # the window's session goes on
    _do(qtbot, window, "run")
    assert window.session.status(0x10027) is NodeStatus.DONE


def test_a_wrong_token_shows_why_and_the_simulator_still_works(qtbot, window):
    with running_agent("--token", "right") as guarded:
        assert window.files.open_graph(str(CLASSIC))
        with qtbot.waitSignal(window.controller.idle, timeout=20000):
            window.backend.connect_to(guarded.address, "wrong")
        text = window.backend.indicator.text()
        assert "#c62828" in text and "refused" in text          # red, with the reason
        assert "AUTH: wrong token" in window.backend.indicator.toolTip()
        with qtbot.waitSignal(window.controller.idle, timeout=20000):
            window.backend.selector.activated.emit(0)           # back to the simulator
        _do(qtbot, window, "run")
        session = window.session
        assert all(session.status(n) is NodeStatus.DONE for n in session.plan)


def test_a_successful_connect_clears_the_wrong_token_problem(qtbot, window):
    with running_agent("--token", "right") as guarded:
        assert window.files.open_graph(str(CLASSIC))
        with qtbot.waitSignal(window.controller.idle, timeout=20000):
            window.backend.connect_to(guarded.address, "wrong")
        assert any("wrong token" in text for text in window.run_errors)
        assert window.problems_dock.windowTitle() == "Problems (1)"
        with qtbot.waitSignal(window.controller.idle, timeout=20000):
            window.backend.connect_to(guarded.address, "right")
        assert window.backend.status is not None and window.backend.status.connected
        assert not any("token" in text.lower() or "refused" in text
                       for text in window.run_errors)
        assert window.problems_dock.windowTitle() == "Problems"
