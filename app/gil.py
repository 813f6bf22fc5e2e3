"""The GUI thread's share of Python's GIL while other threads compute (issue 32).

A session's run, a comparison, the kernel preload or an edit's prepare runs Python on its
own thread, and CPython shares the GIL between the threads that want it about evenly: a
slice of 90 ms of the GUI thread's work (a band of the overview, a batch of a run's node
looks) took 250-650 ms of wall time while the run's thread and the preload computed beside
it (bench/ui_wall_gaps.py: the gap's wall time was the sum of the threads' CPU in it). And
each time the GUI thread comes back into Python from Qt (an item's paint, a slot), which
released the GIL, it waits up to the switch interval for it: 20 ms of Python in 100 such
pieces beside a computing thread took 556 ms at CPython's 5 ms, 135 ms at 1 ms and 55 ms
at 0.2 ms (31 ms with the computing thread giving way; bench/README.md, eighth round).

So the threads that compute for the window give the GUI thread its turn
(:func:`give_way`): at a point where it may pause (a run or Compare's B between two nodes;
the engine's pause points, every 64 nodes of its long passes, ``engine/cooperate.py``: the
loader's read, a graph's copy, validation and prepare, the session's plan, a save; the
kernel preload every 32 Python calls), a computing thread reads
the GUI thread's CPU clock, and while that clock has advanced by more than ``BUSY_SHARE``
of the time since it last looked (the window is painting or handling an event), it sleeps
in growing steps from ``STEP_S``. It waits at most ``WAIT_S`` at a time and then computes
for at least ``GO_S``, so that it always moves on (nothing the GUI thread waits for is held
up for long) and keeps its share while the window is busy for seconds. The event loop's own
signals could not say this: Qt's dispatcher says "awake" after it has handled the timers
and events it woke up for, not before.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from hexscope.engine import cooperate

#: Seconds a thread may hold the GIL while another waits for it (CPython's default: 0.005;
#: 0.001 before gil32). Only a thread that waits makes the holder switch: alone, a thread
#: keeps the GIL.
GUI_SWITCH_INTERVAL_S = 0.0002
#: The GUI thread is busy while its CPU clock advances by more than this share of the time.
BUSY_SHARE = 0.3
#: How often a computing thread looks at the GUI thread's clock, and sleeps while it is busy.
STEP_S = 0.002
#: The longest a computing thread waits at once for the GUI thread to go idle.
WAIT_S = 0.03
#: After a wait that ran out, the thread computes this long before it waits again.
GO_S = 0.03


def favour_the_gui_thread(interval: float = GUI_SWITCH_INTERVAL_S) -> None:
    """Set Python's switch interval for an app with a window (call once, at start)."""
    sys.setswitchinterval(interval)


class GuiTurn:
    """The GUI thread's CPU clock, and the waits of the threads that give way to it."""

    def __init__(self, gui_thread: int | None = None) -> None:
        self.gui_thread = gui_thread if gui_thread is not None else threading.get_ident()
        self._clock = time.pthread_getcpuclockid(self.gui_thread)
        self._mine = threading.local()        # each computing thread's last look
        self.waited = 0.0               # seconds the computing threads gave way (tests, bench)

    def gui_cpu(self) -> float:
        return time.clock_gettime(self._clock)

    def give_way(self) -> None:
        """On a computing thread: wait while the GUI thread is busy (see the module)."""
        if threading.get_ident() == self.gui_thread:
            return
        mine = self._mine
        now = time.monotonic()
        last = getattr(mine, "last", 0.0)
        if now - last < STEP_S or now < getattr(mine, "go_until", 0.0):
            return
        cpu = self.gui_cpu()
        busy = cpu - getattr(mine, "cpu", cpu) > BUSY_SHARE * (now - last)
        mine.last, mine.cpu = now, cpu
        if not busy:
            return
        start, step = now, STEP_S
        while True:
            # each look takes the GIL back from the GUI thread: longer and longer sleeps
            time.sleep(step)
            step = min(2 * step, WAIT_S / 4)
            after, cpu = time.monotonic(), self.gui_cpu()
            busy = cpu - mine.cpu > BUSY_SHARE * (after - mine.last)
            mine.last, mine.cpu = after, cpu
            if not busy:
                break
            if after - start >= WAIT_S:
                mine.go_until = after + GO_S
                break
        self.waited += after - start


_turn: GuiTurn | None = None


def install() -> GuiTurn | None:
    """On the GUI thread, once: the computing threads give way to this thread from now on;
    sets the switch interval too. None where a thread's CPU clock cannot be read (not
    Linux): the threads then share the GIL as CPython does."""
    global _turn
    favour_the_gui_thread()
    if _turn is None and hasattr(time, "pthread_getcpuclockid"):
        try:
            _turn = GuiTurn()
        except OSError:
            return None
        # the engine's long passes (a re-prepare after an edit: 0.2-0.4 s at 10,000 nodes
        # on the run's thread, the loader's read, a save) give way at their pause points
        cooperate.install(_turn.give_way)
    return _turn


def installed() -> GuiTurn | None:
    return _turn


def give_way() -> None:
    """Give the GUI thread its turn if a window installed one (else nothing)."""
    turn = _turn
    if turn is not None:
        turn.give_way()


@contextmanager
def giving_way(until: threading.Event | None = None) -> Iterator[None]:
    """Within: the calling thread gives way every 32 Python calls it makes (a trace hook,
    for work with no place of its own to pause, as numba's loading and compiling; it makes
    that thread's Python 1.5-2 times as slow: the engine's passes have pause points of
    their own, ``engine/cooperate.py``), until ``until`` is
    set: then the hook takes itself off and the thread computes at full speed (someone
    waits for its work)."""
    turn = _turn
    if turn is None:
        yield
        return
    calls = [0]

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        calls[0] += 1
        if not calls[0] & 31:
            if until is not None and until.is_set():
                sys.settrace(None)
                return
            turn.give_way()

    previous = sys.gettrace()
    sys.settrace(hook)
    try:
        yield
    finally:
        sys.settrace(previous)


__all__ = ["BUSY_SHARE", "GO_S", "GUI_SWITCH_INTERVAL_S", "STEP_S", "WAIT_S", "GuiTurn",
           "favour_the_gui_thread", "give_way", "giving_way", "install", "installed"]
