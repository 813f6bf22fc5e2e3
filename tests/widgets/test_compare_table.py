"""The Compare panel's table model: cells, sorting, and the selection through a sort."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView

from hexscope.engine.analysis.diff import OutputDiff
from hexscope.engine.analysis.metrics import error_metrics
from hexscope.widgets.compare_table import COLUMNS, CompareTableModel

MAX_LSB = COLUMNS.index("max LSB")
Role = Qt.ItemDataRole


def _diffs() -> list[OutputDiff]:
    """Plan order: node 1 (2 LSB off), node 2 (no metrics), node 3 (exact), node 4 (5 off)."""
    a = np.zeros(4, np.float32)
    rows = []
    for node_id, off in ((1, 2.0), (2, None), (3, 0.0), (4, 5.0)):
        d = OutputDiff(node_id, "Op", f"n{node_id}", 0, (1, 1, 1, 4))
        if off is not None:
            d.metrics = error_metrics(a, a + np.float32(off), 1.0, 1.0)
            d.exceeds = off > 1
        rows.append(d)
    return rows


def _column(model: CompareTableModel, column: int) -> list:
    return [model.index(r, column).data(Role.UserRole) for r in range(model.rowCount())]


def test_compare_table_shows_plan_order_and_sorts_with_the_missing_last():
    model = CompareTableModel()
    model.set_rows(_diffs())
    assert _column(model, 0) == [0, 1, 2, 3]
    assert model.index(1, MAX_LSB).data(Role.DisplayRole) == "-"
    assert model.index(0, 1).data(Role.DisplayRole) == "n1 ✱"       # beyond the tolerance
    model.sort(MAX_LSB, Qt.SortOrder.DescendingOrder)
    assert [d.node_id for d in map(model.diff, range(4))] == [4, 1, 3, 2]
    model.sort(MAX_LSB, Qt.SortOrder.AscendingOrder)
    assert [d.node_id for d in map(model.diff, range(4))] == [3, 1, 4, 2]
    assert model.row_of(4, 0) == 2 and model.row_of(2) == 3
    model.sort(0, Qt.SortOrder.AscendingOrder)
    assert [d.node_id for d in map(model.diff, range(4))] == [1, 2, 3, 4]


def test_compare_table_keeps_the_sort_and_the_selection(qtbot):
    view = QTableView()
    qtbot.addWidget(view)
    model = CompareTableModel(view)
    view.setModel(model)
    view.setSortingEnabled(True)
    view.sortByColumn(MAX_LSB, Qt.SortOrder.DescendingOrder)
    model.set_rows(_diffs())                          # a new comparison: sorted as chosen
    assert model.diff(0).node_id == 4
    view.selectRow(model.row_of(3, 0))
    view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    selected = view.selectionModel().selectedRows()
    assert [model.diff(i.row()).node_id for i in selected] == [3]   # it followed its row


def _comparison(marked: set[int]):
    from hexscope.engine.analysis.compare import Comparison

    a = np.zeros(4, np.float32)
    rows = []
    for k, node_id in enumerate([*range(0x10, 0x4C), 0x1037]):
        d = OutputDiff(node_id, "Op", f"0x{node_id:x}", 0, (1, 1, 1, 4))
        d.metrics = error_metrics(a, a + np.float32(k % 3), 1.0, 1.0)
        d.exceeds = node_id in marked
        rows.append(d)
    return Comparison("trace", "A", "B", 1.0, rows)


def test_a_marked_row_keeps_its_name_below_the_rows_in_view(qtbot):
    """The node column was sized from the rows in view (0x10, 0x11...): the first
    divergence further down, 0x1037 with its mark, read "0x... ✱". The mark must not cost
    the name, in the first comparison or a later one."""
    from hexscope.widgets.compare_panel import ComparePanel

    panel = ComparePanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 400)
    panel.show()
    qtbot.waitExposed(panel)
    node = COLUMNS.index("node")
    for marked in (set(), {0x1037}, {0x1037, 0x11}):
        panel.set_comparison(_comparison(marked))
        model = panel.model
        row = model.row_of(0x1037, 0)
        index = model.index(row, node)
        assert index.data(Role.DisplayRole) == "0x1037 Op" + (" ✱" if marked else "")
        assert panel.table.sizeHintForIndex(index).width() <= panel.table.columnWidth(node)
