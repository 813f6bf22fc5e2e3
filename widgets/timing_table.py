"""TimingTable: wall time of every node that ran, sortable; activating a row selects it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget


class _Number(QTableWidgetItem):
    """Sorts by the number in its UserRole, not by its text."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return float(self.data(Qt.ItemDataRole.UserRole)) < float(
            other.data(Qt.ItemDataRole.UserRole))


class TimingTable(QWidget):
    node_activated = Signal(int)
    HEADERS = ("Node", "Op", "Label", "ms")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, len(self.HEADERS))
        self.table.setHorizontalHeaderLabels(self.HEADERS)
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.table)
        self.table.cellDoubleClicked.connect(self._activate)
        self.table.cellClicked.connect(self._activate)

    def set_times(self, rows: list[tuple[int, str, str, float]]) -> None:
        """``rows`` of (node id, op, label, seconds)."""
        sorting = self.table.isSortingEnabled()
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(rows))
        for r, (node_id, op, label, seconds) in enumerate(rows):
            ident = _Number(f"0x{node_id:x}")
            ident.setData(Qt.ItemDataRole.UserRole, node_id)
            ms = _Number(f"{seconds * 1e3:.3f}")
            ms.setData(Qt.ItemDataRole.UserRole, seconds)
            ms.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            for c, item in enumerate((ident, QTableWidgetItem(op), QTableWidgetItem(label), ms)):
                self.table.setItem(r, c, item)
        self.table.setSortingEnabled(sorting)

    def node_ids(self) -> list[int]:
        """Node ids in the order shown (after sorting)."""
        return [int(self.table.item(r, 0).data(Qt.ItemDataRole.UserRole))
                for r in range(self.table.rowCount())]

    def _activate(self, row: int, _column: int) -> None:
        self.node_activated.emit(int(self.table.item(row, 0).data(Qt.ItemDataRole.UserRole)))
