"""D32PaddingView: PPrintWithPadding as a picture (graph spec §1.5-§1.6, §4.11-§4.13).

A d32 tensor in memory order (or as its padded h x w plane at one depth) with the padding
tinted by region, a strip with the strides and the selected byte, and PPrintWithPadding's
dimension limit as a control whose printed text can be shown and saved.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine import Layout, QuantRange, Tensor
from hexscope.engine.analysis.padding_regions import Region
from hexscope.engine.errors import EngineError
from hexscope.engine.ops.debug.pprint import limit_range, pprint_lines
from hexscope.widgets._plane import Index, raw_text, value_at
from hexscope.widgets.d32_layout_strip import D32LayoutStrip, inside_padded
from hexscope.widgets.memory_picture import REGION_COLORS, MemoryPicture, PixelIndex

MODES = (("memory", "memory order (bytes as stored)"), ("plane", "padded plane h × w at depth d"))
#: Lines shown in the text box at most; saving writes them all.
TEXT_LIMIT = 20000


def legend_widget(regions: tuple[Region, ...] = tuple(REGION_COLORS)) -> QWidget:
    w = QWidget()
    lay = QHBoxLayout(w)
    lay.setContentsMargins(0, 0, 0, 0)
    for region in regions:
        c: QColor = REGION_COLORS[region]
        swatch = QLabel("  ")
        swatch.setStyleSheet(f"background: rgb({c.red()},{c.green()},{c.blue()});")
        lay.addWidget(swatch)
        lay.addWidget(QLabel(region.label))
    lay.addStretch(1)
    return w


class D32PaddingView(QWidget):
    """See the module docstring."""

    element_selected = Signal(object)    # (b, h, w, d); negative for padding

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tensor: Tensor | None = None
        self._qrange: QuantRange | None = None
        self._selected: Index | None = None
        self._build_ui()
        self._connect()

    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        bar = QHBoxLayout()
        self._mode = QComboBox()
        for _, text in MODES:
            self._mode.addItem(text)
        self._batch = QSpinBox()
        self._depth = QSpinBox()
        self._tint = QCheckBox("tint padding")
        self._tint.setChecked(True)
        for label, w in (("view", self._mode), ("b", self._batch), ("d", self._depth)):
            bar.addWidget(QLabel(label))
            bar.addWidget(w)
        bar.addWidget(self._tint)
        bar.addStretch(1)
        lay.addLayout(bar)
        lay.addWidget(legend_widget())
        split = QSplitter(Qt.Orientation.Vertical)
        self.picture = MemoryPicture()
        split.addWidget(self.picture)
        self.strip = D32LayoutStrip()
        split.addWidget(self.strip)
        split.addWidget(self._build_pprint())
        split.setStretchFactor(0, 5)
        split.setStretchFactor(2, 1)
        lay.addWidget(split, 1)
        self._readout = QLabel("no d32 tensor")
        self._readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self._readout)

    def _build_pprint(self) -> QWidget:
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self._dim = QComboBox()
        self._dim.addItems(["no limit", "B", "H", "W", "D"])
        self._start = QSpinBox()
        self._end = QSpinBox()
        for s in (self._start, self._end):
            s.setRange(-100000, 100000)
        self._end.setValue(1)
        self._limit_label = QLabel("")
        self._show_text = QPushButton("PPrintWithPadding text")
        self._show_text.setCheckable(True)
        row.addWidget(QLabel("PPrintWithPadding limit: dimension"))
        row.addWidget(self._dim)
        row.addWidget(QLabel("start"))
        row.addWidget(self._start)
        row.addWidget(QLabel("end"))
        row.addWidget(self._end)
        row.addWidget(self._limit_label, 1)
        row.addWidget(self._show_text)
        lay.addLayout(row)
        self._text = QPlainTextEdit()
        self._text.setReadOnly(True)
        self._text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._text.hide()
        lay.addWidget(self._text, 1)
        return box

    def _connect(self) -> None:
        self._mode.currentIndexChanged.connect(self._redraw)
        self._batch.valueChanged.connect(self._redraw)
        self._depth.valueChanged.connect(self._redraw)
        self._tint.toggled.connect(self._on_tint)
        for w in (self._dim, self._start, self._end):
            (w.currentIndexChanged if isinstance(w, QComboBox) else w.valueChanged).connect(
                self._on_limit)
        self._show_text.toggled.connect(self._on_show_text)
        self.picture.hovered.connect(self._on_hover)
        self.picture.clicked.connect(self._on_click)

    # model ------------------------------------------------------------------------------------
    def set_tensor(self, tensor: Tensor | None, qrange: QuantRange | None = None) -> None:
        """Show a d32 tensor; other tensors leave the view empty with a note."""
        ok = tensor is not None and tensor.has_data and tensor.layout is Layout.D32
        self._tensor = tensor if ok else None
        self._qrange = qrange
        self.strip.set_tensor(self._tensor)
        if self._selected is not None and not inside_padded(self._tensor, self._selected):
            self._selected = None         # a selection from the previous tensor
        if self._tensor is not None:
            p, (b, _, _, d) = self._tensor.padding, self._tensor.shape
            self._batch.setRange(0, b - 1)
            self._depth.blockSignals(True)
            self._depth.setRange(-p.d_before, d + p.d_after - 1)
            self._depth.blockSignals(False)
            hint = ("nothing to show: no bytes" if self._tensor.nbytes == 0
                    else "hover for bytes")
            self._readout.setText(f"{self._tensor.describe()}  ({hint})")
        else:
            self._readout.setText("not a d32 tensor: nothing lies in padding"
                                  if tensor is not None else "no d32 tensor")
        self._redraw()
        self.picture.fit()

    @property
    def tensor(self) -> Tensor | None:
        return self._tensor

    @property
    def mode(self) -> str:
        return MODES[self._mode.currentIndex()][0]

    def set_mode(self, mode: str) -> None:
        self._mode.setCurrentIndex([m for m, _ in MODES].index(mode))
        self.picture.fit()

    def set_depth(self, depth: int) -> None:
        self._depth.setValue(depth)

    def set_limit(self, dim: int | None, start: int = 0, end: int = 1) -> None:
        """PPrintWithPadding's inputs 1-3: axis 0..3 (None: no limit), start, end."""
        self._start.setValue(start)
        self._end.setValue(end)
        self._dim.setCurrentIndex(0 if dim is None else dim + 1)

    @property
    def limit(self) -> tuple[int | None, int, int]:
        k = self._dim.currentIndex()
        return (None if k == 0 else k - 1), self._start.value(), self._end.value()

    def select(self, index: Index | None) -> None:
        """Highlight an element in the picture and the strip (linked with other views).

        An index outside the shown tensor (padding included) clears the selection.
        """
        if index is not None and not inside_padded(self._tensor, index):
            index = None
        self._selected = index
        if index is not None and self._tensor is not None:
            if self.mode == "plane" and index[3] != self._depth.value():
                self._depth.setValue(index[3])
            if index[0] != self._batch.value():
                self._batch.setValue(index[0])
        self.picture.select(index)
        self.strip.set_selected(index)

    # drawing ------------------------------------------------------------------------------------
    def _redraw(self) -> None:
        self._depth.setEnabled(self.mode == "plane")
        self.picture.set_content(self._tensor, self.mode, self._batch.value(),
                                 self._depth.value())
        self.picture.select(self._selected)
        self._on_limit()

    def _on_tint(self, on: bool) -> None:
        self.picture.show_tint = on
        self._redraw()

    def limit_mask(self) -> np.ndarray | None:
        """True for the picture's pixels that PPrintWithPadding prints under the limit."""
        t = self._tensor
        dim, start, end = self.limit
        if t is None or dim is None or self.picture.image_data is None:
            return None
        lo, hi = _extent(t, dim)
        first, last = limit_range(lo, hi, start, end)
        if dim == 0:
            inside = first <= self._batch.value() < last
            return np.full(self.picture.image_data.shape, inside)
        coords = self.picture.pixel_indices()[dim - 1]
        return (coords >= first) & (coords < last)

    def _on_limit(self) -> None:
        t = self._tensor
        dim, start, end = self.limit
        if t is None or dim is None:
            self._limit_label.setText("")
        else:
            first, last = limit_range(*_extent(t, dim), start, end)
            self._limit_label.setText(f"prints {'BHWD'[dim]} {first}..{last - 1}")
        self.picture.set_limit_mask(self.limit_mask())
        if self._show_text.isChecked():
            self._fill_text()

    def pprint_text(self) -> list[str]:
        """PPrintWithPadding_8_d32's log messages for the tensor under the current limit."""
        if self._tensor is None:
            return []
        dim, start, end = self.limit
        if dim is None:
            return pprint_lines(self._tensor, "PPrintWithPadding_8_d32")
        return pprint_lines(self._tensor, "PPrintWithPadding_8_d32", dim, start, end)

    def _fill_text(self) -> None:
        if self._tensor is None:
            self._text.setPlainText("")
            return
        dim, start, end = self.limit
        count = _printed_count(self._tensor, dim, start, end)
        if count > TEXT_LIMIT:
            self._text.setPlainText(f"{count} lines: limit a dimension to show them here, "
                                    "or save the text")
            return
        try:
            lines = self.pprint_text()
        except (EngineError, ArithmeticError, ValueError, TypeError) as exc:
            # e.g. a float d32 tensor holding NaN or inf: the u8 format cannot print it
            self._text.setPlainText(f"cannot print this tensor as PPrintWithPadding_8_d32: "
                                    f"{exc}")
            return
        self._text.setPlainText("\n".join(lines))

    def _on_show_text(self, on: bool) -> None:
        self._text.setVisible(on)
        if on:
            self._fill_text()

    def save_pprint(self, path: str | Path) -> None:
        Path(path).write_text("\n".join(self.pprint_text()) + "\n")

    # interaction ------------------------------------------------------------------------------
    def _on_hover(self, pix: PixelIndex) -> None:
        t = self._tensor
        if t is None:
            return
        if pix.tail_offset is not None:
            if pix.tail_offset >= t.raw.size:
                # the last tail row is drawn full width; its end lies past the buffer
                self._readout.setText(f"past the allocation ({t.raw.size} B): byte "
                                      f"{pix.tail_offset} does not exist")
                return
            value = int(t.raw[pix.tail_offset])
            self._readout.setText(f"past the end (allocation tail): byte {pix.tail_offset} "
                                  f"= 0x{value:02x}")
        elif pix.index is not None:
            b, h, w, d = pix.index
            region = _region_name(t, pix.index)
            text = raw_text(value_at(t, pix.index), t, self._qrange)
            self._readout.setText(f"(b,h,w,d)=({b},{h},{w},{d})  {region}  {text}  "
                                  f"byte {t.offset(b, h, w, d)}")

    def _on_click(self, pix: PixelIndex) -> None:
        if pix.index is not None:
            self.select(pix.index)
            self.element_selected.emit(pix.index)


def _extent(t: Tensor, dim: int) -> tuple[int, int]:
    p, (b, h, w, d) = t.padding, t.shape
    return [(0, b), (-p.h_before, h + p.h_after), (-p.w_before, w + p.w_after),
            (-p.d_before, d + p.d_after)][dim]


def _printed_count(t: Tensor, dim: int | None, start: int, end: int) -> int:
    sizes = [hi - lo for lo, hi in (_extent(t, k) for k in range(4))]
    if dim is not None:
        first, last = limit_range(*_extent(t, dim), start, end)
        sizes[dim] = last - first
    return int(np.prod(sizes))


def _region_name(t: Tensor, index: Index) -> str:
    _, h, w, d = index
    _, H, W, D = t.shape
    if h < 0:
        return "top padding"
    if h >= H:
        return "bottom padding"
    if w < 0:
        return "left padding"
    if w >= W:
        return "right padding"
    if d < 0:
        return "depth-before padding"
    if d >= D:
        return "depth-after padding"
    return "valid"
