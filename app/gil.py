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
kernel preload every 32 Python calls), a computing thread reads how long the GUI thread
has run (its CPU clock) and run or waited for a core (plus its run delay,
``/proc/self/task/TID/schedstat``), and while the first has advanced by more than
``BUSY_SHARE`` of the time since it last looked, or the second by more than
``WANT_SHARE`` (the window is painting or handling an event), it sleeps in growing steps
from ``STEP_S``. The run delay counts because on a machine short of cores the GUI
thread, runnable but without one, looked idle by its CPU clock alone: in a gap of 397 ms
at load 3.4 it ran 54 ms and waited 325 ms for a core while the marks' prepare and the
session's thread, taking it for idle, computed on
(bench/ui_wall_gaps.py --proc; bench/README.md, ninth round). And it is busy while it waits
on a futex (read from /proc with the GIL held: it waits for the GIL): a window that comes
back into Python from Qt at each item's paint waits for the GIL at each beside a computing
thread, and ran 0-15 ms of a 108-131 ms gap while the loader read a file, idle by both
clocks (:meth:`GuiTurn.gui_waits`). A computing thread waits at
most ``WAIT_S`` at a time and then computes for at least ``GO_S``, so that it always moves
on (nothing the GUI thread waits for is held up for long) and keeps its share while the
window is busy for seconds. The event loop's own signals could not say this: Qt's
dispatcher says "awake" after it has handled the timers and events it woke up for, not
before.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from hexscope.engine import cooperate

#: Seconds a thread may hold the GIL while another waits for it (CPython's default: 0.005;
#: 0.001 before gil32). Only a thread that waits makes the holder switch: alone, a thread
#: keeps the GIL.
GUI_SWITCH_INTERVAL_S = 0.0002
#: The GUI thread is busy while its CPU clock advances by more than this share of the time,
BUSY_SHARE = 0.3
#: or while it runs or waits for a core for more than this share of WANT_WINDOW_S (a thread
#: that only wakes for its timers may wait for a core a third of the time on a loaded
#: machine: that is not busy; one starved of cores waits most of it)
WANT_SHARE = 0.6
WANT_WINDOW_S = 0.02
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
        self._schedstat = _open_task_file(self.gui_thread, "schedstat")
        self._syscall = _open_task_file(self.gui_thread, "syscall") if _FUTEX else None
        self._mine = threading.local()        # each computing thread's last look
        self.waited = 0.0               # seconds the computing threads gave way (tests, bench)

    def gui_cpu(self) -> float:
        return time.clock_gettime(self._clock)

    def gui_clocks(self) -> tuple[float, float]:
        """Seconds the GUI thread has run, and has run or been runnable without a core
        (its CPU clock twice where the kernel keeps no schedstat)."""
        if self._schedstat is not None:
            try:
                ran, waited = os.pread(self._schedstat, 128, 0).split()[:2]
                return int(ran) / 1e9, (int(ran) + int(waited)) / 1e9
            except (OSError, ValueError):
                self._schedstat = None
        cpu = self.gui_cpu()
        return cpu, cpu

    def gui_waits(self) -> bool:
        """Whether the GUI thread is waiting on a futex now: for the GIL, which this
        thread holds while it reads (a read that let the GIL go would hand it over and see
        the GUI thread running). A window that comes back into Python from Qt hundreds of
        times a slice waits so most of the time beside a computing thread, and its CPU
        clock then says it is idle: Open at 10,000 nodes, gaps of 108-131 ms in which it
        ran 0-15 ms while the loader read the file (bench/README.md, ninth round). Idle,
        it waits in poll. Waiting for a lock or for a thread to end (a shutdown) counts as
        busy too: the computing thread then keeps at least half its pace (WAIT_S, GO_S)."""
        if self._syscall is None:
            return False
        try:
            size = _pread(self._syscall, _SYSCALL_BUF, len(_SYSCALL_BUF), 0)
        except OSError:
            size = -1
        if size <= 0:
            self._syscall = None
            return False
        return _SYSCALL_BUF.raw[:size].split(b" ", 1)[0] == _FUTEX

    def _busy(self, mine: threading.local, now: float) -> bool:
        """Whether the GUI thread ran for most of the time since this thread's last look,
        or ran and waited for a core for most of the last ``WANT_WINDOW_S`` or so (a look
        every few ms is too short to tell a wake-up's wait for a core from starving)."""
        ran, wanted = self.gui_clocks()
        last = getattr(mine, "last", 0.0)
        busy = ran - getattr(mine, "ran", ran) > BUSY_SHARE * (now - last)
        mine.last, mine.ran = now, ran
        if not busy and self.gui_waits():
            return True
        since = getattr(mine, "want_since", 0.0)
        if now - since >= WANT_WINDOW_S:
            # after a long while without a look the share says nothing of now
            mine.starved = now - since < 4 * WANT_WINDOW_S and \
                wanted - mine.wanted > WANT_SHARE * (now - since)
            mine.want_since, mine.wanted = now, wanted
        return busy or getattr(mine, "starved", False)

    def give_way(self) -> None:
        """On a computing thread: wait while the GUI thread is busy (see the module)."""
        if threading.get_ident() == self.gui_thread:
            return
        mine = self._mine
        now = time.monotonic()
        if now - getattr(mine, "last", 0.0) < STEP_S or now < getattr(mine, "go_until", 0.0):
            return
        if not self._busy(mine, now):
            return
        start, step = now, STEP_S
        while True:
            # each look takes the GIL back from the GUI thread: longer and longer sleeps
            time.sleep(step)
            step = min(2 * step, WAIT_S / 4)
            after = time.monotonic()
            if not self._busy(mine, after):
                break
            if after - start >= WAIT_S:
                mine.go_until = after + GO_S
                break
        self.waited += after - start


def _open_task_file(ident: int, name: str) -> int | None:
    """A descriptor of /proc's ``name`` file of the thread ``ident`` (pread from 0 reads
    it anew, in a few microseconds), or None (not Linux, no such file)."""
    native = next((t.native_id for t in threading.enumerate() if t.ident == ident), None)
    if native is None:
        return None
    try:
        fd = os.open(f"/proc/self/task/{native}/{name}", os.O_RDONLY)
    except OSError:
        return None
    try:
        os.pread(fd, 128, 0).split()[1 if name == "schedstat" else 0]
    except (OSError, IndexError):
        os.close(fd)
        return None
    return fd


#: The futex system call's number in /proc's syscall file, by machine (None: not looked at)
_FUTEX = {"x86_64": b"202", "aarch64": b"98"}.get(os.uname().machine) \
    if hasattr(os, "uname") else None
_SYSCALL_BUF = ctypes.create_string_buffer(128)
# libc's pread through ctypes.PyDLL: called with the GIL held (os.pread lets it go)
_pread: Callable[..., int] = lambda *_: -1   # noqa: E731 - replaced below where libc has one
try:
    _libc_pread = ctypes.PyDLL(None).pread
    _libc_pread.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_long]
    _libc_pread.restype = ctypes.c_ssize_t
    _pread = _libc_pread
except (OSError, AttributeError):
    _FUTEX = None


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


__all__ = ["BUSY_SHARE", "GO_S", "GUI_SWITCH_INTERVAL_S", "STEP_S", "WAIT_S", "WANT_SHARE",
           "WANT_WINDOW_S", "GuiTurn", "favour_the_gui_thread", "give_way", "giving_way",
           "install", "installed"]
