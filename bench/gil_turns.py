"""The GUI thread's turn at the GIL, measured (app/gil.py; issue 32). Wall-time ratios on
a shared machine: run by hand, never in the suite (they were tests, and failed about 1 run
in 8 at load 3). Usage: ``.venv/bin/python bench/gil_turns.py``; each line prints the two
medians and their ratio, and the ratio the experiment was designed to show.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time

from hexscope.app import gil


def _spin(seconds: float) -> None:
    """Python work on this thread for ``seconds`` of its CPU (holds the GIL as a paint's
    Python does)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def a_gui_thread_waiting_for_the_gil_between_small_pieces_counts_as_busy():
    """A window's work comes back into Python from Qt hundreds of times a slice (each
    item's paint): beside a computing thread it waits for the GIL at each, and its CPU
    clock advances a fifth of the time (Open at 10,000 nodes: gaps of 108-131 ms with 0-15
    ms of its own CPU). Seen waiting on a futex, it is busy: 400 pieces of 50 us with
    GIL releases between took about half the wall time they take beside a thread that
    does not give way (before: no better)."""
    medians = {}
    for give in (False, True):
        walls: list[float] = []
        start, finished, quit_ = threading.Event(), threading.Event(), threading.Event()

        def window(walls: list[float] = walls, start: threading.Event = start,
                   finished: threading.Event = finished, quit_: threading.Event = quit_
                   ) -> None:
            while True:
                start.wait()
                start.clear()
                if quit_.is_set():
                    return
                t0 = time.perf_counter()
                for _ in range(400):
                    _spin(0.00005)
                    time.sleep(0)              # lets the GIL go, as a call into Qt does
                walls.append(time.perf_counter() - t0)
                finished.set()

        gui = threading.Thread(target=window, daemon=True)
        gui.start()
        turn = gil.GuiTurn(gui.ident)
        stop = threading.Event()

        def compute(give: bool = give, stop: threading.Event = stop,
                    turn: gil.GuiTurn = turn) -> None:
            while not stop.is_set():
                _spin(0.001)
                if give:
                    turn.give_way()

        worker = threading.Thread(target=compute, daemon=True)
        old = sys.getswitchinterval()
        sys.setswitchinterval(gil.GUI_SWITCH_INTERVAL_S)
        worker.start()
        try:
            for _ in range(7):
                time.sleep(0.01)
                finished.clear()
                start.set()
                finished.wait(10)
        finally:
            stop.set()
            worker.join()
            quit_.set()
            start.set()
            gui.join()
            sys.setswitchinterval(old)
        medians[give] = statistics.median(walls)
    ratio = medians[True] / medians[False]
    print(f"{ratio:.2f} (designed: under 0.7)  {medians}")


def the_gui_threads_work_takes_less_wall_time_when_the_others_give_way():
    """The same 20 ms of the GUI thread's Python beside a thread computing in 1 ms steps,
    with and without giving way: without, CPython shares the GIL about evenly (~2x the
    wall time); with, the other thread sleeps meanwhile."""
    turn = gil.GuiTurn()                       # this thread is the GUI thread here
    medians = {}
    for give in (False, True):
        stop = threading.Event()

        def compute(give: bool = give, stop: threading.Event = stop) -> None:
            while not stop.is_set():
                _spin(0.001)
                if give:
                    turn.give_way()

        worker = threading.Thread(target=compute, daemon=True)
        worker.start()
        walls = []
        for _ in range(15):
            time.sleep(0.01)                   # idle between two pieces of work
            t0 = time.perf_counter()
            _spin(0.02)
            walls.append(time.perf_counter() - t0)
        stop.set()
        worker.join()
        medians[give] = statistics.median(walls)
    ratio = medians[True] / medians[False]
    print(f"{ratio:.2f} (designed: under 0.85)  {medians}")


def the_gui_thread_gets_the_gil_back_sooner_at_the_apps_switch_interval():
    """The GUI thread comes back into Python from Qt (a paint, a slot) after Qt released the
    GIL; beside a computing thread it waits up to the switch interval each time. 50 such
    pieces of 0.2 ms (``time.sleep(0)`` releases the GIL as a Qt call does): at CPython's
    5 ms they took ~10 times the wall time they take at the app's interval."""
    old = sys.getswitchinterval()
    medians = {}
    try:
        for interval in (0.005, gil.GUI_SWITCH_INTERVAL_S):
            sys.setswitchinterval(interval)
            stop = threading.Event()

            def compute(stop: threading.Event = stop) -> None:
                while not stop.is_set():
                    _spin(0.001)

            worker = threading.Thread(target=compute, daemon=True)
            worker.start()
            walls = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(50):
                    _spin(0.0002)
                    time.sleep(0)
                walls.append(time.perf_counter() - t0)
            stop.set()
            worker.join()
            medians[interval] = statistics.median(walls)
    finally:
        sys.setswitchinterval(old)
    ratio = medians[gil.GUI_SWITCH_INTERVAL_S] / medians[0.005]
    print(f"{ratio:.2f} (designed: under 0.5)  {medians}")


if __name__ == "__main__":
    for experiment in (a_gui_thread_waiting_for_the_gil_between_small_pieces_counts_as_busy,
                       the_gui_threads_work_takes_less_wall_time_when_the_others_give_way,
                       the_gui_thread_gets_the_gil_back_sooner_at_the_apps_switch_interval):
        print(f"{experiment.__name__}:", end=" ", flush=True)
        experiment()
