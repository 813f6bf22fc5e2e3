"""TimingTable: wall time of every node that ran, slowest first (any column sorts), with the
total under it; activating a row selects it. On a connected device a fifth column holds the
device's own per-node counter (hexagon_nn's perfinfo: cycles, or the agent's simulated ns),
or the cycles of a profile imported from the device (``set_imported_cycles``)."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hexscope.widgets.event_turns import gated


class _Number(QTableWidgetItem):
    """Sorts by the number in its UserRole, not by its text."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return float(self.data(Qt.ItemDataRole.UserRole)) < float(
            other.data(Qt.ItemDataRole.UserRole))


def _counter_key(row: tuple) -> float:
    return -1 if len(row) < 5 or row[4] is None else row[4]


# The column's sort key, as _Number.__lt__ compares: numbers, or text.
_SORT_KEYS = {0: lambda row: row[0], 1: lambda row: row[1], 2: lambda row: row[2],
              3: lambda row: row[3], 4: _counter_key}
#: The longest the table fills rows at a time before it lets events run; a table of at
#: most FILL_AT_ONCE rows is filled at once.
FILL_SLICE_S = 0.015
FILL_AT_ONCE = 500
#: Rows past a new end taken out in one slice (their items deleted: ~1 ms per 200 rows).
DROP_ROWS = 2000


class TimingTable(QWidget):
    node_activated = Signal(int)
    HEADERS = ("Node", "Op", "Label", "ms", "device")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, len(self.HEADERS))
        self.table.setHorizontalHeaderLabels(self.HEADERS)
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        # Op names tell hexagon_nn's variants apart by their suffix: never cut them.
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setResizeContentsPrecision(200)     # not every row of a large graph
        self.table.verticalHeader().setVisible(False)
        self.table.sortItems(3, Qt.SortOrder.DescendingOrder)   # the slowest nodes first
        # The rows are sorted here, on keys, and filled in that order a slice at a time
        # between events: Qt's own sort called _Number.__lt__ ~50,000 times for 4,000
        # rows, and the fill of 4,000 rows stopped the window for 0.1-0.5 s at a run's end.
        self.table.setSortingEnabled(False)
        header.setSortIndicatorShown(True)
        header.setSectionsClickable(True)
        header.sortIndicatorChanged.connect(lambda *_: self._fill())
        self._shown: list[tuple] = []      # the rows with the imported cycles, if any
        self._to_fill: list[tuple[int, tuple]] = []
        self._row_count = 0                # the rows of the times shown (see _fill)
        self._filler = QTimer(self, singleShot=True, interval=0)
        self._filler.timeout.connect(gated(self._filler, self._fill_slice))
        self.total = QLabel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.table)
        layout.addWidget(self.total)
        self.table.cellDoubleClicked.connect(self._activate)
        self.table.cellClicked.connect(self._activate)
        self._rows: list[tuple] = []
        self._unit = ""
        self._imported: dict[int, int] = {}
        self._imported_source = ""

    def set_imported_cycles(self, cycles: dict[int, int], source: str = "") -> None:
        """Cycles the device reported (``hexscope import-profile``), shown in the device
        column beside the simulator's times wherever no connected device counted."""
        self._imported, self._imported_source = dict(cycles), source
        self.set_times(self._rows, self._unit)

    def set_times(self, rows: list[tuple], counter_unit: str = "") -> None:
        """``rows`` of (node id, op, label, seconds[, device counter or None]).
        ``counter_unit`` names the device counter ("cycles", "agent ns"); empty hides the
        column (the simulator has no device and no profile was imported)."""
        self._rows, self._unit = list(rows), counter_unit
        imported = bool(self._imported) and not counter_unit
        if imported:
            rows = [(*row[:4], self._imported.get(row[0])) for row in rows]
            counter_unit = "device cycles (imported)"
        self._shown = list(rows)
        self._fill()
        self.table.setColumnHidden(4, not counter_unit)
        self.table.horizontalHeaderItem(3).setToolTip(
            "Host wall time. On a device, the node that started a device run carries that "
            "run's upload, execute and transfer; the device column has the device's own "
            "count per node." if counter_unit else "Wall time of the node's kernel")
        self.table.horizontalHeaderItem(4).setText(counter_unit or "device")
        if imported:
            self.table.horizontalHeaderItem(4).setToolTip(
                f"Cycles from {self._imported_source or 'an imported profile'}, not this "
                "run's. A fused chain reports under its surviving node's id (the Relu's): "
                "its cycles are on the fused node's row; the nodes it absorbed have none.")
        total = sum(row[3] for row in rows)
        text = f"Total: {len(rows)} node(s), {total * 1e3:.3f} ms" if rows else ""
        counted = [row[4] for row in rows if len(row) > 4 and row[4] is not None]
        if counter_unit and counted:
            text += f" · device: {sum(counted):,} {counter_unit}"
        self.total.setText(text)

    def _fill(self) -> None:
        """Empty the table and fill it with the rows in the header's order (a large table
        a slice at a time, from the top)."""
        header = self.table.horizontalHeader()
        column, order = header.sortIndicatorSection(), header.sortIndicatorOrder()
        rows = sorted(self._shown, key=_SORT_KEYS.get(column, _SORT_KEYS[3]),
                      reverse=order == Qt.SortOrder.DescendingOrder)
        # The rows there are kept and their items given the new texts a slice at a time:
        # replacing the items of a filled table cost 1.7 s for 2,000 rows (each replaced
        # item is taken out of the model one by one), and emptying it first deleted every
        # item in one go (100,000 at 20,000 nodes: 86 ms of a step's gap).
        # Rows past the new end (a step after a run: 1 row of 20,000) are taken out a
        # chunk at a time between events, with the fill: at once, 100,000 items.
        self._row_count = len(rows)
        if max(len(rows), self.table.rowCount()) <= FILL_AT_ONCE:
            # a small table is filled at once: new items are quicker than new texts (an
            # item's text and key set apart are two changes the view hears of)
            self.table.setRowCount(0)
        if len(rows) >= self.table.rowCount():
            self.table.setRowCount(len(rows))
        # Fitted to the op names once filled: each item set while it fits resized the
        # column over 200 rows again (~0.8 ms an item at 5,000 rows).
        self._fitting(len(rows) <= FILL_AT_ONCE)
        self._to_fill = list(enumerate(rows))
        self._to_fill.reverse()                  # popped from the end: the top row first
        # the rows to take out wait for the next slices: dropped in the caller's turn they
        # were 9-12 ms of Open's (its clear_run_state empties a 3,000-row table)
        self._fill_slice(take_out=False)

    def _fill_slice(self, take_out: bool = True) -> None:
        end = time.perf_counter() + FILL_SLICE_S
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        extra = self.table.rowCount() - self._row_count
        if extra > 0 and take_out:
            drop = extra if self._row_count + extra <= FILL_AT_ONCE else min(extra, DROP_ROWS)
            self.table.model().removeRows(self.table.rowCount() - drop, drop)
        while self._to_fill:
            r, row = self._to_fill.pop()
            node_id, op, label, seconds = row[:4]
            counter = row[4] if len(row) > 4 else None
            cells = ((f"0x{node_id:x}", node_id), (op, None), (label, None),
                     (f"{seconds * 1e3:.3f}", seconds),
                     (f"{counter:,}" if counter is not None else "",
                      -1 if counter is None else counter))
            for c, (text, key) in enumerate(cells):
                item = self.table.item(r, c)
                if item is None:
                    item = _Number(text) if key is not None else QTableWidgetItem(text)
                    if c >= 3:
                        item.setTextAlignment(right)
                    self.table.setItem(r, c, item)
                else:
                    item.setText(text)
                if key is not None:
                    item.setData(Qt.ItemDataRole.UserRole, key)
            # (the table's size decides, not the rows left: the last 500 rows of a 5,000-row
            # table were filled at once, each setItem resizing the op column to its
            # contents: 400 ms of the GUI thread)
            if self._row_count > FILL_AT_ONCE and self._to_fill \
                    and time.perf_counter() > end:
                self._filler.start()
                return
        if self.table.rowCount() > self._row_count:
            self._filler.start()        # rows still to take out
            return
        self._fitting(True)

    def _fitting(self, fit: bool) -> None:
        """Let the op column fit its names (they tell hexagon_nn's variants apart by their
        suffix: never cut), or hold its width while a large table is filled."""
        mode = QHeaderView.ResizeMode.ResizeToContents if fit \
            else QHeaderView.ResizeMode.Interactive
        header = self.table.horizontalHeader()
        if header.sectionResizeMode(1) != mode:
            header.setSectionResizeMode(1, mode)

    @property
    def filling(self) -> bool:
        """True while rows are still being filled in between events."""
        return bool(self._to_fill) or self.table.rowCount() > self._row_count

    def node_ids(self) -> list[int]:
        """Node ids in the order shown (after sorting)."""
        return [int(self.table.item(r, 0).data(Qt.ItemDataRole.UserRole))
                for r in range(min(self.table.rowCount(), self._row_count))]

    def _activate(self, row: int, _column: int) -> None:
        self.node_activated.emit(int(self.table.item(row, 0).data(Qt.ItemDataRole.UserRole)))
