"""RangePanel: every node's output ranges in execution order, sortable; a click selects.

Columns: range, step, zero code and whether 0.0 is exact, codes in use, the shares at 0 and
255, and, with a float reference, the error in steps (LSB). Ranges loaded from a batch report
show the same way, marked "batch".

"Apply calibrated ranges…" asks for a ranges file (``hexscope calibrate``); what it changed
shows below the table, each node's range before (its last run) beside the range it has now.
"Rank by sensitivity" asks for the ranking of what each node's quantization costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine.analysis.ranges import RangeStats

COLUMNS = ("#", "node", "op", "out", "min", "max", "step", "zero code", "0.0 exact",
           "codes used", "code span", "at 0 %", "at 255 %", "clipped %", "err max LSB",
           "err rms LSB", "source")
OVERLAYS = ("no overlay", "colour by clipping", "colour by range use")
#: Rows beyond the visible ones measured to fit the columns to their contents.
FIT_ROWS = 40
_ROOT = QModelIndex()


def _err_key(v: float | None) -> float:
    return -1.0 if v is None else v


#: Each column's sort key: read from the row's figures, without formatting them (sorting
#: asks for every row's key).
_KEYS = (
    lambda s: s.order, lambda s: s.node_id, lambda s: s.op, lambda s: s.output,
    lambda s: s.min, lambda s: s.max, lambda s: s.stepsize, lambda s: s.zero_code,
    lambda s: int(s.zero_exact), lambda s: s.distinct, lambda s: s.code_span,
    lambda s: s.share_0, lambda s: s.share_255, lambda s: s.saturation,
    lambda s: _err_key(s.err_max_lsb), lambda s: _err_key(s.err_rms_lsb),
    lambda s: s.source,
)


def _cells(s: RangeStats) -> tuple[str, ...]:
    """The display text per column."""
    def err(v: float | None) -> str:
        return "" if v is None else f"{v:.2f}"
    return (
        str(s.order), f"0x{s.node_id:x}", s.op, str(s.output), f"{s.min:.6g}",
        f"{s.max:.6g}", f"{s.stepsize:.4g}", str(s.zero_code),
        "yes" if s.zero_exact else "no", str(s.distinct),
        f"{s.code_span}" + (" too wide" if s.too_wide else ""), f"{100 * s.share_0:.2f}",
        f"{100 * s.share_255:.2f}", f"{100 * s.saturation:.2f}", err(s.err_max_lsb),
        err(s.err_rms_lsb), s.source,
    )


class RangeTableModel(QAbstractTableModel):
    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)
        self.stats: list[RangeStats] = []
        self._cells: list[tuple | None] = []
        self._sorted_by = (0, Qt.SortOrder.AscendingOrder)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows (the table's header): once, by keys read from the figures. A sort
        proxy compared rows through data(), 70,000 calls for 3,000 rows at each run's end."""
        self._sorted_by = (column, order)
        self.layoutAboutToBeChanged.emit()
        rows = sorted(range(len(self.stats)), key=lambda r: _KEYS[column](self.stats[r]),
                      reverse=order == Qt.SortOrder.DescendingOrder)
        self.stats = [self.stats[r] for r in rows]
        self._cells = [self._cells[r] for r in rows]
        self.layoutChanged.emit()

    def set_stats(self, stats: Sequence[RangeStats]) -> None:
        self.beginResetModel()
        column, order = self._sorted_by
        self.stats = sorted(stats, key=_KEYS[column],
                            reverse=order == Qt.SortOrder.DescendingOrder)
        # A row's cells are formatted when first asked for (the view asks for the rows in
        # sight): formatting all 3,000 rows of a 10,000-node graph's run took 0.3-0.8 s.
        self._cells = [None] * len(self.stats)
        self.endResetModel()

    def _row(self, row: int) -> tuple:
        cells = self._cells[row]
        if cells is None:
            cells = self._cells[row] = _cells(self.stats[row])
        return cells

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.stats)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._row(index.row())[index.column()]
        if role == Qt.ItemDataRole.UserRole:
            return _KEYS[index.column()](self.stats[index.row()])
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.ForegroundRole and column == "clipped %":
            return saturation_color(self.stats[index.row()].saturation)
        if role == Qt.ItemDataRole.ForegroundRole and column == "code span":
            return use_color(0.0 if self.stats[index.row()].too_wide else 1.0)
        if role == Qt.ItemDataRole.ToolTipRole and column == "code span":
            s = self.stats[index.row()]
            return (f"codes {s.code_low} to {s.code_high} in use of 0 to 255"
                    + (": the range is far wider than the data (wasted resolution)"
                       if s.too_wide else ""))
        return None


def saturation_color(share: float) -> QColor:
    """Green at 0 % clipped, through yellow, to red at 5 % and beyond."""
    x = max(0.0, min(1.0, share / 0.05))
    return QColor(int(40 + 200 * x), int(180 - 140 * max(0.0, x - 0.5) * 2), 50)


def use_color(share: float) -> QColor:
    """Red when few codes are used (a range far too wide), green when most are."""
    x = max(0.0, min(1.0, share))
    return QColor(int(220 - 180 * x), int(60 + 140 * x), 60)


def overlay_for(stats: Sequence[RangeStats], kind: int
                ) -> tuple[dict[int, QColor] | None, list[tuple[str, QColor]]]:
    """Node colours and legend for overlay ``kind`` (an index into OVERLAYS); per node the
    worst of its outputs."""
    if kind == 0:
        return None, []
    colors: dict[int, QColor] = {}
    worst: dict[int, float] = {}
    for s in stats:
        if kind == 1:
            value = max(worst.get(s.node_id, 0.0), s.saturation)
        else:
            value = min(worst.get(s.node_id, 1.0), s.range_use)
        worst[s.node_id] = value
    for node_id, value in worst.items():
        colors[node_id] = saturation_color(value) if kind == 1 else use_color(value)
    if kind == 1:
        legend = [("0 % clipped", saturation_color(0)), ("2.5 %", saturation_color(0.025)),
                  ("≥ 5 % clipped", saturation_color(0.05))]
    else:
        legend = [("few codes used", use_color(0.05)), ("half", use_color(0.5)),
                  ("all 256 codes", use_color(1.0))]
    return colors, legend


APPLIED_COLUMNS = ("node", "before: op", "before: range (last run)", "after: op",
                   "after: range used", "from")


@dataclass(frozen=True, slots=True)
class AppliedRow:
    """One node a ranges file changed, as the panel shows it."""

    node_id: int
    op_before: str
    range_before: tuple[float, float] | None     # None: not run yet
    op_after: str
    range_after: tuple[float, float]
    source: str = ""

    def cells(self) -> tuple[str, ...]:
        def text(r: tuple[float, float] | None) -> str:
            return "not run" if r is None else f"[{r[0]:.6g}, {r[1]:.6g}]"
        return (f"0x{self.node_id:x}", self.op_before, text(self.range_before), self.op_after,
                text(self.range_after), self.source)


class RangePanel(QWidget):
    """See the module docstring."""

    node_activated = Signal(int)
    overlay_changed = Signal(object, object)       # colours or None, legend
    load_batch_requested = Signal()
    load_reference_requested = Signal()
    apply_requested = Signal()            # "Apply calibrated ranges…"
    sensitivity_requested = Signal()      # "Rank by sensitivity"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = RangeTableModel(self)
        self._build_ui()
        self._table.clicked.connect(self._on_clicked)
        self._overlay.currentIndexChanged.connect(self._emit_overlay)
        self._batch.clicked.connect(self.load_batch_requested)
        self._reference.clicked.connect(self.load_reference_requested)
        self.apply_button.clicked.connect(self.apply_requested)
        self.sensitivity_button.clicked.connect(self.sensitivity_requested)
        self.applied.cellClicked.connect(self._on_applied_clicked)

    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        bar = QHBoxLayout()
        self._overlay = QComboBox()
        self._overlay.addItems(OVERLAYS)
        self._batch = QPushButton("Load batch ranges…")
        self._reference = QPushButton("Load float reference…")
        self.apply_button = QPushButton("Apply calibrated ranges…")
        self.apply_button.setToolTip("Write a ranges file (hexscope calibrate) into the graph: "
                                     "fixed ranges instead of run-time ones (one undo step)")
        self.sensitivity_button = QPushButton("Rank by sensitivity")
        self.sensitivity_button.setToolTip("Rank the nodes by how much the output error "
                                           "against the float reference drops with each "
                                           "alone in float (the last run's inputs)")
        self._summary = QLabel("")
        for w in (self._overlay, self._batch, self._reference, self.apply_button,
                  self.sensitivity_button):
            bar.addWidget(w)
        bar.addStretch(1)
        lay.addLayout(bar)
        # on its own line: beside the buttons its text made the panel ~1,150 px wide, and
        # at 1024x700 the Ranges dock scrolled sideways (the plot's right axis out of sight)
        self._summary.setWordWrap(True)
        lay.addWidget(self._summary)
        self._table = QTableView()
        self._table.setModel(self.model)
        self._table.setSortingEnabled(True)
        self._table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self._table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self._table.verticalHeader().hide()
        self._table.verticalHeader().setDefaultSectionSize(20)
        header = self._table.horizontalHeader()
        # fitted to the first rows shown (below), to the visible rows and 200 more: in
        # ResizeToContents mode Qt measured every row again at each layout change (a run's
        # end measured the 122 rows of a 1,073-node graph 17 times; a 5,000-node graph's
        # run made some 270,000 calls to data() for the widths); the visible rows and 40
        # more are enough for a width (200 more were 47 ms of a 10,000-node run's end)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setResizeContentsPrecision(FIT_ROWS)
        lay.addWidget(self._table, 1)
        self.applied_title = QLabel()
        self.applied = QTableWidget(0, len(APPLIED_COLUMNS))
        self.applied.setHorizontalHeaderLabels(APPLIED_COLUMNS)
        self.applied.verticalHeader().hide()
        self.applied.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.applied.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        for w in (self.applied_title, self.applied):
            w.hide()
            lay.addWidget(w)
        lay.setStretchFactor(self.applied, 1)

    def show_applied(self, title: str, rows: Sequence[AppliedRow]) -> None:
        """What applying a ranges file changed: before and after side by side (no rows:
        hide the table)."""
        self.applied.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row.cells()):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, row.node_id)
                self.applied.setItem(r, c, item)
        self.applied.resizeColumnsToContents()
        self.applied_title.setText(title)
        for w in (self.applied_title, self.applied):
            w.setVisible(bool(rows))

    def _on_applied_clicked(self, row: int, _column: int) -> None:
        item = self.applied.item(row, 0)
        if item is not None:
            self.node_activated.emit(int(item.data(Qt.ItemDataRole.UserRole)))

    def set_stats(self, stats: Sequence[RangeStats]) -> None:
        fit = stats and not self.model.stats
        self.model.set_stats(stats)
        if fit:
            # the first rows only: after each run (0.17 s at the end of a 5,000-node run)
            # the widths would jump and undo the user's own
            self._table.resizeColumnsToContents()
        clipped = sum(s.saturation >= 0.01 for s in stats)
        wide = sum(s.too_wide for s in stats)
        self._summary.setText(f"{len(stats)} quantized outputs, {clipped} with ≥ 1 % clipped, "
                              f"{wide} too wide (data within < 32 codes)")
        self._emit_overlay()

    def set_overlay_kind(self, kind: int) -> None:
        self._overlay.setCurrentIndex(kind)

    def sorted_node_ids(self) -> list[int]:
        """Node ids in the table's current (sorted) row order."""
        return [s.node_id for s in self.model.stats]

    def _emit_overlay(self) -> None:
        colors, legend = overlay_for(self.model.stats, self._overlay.currentIndex())
        self.overlay_changed.emit(colors, legend)

    def _on_clicked(self, index: QModelIndex) -> None:
        self.node_activated.emit(self.model.stats[index.row()].node_id)
