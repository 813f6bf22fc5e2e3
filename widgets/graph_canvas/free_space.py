"""Where a new node can go without covering another: a grid of the nodes' rectangles and a
search outward from where the node wants to be (a palette drop at the view's centre, a const
shown beside its consumer)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

Rect = tuple[float, float, float, float]        # x, y, width, height
CELL = 120.0
GAP = 16.0           # the least room kept between two nodes
STEP = 40.0          # the search grid
RINGS = 30           # how far the search goes: RINGS * STEP each way


class FreeSpace:
    """Rectangles taken so far; ``find`` gives the nearest free place for one more."""

    def __init__(self, rects: Iterable[Rect] = ()) -> None:
        self._cells: dict[tuple[int, int], list[Rect]] = defaultdict(list)
        for rect in rects:
            self.add(rect)

    def add(self, rect: Rect) -> None:
        for cell in _cells(rect):
            self._cells[cell].append(rect)

    def is_free(self, rect: Rect) -> bool:
        x, y, w, h = rect
        grown = (x - GAP, y - GAP, w + 2 * GAP, h + 2 * GAP)
        return not any(_overlap(grown, other) for cell in _cells(grown)
                       for other in self._cells.get(cell, ()))

    def find(self, x: float, y: float, width: float, height: float) -> tuple[float, float]:
        """The free top-left corner nearest to (x, y) for a ``width`` x ``height`` node
        (taken: the next one avoids it); (x, y) itself when nothing near is free."""
        for dx, dy in _OFFSETS:
            spot = (x + dx, y + dy, width, height)
            if self.is_free(spot):
                self.add(spot)
                return x + dx, y + dy
        self.add((x, y, width, height))
        return x, y


def search_area(x: float, y: float, width: float, height: float) -> Rect:
    """The area ``FreeSpace.find(x, y, width, height)`` can look at: only the rectangles
    that reach into it can keep a place from being free."""
    reach = RINGS * STEP + GAP
    return x - reach, y - reach, width + 2 * reach, height + 2 * reach


def _cells(rect: Rect) -> Iterable[tuple[int, int]]:
    x, y, w, h = rect
    for i in range(math.floor(x / CELL), math.floor((x + w) / CELL) + 1):
        for j in range(math.floor(y / CELL), math.floor((y + h) / CELL) + 1):
            yield i, j


def _overlap(a: Rect, b: Rect) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] \
        and b[1] < a[1] + a[3]


# Nearest first; on a tie, up and left before down and right (a const sits left of its
# consumer, and reading goes left to right).
_OFFSETS = sorted(((i * STEP, j * STEP) for i in range(-RINGS, RINGS + 1)
                   for j in range(-RINGS, RINGS + 1)),
                  key=lambda o: (math.hypot(*o), o[0], o[1]))

__all__ = ["FreeSpace", "search_area"]
