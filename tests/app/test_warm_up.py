"""Kernels compiled at install time (``hexscope --warm-up``), and a first run that has to
compile them says so (issue 32: "Preparing the graph…" for 10+ s without a word)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from hexscope.app import cli
from hexscope.app.warm_up import is_warm, stamp_path

CLASSIC = Path(__file__).parents[2] / "resources" / "examples" / "classic_quantized.hexgraph"


def test_warm_up_runs_the_examples_and_records_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HEXSCOPE_CACHE_DIR", str(tmp_path))
    assert not is_warm()
    assert cli.main(["--warm-up"]) == 0
    out = capsys.readouterr().out
    assert "compiling the simulator's kernels (once after install)" in out
    assert "kernels ready" in out
    assert is_warm() and stamp_path().parent == tmp_path


def test_a_first_run_after_install_says_kernels_compile_once(qtbot, shown, tmp_path,
                                                             monkeypatch):
    monkeypatch.setenv("HEXSCOPE_CACHE_DIR", str(tmp_path))      # never warmed up
    seen: list[str] = []
    shown.statusBar().messageChanged.connect(seen.append)
    assert shown.files.open_graph(str(CLASSIC))
    shown.canvas.setFocus()
    with qtbot.waitSignal(shown.controller.idle, timeout=60000):
        qtbot.keyClick(shown.canvas, Qt.Key.Key_F5)
    assert any(text.startswith("Compiling kernels (once after install") for text in seen)
    assert is_warm()                       # the next first run says only "Preparing"
    seen.clear()
    shown.debug.stop()                      # ends the session: the next run prepares again
    qtbot.waitUntil(lambda: shown.session is None, timeout=5000)
    with qtbot.waitSignal(shown.controller.idle, timeout=60000):
        qtbot.keyClick(shown.canvas, Qt.Key.Key_F5)
    assert any(text.startswith("Preparing the graph") for text in seen)
    assert not any("Compiling kernels" in text for text in seen)
