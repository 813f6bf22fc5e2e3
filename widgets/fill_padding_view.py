"""FillPaddingView: a FillPadding_8_d32 node's input and output side by side (graph spec §4.19).

Both are drawn in memory order with the same zoom; in the output, every byte that differs
from the input is marked, and the counts per region (spatial padding, depth padding, the rows
past the end, and valid data, which must stay 0) are listed.

Any node with d32 input and output is shown here; when the two differ in shape or padding,
a byte-by-byte comparison means nothing, so nothing is marked and the read-out gives each
tensor's own byte of the hovered element.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QSplitter, QVBoxLayout, QWidget

from hexscope.engine import Layout, Tensor
from hexscope.engine.analysis.padding_regions import Region, changed_by_region, changed_bytes
from hexscope.widgets.d32_view import legend_widget
from hexscope.widgets.memory_picture import MemoryPicture, PixelIndex


class FillPaddingView(QWidget):
    """See the module docstring. ``changed_mask`` flags the changed bytes of the output's
    whole allocation; ``changed_counts`` gives them per :class:`Region`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._before: Tensor | None = None
        self._after: Tensor | None = None
        self.changed_mask: np.ndarray | None = None
        self.changed_counts: dict[Region, int] = {}
        self._build_ui()
        self._batch.valueChanged.connect(self._redraw)
        self.input_picture.hovered.connect(lambda pix: self._on_hover(pix, self._before))
        self.output_picture.hovered.connect(lambda pix: self._on_hover(pix, self._after))

    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        bar = QHBoxLayout()
        self._title = QLabel("select a FillPadding_8_d32 node")
        self._batch = QSpinBox()
        bar.addWidget(self._title, 1)
        bar.addWidget(QLabel("b"))
        bar.addWidget(self._batch)
        lay.addLayout(bar)
        lay.addWidget(legend_widget())
        split = QSplitter(Qt.Orientation.Horizontal)
        self.input_picture = MemoryPicture()
        self.output_picture = MemoryPicture()
        self.input_picture.setTitle("input")
        self.output_picture.setTitle("output (changed bytes in red)")
        self.output_picture.setXLink(self.input_picture)
        self.output_picture.setYLink(self.input_picture)
        split.addWidget(self.input_picture)
        split.addWidget(self.output_picture)
        lay.addWidget(split, 1)
        self._summary = QLabel("")
        self._summary.setWordWrap(True)
        lay.addWidget(self._summary)
        self._readout = QLabel("")
        lay.addWidget(self._readout)

    def set_tensors(self, before: Tensor | None, after: Tensor | None, title: str = "",
                    unwritten: int | None = None) -> None:
        """Show a FillPadding node's input (``before``) and output (``after``).

        ``unwritten`` is the session's padding fill: bytes past the input's end that still
        hold it were not written by the op, so they are not marked.
        """
        ok = all(t is not None and t.has_data and t.layout is Layout.D32
                 for t in (before, after))
        self._before, self._after = (before, after) if ok else (None, None)
        if ok:
            assert before is not None and after is not None
            self._batch.setRange(0, max(0, min(before.shape[0], after.shape[0]) - 1))
            self._title.setText(title or after.describe())
            if self.same_geometry:
                self.changed_mask = changed_bytes(before, after, unwritten)
                self.changed_counts = changed_by_region(before, after, unwritten)
                self._summary.setText(summary_text(self.changed_counts, int(after.raw.size)))
            else:
                self.changed_mask, self.changed_counts = None, {}
                self._summary.setText(
                    f"input and output differ in d32 geometry or type (input {before.describe()}, "
                    f"output {after.describe()}): bytes are not compared")
        else:
            self.changed_mask, self.changed_counts = None, {}
            self._title.setText("select a FillPadding_8_d32 node whose input and output "
                                "are d32")
            self._summary.setText("")
        self._redraw()
        self.output_picture.fit()     # the output may be taller: its tail rows

    def _redraw(self) -> None:
        b = self._batch.value()
        self.input_picture.set_content(self._before, "memory", b)
        self.output_picture.set_content(self._after, "memory", b, marks=self.changed_mask)

    @property
    def same_geometry(self) -> bool:
        """Whether input and output have one dtype, shape and padding (bytes then compare)."""
        b, a = self._before, self._after
        return (b is not None and a is not None and b.geometry == a.geometry
                and b.dtype is a.dtype)

    def _on_hover(self, pix: PixelIndex, source: Tensor | None = None) -> None:
        if self._before is None or self._after is None:
            return
        if not self.same_geometry:
            self._hover_apart(pix, source)
            return
        if pix.index is not None:
            offset = self._before.offset(*pix.index)
            where = "(b,h,w,d)=({},{},{},{})".format(*pix.index)
        elif pix.tail_offset is not None:
            offset, where = pix.tail_offset, "past the end"
        else:
            return
        old = self._before.raw[offset] if offset < self._before.raw.size else None
        new = self._after.raw[offset] if offset < self._after.raw.size else None
        old_text = "-" if old is None else f"0x{int(old):02x}"
        new_text = "-" if new is None else f"0x{int(new):02x}"
        self._readout.setText(f"{where} byte {offset}: input {old_text} → output {new_text}")

    def _hover_apart(self, pix: PixelIndex, source: Tensor | None) -> None:
        """Different geometries: each tensor's own byte of the hovered element."""
        assert self._before is not None and self._after is not None
        if pix.index is None:
            if pix.tail_offset is None or source is None:
                return
            side = "input" if source is self._before else "output"
            byte = _byte(source, pix.tail_offset)
            self._readout.setText(f"{side} byte {pix.tail_offset} (past the end): {byte}")
            return
        parts = []
        for side, t in (("input", self._before), ("output", self._after)):
            try:
                offset = t.offset(*pix.index)
            except IndexError:          # outside this tensor's padded layout
                parts.append(f"{side} -")
                continue
            parts.append(f"{side} byte {offset}: {_byte(t, offset)}")
        self._readout.setText("(b,h,w,d)=({},{},{},{}) ".format(*pix.index)
                              + " · ".join(parts))


def _byte(t: Tensor, offset: int) -> str:
    return f"0x{int(t.raw[offset]):02x}" if 0 <= offset < t.raw.size else "-"


def summary_text(counts: dict[Region, int], size: int) -> str:
    total = sum(counts.values())
    if not total:
        return f"no byte of {size} changed"
    parts = [f"{region.label}: {n}" for region, n in sorted(counts.items())]
    warn = " — VALID DATA CHANGED" if counts.get(Region.VALID) else ""
    return f"{total} of {size} bytes changed ({', '.join(parts)}){warn}"
