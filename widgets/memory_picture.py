"""MemoryPicture: a d32 tensor drawn as it lies in memory, or as its padded h x w plane.

Memory mode draws one batch as the d32 diagram does (graph spec §1.5, docs/d32_diagram.png):
each picture row is one (padded row, depth slice) run of W_tot x 32 bytes, so slices of a row
sit under each other and a byte's place in the picture is its place in memory. Plane mode
draws the padded plane at one depth, indices counting negative into the top and left padding.
Padding regions are tinted by kind over their real contents. Bytes are coloured on levels
0..255; wider elements on the range of the whole tensor (data and padding), named in the title.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QWidget

from hexscope.engine import Layout, Tensor
from hexscope.engine.analysis.padding_regions import Region, memory_rows, region_codes
from hexscope.widgets._plane import image_values, value_levels
from hexscope.widgets.plot_theme import follow_palette

REGION_COLORS: dict[Region, QColor] = {
    Region.TOP: QColor(70, 130, 255), Region.BOTTOM: QColor(40, 90, 210),
    Region.LEFT: QColor(40, 200, 120), Region.RIGHT: QColor(20, 150, 90),
    Region.DEPTH_BEFORE: QColor(220, 80, 220), Region.DEPTH_AFTER: QColor(170, 60, 200),
    Region.TAIL: QColor(255, 150, 40),
}
MARK = QColor(255, 30, 30)
#: What the picture says for a d32 tensor with an empty extent (B, H_tot, W_tot or D_tot 0).
EMPTY_NOTE = "nothing to show: the tensor has no bytes (an extent is 0)"
BYTE_LEVELS = (0.0, 255.0)
_TINT_ALPHA = 90


@dataclass(frozen=True, slots=True)
class PixelIndex:
    """What a picture pixel shows: an element (b, h, w, d) or a tail byte."""

    index: tuple[int, int, int, int] | None
    tail_offset: int | None = None


def tint_lut() -> np.ndarray:
    lut = np.zeros((len(Region), 4), np.uint8)
    for region, color in REGION_COLORS.items():
        lut[region] = (color.red(), color.green(), color.blue(), _TINT_ALPHA)
    return lut


class MemoryPicture(pg.PlotWidget):
    """See the module docstring. ``image_data``, ``regions`` and ``marks`` are the arrays
    behind the pixels (row-major, one entry per pixel); ``levels`` are the values drawn in the
    first and last colour, and ``levels_text`` says so."""

    hovered = Signal(object)     # PixelIndex
    clicked = Signal(object)     # PixelIndex

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tensor: Tensor | None = None
        self.mode = "memory"
        self.batch = 0
        self.depth = 0
        self.image_data: np.ndarray | None = None
        self.regions: np.ndarray | None = None
        self.marks: np.ndarray | None = None
        self.note = ""              # shown above the picture when there is nothing to draw
        self.caption = ""           # the owner's title ("input", "output ..."), kept under it
        self.levels: tuple[float, float] = BYTE_LEVELS
        self.levels_text = ""
        self._levels_cache: tuple[Tensor, tuple[float, float]] | None = None
        self._codes_cache: tuple[object, np.ndarray] | None = None
        self._tint_cache: tuple[object, np.ndarray] | None = None
        self._ticks_key: object = None
        self._regions_key: object = None
        self._build()
        follow_palette(self)
        self._proxy = pg.SignalProxy(self.scene().sigMouseMoved, rateLimit=60,
                                     slot=self._on_moved)
        self.scene().sigMouseClicked.connect(self._on_clicked)

    def _build(self) -> None:
        self.plotItem.invertY(True)
        self._image = pg.ImageItem(axisOrder="row-major")
        self._tint = pg.ImageItem(axisOrder="row-major")
        self._marks = pg.ImageItem(axisOrder="row-major")
        self._limit = pg.ImageItem(axisOrder="row-major")
        for z, item in enumerate((self._image, self._tint, self._limit, self._marks)):
            item.setZValue(z)
            self.addItem(item)
        self._image.setLookupTable(pg.colormap.get("CET-L1").getLookupTable(nPts=256))
        self._marker = QGraphicsRectItem(0, 0, 1, 1)
        pen = QPen(QColor(255, 230, 0))
        pen.setCosmetic(True)
        pen.setWidth(3)
        self._marker.setPen(pen)
        self._marker.setZValue(20)
        self._marker.hide()
        self.addItem(self._marker)
        self.show_tint = True

    # content ------------------------------------------------------------------------------
    def setTitle(self, title: str | None = None, **args: object) -> None:  # noqa: N802
        """pyqtgraph's title, remembered as the caption that the empty note stands in for."""
        self.caption = title or ""
        self.plotItem.setTitle(self._title() or None, **args)

    def _title(self) -> str:
        if self.note:
            return self.note
        # byte pictures keep their caption alone: their levels never change
        wide = self.levels_text if self.levels != BYTE_LEVELS else ""
        return "  ·  ".join(part for part in (self.caption, wide) if part)

    def set_content(self, tensor: Tensor | None, mode: str = "memory", batch: int = 0,
                    depth: int = 0, marks: np.ndarray | None = None) -> None:
        """Show ``tensor``. ``marks`` (memory mode) flags bytes of the whole raw buffer."""
        self._tensor = tensor if tensor is not None and tensor.has_data else None
        self.mode, self.batch, self.depth = mode, batch, depth
        t = self._tensor
        empty = t is not None and t.layout is Layout.D32 and t.nbytes == 0
        self.note = EMPTY_NOTE if empty else ""
        drawn = t is not None and t.layout is Layout.D32 and not empty
        self.levels, self.levels_text = self._levels(t) if drawn else (BYTE_LEVELS, "")
        self.plotItem.setTitle(self._title() or None)
        if t is None or t.layout is not Layout.D32 or empty:
            self.image_data = self.regions = self.marks = None
            for item in (self._image, self._tint, self._marks, self._limit):
                item.clear()
            self._marker.hide()
            self._ticks_key = None
            for axis in ("bottom", "left"):
                self.getAxis(axis).setTicks(None)
            return
        if mode == "memory":
            self._memory_arrays(t, batch, marks)
        else:
            self._plane_arrays(t, batch, depth)
        self._draw()
        self._set_ticks()

    def _levels(self, t: Tensor) -> tuple[tuple[float, float], str]:
        if t.dtype.size == 1:
            return BYTE_LEVELS, "colour levels 0 .. 255 (bytes)"
        # One range for the whole tensor, so that colours compare across batches, depths and
        # modes; padding is drawn, so it is counted, or its values would saturate.
        if self._levels_cache is None or self._levels_cache[0] is not t:
            self._levels_cache = (t, value_levels(t.memory))
        lo, hi = self._levels_cache[1]
        integer = t.dtype.numpy.kind in "iu"

        def number(x: float) -> str:
            return str(int(x)) if integer and x.is_integer() else f"{x:.6g}"

        return (lo, hi), (f"colour levels {number(lo)} .. {number(hi)} "
                          f"({t.dtype.c_name}, all elements and padding)")

    def _region_codes(self, t: Tensor) -> np.ndarray:
        # Regions depend only on the geometry, so nodes of one shape share them.
        key = (t.shape, t.padding, t.dtype)
        if self._codes_cache is None or self._codes_cache[0] != key:
            self._codes_cache = (key, region_codes(t))
        return self._codes_cache[1]

    def _memory_arrays(self, t: Tensor, batch: int, marks: np.ndarray | None) -> None:
        g = t.geometry
        width = g.d32_stride
        rows = g.h_total * g.n_slices
        image = t.memory[batch].reshape(rows, width)
        regions = self._region_codes(t)[batch].reshape(rows, width)
        start = batch * g.batch_stride
        stop = start + rows * width
        if batch == t.shape[0] - 1 and t.raw.size > t.nbytes and t.dtype.size == 1:
            tail = memory_rows(t.raw[t.nbytes:], width)
            image = np.concatenate([image, tail])
            regions = np.concatenate([regions, np.full(tail.shape, Region.TAIL, np.uint8)])
            stop = start + image.size
        self.image_data = np.ascontiguousarray(image)
        self.regions = regions
        self._regions_key = (t.shape, t.padding, t.dtype, "memory", batch, image.shape)
        if marks is not None:
            part = np.zeros(image.size, bool)
            chunk = marks[start:stop]
            part[: chunk.size] = chunk
            self.marks = part.reshape(image.shape)
        else:
            self.marks = None

    def _plane_arrays(self, t: Tensor, batch: int, depth: int) -> None:
        g, p = t.geometry, t.padding
        k = depth + p.d_before
        mem = t.memory[batch]                       # [H_tot, n_slices, W_tot, 32]
        self.image_data = np.ascontiguousarray(mem[:, k // 32, :, k % 32])
        self.regions = self._region_codes(t)[batch][:, k // 32, :, k % 32]
        self.marks = None
        self._regions_key = (t.shape, t.padding, t.dtype, "plane", batch, depth)
        del g

    def _draw(self) -> None:
        assert self.image_data is not None and self.regions is not None
        h, w = self.image_data.shape
        rect = QRectF(0, 0, w, h)
        self._image.setImage(image_values(self.image_data), autoLevels=False,
                             levels=self.levels)
        self._image.setRect(rect)
        if self.show_tint:
            if self._tint_cache is None or self._tint_cache[0] != self._regions_key:
                # one 32-bit lookup per pixel: much faster than indexing RGBA rows
                lut32 = tint_lut().view(np.uint32).reshape(-1)
                rgba = np.take(lut32, self.regions).view(np.uint8).reshape(
                    *self.regions.shape, 4)
                self._tint_cache = (self._regions_key, rgba)
                self._tint.setImage(self._tint_cache[1], autoLevels=False, levels=(0, 255))
            elif self._tint.image is None:
                self._tint.setImage(self._tint_cache[1], autoLevels=False, levels=(0, 255))
            self._tint.setRect(rect)
        else:
            self._tint.clear()
            self._tint_cache = None
        if self.marks is not None:
            rgba = np.zeros((h, w, 4), np.uint8)
            rgba[self.marks] = (MARK.red(), MARK.green(), MARK.blue(), 150)   # values show through
            self._marks.setImage(rgba, autoLevels=False, levels=(0, 255))
            self._marks.setRect(rect)
        else:
            self._marks.clear()

    def set_limit_mask(self, inside: np.ndarray | None) -> None:
        """Dim every pixel outside ``inside`` (the PPrint dimension limit); None clears."""
        if inside is None or self.image_data is None or inside.shape != self.image_data.shape:
            self._limit.clear()
            return
        rgba = np.zeros((*inside.shape, 4), np.uint8)
        rgba[~inside] = (0, 0, 0, 170)
        self._limit.setImage(rgba, autoLevels=False, levels=(0, 255))
        self._limit.setRect(QRectF(0, 0, inside.shape[1], inside.shape[0]))

    def fit(self) -> None:
        self.autoRange(padding=0.01)

    # pixel <-> element --------------------------------------------------------------------
    def pixel_indices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(h, w, d) of every pixel (tail pixels get h beyond the padded height)."""
        t = self._tensor
        assert t is not None and self.image_data is not None
        p, g = t.padding, t.geometry
        rows, cols = np.indices(self.image_data.shape)
        if self.mode == "memory":
            h = rows // g.n_slices - p.h_before
            d = (rows % g.n_slices) * 32 + cols % 32 - p.d_before
            w = cols // 32 - p.w_before
            return h, w, d
        return rows - p.h_before, cols - p.w_before, np.full(rows.shape, self.depth)

    def pixel(self, row: int, col: int) -> PixelIndex:
        t = self._tensor
        if t is None or self.image_data is None:
            return PixelIndex(None)
        if not (0 <= row < self.image_data.shape[0] and 0 <= col < self.image_data.shape[1]):
            return PixelIndex(None)
        p, g = t.padding, t.geometry
        if self.mode == "plane":
            return PixelIndex((self.batch, row - p.h_before, col - p.w_before, self.depth))
        if row >= g.h_total * g.n_slices:
            offset = t.nbytes + (row - g.h_total * g.n_slices) * g.d32_stride + col
            return PixelIndex(None, offset)
        h, s = divmod(row, g.n_slices)
        w, c = divmod(col, 32)
        return PixelIndex((self.batch, h - p.h_before, w - p.w_before, s * 32 + c - p.d_before))

    def place_of(self, index: tuple[int, int, int, int]) -> tuple[int, int] | None:
        """(row, col) of an element in the current picture, or None if not shown."""
        t = self._tensor
        if t is None or self.image_data is None or index[0] != self.batch:
            return None
        p, g = t.padding, t.geometry
        _, h, w, d = index
        if self.mode == "plane":
            return (h + p.h_before, w + p.w_before) if d == self.depth else None
        k = d + p.d_before
        return (h + p.h_before) * g.n_slices + k // 32, (w + p.w_before) * 32 + k % 32

    def select(self, index: tuple[int, int, int, int] | None) -> None:
        place = None if index is None else self.place_of(index)
        if place is None:
            self._marker.hide()
            return
        self._marker.setRect(QRectF(place[1], place[0], 1, 1))
        self._marker.show()

    def _pixel_at(self, scene_pos) -> PixelIndex:
        if not self.plotItem.sceneBoundingRect().contains(scene_pos):
            return PixelIndex(None)
        pos = self.plotItem.vb.mapSceneToView(scene_pos)
        return self.pixel(int(np.floor(pos.y())), int(np.floor(pos.x())))

    def _on_moved(self, args: tuple) -> None:
        self.hovered.emit(self._pixel_at(args[0]))

    def _on_clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self._pixel_at(event.scenePos()))

    # axes -------------------------------------------------------------------------------------
    def _set_ticks(self) -> None:
        t = self._tensor
        assert t is not None and self.image_data is not None
        p, g = t.padding, t.geometry
        rows = self.image_data.shape[0]
        key = (t.shape, t.padding, self.mode, rows)
        if key == self._ticks_key:
            return
        self._ticks_key = key
        per_w = 32 if self.mode == "memory" else 1
        per_h = g.n_slices if self.mode == "memory" else 1
        self.getAxis("bottom").setTicks(_ticks(g.w_total, p.w_before, per_w))
        self.getAxis("left").setTicks(_ticks(min(g.h_total, rows // per_h), p.h_before, per_h))
        self.setLabel("bottom", "w (byte = 32·w + channel)" if per_w > 1 else "w")
        self.setLabel("left", "h (one sub-row per depth slice)" if per_h > 1 else "h")


def _ticks(total: int, before: int, per: int) -> list[list[tuple[float, str]]]:
    """Major ticks at round indices (and at the first and last), minor at every index while
    there are few enough to tell apart (pyqtgraph rebuilds every tick on each repaint)."""
    step = _tick_step(total)
    idx = range(-before, total - before)
    major = [(float((i + before) * per + per / 2), str(i)) for i in idx
             if i % step == 0 or i in (-before, total - before - 1)]
    minor = [(float((i + before) * per), "") for i in idx] if total <= 64 else []
    return [major, minor]


def _tick_step(total: int) -> int:
    """The smallest round step that gives at most 16 major ticks over ``total`` indices."""
    for step in (1, 2, 4, 5, 10, 20, 25, 50, 100, 200, 500):
        if total / step <= 16:
            return step
    scale = 1000
    while True:
        for m in (1, 2, 5):
            if total / (m * scale) <= 16:
                return m * scale
        scale *= 10
