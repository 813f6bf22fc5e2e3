"""``hexscope gui`` as a user starts it: plugins first, errors in the log, the graph open."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from hexscope.engine import NodeStatus
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.plugins import load_standard_plugins

ROOT = Path(__file__).resolve().parents[2]
PADDING_DEMO = ROOT / "resources" / "examples" / "padding_demo.hexgraph"


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HEXSCOPE_QUIT_AFTER_START="1",
               HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"))
    proc = subprocess.run([sys.executable, "-m", "hexscope.app", *args], env=env, text=True,
                          capture_output=True, timeout=60, cwd=tmp_path)
    reports = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(reports) == 1, proc.stdout + proc.stderr
    return proc, reports[0]


def test_gui_opens_the_padding_demo_with_its_plugin_op_and_shows_a_broken_plugin(tmp_path):
    bad = tmp_path / "broken_plugin.py"
    bad.write_text("import math\n\nraise RuntimeError('half-written plugin')\n")
    proc, report = _start(tmp_path, "--plugin", str(bad), "gui", str(PADDING_DEMO))
    assert proc.returncode == 0, proc.stderr
    assert report["visible"] and report["title"] == "padding_demo.hexgraph — Hexscope"
    assert report["path"] == str(PADDING_DEMO)
    assert "0x1002 PeekLeft_8_d32" in report["nodes"] and report["canvas_items"] == 5
    # the bundled plugin declared PeekLeft_8_d32: the graph has no "unknown op" problem
    assert report["problems"] == []
    # the broken plugin is named with its file and line in the log panel, and did not stop
    assert any(f"{bad.resolve()}:3" in line and "half-written plugin" in line
               for line in report["log"]), report["log"]
    assert f"{bad.resolve()}:3" in proc.stderr


def test_gui_without_a_graph_opens_an_empty_window(tmp_path):
    proc, report = _start(tmp_path)            # no subcommand: gui is the default
    assert proc.returncode == 0, proc.stderr
    assert report["title"] == "untitled — Hexscope" and report["nodes"] == []
    assert report["welcome"]                         # a new user starts on the welcome page
    assert report["log"] == [] and report["path"] is None
    # the window gets the GIL back from a computing thread within ~1 ms, not 5 (app/gil.py)
    from hexscope.app.gil import GUI_SWITCH_INTERVAL_S

    assert report["switch_interval"] == pytest.approx(GUI_SWITCH_INTERVAL_S)


@pytest.fixture
def plugins():
    errors: list[Exception] = []
    load_standard_plugins(errors=errors)      # what run_gui does before the window exists
    assert REGISTRY.get("PeekLeft_8_d32").user, errors


def test_padding_demo_runs_in_the_window(qtbot, plugins, window):
    assert window.files.open_graph(str(PADDING_DEMO))
    peek = 0x1002
    assert window.issues == []
    item = window.palette.tree.findItems("PeekLeft_8_d32", Qt.MatchFlag.MatchStartsWith
                                         | Qt.MatchFlag.MatchRecursive)[0]
    assert item.toolTip(0).startswith("user op from ") and "peek_left.py:" in item.toolTip(0)
    with qtbot.waitSignal(window.controller.idle, timeout=5000):
        window.debug.actions["run"].trigger()
    assert window.session.status(peek) is NodeStatus.DONE
    assert window.scene.looks[peek].status == "done"
    assert window.session.output(peek, 0).shape == window.session.output(0x1001, 0).shape


def test_startup_errors_go_to_the_log_panel(window):
    window.report_startup_errors(["plugin /x/p.py:7: NameError: name 'np' is not defined"])
    lines = window.log_panel.lines
    assert [(line.level, line.text) for line in lines] == [
        (0, "plugin /x/p.py:7: NameError: name 'np' is not defined")]
    assert "1 plugin file(s) failed" in window.statusBar().currentMessage()
