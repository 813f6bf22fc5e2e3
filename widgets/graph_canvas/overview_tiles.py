"""Zoomed far out, the canvas is painted from cached tiles of the scene, not item by item.

Where a 10,000-node graph fits the view, every repaint made Qt call Python's ``paint`` and
``boundingRect`` for each of ~20,000 items (~70-100 ms: panning and zooming stuttered).
Below ``MAX_TILE_ZOOM`` the view instead draws square tiles rendered once per zoom level
(powers of two, drawn smoothly scaled down by at most half), so a repaint is a few dozen
image blits. A tile is rendered when first needed at its level (see ``paint``). When the
scene reports a change inside it (``QGraphicsScene.changed``) only the changed pixels are
rendered again (its "dirty" rectangle): a small change in view (a selection, a step, a
node's new look) within the next repaint; larger ones (a run's end changes every node) are
drawn as they were and rendered again between events, a band of rows of neighbouring tiles
per pass, as high as the last passes say fits in ``STALE_BAND_S``.
From ``MAX_TILE_ZOOM`` up, blocks carry text, which a scaled image would blur; few enough
items are visible there to paint live.
Whatever an item draws must depend on the level of detail only through thresholds at or
below a level (a power of two), or tiles and live painting would differ.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np
import shiboken6
from PySide6.QtCore import QPoint, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QImage, QPainter

from hexscope.widgets.event_turns import gated
from hexscope.widgets.graph_canvas.node_item import BLOCK_TEXT_MIN_LOD

if TYPE_CHECKING:
    from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

TILE = 256                  # pixels per tile side
MAX_TILE_ZOOM = BLOCK_TEXT_MIN_LOD   # tiles hold no text: it would blur when scaled
MAX_TILES = 320             # ~80 MiB of tiles at most (several levels of a 20k graph)
SYNC_TILES = 4              # missing tiles rendered one by one within the paint
SYNC_STALE_S = 0.01         # stale tiles in view rendered within a paint for this long at most
SYNC_DIRTY_PX = TILE * TILE // 16   # ... those with at most this many pixels changed
STALE_BAND_S = 0.008        # a band of changed rows rendered between events: this long
STALE_FIRST_ROWS = 32       # a run of stale tiles begins with this many rows (all its tiles)
MAX_BLOCK_TILES = 96        # the most rendered in one pass (24 MiB; a screen needs ~40)
IDLE_SLICE = 0.015          # seconds of tile rendering between events
PAINT_BUDGET_S = 0.015      # rows of missing tiles rendered within a paint, then between events
IDLE_RUN = 4                # neighbouring tiles of a row rendered in one pass between events,
IDLE_RUN_S = 0.03           # as many as the last passes say fit in this many seconds
MAX_BANDS = 16              # a tile slower than IDLE_RUN_S is rendered in up to this many bands
MARGIN_PX = 4.0             # cosmetic pens reach this far beyond an item's bounding rect

Key = tuple[int, int, int]  # level, column, row


class OverviewTiles:
    """The tile cache of one view; ``enabled`` False paints every zoom live (tests)."""

    def __init__(self, view: QGraphicsView) -> None:
        self.view = view
        self.enabled = True
        self.rendered = 0                    # tiles rendered so far (tests, bench)
        self._tiles: OrderedDict[Key, QImage] = OrderedDict()
        # Tiles the scene changed under: drawn as they were until rendered again between
        # events (a run's end changes every node: rendering all tiles at once was 0.2-0.4 s
        # of the GUI thread at 20,000 nodes), or at once when only a few are in view.
        # tile -> its pixels (tile coordinates) the scene changed under; only those are
        # rendered again (after a step a whole 10,000-node tile, 20-80 ms, was rendered
        # for the one node that changed in it)
        self._stale: dict[Key, QRect] = {}
        self._row_s = 1e-4                   # seconds a pixel row of a tile's width took
        self._stale_rows = STALE_FIRST_ROWS  # the last stale band's height, and its run
        self._stale_run: Key | None = None
        self._dirtied = 0                    # rectangles marked so far
        self._scene: QGraphicsScene | None = None
        self._pending: list[Key] = []        # missing tiles of the last paint, to render
        # tiles rendered a band per pass: (the image so far, its rows of pixels done, the
        # band's height in pixels)
        self._partial: dict[Key, tuple[QImage, int, int]] = {}
        self._per_tile = IDLE_RUN_S          # seconds a tile took in the last pass
        self._timer = QTimer(view, singleShot=True, interval=0)
        self._timer.timeout.connect(gated(self._timer, self._render_pending))

    def follow(self, scene: QGraphicsScene) -> None:
        """Drop every tile and listen to ``scene``'s changes (call again for a new scene)."""
        if self._scene is not None and self._scene is not scene:
            self.follow_nothing()
        if self._scene is not scene:
            scene.changed.connect(self.invalidate)
        self._scene = scene
        self._tiles.clear()
        self._stale.clear()
        self._pending = []
        self._partial.clear()
        self._per_tile = IDLE_RUN_S          # unknown for this scene: bands at first

    def follow_nothing(self) -> None:
        """Stop listening to the scene (its view is gone)."""
        if self._scene is not None:
            try:
                self._scene.changed.disconnect(self.invalidate)
            except (RuntimeError, TypeError):
                pass                         # the scene is already gone
        self._scene = None

    @property
    def pending(self) -> int:
        """Tiles still to render for the current view (0 once it is complete)."""
        return len(self._pending)

    @property
    def in_progress(self) -> int:
        """Tiles begun in bands and not complete yet (shown as far as they are)."""
        return len(self._partial)

    def active(self) -> bool:
        """True when the view should paint from tiles at its current zoom."""
        scene = self._scene
        return (self.enabled and scene is not None
                and self.view.transform().m11() <= MAX_TILE_ZOOM
                and bool(getattr(scene, "items_by_id", True)))

    def invalidate(self, rects: list[QRectF]) -> None:
        """Mark the pixels that ``rects`` (scene coordinates) touch as changed, in every
        cached tile at every level."""
        if not shiboken6.isValid(self.view):
            # the scene outlived its view (a closed canvas): stop listening, or each of its
            # changes raised in the event loop
            self.follow_nothing()
            return
        for key in [k for k in self._partial if any(r.intersects(_tile_rect(k))
                                                    for r in rects)]:
            del self._partial[key]          # its bands so far show the scene as it was
        if not self._tiles or not rects:
            return
        boxes = np.array([r.getCoords() for r in rects])     # left, top, right, bottom
        dirtied = self._dirtied
        for level in {key[0] for key in self._tiles}:
            self._invalidate_level(level, boxes)
        if self._dirtied != dirtied and self.active():
            # A paint must see them: the view may have painted the items' change before
            # the scene reported it here (looks set a slice at a time between events),
            # and their tiles stayed in the old colours until the next paint.
            self.view.viewport().update()

    def _invalidate_level(self, level: int, boxes: np.ndarray) -> None:
        """``boxes`` (left, top, right, bottom; scene) as dirty pixels of ``level``'s tiles:
        grouped by tile with numpy (a run's end reports thousands of nodes a turn)."""
        scale = 2.0 ** level
        size, pad = TILE / scale, MARGIN_PX / scale
        lo, hi = boxes[:, :2] - pad, boxes[:, 2:] + pad
        first, last = np.floor(lo / size), np.floor(hi / size)
        cells = np.prod(last - first + 1, axis=1)
        single = cells == 1
        if single.any():
            corner = first[single] * size
            px_lo = np.clip(np.floor((lo[single] - corner) * scale), 0, TILE)
            px_hi = np.clip(np.ceil((hi[single] - corner) * scale), 0, TILE)
            tiles, which = np.unique(first[single], axis=0, return_inverse=True)
            which = which.reshape(-1)
            box_lo = np.full((len(tiles), 2), TILE, float)
            box_hi = np.zeros((len(tiles), 2))
            np.minimum.at(box_lo, which, px_lo)
            np.maximum.at(box_hi, which, px_hi)
            for (i, j), (x0, y0), (x1, y1) in zip(tiles.astype(int).tolist(), box_lo.tolist(),
                                                  box_hi.tolist(), strict=True):
                self._dirty((level, i, j), QRect(int(x0), int(y0), int(x1 - x0), int(y1 - y0)))
        for k in np.flatnonzero(~single):
            (c0, r0), (c1, r1) = first[k].astype(int), last[k].astype(int)
            if cells[k] > 4 * len(self._tiles):     # huge (the scene's rect): per tile
                for key in [key for key in self._tiles if key[0] == level
                            and c0 <= key[1] <= c1 and r0 <= key[2] <= r1]:
                    self._dirty(key, QRect(0, 0, TILE, TILE))
                continue
            for i in range(c0, c1 + 1):
                for j in range(r0, r1 + 1):
                    if (level, i, j) in self._tiles:
                        x0, y0 = (lo[k] - (i * size, j * size)) * scale
                        x1, y1 = (hi[k] - (i * size, j * size)) * scale
                        rect = QRect(QPoint(max(0, math.floor(x0)), max(0, math.floor(y0))),
                                     QPoint(min(TILE, math.ceil(x1)) - 1,
                                            min(TILE, math.ceil(y1)) - 1))
                        self._dirty((level, i, j), rect)

    def _dirty(self, key: Key, rect: QRect) -> None:
        if key not in self._tiles or rect.isEmpty():
            return
        self._dirtied += 1
        known = self._stale.get(key)
        self._stale[key] = rect if known is None else known | rect

    def paint(self, painter: QPainter, exposed: QRectF) -> bool:
        """Draw the tiles covering ``exposed`` (scene coordinates) on the viewport.

        A missing tile with a coarser one cached is drawn from it, slightly blurred, and
        rendered between events. Missing tiles with nothing to stand in are rendered now:
        a few (an edit's) one by one, more (a graph just opened) in one pass over the
        items into one image cut into tiles, which costs about what painting the items
        live would (rendering tile by tile paints an item once per tile it touches).
        Returns False when the view should paint live instead (the block would be huge)."""
        zoom = self.view.transform().m11()
        level = math.ceil(math.log2(zoom) - 1e-9)
        scale = 2.0 ** level
        cols, rows = _span(exposed, scale)
        wanted = [(level, i, j) for j in rows for i in cols]
        missing = [key for key in wanted if key not in self._tiles or key in self._stale]
        # Missing tiles of an earlier paint at this level stay pending: drawn blank, they
        # would stay so when this paint only covers a strip (a scroll of the view).
        known = set(missing)
        self._pending = missing + [key for key in self._pending
                                   if key[0] == level and key not in known]
        if missing:
            self._timer.start()
        bare = [key for key in missing if key not in self._tiles and self._coarser(key) is None]
        stale = [key for key in missing if key in self._stale]
        if any(key in self._partial for key in wanted):
            bare = []       # being rendered a band per pass between events: shown as it comes
        if len(bare) > SYNC_TILES:
            if not self._render_rows(bare):
                return False
        else:
            for key in bare:
                self._render(key)
        self._render_stale(stale)            # the small changes (an edit's, a step's) now
        to_view = self.view.viewportTransform()
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        for key in wanted:
            image, part = self._tiles.get(key), QRectF(0, 0, TILE, TILE)
            if image is None:
                coarser = self._coarser(key)
                if coarser is None:
                    if key not in self._partial:
                        continue        # rendered between events (see _render_rows)
                    coarser = self._partial[key][0], part    # its bands so far
                image, part = coarser
            else:
                self._tiles.move_to_end(key)
            # Rounded to whole pixels so neighbouring tiles meet without a seam.
            box = to_view.mapRect(_tile_rect(key))
            left, top = round(box.left()), round(box.top())
            target = QRect(left, top, round(box.right()) - left, round(box.bottom()) - top)
            painter.drawImage(QRectF(target), image, part)
        painter.restore()
        return True

    def _render_stale(self, stale: list[Key]) -> None:
        """Render the changed pixels of the tiles of ``stale`` with few of them changed (a
        step's, an edit's): the first now, the others while SYNC_STALE_S lasts; the rest
        stay pending, for between events. During a run each paint found a few tiles the
        last nodes changed, and rendering all of them whole (~20 ms a tile at 10,000
        nodes) held the GUI thread 55-95 ms a paint."""
        end = time.perf_counter() + SYNC_STALE_S
        small = [key for key in stale if _area(self._stale[key]) <= SYNC_DIRTY_PX]
        for k, key in enumerate(small):
            if k and time.perf_counter() > end:
                return
            self._render_dirty([key], self._stale[key])

    def _render_dirty(self, keys: list[Key], band: QRect) -> None:
        """Render the pixels ``band`` spans (run coordinates: the first tile's pixels,
        the next tiles right of it) of ``keys``, neighbours in one row, in one pass into
        their cached images, and take them off their dirty rectangles. Rendered a margin
        wider, then cut: an item just outside draws its cosmetic pen into the band as in
        a whole tile's pass, and the pixel grid is the tile's, so the result is the one
        a pass over the whole tile would make."""
        assert self._scene is not None
        level, i0, j = keys[0]
        size = TILE / 2.0 ** level
        unit = size / TILE                    # scene units per pixel
        m = math.ceil(MARGIN_PX)
        outer = band.adjusted(-m, -m, m, m)
        patch = QImage(outer.size(), QImage.Format.Format_ARGB32_Premultiplied)
        patch.fill(Qt.GlobalColor.transparent)
        painter = QPainter(patch)
        painter.setRenderHints(self.view.renderHints())
        self._scene.render(painter, QRectF(patch.rect()),
                           QRectF(i0 * size + outer.x() * unit, j * size + outer.y() * unit,
                                  outer.width() * unit, outer.height() * unit),
                           Qt.AspectRatioMode.IgnoreAspectRatio)
        painter.end()
        for key in keys:
            left = (key[1] - i0) * TILE           # the tile's first column in the run
            part = band.intersected(QRect(left, band.y(), TILE, band.height()))
            if part.isEmpty():
                continue
            image = self._tiles[key]
            painter = QPainter(image)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
            painter.drawImage(part.topLeft() - QPoint(left, 0), patch,
                              part.translated(-outer.x(), -outer.y()))
            painter.end()
            dirty = self._stale.get(key)
            if dirty is None:
                continue
            done = part.translated(-left, 0)
            if done.contains(dirty):
                del self._stale[key]
                self.rendered += 1
            elif done.left() <= dirty.left() and done.right() >= dirty.right() \
                    and done.top() <= dirty.top() < done.bottom() + 1:
                # the band covered its top rows across its width: the rows below remain
                self._stale[key] = QRect(QPoint(dirty.left(), done.bottom() + 1),
                                         dirty.bottomRight())

    def _coarser(self, key: Key) -> tuple[QImage, QRectF] | None:
        """The quarter of the next coarser level's tile that covers ``key``, if cached."""
        level, i, j = key
        image = self._tiles.get((level - 1, i // 2, j // 2))
        if image is None:
            return None
        half = TILE / 2
        return image, QRectF((i % 2) * half, (j % 2) * half, half, half)

    def _render_pending(self) -> None:
        """Render missing tiles and changed rows for up to ``IDLE_SLICE`` seconds, then let
        events run."""
        start = time.perf_counter()
        zoom = self.view.transform().m11()
        level = math.ceil(math.log2(zoom) - 1e-9) if zoom > 0 else 0
        done = False
        while self._pending and time.perf_counter() - start < IDLE_SLICE:
            if self._scene is None:
                break
            if self._pending[0] in self._partial:
                # a row the first paint began (or a slow tile): its next band, all the
                # row's begun tiles in one pass
                self._render_band(self._partial_run())
                done = True
                continue
            if self._pending[0] in self._stale and self._pending[0][0] == level:
                self._render_stale_band(self._stale_run_at_front())
                done = True
                continue
            # Tiles with nothing to show yet: a few neighbours in one pass, a band per
            # pass, the first a sixteenth (a fitted graph's nearly empty top row says
            # nothing of the dense rows under it: 4 tiles of its middle in one pass took
            # 50-80 ms at 10,000 nodes); one tile alone the same (one covers ~1,000 nodes
            # of a fitted 20,000-node view: 50-100 ms).
            run = self._next_run(level, max(1, min(IDLE_RUN, int(IDLE_RUN_S / self._per_tile))))
            if run:
                self._render_band(run)
                done = True
        if self._pending:
            self._timer.start()
        elif done:
            # Once all are in: a repaint per slice could repaint live each time.
            self.view.viewport().update()

    def _stale_run_at_front(self) -> list[Key]:
        """Take the first pending tile (stale) with the stale ones right of it in its row
        (up to IDLE_RUN): neighbours share a pass, as the items on their edges do."""
        run = [self._pending.pop(0)]
        while self._pending and len(run) < IDLE_RUN:
            key = self._pending[0]
            if key not in self._stale or key[0] != run[-1][0] or key[2] != run[-1][2] \
                    or key[1] != run[-1][1] + 1 or key in self._partial:
                break
            run.append(self._pending.pop(0))
        return run

    def _render_stale_band(self, run: list[Key]) -> None:
        """Render the next band of changed rows of ``run`` (stale neighbours in a row) in
        one pass: from the highest of their dirty rectangles down, across all of them, as
        many rows as the last bands say fit in STALE_BAND_S (a run begins with
        STALE_FIRST_ROWS shared by its tiles, a band is at most twice the one before: the
        rows below may be denser). A run's end made every tile of a fitted 10,000-node view
        stale; rendered whole, four in a pass, they held the GUI thread 50-80 ms a pass."""
        dirty = [self._stale[key] for key in run]
        top = min(rect.top() for rect in dirty)
        bottom = max(rect.bottom() for rect in dirty) + 1
        # run coordinates: the first tile's pixels, the next tiles right of it
        left = dirty[0].left()
        right = (len(run) - 1) * TILE + dirty[-1].right() + 1
        width = (right - left) / TILE             # in tiles
        if self._stale_run != run[0]:
            rows = max(1, STALE_FIRST_ROWS // len(run))
        else:
            rows = min(2 * self._stale_rows,
                       max(4, int(STALE_BAND_S / (self._row_s * max(width, 1e-3)))))
        rows = max(1, min(rows, bottom - top))
        began = time.perf_counter()
        band = QRect(left, top, right - left, rows)
        self._render_dirty(run, band)
        # shown as it comes (the last band's repaint alone left a run's end's tiles in
        # their old colours for a second or more at 10,000 nodes)
        size = TILE / 2.0 ** run[0][0]
        unit = size / TILE
        box = self.view.viewportTransform().mapRect(QRectF(
            run[0][1] * size + band.x() * unit, run[0][2] * size + band.y() * unit,
            band.width() * unit, band.height() * unit)).toAlignedRect()
        if box.isValid():
            self.view.viewport().update(box)
        self._row_s = max(1e-6, (time.perf_counter() - began) / (rows * max(width, 1e-3)))
        self._stale_rows = rows
        left_over = [key for key in run if key in self._stale]
        self._stale_run = left_over[0] if left_over else None
        known = set(left_over)
        self._pending = left_over + [key for key in self._pending if key not in known]

    def _partial_run(self) -> list[Key]:
        """Take the first pending tile, begun in bands, with the begun ones right of it in
        its row at the same band."""
        run = [self._pending.pop(0)]
        top = self._partial[run[0]][1]
        while self._pending:
            key = self._pending[0]
            if (key[2] != run[-1][2] or key[1] != run[-1][1] + 1 or key[0] != run[-1][0]
                    or key not in self._partial or self._partial[key][1] != top):
                break
            run.append(self._pending.pop(0))
        return run

    def _next_run(self, level: int, most: int) -> list[Key]:
        """Take the next pending tile of ``level`` that needs rendering, with the pending
        ones right of it in its row (up to ``most``)."""
        run: list[Key] = []
        while self._pending and len(run) < most:
            key = self._pending[0]
            if key[0] == level and key in self._stale:
                # left for _render_stale_band: dropped here, its changed rows stayed in
                # their old colours until some later paint listed the tile again (a paint
                # renders its small stale tiles at once and leaves them pending ahead of
                # the large ones)
                break
            wanted = key[0] == level and key not in self._tiles
            if run and (not wanted or key[2] != run[-1][2] or key[1] != run[-1][1] + 1):
                break
            self._pending.pop(0)
            if wanted:
                run.append(key)
        return run

    def _render_rows(self, keys: list[Key]) -> bool:
        """Render ``keys`` a row at a time, each row a band at a time in one pass per
        band, for up to ``PAINT_BUDGET_S`` (at least one band); the bands and rows left are
        rendered between events, and shown as they come (a graph just opened: all the
        tiles of a fitted 10,000-node view in one pass took 130-170 ms, 200-240 ms at
        20,000; its first row whole, 100-200 ms at 20,000).
        False if their block is too large to render in passes (the view paints live)."""
        cols = [k[1] for k in keys]
        rows = [k[2] for k in keys]
        if (max(cols) - min(cols) + 1) * (max(rows) - min(rows) + 1) > MAX_BLOCK_TILES:
            return False
        start = time.perf_counter()
        for row in sorted(set(rows)):
            part = [key for key in keys if key[2] == row]
            while not self._render_band(part, PAINT_BUDGET_S, show=False):
                if time.perf_counter() - start > PAINT_BUDGET_S:
                    return True               # at least one band is in
            if time.perf_counter() - start > PAINT_BUDGET_S:
                break
        return True

    def _store(self, key: Key, image: QImage) -> None:
        self.rendered += 1
        self._tiles[key] = image
        self._stale.pop(key, None)
        while len(self._tiles) > MAX_TILES:
            self._stale.pop(self._tiles.popitem(last=False)[0], None)

    def _render_band(self, keys: list[Key], budget: float = IDLE_RUN_S,
                     show: bool = True) -> bool:
        """Render the next horizontal band of ``keys`` (neighbours in one row, begun
        together) in one pass: the first a sixteenth of a tile (``MAX_BANDS``), each next one
        as high as the band before says fits in ``budget``, at least a sixteenth and at most
        twice the band before; True once the tiles are complete and stored, False with the
        rest put back first in line. ``show``: repaint them (not from within a paint). A
        band is clipped to its rows of pixels, so the bands make the tiles one pass would
        (each item is drawn in every band it reaches)."""
        assert self._scene is not None
        level, i0, j = keys[0]
        if keys[0] not in self._partial:
            # A sixteenth (an eighth was 40-60 ms of a dense row's first band in Open's
            # first paint at 10,000 nodes), whatever the last passes' speed: theirs may be
            # another row's. A fitted graph's top row is nearly empty (1 ms a band): from
            # its speed the dense row under it was begun whole, every item it reaches in
            # one pass (60-90 ms of a 10,000-node Open's first paint).
            for key in keys:
                image = QImage(TILE, TILE, QImage.Format.Format_ARGB32_Premultiplied)
                image.fill(Qt.GlobalColor.transparent)
                self._partial[key] = (image, 0, TILE // MAX_BANDS)
        _, top, height = self._partial[keys[0]]
        bottom = min(TILE, top + height)
        n_cols = keys[-1][1] - i0 + 1
        band = QImage(n_cols * TILE, bottom - top, QImage.Format.Format_ARGB32_Premultiplied)
        band.fill(Qt.GlobalColor.transparent)
        size = TILE / 2.0 ** level
        unit = size / TILE                   # scene units per pixel
        began = time.perf_counter()
        painter = QPainter(band)
        painter.setRenderHints(self.view.renderHints())
        self._scene.render(painter, QRectF(band.rect()),      # only the items it reaches
                           QRectF(i0 * size, j * size + top * unit, n_cols * size,
                                  (bottom - top) * unit), Qt.AspectRatioMode.IgnoreAspectRatio)
        painter.end()
        self._per_tile = max(1e-3, (time.perf_counter() - began) * TILE
                             / ((bottom - top) * len(keys)))
        # The next band: what this one's speed says fits in the budget, at most twice as
        # high (the rows below may be denser than this band's).
        rows = int(budget * TILE / (self._per_tile * len(keys)))
        height = min(2 * height, max(TILE // MAX_BANDS, rows))
        for key in keys:
            image = self._partial[key][0]
            painter = QPainter(image)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
            painter.drawImage(0, top, band, (key[1] - i0) * TILE, 0, TILE, bottom - top)
            painter.end()
            if bottom < TILE:
                self._partial[key] = (image, bottom, height)
            else:
                del self._partial[key]
                self._store(key, image)
        if show:
            self._show_band(keys)
        if bottom < TILE:
            taken = set(keys)
            self._pending = keys + [key for key in self._pending if key not in taken]
            return False
        self._pending = [key for key in self._pending
                         if key not in self._tiles or key in self._stale]
        return True

    def _show_band(self, keys: list[Key]) -> None:
        """Repaint ``keys``' tiles (a band came): inside their edges, so that the paint
        does not reach a neighbour still to render."""
        box = self.view.viewportTransform().mapRect(
            _tile_rect(keys[0]) | _tile_rect(keys[-1])).toAlignedRect().adjusted(1, 1, -1, -1)
        if box.isValid():
            self.view.viewport().update(box)

    def _render(self, key: Key) -> QImage:
        image = QImage(TILE, TILE, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHints(self.view.renderHints())
        assert self._scene is not None
        self._scene.render(painter, QRectF(0, 0, TILE, TILE), _tile_rect(key),
                           Qt.AspectRatioMode.IgnoreAspectRatio)
        painter.end()
        self._store(key, image)
        return image


def _area(rect: QRect) -> int:
    return rect.width() * rect.height()


def _tile_rect(key: Key) -> QRectF:
    size = TILE / 2.0 ** key[0]
    return QRectF(key[1] * size, key[2] * size, size, size)


def _span(rect: QRectF, scale: float) -> tuple[range, range]:
    """The tile columns and rows that ``rect`` (scene coordinates) covers at ``scale``."""
    size = TILE / scale
    cols = range(math.floor(rect.left() / size), math.floor(rect.right() / size) + 1)
    rows = range(math.floor(rect.top() / size), math.floor(rect.bottom() / size) + 1)
    return cols, rows
