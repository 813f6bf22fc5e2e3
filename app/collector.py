"""The app's cyclic garbage collector: on the GUI thread only, in short passes (issue 32).

Python's automatic collector runs on whichever thread allocates past its threshold: on the
session's or a comparison's thread it could free a widget there, and Qt crashes on a widget
deleted off its thread. So it is off and the GUI thread collects on a timer. Once a second
(pyqtgraph's GarbageCollector, used before) a young pass walked all a run had made in that
second (30-95 ms at 10,000 nodes), and every ~100 s of activity a full pass walked every
object, the graph's and the scene's included (0.2-0.8 s). Here:

- a young pass is due every ``INTERVAL_MS``, so each walks what that time made;
- none runs while the GUI thread builds a scene between events (``gc_pause.paused``): it
  would walk the half-built scene, which is counted as old at the end of the build. While
  another thread reads or prepares a graph they do run: skipped, the next pass walked all
  that thread had made (0.3 s at 20,000 nodes after the session's prepare);
- what lives as long as the document shown (the app's modules and widgets, the graph, its
  session and scene) is frozen once it is shown (:meth:`GuiCollector.freeze_soon`): a full
  pass walks only what was made since;
- a full pass is made only when the oldest generation has grown by a quarter since the last
  one (CPython's own rule), not every tenth middle pass.

Frozen objects are still freed by reference counting; only cyclic garbage among them is
never collected, so the structures a document leaves behind break their cycles (the scene
is taken apart item by item; the graph's networkx views: engine/graph.py).
"""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QObject, QTimer

from hexscope.engine.gc_pause import freeze, paused

#: Milliseconds between two checks: a young pass walks about what this time made.
INTERVAL_MS = 100
#: A full pass only once the oldest generation holds this many more objects than after the
#: last one (and at least FULL_MIN_GROWTH more).
FULL_GROWTH = 0.25
FULL_MIN_GROWTH = 10_000


class GuiCollector(QObject):
    """Disables the automatic collector and collects on a timer of the GUI thread."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        gc.disable()
        self.threshold = gc.get_threshold()
        self.passes: list[int] = []          # the generations collected (tests)
        self._old_after_full = len(gc.get_objects(2))
        self._freeze_due = False
        self._timer = QTimer(self, interval=interval_ms)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def freeze_soon(self) -> None:
        """Freeze every object at the next check (a document was just shown): the graph,
        session and scene are not walked by any later pass."""
        self._freeze_due = True

    def check(self) -> int | None:
        """Make the pass that is due, if any; its generation (None: none was due)."""
        if paused(threading.get_ident()):
            return None
        if self._freeze_due:
            self._freeze_due = False
            freeze()
            self._old_after_full = len(gc.get_objects(2))
            return None
        count0, count1, count2 = gc.get_count()
        young, middle, old = self.threshold
        if count0 <= young:
            return None
        generation = 0
        if count1 >= middle:
            generation = 1
            if count2 >= old and self._old_grew():
                generation = 2
        gc.collect(generation)
        if generation == 2:
            self._old_after_full = len(gc.get_objects(2))
        self.passes.append(generation)
        return generation

    def _old_grew(self) -> bool:
        grown = len(gc.get_objects(2)) - self._old_after_full
        return grown > max(FULL_MIN_GROWTH, FULL_GROWTH * self._old_after_full)


__all__ = ["GuiCollector", "INTERVAL_MS"]
