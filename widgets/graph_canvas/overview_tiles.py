"""Zoomed far out, the canvas is painted from cached tiles of the scene, not item by item.

Where a 10,000-node graph fits the view, every repaint made Qt call Python's ``paint`` and
``boundingRect`` for each of ~20,000 items (~70-100 ms: panning and zooming stuttered).
Below ``MAX_TILE_ZOOM`` the view instead draws square tiles rendered once per zoom level
(powers of two, drawn smoothly scaled down by at most half), so a repaint is a few dozen
image blits. A tile is rendered when first needed at its level (see ``paint``), and marked
stale when the scene reports a change inside it (``QGraphicsScene.changed``): a few stale
tiles in view (a selection, a step, a moved node) are rendered again within the next
repaint; more (a run's end changes every node) are drawn as they were and rendered again
between events, neighbours in a row in one pass (as many as fit in ``IDLE_RUN_S``).
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

from PySide6.QtCore import QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QImage, QPainter

from hexscope.widgets.graph_canvas.node_item import BLOCK_TEXT_MIN_LOD

if TYPE_CHECKING:
    from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

TILE = 256                  # pixels per tile side
MAX_TILE_ZOOM = BLOCK_TEXT_MIN_LOD   # tiles hold no text: it would blur when scaled
MAX_TILES = 320             # ~80 MiB of tiles at most (several levels of a 20k graph)
SYNC_TILES = 4              # missing tiles rendered one by one within the paint
SYNC_STALE_S = 0.01         # stale tiles in view rendered within a paint for this long at most
MAX_BLOCK_TILES = 96        # the most rendered in one pass (24 MiB; a screen needs ~40)
IDLE_SLICE = 0.015          # seconds of tile rendering between events
PAINT_BUDGET_S = 0.015      # rows of missing tiles rendered within a paint, then between events
IDLE_RUN = 4                # neighbouring tiles of a row rendered in one pass between events,
IDLE_RUN_S = 0.03           # as many as the last passes say fit in this many seconds
MAX_BANDS = 8               # a tile slower than IDLE_RUN_S is rendered in up to this many bands
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
        self._stale: set[Key] = set()
        self._scene: QGraphicsScene | None = None
        self._pending: list[Key] = []        # missing tiles of the last paint, to render
        # tiles rendered a band per pass: (the image so far, its rows of pixels done, the
        # band's height in pixels)
        self._partial: dict[Key, tuple[QImage, int, int]] = {}
        self._per_tile = IDLE_RUN_S          # seconds a tile took in the last pass
        self._timer = QTimer(view, singleShot=True, interval=0)
        self._timer.timeout.connect(self._render_pending)

    def follow(self, scene: QGraphicsScene) -> None:
        """Drop every tile and listen to ``scene``'s changes (call again for a new scene)."""
        if self._scene is not None and self._scene is not scene:
            try:
                self._scene.changed.disconnect(self.invalidate)
            except (RuntimeError, TypeError):
                pass                         # the old scene is already gone
        if self._scene is not scene:
            scene.changed.connect(self.invalidate)
        self._scene = scene
        self._tiles.clear()
        self._stale.clear()
        self._pending = []
        self._partial.clear()
        self._per_tile = IDLE_RUN_S          # unknown for this scene: bands at first

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
        """Drop the tiles that ``rects`` (scene coordinates) touch, at every level."""
        for key in [k for k in self._partial if any(r.intersects(_tile_rect(k))
                                                    for r in rects)]:
            del self._partial[key]          # its bands so far show the scene as it was
        if not self._tiles or not rects:
            return
        if len(rects) > 64:                 # e.g. a run resetting every node: one union
            union = QRectF(rects[0])
            for rect in rects[1:]:
                union |= rect
            rects = [union]
        levels = {key[0] for key in self._tiles}
        for level in levels:
            scale = 2.0 ** level
            pad = MARGIN_PX / scale
            for rect in rects:
                cols, rows = _span(rect.adjusted(-pad, -pad, pad, pad), scale)
                if len(cols) * len(rows) > 4 * len(self._tiles):
                    self._stale.update(k for k in self._tiles if k[0] == level
                                       and k[1] in cols and k[2] in rows)
                    continue
                for i in cols:
                    for j in rows:
                        if (level, i, j) in self._tiles:
                            self._stale.add((level, i, j))

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
        if len(stale) <= SYNC_TILES:         # an edit's or a step's: shown at once
            self._render_stale(stale)
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
        """Render the first of ``stale`` now, and the others while SYNC_STALE_S lasts; the
        rest stay pending, for between events. During a run each paint found a few tiles
        the last nodes changed, and rendering all of them (~20 ms a tile at 10,000 nodes)
        held the GUI thread 55-95 ms a paint."""
        end = time.perf_counter() + SYNC_STALE_S
        for k, key in enumerate(stale):
            if k and time.perf_counter() > end:
                return
            self._render(key)

    def _coarser(self, key: Key) -> tuple[QImage, QRectF] | None:
        """The quarter of the next coarser level's tile that covers ``key``, if cached."""
        level, i, j = key
        image = self._tiles.get((level - 1, i // 2, j // 2))
        if image is None:
            return None
        half = TILE / 2
        return image, QRectF((i % 2) * half, (j % 2) * half, half, half)

    def _render_pending(self) -> None:
        """Render missing tiles for up to ``IDLE_SLICE`` seconds, then let events run."""
        start = time.perf_counter()
        zoom = self.view.transform().m11()
        level = math.ceil(math.log2(zoom) - 1e-9) if zoom > 0 else 0
        done = False
        while self._pending and time.perf_counter() - start < IDLE_SLICE:
            # A few neighbours in one pass, as many as fit in IDLE_RUN_S by the last
            # passes: tile by tile, each render paints every item it touches and walks the
            # scene's index again (a run's end made all of a fitted 10,000-node view stale:
            # ~19 ms a tile alone, 4 in one pass ~35 ms)
            if self._pending and self._pending[0] in self._partial and self._scene is not None:
                # a row the first paint began (or a slow tile): its next band, all the
                # row's begun tiles in one pass
                self._render_band(self._partial_run())
                done = True
                continue
            run = self._next_run(level, max(1, min(IDLE_RUN, int(IDLE_RUN_S / self._per_tile))))
            if run and self._scene is not None and (
                    all(key not in self._tiles for key in run)
                    or len(run) == 1 and self._per_tile > IDLE_RUN_S):
                # Tiles with nothing to show yet: a band per pass, the first an eighth (the
                # last passes' speed may be another row's: after the nearly empty top row
                # of a fitted graph, 4 tiles of its dense middle in one pass took 50-80 ms
                # at 10,000 nodes); one tile alone slower than a pass may (one covers
                # ~1,000 nodes of a fitted 20,000-node view: 50-100 ms), the same.
                self._render_band(run)
                done = True
                continue
            if run and self._scene is not None:
                began = time.perf_counter()
                if len(run) == 1 or not self._render_block(run):
                    for key in run:
                        self._render(key)
                self._per_tile = max(1e-3, (time.perf_counter() - began) / len(run))
                done = True
        if self._pending:
            self._timer.start()
        elif done:
            # Once all are in: a repaint per slice could repaint live each time.
            self.view.viewport().update()

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
            wanted = key[0] == level and (key not in self._tiles or key in self._stale)
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

    def _render_block(self, keys: list[Key]) -> bool:
        """Render ``keys`` (one level) in one pass; False if their block is too large."""
        level = keys[0][0]
        cols = [k[1] for k in keys]
        rows = [k[2] for k in keys]
        i0, j0 = min(cols), min(rows)
        n_cols, n_rows = max(cols) - i0 + 1, max(rows) - j0 + 1
        if n_cols * n_rows > MAX_BLOCK_TILES:
            return False
        image = QImage(n_cols * TILE, n_rows * TILE, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHints(self.view.renderHints())
        size = TILE / 2.0 ** level
        assert self._scene is not None
        self._scene.render(painter, QRectF(image.rect()),
                           QRectF(i0 * size, j0 * size, n_cols * size, n_rows * size),
                           Qt.AspectRatioMode.IgnoreAspectRatio)
        painter.end()
        for key in keys:
            self._store(key, image.copy((key[1] - i0) * TILE, (key[2] - j0) * TILE,
                                        TILE, TILE))
        self._pending = [key for key in self._pending
                         if key not in self._tiles or key in self._stale]
        return True

    def _store(self, key: Key, image: QImage) -> None:
        self.rendered += 1
        self._tiles[key] = image
        self._stale.discard(key)
        while len(self._tiles) > MAX_TILES:
            self._stale.discard(self._tiles.popitem(last=False)[0])

    def _render_band(self, keys: list[Key], budget: float = IDLE_RUN_S,
                     show: bool = True) -> bool:
        """Render the next horizontal band of ``keys`` (neighbours in one row, begun
        together) in one pass: the first an eighth of a tile (``MAX_BANDS``), each next one
        as high as the band before says fits in ``budget``, at least an eighth and at most
        twice the band before; True once the tiles are complete and stored, False with the
        rest put back first in line. ``show``: repaint them (not from within a paint). A
        band is clipped to its rows of pixels, so the bands make the tiles one pass would
        (each item is drawn in every band it reaches)."""
        assert self._scene is not None
        level, i0, j = keys[0]
        if keys[0] not in self._partial:
            # An eighth, whatever the last passes' speed: theirs may be another row's. A
            # fitted graph's top row is nearly empty (1 ms a band): from its speed the
            # dense row under it was begun whole, every item it reaches in one pass (60-90
            # ms of a 10,000-node Open's first paint).
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


def _tile_rect(key: Key) -> QRectF:
    size = TILE / 2.0 ** key[0]
    return QRectF(key[1] * size, key[2] * size, size, size)


def _span(rect: QRectF, scale: float) -> tuple[range, range]:
    """The tile columns and rows that ``rect`` (scene coordinates) covers at ``scale``."""
    size = TILE / scale
    cols = range(math.floor(rect.left() / size), math.floor(rect.right() / size) + 1)
    rows = range(math.floor(rect.top() / size), math.floor(rect.bottom() / size) + 1)
    return cols, rows
