"""Which edges pass over a node other than their own ends (those are drawn above the nodes,
with a halo, so they cannot be read as that node's connection).

Qt's own item query (``scene.items(path)``) called Python's ``boundingRect`` for every node
it considered: fine for hundreds of nodes, seconds for 10,000, so it was done only up to
1,500. Here the nodes are painted into a grid of 20-unit cells (numpy, one int per cell:
which node covers it) and each edge is sampled along its curve every 30 units: checking all
edges of a 10,000-node graph is a few numpy passes, and one edge after a move is a lookup of
its samples. A cell belongs to a node when its centre is inside the node's body, so an edge
running in the 36-unit gap between two rows is not taken for crossing either.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

import numpy as np

CELL = 20.0
STEP = 30.0                   # between samples along an edge (under half a node's height)
MAX_SAMPLES = 4000            # per curve segment (a 60,000-unit edge)
MARGIN = 2000.0               # room around the nodes before the grid must be rebuilt

Segment = tuple[float, float, float, float, float, float, float, float]   # a cubic's 4 points


class Body(Protocol):
    """What the grid needs of a node item: where its body is."""

    def body_rect(self) -> tuple[float, float, float, float]: ...   # x, y, width, height


class NodeGrid:
    """The scene's nodes as a grid of cells; ``crossing`` tells which edges pass over one."""

    def __init__(self) -> None:
        self._grid = np.full((0, 0), -1, np.int32)
        self._x0 = self._y0 = 0.0
        self._ids: dict[Body, int] = {}
        self._cells: dict[Body, tuple[int, int, int, int]] = {}
        self._next = 0

    def rebuild(self, bodies: Iterable[Body]) -> None:
        """Start again from ``bodies`` (the visible nodes)."""
        for _ in self.rebuild_steps(bodies, chunk=0):
            pass

    def rebuild_steps(self, bodies: Iterable[Body], chunk: int) -> Iterator[None]:
        """:meth:`rebuild`, yielding every ``chunk`` bodies painted (0: never), so that a
        large scene is built between events."""
        kept, rects = [], []
        for k, body in enumerate(bodies, 1):     # (a filter over 20,000 items: sliced too)
            kept.append(body)
            rects.append(body.body_rect())
            if chunk and k % chunk == 0:
                yield
        bodies = kept
        self._ids, self._cells, self._next = {}, {}, 0
        if not rects:
            self._grid = np.full((0, 0), -1, np.int32)
            return
        left = min(r[0] for r in rects) - MARGIN
        top = min(r[1] for r in rects) - MARGIN
        right = max(r[0] + r[2] for r in rects) + MARGIN
        bottom = max(r[1] + r[3] for r in rects) + MARGIN
        self._x0, self._y0 = left, top
        self._grid = np.full((math.ceil((bottom - top) / CELL),
                              math.ceil((right - left) / CELL)), -1, np.int32)
        for k, (body, rect) in enumerate(zip(bodies, rects, strict=True), 1):
            self._paint(body, rect)
            if chunk and k % chunk == 0:
                yield

    def place(self, body: Body) -> bool:
        """Put ``body`` where it is now (added or moved); False when it lies outside the
        grid (the caller rebuilds)."""
        self.remove(body)
        rect = body.body_rect()
        rows, cols = self._grid.shape
        if (rect[0] < self._x0 or rect[1] < self._y0
                or rect[0] + rect[2] > self._x0 + cols * CELL
                or rect[1] + rect[3] > self._y0 + rows * CELL):
            return False
        self._paint(body, rect)
        return True

    def remove(self, body: Body) -> None:
        cells = self._cells.pop(body, None)
        index = self._ids.pop(body, None)
        if cells is not None:
            r0, r1, c0, c1 = cells
            block = self._grid[r0:r1, c0:c1]
            block[block == index] = -1

    def _paint(self, body: Body, rect: tuple[float, float, float, float]) -> None:
        x, y, w, h = rect
        # Cells whose centre lies inside the body.
        c0 = math.ceil((x - self._x0) / CELL - 0.5)
        c1 = math.floor((x + w - self._x0) / CELL - 0.5) + 1
        r0 = math.ceil((y - self._y0) / CELL - 0.5)
        r1 = math.floor((y + h - self._y0) / CELL - 0.5) + 1
        index = self._next
        self._next += 1
        self._ids[body] = index
        self._cells[body] = (r0, r1, c0, c1)
        self._grid[r0:r1, c0:c1] = index

    def crossing(self, edges: Sequence[tuple[Body, Body, Sequence[Segment]]]) -> np.ndarray:
        """For each (source body, destination body, the curve's cubic segments): True when
        the curve passes over a node that is neither of its ends."""
        out = np.zeros(len(edges), bool)
        if not edges or self._grid.size == 0:
            return out
        segs, owner, ends = [], [], []
        for k, (src, dst, segments) in enumerate(edges):
            pair = (self._ids.get(src, -2), self._ids.get(dst, -2))
            for seg in segments:
                segs.append(seg)
                owner.append(k)
                ends.append(pair)
        p = np.asarray(segs, np.float32).reshape(-1, 4, 2)
        # An upper bound of each cubic's length: its control polygon.
        length = np.abs(np.diff(p, axis=1)).sum(axis=(1, 2))
        counts = np.clip(np.ceil(length / STEP).astype(np.int64), 2, MAX_SAMPLES)
        which = np.repeat(np.arange(len(segs)), counts)
        first = np.cumsum(counts) - counts
        t = ((np.arange(which.size) - first[which]) / (counts[which] - 1)).astype(np.float32)
        u = 1.0 - t
        w = (u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t)
        xs = sum(w[k] * p[:, k, 0][which] for k in range(4))
        ys = sum(w[k] * p[:, k, 1][which] for k in range(4))
        pts = (xs, ys)
        col = np.floor((pts[0] - self._x0) / CELL).astype(np.int64)
        row = np.floor((pts[1] - self._y0) / CELL).astype(np.int64)
        rows, cols = self._grid.shape
        inside = (col >= 0) & (col < cols) & (row >= 0) & (row < rows)
        hit = np.full(which.size, -1, np.int64)
        hit[inside] = self._grid[row[inside], col[inside]]
        ends_arr = np.asarray(ends, np.int64)
        other = (hit >= 0) & (hit != ends_arr[which, 0]) & (hit != ends_arr[which, 1])
        seg_hits = np.bincount(which[other], minlength=len(segs)) > 0
        np.logical_or.at(out, np.asarray(owner), seg_hits)
        return out
