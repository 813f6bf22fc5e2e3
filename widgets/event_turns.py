"""One time budget for the sliced work that shares a pass of the event loop.

Views that work between events (the overview tiles, the minimap, node looks, the timing
table, the graph loader) each run a slice of 10-30 ms from a zero-interval timer. Qt fires
every timer that is due in one pass of the event loop, so several such slices ran back to
back before the next input or paint: a reopen at 10,000 nodes stacked a tile band (32 ms),
a looks slice (10 ms) and the loader's disposal (8 ms) into one 80-120 ms gap (issue 32,
``bench/ui_wall_gaps.py --spy``). A slice now asks :func:`may_run` first. Once the pass has
spent ``PASS_BUDGET_S``, the slice waits for a later pass (its caller starts its timer
again). Waiting slices run first come, first served, so none waits for ever, and one that
has waited ``FORCE_PASSES`` passes runs whatever the pass has spent.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from PySide6.QtCore import QAbstractEventDispatcher, QTimer

#: What the slices of one pass may take together before the next slice waits: a slice
#: begun within it still runs whole (a slice is 10-30 ms).
PASS_BUDGET_S = 0.012
#: A waiting slice runs after this many passes whatever the pass has spent (a paint or an
#: input handler that takes the whole budget every pass must not stop the work).
FORCE_PASSES = 3
#: A waiting slice that has not asked again for this many passes has stopped (its view was
#: closed, its work cancelled): it no longer holds the others back.
GONE_PASSES = 6


class Turns:
    """The passes of one thread's event loop and the slices waiting for a turn."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self.passes = 0                  # passes begun so far
        self._began = clock()            # when the current pass began
        # waiting slices in order of asking: key -> (the pass it first asked, its last ask)
        self._waiting: OrderedDict[object, tuple[int, int]] = OrderedDict()
        self._hooked = False

    def new_pass(self) -> None:
        """A pass of the event loop begins (the dispatcher would wait: what was due ran)."""
        self.passes += 1
        self._began = self._clock()

    def woke(self) -> None:
        """A processEvents() call begins (a dialog's, a test's): the budget starts again,
        but it is no pass of the loop (the dispatcher signals it beside aboutToBlock)."""
        self._began = self._clock()

    def spent(self) -> float:
        """Seconds since the current pass began."""
        return self._clock() - self._began

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def may_run(self, key: object) -> bool:
        """True when the slice ``key`` may run now; False when it must wait (start its timer
        again and ask again next time)."""
        self._hook()
        now = self.passes
        while self._waiting:             # a stopped slice no longer holds the others back
            head, (_, last) = next(iter(self._waiting.items()))
            if head is key or now - last < GONE_PASSES:
                break
            del self._waiting[head]
        first = self._waiting.get(key, (now, now))[0]
        if next(iter(self._waiting), key) is key and (
                self.spent() < PASS_BUDGET_S or now - first >= FORCE_PASSES):
            self._waiting.pop(key, None)
            return True
        self._waiting[key] = (first, now)    # keeps its place when it asked before
        return False

    def _hook(self) -> None:
        if self._hooked:
            return
        dispatcher = QAbstractEventDispatcher.instance()
        if dispatcher is None:
            return
        # aboutToBlock: the loop has run what was due and would wait
        dispatcher.aboutToBlock.connect(self.new_pass)
        dispatcher.awake.connect(self.woke)
        self._hooked = True


_TURNS = Turns()


def may_run(key: object) -> bool:
    """:meth:`Turns.may_run` on the GUI thread's loop."""
    return _TURNS.may_run(key)


def gated(timer: QTimer, work: Callable[[], object]) -> Callable[[], None]:
    """A slot for ``timer`` that runs ``work`` when the pass has room for it, or starts
    ``timer`` again to ask next pass."""
    def slot() -> None:
        if _TURNS.may_run(timer):
            work()
        else:
            timer.start()
    return slot


__all__ = ["FORCE_PASSES", "GONE_PASSES", "PASS_BUDGET_S", "Turns", "gated", "may_run"]
