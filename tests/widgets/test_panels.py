"""Palette, log, timing, outputs and inputs widgets."""

from __future__ import annotations

import numpy as np

from hexscope.engine import LogLine, Tensor
from hexscope.engine.inputs import InputSource
from hexscope.widgets.inputs_dialog import InputsDialog
from hexscope.widgets.log_panel import LogPanel
from hexscope.widgets.op_palette import OpPalette
from hexscope.widgets.outputs_panel import OutputsPanel, summary
from hexscope.widgets.timing_table import TimingTable


def test_palette_filters_by_name_and_groups_by_category(qtbot):
    p = OpPalette()
    qtbot.addWidget(p)
    everything = p.visible_ops()
    assert {"INPUT", "OUTPUT", "Nop", "Const"} <= set(everything)
    p.filter("outp")
    shown = p.visible_ops()
    assert "OUTPUT" in shown and "Const" not in shown
    assert all("outp" in (n + p.registry.get(n).summary).lower() for n in shown)
    p.filter("no-such-op")
    assert p.visible_ops() == []
    p.filter("")
    assert p.visible_ops() == everything


def test_log_panel_filters_by_level_and_node_and_saves(qtbot, tmp_path):
    log = LogPanel()
    qtbot.addWidget(log)
    for line in (LogLine(0, "bad", 0x10), LogLine(2, "progress", 0x10), LogLine(1, "hi", 0x20)):
        log.append(line)
    assert log.list.count() == 3
    assert log.errors == 1                            # the tab's marker, kept as lines come
    log.level.setCurrentIndex(1)                      # info and below
    assert [line.text for line in log.visible_lines()] == ["bad", "hi"]
    log.node_filter.setText("0x10")
    assert [line.text for line in log.visible_lines()] == ["bad"]
    assert log.list.count() == 1
    path = tmp_path / "log.txt"
    log.save(str(path))
    assert path.read_text() == "[error] 0x10: bad\n"
    log.append(LogLine(0, "worse", 0x20))
    assert log.errors == 2                            # filtered out of view, still counted
    log.clear()
    assert log.errors == 0 and log.lines == []


def test_the_log_shows_its_newest_line_after_a_burst(qtbot):
    log = LogPanel()
    qtbot.addWidget(log)
    log.resize(400, 120)
    log.show()
    for k in range(300):
        log.append(LogLine(1, f"line {k}", 0x10))
    last = log.list.item(log.list.count() - 1)
    qtbot.waitUntil(lambda: log.list.visualItemRect(last).intersects(
        log.list.viewport().rect()), timeout=2000)


def test_timing_table_sorts_numerically(qtbot):
    t = TimingTable()
    qtbot.addWidget(t)
    t.set_times([(1, "A", "", 0.010), (2, "B", "", 0.9), (3, "C", "", 0.05)])
    t.table.sortItems(3)
    assert t.node_ids() == [1, 3, 2]       # 10 ms < 50 ms < 900 ms (text order would differ)


def test_outputs_panel_shows_range_and_values(qtbot):
    p = OutputsPanel()
    qtbot.addWidget(p)
    x = Tensor.from_array(np.arange(12, dtype=np.float32).reshape(1, 2, 2, 3) - 4)
    p.show_result("Nop 0x1", [x])
    assert "min -4" in p.info.text() and "max 7" in p.info.text()
    assert p.table.rowCount() == 4 and p.table.columnCount() == 3
    assert p.cell_text(1, 2) == "1"                  # element (h0, w1, d2) = 5 - 4
    assert summary(Tensor.shape_only((1, 3, 3, 1))).endswith("(no data)")


def test_outputs_panel_table_is_capped_in_rows_and_columns(qtbot):
    """A 1x1x1x100000 output once built 100,000 table items (seconds of frozen GUI)."""
    p = OutputsPanel()
    qtbot.addWidget(p)
    p.show_result("Nop 0x2", [Tensor.from_array(np.arange(100000, dtype=np.int32)
                                                .reshape(1, 1, 1, 100000))])
    assert p.table.rowCount() == 1 and p.table.columnCount() == 256
    assert p.cell_text(0, 255) == "255"
    assert "the first 1 of 1 rows and 256 of 100000 columns" in p.info.text()


def test_inputs_dialog_round_trips_sources(qtbot):
    sources = [InputSource(kind="constant", value=2.5, dtype="float32"),
               InputSource(kind="random", seed=7)]
    d = InputsDialog(sources, [(1, 2, 2, 3), None])
    qtbot.addWidget(d)
    got = d.sources()
    assert got[0].kind == "constant" and got[0].value == 2.5 and got[0].shape is None
    assert got[1].seed == 7
    d.rows[1].shape.setText("1x4x4x1")
    d.rows[1].kind.setCurrentText("npy")
    d.rows[1].path.setText("x.npy")
    assert d.sources()[1] == InputSource(kind="npy", path="x.npy", seed=7, shape=(1, 4, 4, 1))
