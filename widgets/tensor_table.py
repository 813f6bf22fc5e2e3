"""TensorTableView: every element of a tensor as a row (b, h, w, d, raw, hex, value, offset).

The model is virtual: rows are computed when Qt asks for them, so a 1x149x149x32 tensor
(710,432 rows) scrolls as smoothly as a small one. For d32 tensors the padding can be
included, in PPrintWithPadding's order and with its negative indices.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QHeaderView, QTableView, QVBoxLayout, QWidget

from hexscope.engine import Layout, QuantRange, Tensor
from hexscope.widgets._plane import Index, is_codes

COLUMNS = ("b", "h", "w", "d", "value", "hex", "meaning", "byte offset")
_ROOT = QModelIndex()
_PAD_BRUSH = QBrush(QColor(120, 120, 120, 60))


class TensorTableModel(QAbstractTableModel):
    """One row per element, b then h then w then d (d innermost), like PPrint."""

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)
        self._tensor: Tensor | None = None
        self._qrange: QuantRange | None = None
        self._padded = False
        self._lo = (0, 0, 0, 0)
        self._ext = (0, 0, 0, 0)
        self._values: np.ndarray | None = None

    def set_tensor(self, tensor: Tensor | None, qrange: QuantRange | None = None,
                   padded: bool = False) -> None:
        self.beginResetModel()
        self._tensor = tensor if tensor is not None and tensor.has_data else None
        self._qrange = qrange
        self._padded = bool(padded and self._tensor is not None
                            and self._tensor.layout is Layout.D32)
        t = self._tensor
        if t is None:
            self._lo, self._ext, self._values = (0, 0, 0, 0), (0, 0, 0, 0), None
        elif self._padded:
            p, g = t.padding, t.geometry
            self._lo = (0, -p.h_before, -p.w_before, -p.d_before)
            self._ext = (t.shape[0], g.h_total, g.w_total, g.d_total)
            self._values = t.padded_array()
        else:
            self._lo, self._ext, self._values = (0, 0, 0, 0), t.shape, t.array
        self.endResetModel()

    # geometry -----------------------------------------------------------------------------
    def index_of_row(self, row: int) -> Index:
        """The (b, h, w, d) shown in ``row`` (negative indices for padding)."""
        b, h, w, d = self._ext
        rest, dd = divmod(row, d)
        rest, ww = divmod(rest, w)
        bb, hh = divmod(rest, h)
        lo = self._lo
        return (bb + lo[0], hh + lo[1], ww + lo[2], dd + lo[3])

    def row_of(self, index: Index) -> int | None:
        pos = [index[a] - self._lo[a] for a in range(4)]
        if not all(0 <= pos[a] < self._ext[a] for a in range(4)):
            return None
        b, h, w, d = self._ext
        return ((pos[0] * h + pos[1]) * w + pos[2]) * d + pos[3]

    def is_padding(self, index: Index) -> bool:
        t = self._tensor
        return t is not None and not all(0 <= index[a] < t.shape[a] for a in range(4))

    # Qt model -----------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        if parent.isValid():
            return 0
        b, h, w, d = self._ext
        return b * h * w * d

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> object:
        t = self._tensor
        if t is None or not index.isValid():
            return None
        idx = self.index_of_row(index.row())
        if role == Qt.ItemDataRole.BackgroundRole:
            return _PAD_BRUSH if self.is_padding(idx) else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        col = index.column()
        if col < 4:
            return str(idx[col])
        if col == 7:
            return str(t.offset(*idx))
        assert self._values is not None
        pos = tuple(idx[a] - self._lo[a] for a in range(4))
        value = self._values[pos]
        return _cell(t, value, col, self._qrange)


def _cell(t: Tensor, value: object, col: int, qrange: QuantRange | None) -> str:
    if col == 4:
        return f"{float(value):.6g}" if t.dtype.numpy.kind == "f" else str(int(value))
    if col == 5:
        if t.dtype.numpy.kind == "f":
            return f"0x{int(np.float32(value).view(np.uint32)):08x}"
        size = t.dtype.size
        return f"0x{int(value) & ((1 << 8 * size) - 1):0{2 * size}x}"
    if qrange is not None and is_codes(t):
        return f"{float(qrange.dequantize(np.uint8(value))):.6g}"
    return ""


class TensorTableView(QWidget):
    """The value table with an 'include padding' switch for d32 tensors."""

    element_selected = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = TensorTableModel(self)
        self._tensor: Tensor | None = None
        self._qrange: QuantRange | None = None
        self._build_ui()
        self._padding.toggled.connect(self._reload)
        self._table.clicked.connect(self._on_clicked)

    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        bar = QHBoxLayout()
        self._padding = QCheckBox("include d32 padding (as PPrintWithPadding)")
        bar.addWidget(self._padding)
        bar.addStretch(1)
        lay.addLayout(bar)
        self._table = QTableView()
        self._table.setModel(self.model)
        vh = self._table.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)   # uniform rows: smooth scroll
        vh.setDefaultSectionSize(20)
        vh.hide()
        self._table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self._table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self._table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        lay.addWidget(self._table, 1)

    def set_tensor(self, tensor: Tensor | None, qrange: QuantRange | None = None) -> None:
        self._tensor, self._qrange = tensor, qrange
        self._padding.setEnabled(tensor is not None and tensor.layout is Layout.D32)
        self._reload()

    def set_include_padding(self, on: bool) -> None:
        self._padding.setChecked(on)

    def _reload(self) -> None:
        self.model.set_tensor(self._tensor, self._qrange,
                              self._padding.isChecked() and self._padding.isEnabled())

    def select(self, index: Index | None) -> None:
        """Scroll to and select the row of ``index`` (if it is shown)."""
        row = None if index is None else self.model.row_of(index)
        if row is None:
            self._table.clearSelection()
            return
        self._table.selectRow(row)
        self._table.scrollTo(self.model.index(row, 0), QTableView.ScrollHint.PositionAtCenter)

    def _on_clicked(self, index: QModelIndex) -> None:
        self.element_selected.emit(self.model.index_of_row(index.row()))
