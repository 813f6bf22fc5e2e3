"""Kernels compiled at install time (``hexscope --warm-up``), and a first run that has to
compile them says so (issue 32: "Preparing the graph…" for 10+ s without a word)."""

from __future__ import annotations

import io
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


def test_warm_up_runs_a_delegate_built_graph_twice(tmp_path, monkeypatch, capsys):
    """A first MobileNetV2 run after a fresh install compiled for 1.9 s more than the next:
    the examples and kernels/warm.py's tiny calls missed the specialisations a real model's
    run takes (read-only Consts, d32 forms, the fused passes of a node's second run)."""
    from hexscope.app import warm_up
    from hexscope.engine.session import Session

    monkeypatch.setenv("HEXSCOPE_CACHE_DIR", str(tmp_path))
    runs: list[int] = []
    real_run = Session.run

    def counted(self, *args, **kwargs):
        runs.append(len(self.prepared.nodes))
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(Session, "run", counted)
    monkeypatch.setattr(warm_up, "RAN", [])
    assert warm_up.warm_up(io.StringIO()) == 0
    assert "delegate_blazeface.hexgraph" in warm_up.RAN
    big = [n for n in runs if n > 300]          # BlazeFace's prepared graph, run twice
    assert len(big) == 2
    assert len(runs) == 2 * len(warm_up.RAN)


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
