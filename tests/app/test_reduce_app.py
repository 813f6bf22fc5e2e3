"""Debug ▸ Reduce to the failing part… acting as a user (issue 28): the dialog, the progress
with Cancel while the GUI stays live, the kept nodes and cut points on the canvas, and the
reduced graph in a new window."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QProgressDialog, QPushButton
from reduce_graphs import TRAP_PLUGIN, trapped_file

from hexscope.app.reduce_actions import CUT, KEPT
from hexscope.app.reduce_dialog import ReduceDialog
from hexscope.engine import Graph
from hexscope.engine.inputs import InputSource, set_input_sources
from hexscope.engine.plugins import load_plugin, unload_plugin
from support.large_graph import input_tensor


@pytest.fixture
def trap_file(tmp_path):
    path, trap = trapped_file(tmp_path, 60)
    specs = load_plugin(TRAP_PLUGIN)
    try:
        graph = Graph.load(path)
        np.save(tmp_path / "x.npy", input_tensor())
        set_input_sources(graph, [InputSource(kind="npy", path="x.npy")])
        graph.save(path)
        yield path, trap
    finally:
        unload_plugin(specs)


def _menu_action(window, text: str):
    debug = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Debug")
    return next(a for a in debug.actions() if a.text() == text)


def _answer_dialog(out: str, kind: str = "node-error", command: str = "",
                   seen: list | None = None, run_on: str = "") -> None:
    """Fill in the dialog the menu opens, as a user would, and press Reduce (``seen``
    gets the dialog's suggestions first)."""
    dialog = QApplication.activeModalWidget()
    assert isinstance(dialog, ReduceDialog)
    if seen is not None:
        seen.append({"kind": dialog.kind.currentData(), "command": dialog.command.text(),
                     "timeout": dialog.timeout.value(), "b": dialog.backend_b.text(),
                     "run_on": [dialog.backend.itemData(k)
                                for k in range(dialog.backend.count())]})
    dialog.kind.setCurrentIndex(dialog.kind.findData(kind))
    if command:
        dialog.command.setText(command)
    if run_on:
        dialog.backend.setCurrentIndex(dialog.backend.findData(run_on))
    dialog.out.setText(out)
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()


def test_reduce_from_the_debug_menu_marks_the_canvas_and_opens_the_reduced_graph(
        qtbot, window, trap_file, tmp_path):
    path, trap = trap_file
    assert window.files.open_graph(str(path))
    out = str(tmp_path / "out" / "reduced.hexgraph")
    (tmp_path / "out").mkdir()
    QTimer.singleShot(0, lambda: _answer_dialog(out))
    _menu_action(window, "Reduce to the &failing part…").trigger()
    reduce = window.reduce
    qtbot.waitUntil(lambda: reduce.result is not None, timeout=20000)
    result = reduce.result
    assert result.best.units == (trap,)
    looks = window.scene.looks
    assert looks[trap].overlay == KEPT and "kept" in looks[trap].overlay_note
    cut = result.best.cuts[0].ref[0]
    assert looks[cut].overlay == CUT and "output 0 frozen as an INPUT" in looks[cut].overlay_note
    far = window.graph.order[-3]
    assert looks[far].overlay is None                # beyond the trap: not in the result
    # the reduced graph opened in a window of its own, from the file written
    (other,) = reduce.windows
    assert other.files.path == out and trap in other.graph and len(other.graph) == 5
    assert f"to {len(other.graph)} in" in window.statusBar().currentMessage()
    window.shutdown()
    assert not reduce.thread_running, "the reduction thread is still alive"


def test_cancel_stops_the_reduction_while_the_gui_stays_live(qtbot, window, trap_file,
                                                             tmp_path):
    path, _ = trap_file
    assert window.files.open_graph(str(path))
    script = tmp_path / "slow.py"
    hang = tmp_path / "hang"
    script.write_text("import os, sys, time\n"
                      f"time.sleep(30 if os.path.exists({str(hang)!r}) else 0.3)\n"
                      "raise SystemExit(1)\n")
    command = f"{sys.executable} {script}"
    QTimer.singleShot(0, lambda: _answer_dialog(str(tmp_path / "r.hexgraph"), "command",
                                                command))
    _menu_action(window, "Reduce to the &failing part…").trigger()
    reduce = window.reduce
    progress = reduce.dialog
    assert isinstance(progress, QProgressDialog)
    # the GUI thread keeps answering: the label follows the candidates
    qtbot.waitUntil(lambda: "Candidate 2" in progress.labelText(), timeout=20000)
    hang.touch()            # from now on a candidate's command hangs (no timeout was set)
    qtbot.wait(1000)        # a command is hanging by now (this candidate's or the next's)
    button = next(b for b in progress.findChildren(QPushButton) if b.text() == "Cancel")
    start = time.perf_counter()
    button.click()                                   # the user's button
    qtbot.waitUntil(lambda: reduce.job is None, timeout=10000)
    assert time.perf_counter() - start < 5           # the hanging command was killed
    assert reduce.result is None and not reduce.windows
    assert "cancelled" in window.statusBar().currentMessage()


def _do(qtbot, window, action: str) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions[action].trigger()


def test_the_dialog_suggests_from_the_last_run_and_refuses_what_cannot_start(
        qtbot, window, trap_file, tmp_path):
    path, trap = trap_file
    assert window.files.open_graph(str(path))
    seen: list[dict] = []

    def look_then_cancel() -> None:
        dialog = QApplication.activeModalWidget()
        _answer = {"kind": dialog.kind.currentData(), "command": dialog.command.text(),
                   "timeout": dialog.timeout.value(), "visible": dialog.command.isVisible()}
        seen.append(_answer)
        # B left empty: one line says why and the dialog stays
        dialog.kind.setCurrentIndex(dialog.kind.findData("backend-b"))
        ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
        ok.click()
        seen.append({"problem": dialog.problem.text(), "open": dialog.isVisible(),
                     "b_visible": dialog.backend_b.isVisible(),
                     "command_visible": dialog.command.isVisible(),
                     "tolerance": dialog.tolerance.value()})
        dialog.reject()

    action = _menu_action(window, "Reduce to the &failing part…")
    QTimer.singleShot(0, look_then_cancel)
    action.trigger()                                 # no run yet: the CLI's default
    _do(qtbot, window, "run")                        # the window's run stops at the trap
    QTimer.singleShot(0, look_then_cancel)
    action.trigger()
    first, refused, after_run, _ = seen
    assert first["kind"] == "node-error" and not first["visible"]
    assert first["command"].endswith(f"--plugin {TRAP_PLUGIN} run {{}}")
    assert first["timeout"] == 60.0
    assert refused == {"problem": "Backend B is sim or dsp://HOST:PORT.", "open": True,
                       "b_visible": True, "command_visible": False, "tolerance": 0.0}
    assert after_run["kind"] == "node-error" and trap in window.session.executor.failed
    assert window.reduce.job is None                  # nothing started
    # a graph that runs to the end: the question is its accuracy
    from support.large_graph import residual_graph

    clean = residual_graph(30)
    set_input_sources(clean, [InputSource(kind="npy", path="x.npy")])     # trap_file's
    clean.save(tmp_path / "clean.hexgraph")
    assert window.files.open_graph(str(tmp_path / "clean.hexgraph"))
    _do(qtbot, window, "run")
    QTimer.singleShot(0, look_then_cancel)
    action.trigger()
    assert seen[-2]["kind"] == "reference"


def test_candidates_run_on_the_windows_device_which_it_gets_back(qtbot, window, trap_file,
                                                                 tmp_path):
    from support.agent_process import running_agent

    path, trap = trap_file
    assert window.files.open_graph(str(path))
    with running_agent("--plugin", str(TRAP_PLUGIN)) as agent:
        window.backend.connect_to(agent.address)
        qtbot.waitUntil(lambda: window.backend.status is not None
                        and window.backend.status.connected, timeout=20000)
        seen: list[dict] = []
        out = str(tmp_path / "dev.hexgraph")
        QTimer.singleShot(0, lambda: _answer_dialog(out, seen=seen, run_on=agent.address))
        _menu_action(window, "Reduce to the &failing part…").trigger()
        reduce = window.reduce
        qtbot.waitUntil(lambda: reduce.job is None, timeout=60000)
        assert reduce.result is not None, window.statusBar().currentMessage()
        assert seen[0]["run_on"] == ["sim", agent.address] and seen[0]["b"] == agent.address
        assert reduce.last_job.backend == agent.address
        assert reduce.result.best.units == (trap,)
        # the window let go of the device while the reduction ran, and has it again
        assert window.backend.spec == agent.address
        qtbot.waitUntil(lambda: window.backend.status is not None
                        and window.backend.status.connected, timeout=20000)
        window.shutdown()
