"""The compiled kernels load on a background thread as the window opens (issue 32: the first
F10 of a 10,000-node graph waited 11-16 s while the session's thread imported numba and
loaded every cached kernel)."""

from __future__ import annotations

import subprocess
import sys

from PySide6.QtWidgets import QApplication

from hexscope.app import gui, kernel_preload

_CHECK = """
import sys
from hexscope.app.kernel_preload import start_preload
from hexscope.engine.ops.kernels.warm import WARMERS
LAZY = ("numba", "hexscope.engine.ops.kernels.compiled_defs",
        "hexscope.engine.analysis.metrics_pass")
assert not any(m in sys.modules for m in LAZY), "loaded before the preload"
thread = start_preload()
thread.join(300)
print(thread.daemon, thread.is_alive(),
      sorted(m for m in (*WARMERS, *LAZY) if m not in sys.modules))
"""


def test_the_preload_loads_every_kernel_module_in_the_background():
    proc = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True,
                          timeout=400)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[-2] == "True False []"


def test_the_gui_starts_the_preload_once_its_window_shows(qapp, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(gui.QUIT_AFTER_START, raising=False)
    started: list[bool] = []

    def record() -> None:
        started.append(QApplication.activeWindow() is not None or bool(
            [w for w in QApplication.topLevelWidgets() if w.isVisible()]))

    monkeypatch.setattr(kernel_preload, "start_preload", record)
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    assert gui.run_gui(plugin_errors=[]) == 0
    assert started == [True]                    # once, with the window already shown
