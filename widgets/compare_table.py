"""The Compare panel's table: one row per compared output, as a model (issue 12).

A model, not a table of items: a comparison of a large graph has thousands of outputs, and
filling a QTableWidget with an item per cell took 270 ms on the GUI thread for 2,000 rows
after every step; the model hands the view only the cells it shows. Sorting is the model's
own (by each column's value, the missing last), so the plan order of column "#" comes back
with one click.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from hexscope.engine.analysis.compare_report import excess_text, fmt_number, row_text
from hexscope.engine.analysis.diff import OutputDiff
from hexscope.widgets.theme_colors import theme_colors

COLUMNS = ("#", "node", "out", "max LSB", "excess LSB", "RMS LSB", "max abs", "cosine",
           "SQNR dB", "beyond %", "differing", "op")
_TEXT_COLUMNS = (COLUMNS.index("node"), COLUMNS.index("op"))
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
Role = Qt.ItemDataRole
_DIGITS = {"max abs": 6, "cosine": 6, "SQNR dB": 1}


def _value(plan_row: int, d: OutputDiff, column: int) -> float | str | None:
    name, m = COLUMNS[column], d.metrics
    if name == "#":
        return plan_row
    if name == "node":
        return d.title + (" ✱" if d.exceeds else "")
    if name in ("out", "differing", "op"):
        return {"out": d.index, "differing": d.differing, "op": d.op}[name]
    if m is None:
        return None
    if name == "excess LSB":
        # within the tolerance the excess was not taken: it is at most the plain error
        if not m.by_excess:
            return None
        return m.excess_lsb if m.excess_lsb is not None else m.max_lsb
    return {"max LSB": m.max_lsb, "RMS LSB": m.rms_lsb, "max abs": m.max_abs,
            "cosine": m.cosine, "SQNR dB": m.sqnr_db,
            "beyond %": 100 * m.beyond_share}[name]


def _text(d: OutputDiff, column: int, value: float | str | None) -> str:
    name = COLUMNS[column]
    if name in ("#", "node", "out", "op"):
        return str(value)
    if name == "differing":
        return "-" if value is None else str(value)
    if name == "beyond %":
        return "-" if value is None else f"{value:.1f}"
    if name == "excess LSB":
        return excess_text(d.metrics)         # the CLI table's text: one rule
    digits = _DIGITS.get(name)
    return fmt_number(value, digits) if digits is not None else fmt_number(value)  # type: ignore[arg-type]


def _sort_key(value: float | str | None) -> float | str:
    if isinstance(value, str):
        return value
    return math.inf if value is None or math.isnan(value) else value


class CompareTableModel(QAbstractTableModel):
    """Rows of :class:`OutputDiff` in plan order, sortable by any column."""

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self.rows: list[OutputDiff] = []
        self._order: list[int] = []             # view row -> index in ``rows`` (plan order)
        self._where: dict[tuple[int, int], int] = {}
        self._first: dict[int, int] = {}        # node id -> its first view row
        self._sorted_by: tuple[int, Qt.SortOrder] = (0, Qt.SortOrder.AscendingOrder)

    # the model's data -----------------------------------------------------------------------
    def set_rows(self, rows: list[OutputDiff]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self._order = self._sorted_order(*self._sorted_by)
        self._index_rows()
        self.endResetModel()

    def diff(self, row: int) -> OutputDiff:
        """The output shown in view row ``row``."""
        return self.rows[self._order[row]]

    def row_of(self, node_id: int, index: int | None = None) -> int | None:
        """The view row of (node, output); with ``index`` None, the node's first row."""
        if index is None:
            return self._first.get(node_id)
        return self._where.get((node_id, index))

    # Qt's interface -------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Role.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Role.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Role.DisplayRole) -> object:
        if not index.isValid():
            return None
        plan_row = self._order[index.row()]
        d, column = self.rows[plan_row], index.column()
        if role == Role.DisplayRole:
            return _text(d, column, _value(plan_row, d, column))
        if role == Role.UserRole:                 # the sort value (the missing: None)
            return _value(plan_row, d, column)
        if role == Role.ForegroundRole:
            return theme_colors().error_text if d.exceeds else None
        if role == Role.ToolTipRole:
            return row_text(d) + (f"\n{d.note}" if d.note else "")
        if role == Role.TextAlignmentRole and column not in _TEXT_COLUMNS:
            return int(_RIGHT.value)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.layoutAboutToBeChanged.emit()
        kept = self.persistentIndexList()        # the selection follows its rows
        plan_rows = [self._order[i.row()] for i in kept]
        self._sorted_by = (column, order)
        self._order = self._sorted_order(column, order)
        self._index_rows()
        position = {plan_row: view_row for view_row, plan_row in enumerate(self._order)}
        self.changePersistentIndexList(
            kept, [self.index(position[p], i.column()) for p, i in zip(plan_rows, kept,
                                                                        strict=True)])
        self.layoutChanged.emit()

    # internals ------------------------------------------------------------------------------
    def _sorted_order(self, column: int, order: Qt.SortOrder) -> list[int]:
        keys = [_sort_key(_value(r, d, column)) for r, d in enumerate(self.rows)]
        # the missing (no metric, NaN) last whichever way: "worst first" starts with numbers;
        # Python's sort is stable, so equal values keep their plan order
        present = [r for r, k in enumerate(keys) if k != math.inf]
        missing = [r for r, k in enumerate(keys) if k == math.inf]
        present.sort(key=keys.__getitem__, reverse=order == Qt.SortOrder.DescendingOrder)
        return present + missing

    def _index_rows(self) -> None:
        self._where, self._first = {}, {}
        for view_row, plan_row in enumerate(self._order):
            d = self.rows[plan_row]
            self._where[(d.node_id, d.index)] = view_row
            self._first.setdefault(d.node_id, view_row)


__all__ = ["COLUMNS", "CompareTableModel"]
