"""The Ranges table on a large graph's run (issue 32): a row's figures are formatted when
the view first shows it, not all of them at each run's end (0.3-0.8 s for 3,000 rows)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

import hexscope.widgets.range_panel as range_panel
from hexscope.engine import QuantRange
from hexscope.engine.analysis.ranges import range_stats
from hexscope.widgets.range_panel import RangePanel


def test_only_the_rows_in_sight_are_formatted(qtbot, monkeypatch):
    one = range_stats(np.arange(256, dtype=np.uint8), QuantRange(-1.0, 1.0), op="Relu")
    stats = [replace(one, node_id=k, order=k) for k in range(3000)]
    formatted = [0]
    real = range_panel._cells

    def counting(s):
        formatted[0] += 1
        return real(s)

    monkeypatch.setattr(range_panel, "_cells", counting)
    panel = RangePanel()
    qtbot.addWidget(panel)
    panel.resize(900, 400)
    panel.show()
    panel.set_stats(stats)
    QApplication.processEvents()
    formatted[0] = 0
    panel.set_stats(stats)                     # a run's end: the same rows again
    QApplication.processEvents()
    assert 0 < formatted[0] < 500              # the rows in sight (and the fitted widths')
    assert panel.model.rowCount() == 3000
    index = panel.model.index(2999, 1)
    assert panel.model.data(index) == f"0x{2999:x}"      # any row, when asked for


def test_sorting_a_large_table_reads_keys_not_text(qtbot, monkeypatch):
    one = range_stats(np.arange(256, dtype=np.uint8), QuantRange(-1.0, 1.0), op="Relu")
    stats = [replace(one, node_id=k, order=k, share_255=(k * 7919 % 3000) / 3000)
             for k in range(3000)]
    panel = RangePanel()
    qtbot.addWidget(panel)
    panel.resize(900, 400)
    panel.show()
    panel.set_stats(stats)
    formatted = [0]
    real = range_panel._cells

    def counting(s):
        formatted[0] += 1
        return real(s)

    monkeypatch.setattr(range_panel, "_cells", counting)
    column = range_panel.COLUMNS.index("at 255 %")
    panel._table.sortByColumn(column, Qt.SortOrder.DescendingOrder)    # the header's click
    QApplication.processEvents()
    expected = [s.node_id for s in sorted(stats, key=lambda s: -s.share_255)]
    assert panel.sorted_node_ids() == expected
    assert formatted[0] < 500
    panel.set_stats(stats)                     # the next run keeps the user's order
    assert panel.sorted_node_ids() == expected


def test_the_first_fit_of_the_columns_measures_few_rows_beyond_those_in_sight(qtbot,
                                                                              monkeypatch):
    """The first run's table fitted its columns to the rows in sight and 200 more: 47 ms
    of the GUI thread at a 10,000-node run's end (issue 32)."""
    one = range_stats(np.arange(256, dtype=np.uint8), QuantRange(-1.0, 1.0), op="Relu")
    stats = [replace(one, node_id=k, order=k) for k in range(3000)]
    formatted = [0]
    real = range_panel._cells
    monkeypatch.setattr(range_panel, "_cells", lambda s: (formatted.__setitem__(0, formatted[0]
                                                                                + 1), real(s))[1])
    panel = RangePanel()
    qtbot.addWidget(panel)
    panel.resize(900, 400)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_stats(stats)                    # the first: the columns are fitted
    in_sight = panel._table.height() // panel._table.verticalHeader().defaultSectionSize()
    assert formatted[0] <= in_sight + range_panel.FIT_ROWS + 2
    assert range_panel.FIT_ROWS <= 50


def test_the_panel_fits_a_1024_pixel_window_with_a_long_summary(qtbot):
    """The summary beside the buttons made the Ranges dock scroll sideways at 1024x700."""
    one = range_stats(np.arange(256, dtype=np.uint8), QuantRange(-1.0, 1.0), op="Relu")
    panel = RangePanel()
    qtbot.addWidget(panel)
    panel.set_stats([replace(one, node_id=k, order=k) for k in range(3000)])
    assert "3000 quantized outputs" in panel._summary.text()
    assert panel.minimumSizeHint().width() <= 1000
