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
from hexscope.engine.analysis.metrics import Metrics
from hexscope.engine.io.tflite.float_check import FloatPair
from hexscope.widgets.theme_colors import theme_colors

COLUMNS = ("#", "node", "out", "max LSB", "excess LSB", "RMS LSB", "max abs", "cosine",
           "SQNR dB", "beyond %", "differing", "op")
#: With TFLite and the float reference (issue 27): each side's error against the float
#: reference, after the error against TFLite ("max LSB").
FLOAT_COLUMNS = ("A vs float", "TFLite vs float")
_TEXT_NAMES = ("node", "op")
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
Role = Qt.ItemDataRole
_DIGITS = {"max abs": 6, "cosine": 6, "SQNR dB": 1}


def _float_value(pair: FloatPair | None, name: str) -> float | None:
    if pair is None:
        return None
    return pair.error("hexscope" if name == FLOAT_COLUMNS[0] else "tflite")


def _float_text(pair: FloatPair | None, name: str) -> str:
    side = "hexscope" if name == FLOAT_COLUMNS[0] else "tflite"
    m: Metrics | None = None if pair is None else getattr(pair, side)
    if pair is None or m is None:
        return "-"
    text = excess_text(m) if m.by_excess else fmt_number(m.max_lsb)
    return text + (" ✱" if pair.beyond(side) else "")


def _value(plan_row: int, d: OutputDiff, name: str,
           pair: FloatPair | None = None) -> float | str | None:
    m = d.metrics
    if name in FLOAT_COLUMNS:
        return _float_value(pair, name)
    if name == "#":
        return plan_row
    if name == "node":
        return d.row_name + (" ✱" if d.exceeds else "")
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


def _text(d: OutputDiff, name: str, value: float | str | None,
          pair: FloatPair | None = None) -> str:
    if name in FLOAT_COLUMNS:
        return _float_text(pair, name)
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


def _float_tip(pair: FloatPair | None) -> str:
    if pair is None:
        return ""
    if pair.hexscope is None:
        return f"\nno float value: {pair.why}"
    return (f"\nagainst the float reference: A {row_text_of(pair.hexscope)}; "
            f"TFLite {row_text_of(pair.tflite)}")


def row_text_of(m: Metrics | None) -> str:
    if m is None:
        return "-"
    return f"max {fmt_number(m.max_lsb)} LSB, excess {excess_text(m)}"


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
        self.columns: tuple[str, ...] = COLUMNS
        self._pairs: dict[tuple[int, int], FloatPair] = {}

    # the model's data -----------------------------------------------------------------------
    def set_rows(self, rows: list[OutputDiff],
                 against_float: dict[tuple[int, int], FloatPair] | None = None) -> None:
        """The rows; with ``against_float`` (TFLite and the float reference), each row's two
        errors against the float reference as two more columns after "max LSB"."""
        self.beginResetModel()
        self._pairs = dict(against_float or {})
        at = COLUMNS.index("max LSB") + 1
        self.columns = COLUMNS[:at] + FLOAT_COLUMNS + COLUMNS[at:] if against_float \
            else COLUMNS
        if self._sorted_by[0] >= len(self.columns):
            self._sorted_by = (0, Qt.SortOrder.AscendingOrder)
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
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Role.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Role.DisplayRole:
            return self.columns[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Role.DisplayRole) -> object:
        if not index.isValid():
            return None
        plan_row = self._order[index.row()]
        d, name = self.rows[plan_row], self.columns[index.column()]
        pair = self._pairs.get((d.node_id, d.index))
        if role == Role.DisplayRole:
            return _text(d, name, _value(plan_row, d, name, pair), pair)
        if role == Role.UserRole:                 # the sort value (the missing: None)
            return _value(plan_row, d, name, pair)
        if role == Role.ForegroundRole:
            return theme_colors().error_text if d.exceeds else None
        if role == Role.ToolTipRole:
            return row_text(d) + (f"\n{d.note}" if d.note else "") + _float_tip(pair)
        if role == Role.TextAlignmentRole and name not in _TEXT_NAMES:
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
        name = self.columns[column]
        keys = [_sort_key(_value(r, d, name, self._pairs.get((d.node_id, d.index))))
                for r, d in enumerate(self.rows)]
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


__all__ = ["COLUMNS", "FLOAT_COLUMNS", "CompareTableModel"]
