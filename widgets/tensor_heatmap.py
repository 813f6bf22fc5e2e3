"""TensorHeatmapView: one plane of a tensor as a heatmap, with a colour bar and hover read-out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine import Layout, QuantRange, Tensor
from hexscope.widgets._plane import (
    AXES,
    Index,
    PlaneChoice,
    element_text,
    fitting_axes,
    image_values,
    is_codes,
    is_strip,
    levels_of,
    plane,
    values_of,
)
from hexscope.widgets.elided_label import ElidedLabel
from hexscope.widgets.plot_theme import follow_palette
from hexscope.widgets.theme_colors import mark_error_text

_AXIS_NAMES = ("batch (b)", "height (h)", "width (w)", "depth (d)")


class _AxisSlider(QWidget):
    """A slider plus spin box for one fixed axis."""

    changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.spin = QSpinBox()
        lay.addWidget(self.label)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.spin)
        self.slider.valueChanged.connect(self.spin.setValue)
        self.spin.valueChanged.connect(self.slider.setValue)
        self.spin.valueChanged.connect(self.changed)

    def configure(self, axis: int, size: int, value: int) -> None:
        self.label.setText(AXES[axis].lower())
        for w in (self.slider, self.spin):
            w.blockSignals(True)
            w.setRange(0, max(0, size - 1))
            w.setValue(min(value, max(0, size - 1)))
            w.blockSignals(False)
        self.setEnabled(size > 1)


class TensorHeatmapView(QWidget):
    """A heatmap of two axes of a tensor (height x width by default); sliders pick the rest.

    Codes show with levels 0..255; dequantized values with levels [min, max] of the
    tensor's quantization range, so the colour bar reads in real units.
    """

    element_selected = Signal(object)    # (b, h, w, d) clicked
    hovered = Signal(str)                # the read-out text

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tensor: Tensor | None = None
        self._qrange: QuantRange | None = None
        self._choice = PlaneChoice()
        self._selected: Index | None = None
        self._labels: tuple[int, int] | None = None
        self._build_ui()
        self._proxy = pg.SignalProxy(self._plot.scene().sigMouseMoved, rateLimit=60,
                                     slot=self._on_mouse_moved)
        self._plot.scene().sigMouseClicked.connect(self._on_click)

    # construction -------------------------------------------------------------------------
    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        bar = QHBoxLayout()
        self._rows = QComboBox()
        self._cols = QComboBox()
        for box in (self._rows, self._cols):
            box.addItems(_AXIS_NAMES)
        self._rows.setCurrentIndex(1)
        self._cols.setCurrentIndex(2)
        self._mode = QComboBox()
        self._mode.addItems(["codes", "dequantized"])
        bar.addWidget(QLabel("rows"))
        bar.addWidget(self._rows)
        bar.addWidget(QLabel("columns"))
        bar.addWidget(self._cols)
        bar.addWidget(QLabel("show"))
        bar.addWidget(self._mode)
        self._note = QLabel("")            # why the plane is empty or shows codes
        mark_error_text(self._note)
        bar.addWidget(self._note)
        bar.addStretch(1)
        lay.addLayout(bar)
        sliders = QHBoxLayout()
        self._sliders = [_AxisSlider(), _AxisSlider()]
        for s in self._sliders:
            sliders.addWidget(s, 1)
            s.changed.connect(self._on_slider)
        lay.addLayout(sliders)
        self._glw = pg.GraphicsLayoutWidget()
        self._plot = self._glw.addPlot()
        self._plot.invertY(True)
        self._plot.setAspectLocked(True)
        self._image = pg.ImageItem(axisOrder="row-major")
        self._plot.addItem(self._image)
        self._colorbar = pg.ColorBarItem(colorMap="viridis", interactive=False, width=14)
        self._colorbar.setImageItem(self._image, insert_in=self._plot)
        # ColorBarItem fixes its axis at 45 px, and pyqtgraph drops every label that does not
        # fit: "-2e+38" or "1.5e-42" vanished, leaving a bar without its range. Sized to the
        # labels instead.
        self._colorbar.axis.setWidth(None)
        self._marker = QGraphicsRectItem(0, 0, 1, 1)
        pen = QPen(QColor(255, 40, 40))
        pen.setCosmetic(True)
        pen.setWidth(2)
        self._marker.setPen(pen)
        self._marker.setZValue(10)
        self._marker.hide()
        self._plot.addItem(self._marker)
        follow_palette(self._glw)
        lay.addWidget(self._glw, 1)
        self._readout = ElidedLabel("no tensor")     # one line: a dock has no room for more
        self._readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self._readout)
        self._rows.currentIndexChanged.connect(self._on_axes)
        self._cols.currentIndexChanged.connect(self._on_axes)
        self._mode.currentIndexChanged.connect(self._refresh)

    def set_picture_min_height(self, height: int) -> None:
        """The least height of the picture itself (its controls come on top): a panel that
        shows the view in a short dock keeps a picture one can read."""
        self._glw.setMinimumHeight(height)

    @property
    def picture_height(self) -> int:
        """The picture's height now (axes and colour bar included, controls not)."""
        return self._glw.height()

    # model ------------------------------------------------------------------------------------
    def set_tensor(self, tensor: Tensor | None, qrange: QuantRange | None = None) -> None:
        """Show ``tensor`` (logical data; d32 padding is the d32 view's business)."""
        self._tensor = tensor if tensor is not None and tensor.has_data else None
        self._qrange = qrange
        can_deq = self._tensor is not None and qrange is not None and is_codes(self._tensor)
        self._mode.model().item(1).setEnabled(can_deq)
        if not can_deq:
            self._mode.setCurrentIndex(0)
        if self._tensor is not None:
            self._fit_axes(self._tensor.shape)
        self._configure_sliders()
        self._refresh()
        self._fit_view()
        t = self._tensor
        self._readout.setText("no tensor" if t is None else layout_text(t) + (
            "  (hover for values)" if t.array.size else "  (no elements)"))

    @property
    def tensor(self) -> Tensor | None:
        return self._tensor

    @property
    def image_data(self) -> np.ndarray | None:
        """The 2-D array handed to the image item."""
        return self._image.image

    @property
    def levels(self) -> tuple[float, float]:
        lo, hi = self._image.getLevels()
        return float(lo), float(hi)

    @property
    def note(self) -> str:
        """The note beside the controls: why nothing, or the codes, are shown ("" if none)."""
        return self._note.text()

    @property
    def choice(self) -> PlaneChoice:
        return self._choice

    def set_dequantized(self, on: bool) -> None:
        """Show dequantized values (only for quint8 codes with a range)."""
        if self._mode.model().item(1).isEnabled() or not on:
            self._mode.setCurrentIndex(1 if on else 0)

    def set_axes(self, rows: int, cols: int) -> None:
        """Show axis ``rows`` down and ``cols`` across (0..3 = B, H, W, D)."""
        self._rows.blockSignals(True)
        self._rows.setCurrentIndex(rows)
        self._rows.blockSignals(False)
        self._cols.setCurrentIndex(cols)
        self._on_axes()

    def set_fixed(self, axis: int, index: int) -> None:
        """Set the index of a fixed axis (moves its slider)."""
        for s, a in zip(self._sliders, self._fixed_axes(), strict=True):
            if a == axis:
                s.spin.setValue(index)

    def select(self, index: Index | None) -> None:
        """Highlight an element; the sliders move so that it is in the shown plane."""
        self._selected = index
        if index is not None and self._tensor is not None:
            for s, a in zip(self._sliders, self._fixed_axes(), strict=True):
                if 0 <= index[a] < self._tensor.shape[a]:
                    s.spin.blockSignals(True)
                    s.spin.setValue(index[a])
                    s.slider.setValue(index[a])
                    s.spin.blockSignals(False)
            self._update_choice()
            self._refresh()
        self._place_marker()

    # internals ----------------------------------------------------------------------------
    def _fixed_axes(self) -> list[int]:
        return [a for a in range(4) if a not in (self._choice.rows, self._choice.cols)]

    def _on_axes(self) -> None:
        rows, cols = self._rows.currentIndex(), self._cols.currentIndex()
        if rows == cols:
            # keep two distinct axes: move the other combo to the axis just given up
            other = self._cols if self.sender() is self._rows else self._rows
            freed = self._choice.cols if other is self._cols else self._choice.rows
            if freed == rows:
                freed = next(a for a in range(4) if a != rows)
            other.blockSignals(True)
            other.setCurrentIndex(freed)
            other.blockSignals(False)
            rows, cols = self._rows.currentIndex(), self._cols.currentIndex()
        self._choice = PlaneChoice(rows, cols, self._choice.fixed)
        self._configure_sliders()
        self._refresh()
        self._fit_view()

    def _fit_axes(self, shape: tuple[int, ...]) -> None:
        """Show a new tensor's extent when the chosen plane is one element of it."""
        rows, cols = fitting_axes(shape, self._choice.rows, self._choice.cols)
        if (rows, cols) == (self._choice.rows, self._choice.cols):
            return
        for box, axis in ((self._rows, rows), (self._cols, cols)):
            box.blockSignals(True)
            box.setCurrentIndex(axis)
            box.blockSignals(False)
        self._choice = PlaneChoice(rows, cols, self._choice.fixed)

    def _fit_view(self) -> None:
        t = self._tensor
        self._plot.setAspectLocked(t is None or not is_strip(t.shape, self._choice))
        self._plot.autoRange(padding=0.02)

    def _configure_sliders(self) -> None:
        shape = self._tensor.shape if self._tensor is not None else (1, 1, 1, 1)
        for s, a in zip(self._sliders, self._fixed_axes(), strict=True):
            s.configure(a, shape[a], self._choice.fixed[a])
        self._update_choice()

    def _on_slider(self) -> None:
        self._update_choice()
        self._refresh()

    def _update_choice(self) -> None:
        fixed = list(self._choice.fixed)
        for s, a in zip(self._sliders, self._fixed_axes(), strict=True):
            fixed[a] = s.spin.value()
        self._choice = PlaneChoice(self._choice.rows, self._choice.cols, tuple(fixed))

    def _refresh(self) -> None:
        t = self._tensor
        if t is None or t.array.size == 0:
            # no element in any plane (an empty axis): clear the picture, say why
            self._image.clear()
            self._note.setText("" if t is None else
                               "no elements (shape {}x{}x{}x{})".format(*t.shape))
            if t is None:
                self._readout.setText("no tensor")
            self._marker.hide()
            # no picture, no scale: the last tensor's levels would read as this one's
            self._colorbar.hide()
            return
        self._colorbar.show()
        dequant = (self._mode.currentIndex() == 1 and self._qrange is not None
                   and is_codes(t))
        q = self._qrange
        if dequant and q is not None and not (np.isfinite(q.min) and np.isfinite(q.max)):
            self._note.setText(f"range [{q.min:.6g}, {q.max:.6g}] is not finite: "
                               "showing codes")
            dequant = False
        else:
            self._note.setText("")
        codes = plane(t.array, self._choice)
        data = np.ascontiguousarray(values_of(codes, t, self._qrange, dequant))
        if data.dtype.kind not in "fiu":
            data = data.astype(np.float64)
        if (data.dtype.kind == "f" and data.size and not np.isfinite(data).any()
                and not self._note.text()):
            self._note.setText("no finite value in this plane")
        levels = levels_of(t, self._qrange, dequant, data)
        self._image.setImage(image_values(data), autoLevels=False, levels=levels)
        self._image.setRect(QRectF(0, 0, data.shape[1], data.shape[0]))
        if tuple(self._colorbar.levels()) != tuple(levels):
            self._colorbar.setLevels(levels)
        labels = (self._choice.rows, self._choice.cols)
        if labels != self._labels:
            self._labels = labels
            self._plot.setLabel("left", _AXIS_NAMES[labels[0]])
            self._plot.setLabel("bottom", _AXIS_NAMES[labels[1]])
        self._place_marker()

    def _place_marker(self) -> None:
        idx = self._selected
        if idx is None or self._tensor is None or not self._choice.contains(idx):
            self._marker.hide()
            return
        self._marker.setRect(QRectF(idx[self._choice.cols], idx[self._choice.rows], 1, 1))
        self._marker.show()

    def _index_at(self, scene_pos) -> Index | None:
        if self._tensor is None or not self._plot.sceneBoundingRect().contains(scene_pos):
            return None
        p = self._plot.vb.mapSceneToView(scene_pos)
        r, c = int(np.floor(p.y())), int(np.floor(p.x()))
        idx = self._choice.element(r, c)
        # all four axes: a fixed index is out of range when its axis is empty
        if not all(0 <= i < n for i, n in zip(idx, self._tensor.shape, strict=True)):
            return None
        return idx

    def readout_for(self, index: Index) -> str:
        assert self._tensor is not None
        return element_text(self._tensor, index, self._qrange)

    def _on_mouse_moved(self, args: tuple) -> None:
        idx = self._index_at(args[0])
        if idx is not None:
            text = self.readout_for(idx)
            self._readout.setText(text)
            self.hovered.emit(text)

    def _on_click(self, event) -> None:
        idx = self._index_at(event.scenePos())
        if idx is not None:
            self.select(idx)
            self.element_selected.emit(idx)

    # export -----------------------------------------------------------------------------------
    def export_png(self, path: str | Path) -> None:
        """Save the plot as drawn (image, axes and colour bar) as PNG."""
        if not self._glw.grab().save(str(path), "PNG"):
            raise OSError(f"cannot write {path}")

    def export_npy(self, path: str | Path) -> None:
        """Save the tensor's logical data (NHWC, no padding) as .npy."""
        if self._tensor is None:
            raise ValueError("no tensor to export")
        np.save(path, np.ascontiguousarray(self._tensor.array))


def layout_text(tensor: Tensor) -> str:
    text = tensor.describe()
    if tensor.layout is Layout.D32:
        row, d32, batch = tensor.strides
        text += f"  strides: d32 {d32}, row {row}, batch {batch}"
    return text
