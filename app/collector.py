"""The app's cyclic garbage collector: on the GUI thread only, in short passes (issue 32).

Python's automatic collector runs on whichever thread allocates past its threshold: on the
session's or a comparison's thread it could free a widget there, and Qt crashes on a widget
deleted off its thread. So it is off and the GUI thread collects on a timer. A pass walks
every object of the generations it collects (0.2-0.4 us each here), so its length is the
size of those generations, not of the garbage. Here:

- a young pass is due every ``INTERVAL_MS``, so each walks what that time made;
- none runs while the GUI thread builds a scene between events (``gc_pause.paused``): it
  would walk the half-built scene, which is counted as old at the end of the build;
- the middle generation is collected once it holds about ``MIDDLE_LIMIT`` objects, not
  after ten young passes whatever they left there: a run's results, B's session of a
  Compare and a prepared copy of the graph all survive their young passes, and CPython's
  rule then made one middle pass walk 230,000-415,000 objects (80-160 ms at 10,000
  nodes, no Python of ours in it). A young pass that would walk more than that (a
  thread's batch) is a middle pass at once: its survivors go straight to the oldest
  generation instead of being walked a second time;
- what survives a middle pass is frozen (``gc.freeze``) once the oldest generation holds
  ``OLD_LIMIT`` objects and no thread is building (``gc_pause.paused``): after a full pass
  over the unfrozen ones if they are at most ``FULL_WALK_MAX`` (a short walk), at once if
  more. So a full pass never walks the document shown, the app's modules or an old run's
  results; :meth:`GuiCollector.freeze_soon` freezes what lives as long as the document
  shown as soon as it is shown;
- frozen objects are still freed by reference counting, but cyclic garbage among them
  only by a pass over everything (0.3-0.6 s at 10,000 nodes). So the structures a document
  leaves behind break their cycles (the scene is taken apart item by item, the graph's
  networkx views are dropped: engine/graph.py), and what still leaks (a replaced scene, a
  session: ~2,600 objects a round at 60 nodes) is collected by :meth:`GuiCollector.reclaim`
  (unfreeze, collect everything, freeze again), only once the event loop has been idle for
  ``IDLE_S`` (that many checks in a row with nothing to do: a busy loop makes no checks),
  and only when ``RECLAIM_AFTER_DOCUMENTS`` documents were shown since the last one or the
  frozen objects grew by ``RECLAIM_GROWTH`` within one document (the count, read at most
  every ``RECLAIM_EVERY_S``, is the base again after each document shown: a larger graph
  opened is no growth). Memory stays bounded, and that long pass is rare and idle.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from hexscope.engine.gc_pause import freeze, paused, unfreeze

#: Milliseconds between two checks: a young pass walks about what this time made. Another
#: thread building B's session or a graph copy makes up to ~300,000 objects in 100 ms, and
#: a check costs a few microseconds when no pass is due.
INTERVAL_MS = 25
#: Objects in the young and middle generations that make a middle pass due (~5-10 ms
#: here; at 25,000 the longest passes of a walk took 20-28 ms of CPU, at 40,000 up to 22
#: ms on a quiet machine).
MIDDLE_LIMIT = 15_000
#: Unfrozen objects in the oldest generation that make them frozen.
OLD_LIMIT = 15_000
#: At most this many unfrozen objects are walked by a full pass before they are frozen
#: (~15 ms); more are frozen without one (each survived a middle pass).
FULL_WALK_MAX = 40_000
#: Seconds of checks in a row with no pass due and no thread building: idle.
IDLE_S = 3.0
#: The frozen count is read at most this often (a walk of them: 5-80 ms), while idle.
RECLAIM_EVERY_S = 60.0
#: Everything is collected once the frozen objects grew by this share (and at least
#: RECLAIM_MIN_GROWTH objects) since the last time.
RECLAIM_GROWTH = 0.5
RECLAIM_MIN_GROWTH = 100_000
#: Everything is collected, when idle, after this many documents were shown since the last
#: time (each replaced one may leave cyclic garbage among the frozen objects).
RECLAIM_AFTER_DOCUMENTS = 8


class GuiCollector(QObject):
    """Disables the automatic collector and collects on a timer of the GUI thread."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        gc.disable()
        self.threshold = gc.get_threshold()
        self.passes: list[int] = []          # the generations collected (tests)
        self.freezes = 0                     # how often survivors were frozen (tests)
        self.reclaims = 0                    # how often everything was collected (tests)
        self._clock = clock
        self._interval_ms = interval_ms
        # upper bounds of the middle and (unfrozen) oldest generations' sizes: a pass moves
        # at most what it walked one generation up (reference counting frees some since)
        self._middle = 0
        self._old = 0
        self._freeze_due = False
        self._quiet = 0                          # checks in a row with nothing to do
        self._frozen_base: int | None = None     # frozen count: the base of growth
        self._documents = 0                      # documents shown since the last reclaim
        self._looked_at = -RECLAIM_EVERY_S       # when the frozen count was last read
        self._timer = QTimer(self, interval=interval_ms)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def freeze_soon(self) -> None:
        """Freeze every object at the next check (a document was just shown): the graph,
        session and scene are not walked by any later pass."""
        self._freeze_due = True
        self._documents += 1
        self._frozen_base = None                 # read again: a new document is no growth

    def check(self) -> int | None:
        """Make the pass that is due, if any; its generation (None: none was due)."""
        if paused(threading.get_ident()):
            self._quiet = 0
            return None
        if self._freeze_due:
            self._freeze_due = False
            self._freeze()
            return None
        young = gc.get_count()[0]
        if young <= self.threshold[0]:
            if self._old > OLD_LIMIT and not paused():
                self._freeze_old()
            else:
                self._when_idle()
            return None
        self._quiet = 0
        generation = 0
        if young + self._middle > MIDDLE_LIMIT or gc.get_count()[1] >= self.threshold[1]:
            generation = 1
        gc.collect(generation)
        if generation == 0:
            self._middle += young
        else:
            self._old += young + self._middle
            self._middle = 0
        self.passes.append(generation)
        return generation

    def _freeze_old(self) -> None:
        """The oldest generation holds many unfrozen objects: freeze them, after a full pass
        over them if it is short (a pass of its own, in a turn without a young one)."""
        self._quiet = 0
        unfrozen = len(gc.get_objects())
        if unfrozen > OLD_LIMIT:
            if unfrozen <= FULL_WALK_MAX:
                gc.collect(2)
                self.passes.append(2)
            self._freeze()
        else:
            self._old = unfrozen

    def _freeze(self) -> None:
        freeze()
        self.freezes += 1
        self._middle = self._old = 0

    def _when_idle(self) -> None:
        if paused():
            self._quiet = 0
            return
        self._quiet += 1
        now = self._clock()
        if (self._quiet < IDLE_S * 1000 / self._interval_ms
                or now - self._looked_at < RECLAIM_EVERY_S):
            return
        self._looked_at = now
        frozen = gc.get_freeze_count()
        if self._documents >= RECLAIM_AFTER_DOCUMENTS:
            self.reclaim()
        elif self._frozen_base is None:
            self._frozen_base = frozen
        elif frozen > self._frozen_base + max(RECLAIM_MIN_GROWTH,
                                              RECLAIM_GROWTH * self._frozen_base):
            self.reclaim()

    def reclaim(self) -> int:
        """Unfreeze everything, collect it all and freeze what is left (one long pass):
        the cyclic garbage that was frozen; how many objects were collected."""
        unfreeze()
        found = gc.collect()
        self._freeze()
        self.reclaims += 1
        self._frozen_base = gc.get_freeze_count()
        self._documents = 0
        self._quiet = 0
        self._looked_at = self._clock()
        return found


__all__ = ["GuiCollector", "INTERVAL_MS", "MIDDLE_LIMIT", "OLD_LIMIT"]
