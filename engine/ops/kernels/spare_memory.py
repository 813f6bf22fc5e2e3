"""Output memories of a kept pass given out again once nothing refers to them.

A d32 output's padding is most of a small layer's memory (a 7x7 layer's 4 rows above and
below and 4 columns left: 70 % of it), and a pass writes the same fill there at every run.
A memory this pass gave out before, which no tensor, view or buffer refers to any more (the
run that held it was replaced), still holds that fill: the pass can then write only the
codes. The memory is otherwise a new one (``np.empty``), so what a user keeps of an earlier
run never changes.
"""

from __future__ import annotations

import sys

import numpy as np

#: sys.getrefcount of a kept memory in :meth:`SpareMemories.take`'s loop that nothing else
#: refers to (the list, the loop's name, the call's argument); every numpy view, and every
#: buffer exported from one, holds a reference to the memory that owns the bytes
_ONLY_HERE = 3


class SpareMemories:
    """Up to ``keep`` memories written whole by one pass with one fill: the one the last
    run's trace holds and a free one, for a pass called once a run."""

    __slots__ = ("_held", "_keep")

    def __init__(self, keep: int = 2) -> None:
        self._keep = keep
        self._held: list[np.ndarray] = []

    def take(self) -> np.ndarray | None:
        """A memory :meth:`keep` was given that nothing else refers to now (its bytes are
        as the pass left them), or None. The caller gives it out or drops it before it
        calls again."""
        for mem in self._held:
            if sys.getrefcount(mem) == _ONLY_HERE:
                return mem
        return None

    def keep(self, mem: np.ndarray) -> None:
        """Hold ``mem``, a new memory the pass has just written whole, while there is room."""
        if len(self._held) < self._keep:
            self._held.append(mem)


__all__ = ["SpareMemories"]
