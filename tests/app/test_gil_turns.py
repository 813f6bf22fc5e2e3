"""The threads that compute for the window give the GUI thread its turn (issue 32: at
10,000 nodes a 90 ms slice of the GUI thread's work took 250-650 ms of wall time while the
run's thread and the kernel preload shared the GIL with it; app/gil.py)."""

from __future__ import annotations

import os
import select
import statistics
import subprocess
import sys
import threading
import time

import pytest

from hexscope.app import gil, kernel_preload
from hexscope.app.prepare_marks import MarksPreparer
from hexscope.engine import cooperate
from tests.support.large_graph import residual_graph


def _spin(seconds: float) -> None:
    """Python work on this thread for ``seconds`` of its CPU (holds the GIL as a paint's
    Python does)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class _Gui(threading.Thread):
    """A stand-in for the GUI thread: computes or sleeps as told."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.busy = threading.Event()
        self.quit = threading.Event()

    def run(self) -> None:
        while not self.quit.is_set():
            if self.busy.is_set():
                _spin(0.001)
            else:
                # an idle window waits in poll, waking for its timers now and then (each
                # wake may wait for a core, and for the GIL: app/gil.py counts both)
                select.select([], [], [], 0.05)


def test_a_computing_thread_waits_only_while_the_gui_thread_computes():
    gui = _Gui()
    gui.start()
    try:
        turn = gil.GuiTurn(gui.ident)
        end = time.monotonic() + 0.2
        while time.monotonic() < end:          # the GUI thread idles: next to no wait
            turn.give_way()
        assert turn.waited < 0.015             # (a wake or two caught waiting for the GIL)
        gui.busy.set()
        longest = 0.0
        end = time.monotonic() + 0.4
        while time.monotonic() < end:          # it computes: waits, each bounded
            t0 = time.monotonic()
            _spin(0.0005)
            turn.give_way()
            longest = max(longest, time.monotonic() - t0)
        assert turn.waited > 0.02
        assert longest < gil.WAIT_S + 0.25     # never held up for good
    finally:
        gui.quit.set()
        gui.join()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux affinity")
def test_a_gui_thread_waiting_for_a_core_counts_as_busy():
    """On a machine short of cores the GUI thread, runnable, may get a fifth of one: by
    its CPU clock alone it looked idle (under BUSY_SHARE), and the computing threads took
    the cores and the GIL from it (a 397 ms gap at load 3.4: 54 ms run, 325 ms waiting for
    a core). Its run delay counts too: they give way."""
    gui = _Gui()
    gui.start()
    core = min(os.sched_getaffinity(0))
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4)]
    try:
        os.sched_setaffinity(gui.native_id, {core})
        for hog in hogs:
            os.sched_setaffinity(hog.pid, {core})
        gui.busy.set()
        turn = gil.GuiTurn(gui.ident)
        time.sleep(0.2)
        (cpu, demand), t0 = turn.gui_clocks(), time.monotonic()
        end = t0 + 0.5
        while time.monotonic() < end:
            time.sleep(0.0005)
            turn.give_way()
        wall = time.monotonic() - t0
        ran, wanted = turn.gui_clocks()
        assert ran - cpu < gil.BUSY_SHARE * wall            # idle by its CPU clock
        assert wanted - demand > gil.WANT_SHARE * wall      # but it wants a core
        assert turn.waited > 0.1 * wall
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        gui.quit.set()
        gui.join()


def test_a_run_gives_way_between_its_nodes(qtbot, window, graph_file, monkeypatch):
    on_thread: list[bool] = []
    monkeypatch.setattr(gil, "give_way", lambda: on_thread.append(
        threading.current_thread() is not threading.main_thread()))
    monkeypatch.setattr(kernel_preload, "_wanted", threading.Event())
    assert window.files.open_graph(graph_file)
    assert not kernel_preload._wanted.is_set()
    assert gil.installed() is not None         # the window's controller installed it
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions["run"].trigger()
    # once after each node, on the run's thread
    assert on_thread == [True] * len(window.session.plan)
    assert kernel_preload._wanted.is_set()     # the preload hurries once a run is asked for


def test_the_kernel_preload_gives_way_at_its_python_calls(monkeypatch):
    from hexscope.engine.ops.kernels import warm

    seen: list[object] = []
    monkeypatch.setattr(warm, "warm_all", lambda: seen.append(sys.gettrace()))
    gil.install()
    thread = kernel_preload.start_preload()
    thread.join(10)
    assert len(seen) == 1 and seen[0] is not None    # under giving_way's hook


def test_the_app_sets_a_short_switch_interval():
    gil.install()
    assert sys.getswitchinterval() == pytest.approx(gil.GUI_SWITCH_INTERVAL_S)
    assert gil.GUI_SWITCH_INTERVAL_S <= 0.0005       # see the convoy figures in app/gil.py


def test_the_preload_stops_giving_way_once_a_comparison_waits(monkeypatch):
    """Compare's kernel is the preload's last: once a comparison is asked for, the preload
    takes its hook off and finishes at full speed."""
    from hexscope.engine.ops.kernels import warm

    seen: list[object] = []

    def warm_all() -> None:
        seen.append(sys.gettrace())
        kernel_preload.hurry()
        for _ in range(64):             # the hook looks at the flag every 32 calls
            statistics.median([1])
        seen.append(sys.gettrace())

    monkeypatch.setattr(warm, "warm_all", warm_all)
    monkeypatch.setattr(kernel_preload, "_wanted", threading.Event())
    gil.install()
    thread = kernel_preload.start_preload()
    thread.join(10)
    assert seen[0] is not None and seen[1] is None


def test_the_engines_long_passes_give_way_in_the_app():
    """gil.install (the window's controller calls it) puts the GUI thread's turn at the
    engine's pause points: a re-prepare, the loader's read, a save (engine/cooperate.py)."""
    turn = gil.install()
    assert turn is not None
    assert cooperate.installed() == turn.give_way


def test_the_marks_prepare_pauses_at_the_engines_points_without_a_trace_hook(qtbot):
    """The marks' copy and prepare of the graph give way at the engine's pause points, on
    the preparer's thread, and no longer under giving_way's trace hook (which made that
    Python 1.5-2 times as slow)."""
    gil.install()
    seen: list[tuple[bool, object]] = []
    previous = cooperate.install(lambda: seen.append(
        (threading.current_thread() is not threading.main_thread(), sys.gettrace())))
    preparer = MarksPreparer()
    try:
        with qtbot.waitSignal(preparer.marks_ready, timeout=20000) as ready:
            preparer.request(residual_graph(600))
    finally:
        cooperate.install(previous)
        preparer.shutdown()
    assert ready.args[0]                       # AutoQuantize, the Supernodes: marks
    assert len(seen) >= 2 * 600 // cooperate.EVERY
    assert all(off_gui and hook is None for off_gui, hook in seen)
