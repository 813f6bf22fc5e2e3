"""The Timing table: slowest first, a total, full op names."""

from __future__ import annotations

from PySide6.QtCore import Qt

from hexscope.widgets.timing_table import TimingTable

ROWS = [(0x10, "QuantizeDownAndShrinkRange_32to8", "", 0.002),
        (0x11, "QuantizedConv2d_8x8to32", "conv1", 0.010),
        (0x12, "Nop", "", 0.0005)]


def test_rows_come_slowest_first_with_the_total_below(qtbot):
    table = TimingTable()
    qtbot.addWidget(table)
    table.set_times(ROWS)
    assert table.node_ids() == [0x11, 0x10, 0x12]
    assert table.total.text() == "Total: 3 node(s), 12.500 ms"
    table.set_times([])
    assert table.total.text() == "" and table.node_ids() == []


def test_a_sort_the_user_chose_is_kept_for_the_next_run(qtbot):
    table = TimingTable()
    qtbot.addWidget(table)
    table.table.sortItems(0)
    table.set_times(ROWS)
    assert table.node_ids() == [0x10, 0x11, 0x12]


def test_the_op_column_is_as_wide_as_the_longest_name(qtbot):
    table = TimingTable()
    qtbot.addWidget(table)
    table.resize(420, 300)
    table.show()
    table.set_times(ROWS)
    metrics = table.table.fontMetrics()
    need = metrics.horizontalAdvance("QuantizeDownAndShrinkRange_32to8")
    assert table.table.columnWidth(1) >= need


def test_device_counters_show_beside_wall_times_and_sort_as_numbers(qtbot):
    table = TimingTable()
    qtbot.addWidget(table)
    table.set_times(ROWS)
    assert table.table.isColumnHidden(4)                  # the simulator has no device
    rows = [(*ROWS[0], 9_000), (*ROWS[1], 120_000), (*ROWS[2], None)]
    table.set_times(rows, "cycles")
    assert not table.table.isColumnHidden(4)
    assert table.table.horizontalHeaderItem(4).text() == "cycles"
    shown = {table.table.item(r, 0).text(): table.table.item(r, 4).text()
             for r in range(3)}
    assert shown == {"0x10": "9,000", "0x11": "120,000", "0x12": ""}
    assert table.total.text().endswith("device: 129,000 cycles")
    table.table.sortItems(4)                              # by device counter, ascending
    assert table.node_ids() == [0x12, 0x10, 0x11]


def test_a_click_on_a_header_sorts_by_that_column(qtbot):
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    table = TimingTable()
    qtbot.addWidget(table)
    table.resize(500, 300)
    table.show()
    table.set_times(ROWS)
    header = table.table.horizontalHeader()
    at = QPoint(header.sectionViewportPosition(0) + 5, header.height() // 2)
    QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=at)
    first = table.node_ids()
    QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert sorted([first, table.node_ids()]) == [[0x10, 0x11, 0x12], [0x12, 0x11, 0x10]]


def test_a_large_table_is_filled_between_events_top_rows_first(qtbot, monkeypatch):
    """4,000 rows at a run's end stopped the window for 0.1-0.5 s: the rows are sorted on
    keys and filled a slice at a time, the events handled in between."""
    from hexscope.widgets import timing_table

    monkeypatch.setattr(timing_table, "FILL_SLICE_S", 0.0)   # one row a slice past the first
    table = TimingTable()
    qtbot.addWidget(table)
    rows = [(k, "Nop", "", (k * 7919 % 1000) / 1e6) for k in range(1200)]
    table.set_times(rows)
    assert table.filling and table.table.rowCount() == 1200
    assert table.table.item(0, 0).text() == f"0x{max(rows, key=lambda r: r[3])[0]:x}"
    assert table.table.item(1199, 0) is None               # not filled yet
    qtbot.waitUntil(lambda: not table.filling, timeout=5000)
    assert table.node_ids() == [r[0] for r in sorted(rows, key=lambda r: -r[3])]


def test_the_last_rows_of_a_large_table_are_filled_a_slice_at_a_time_too(qtbot, monkeypatch):
    """A table over FILL_AT_ONCE rows filled its last FILL_AT_ONCE rows in one go (each
    item set resized the op column: 400 ms of the GUI thread at the end of a 5,000-row
    fill, under Compare on a 10,000-node graph); the op column fits its names at the end."""
    from hexscope.widgets import timing_table

    monkeypatch.setattr(timing_table, "FILL_SLICE_S", 0.0)   # one row a slice
    table = TimingTable()
    qtbot.addWidget(table)
    rows = [(k, "Nop", "", k / 1e6) for k in range(timing_table.FILL_AT_ONCE + 20)]
    rows[-1] = (rows[-1][0], "QuantizeDownAndShrinkRange_32to8", "", 1.0)   # the top row
    table.set_times(rows)

    def filled() -> int:
        return sum(table.table.item(r, 0) is not None for r in range(len(rows)))

    assert filled() == 1
    while table.filling:
        before = filled()
        table._fill_slice()
        assert filled() == before + 1
    table.show()
    assert table.table.columnWidth(1) >= table.table.fontMetrics().horizontalAdvance(
        "QuantizeDownAndShrinkRange_32to8")


def test_a_new_run_gives_the_rows_new_texts_without_deleting_their_items(qtbot):
    """Each run emptied the table first: every item of the last run deleted in one go
    (100,000 at 20,000 nodes, 86 ms of a step's gap). The items stay and take the new
    texts and sort keys."""
    from hexscope.widgets import timing_table

    table = TimingTable()
    qtbot.addWidget(table)
    rows = [(k, "Nop", "", k / 1e6) for k in range(timing_table.FILL_AT_ONCE + 20)]
    table.set_times(rows)
    qtbot.waitUntil(lambda: not table.filling, timeout=5000)
    first = table.table.item(0, 0)
    table.set_times([(0x12345, "Nop", "", 0.020), *rows[1:]])
    qtbot.waitUntil(lambda: not table.filling, timeout=5000)
    assert table.table.item(0, 0) is first
    assert first.text() == "0x12345" and table.node_ids()[:2] == [0x12345, rows[-1][0]]
    assert table.table.item(0, 3).text() == "20.000"
    assert table.table.item(0, 3).data(Qt.ItemDataRole.UserRole) == 0.020


def test_rows_past_a_new_end_are_taken_out_a_chunk_at_a_time(qtbot, monkeypatch):
    """A step after a run of 20,000 nodes shows one row: setting the row count deleted the
    other rows' 100,000 items in one go. They go a chunk per slice between events (none in
    the caller's turn: Open's), the new row first."""
    from hexscope.widgets import timing_table

    monkeypatch.setattr(timing_table, "DROP_ROWS", 300)
    table = TimingTable()
    qtbot.addWidget(table)
    rows = [(k, "Nop", "", k / 1e6) for k in range(1200)]
    table.set_times(rows)
    qtbot.waitUntil(lambda: not table.filling, timeout=5000)
    table.set_times([(0x7, "Nop", "", 0.5)])
    assert table.table.item(0, 0).text() == "0x7" and table.node_ids() == [0x7]
    assert table.table.rowCount() == 1200 and table.filling
    table._fill_slice()
    assert table.table.rowCount() == 1200 - 300 and table.filling
    qtbot.waitUntil(lambda: not table.filling, timeout=5000)
    assert table.table.rowCount() == 1 and table.node_ids() == [0x7]
