"""Fixtures for driving the real main window offscreen."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from nop_graphs import nop_graph  # noqa: E402
from PySide6.QtCore import QSettings

from hexscope.app.main_window import MainWindow
from hexscope.app.settings import AppSettings


@pytest.fixture
def settings(tmp_path) -> AppSettings:
    qs = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    return AppSettings(qs, root=str(tmp_path / "appdata"))


@pytest.fixture(autouse=True)
def _collect_on_the_gui_thread():
    """A test's windows are freed here, on the GUI thread. Left to the cyclic collector they
    were freed wherever it next ran, often on a worker thread of the next test's window
    (a session, a comparison, a loader), and a QWidget deleted off the GUI thread crashed
    a later palette change (Fatal Python error: Segmentation fault in setPalette).

    During the test the automatic collector is off, as in the app (app/gui.py collects on the
    GUI thread only, on a timer): left on, it ran on a worker's thread mid-test (the reduce
    dialog's, while it prepared a session) and freed Qt objects there (a segfault in a full
    run)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        from PySide6.QtCore import QCoreApplication, QEvent

        if QCoreApplication.instance() is not None:
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gc.collect()
        if was_enabled:
            gc.enable()


@pytest.fixture
def window(qtbot, settings):
    w = MainWindow(settings)
    yield w
    w.undo_stack.setClean()          # no "unsaved changes" prompt when it closes
    w.files.meta_dirty = False
    w.close()
    w.shutdown()
    w.deleteLater()
    assert not w.controller.thread_running, "the worker thread is still alive"


@pytest.fixture
def graph_file(tmp_path) -> str:
    path = tmp_path / "nops.hexgraph"
    nop_graph().save(path)
    return str(path)


@pytest.fixture
def gate():
    """A user op ``TestGate`` that passes its input through once ``gate.set()`` was called.

    It stands in for a slow kernel: a test can press keys while a node is running and
    release it when it wants; the worker never waits longer than 5 s.
    """
    import threading

    from nop_graphs import GATE_OP

    from hexscope.engine.ops.registry import REGISTRY, Category, Port, op

    event = threading.Event()

    @op(GATE_OP, Category.USER, inputs=(Port("x", None, layout=None),),
        outputs=(Port("y", None, layout=None),), user=True)
    def _gate(ctx, x):
        """Waits for the test's go, then passes x through."""
        event.wait(5)
        return (x,)

    yield event
    event.set()
    REGISTRY.unregister(GATE_OP)


@pytest.fixture
def shown(qtbot, window):
    """The window shown and active, the canvas focused: keys reach its shortcuts."""
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    window.canvas.setFocus()
    return window
