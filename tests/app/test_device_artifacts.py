"""The device's artifacts in the app, as a user reaches them (issue 30): File ▸ Open device
dump… as a B of the Compare panel, Timing ▸ Import device profile… (the Timing column and
the cycles overlay with its legend), Timing ▸ Export trace…."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
from PySide6.QtWidgets import QFileDialog

from hexscope.engine import Session
from support.compare_graphs import RELU_ID, chain, chain_input
from support.device_dump import write_dump
from support.supernode_graphs import chain_graph

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "resources" / "schemas" / "trace_events.schema.json").read_text())
PERF = ("Total 2 nodes.\nTotal 900 cycles.\n"
        "node,0x10,in,INPUT,executions,1,cycles,100,11.111111 %,cum_cycles,100,11.111111 %\n"
        "node,0x24,c,Supernode_8x8p8to8,executions,1,cycles,800,88.888889 %,cum_cycles,900,"
        "100.000000 %\n")


def _menu_action(window, menu_text: str, action_text: str):
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == menu_text)
    return next(a for a in menu.actions() if a.text() == action_text)


def _wait_compare(qtbot, window) -> None:
    compare = window.compare
    qtbot.waitUntil(lambda: compare.running is None and not compare.panel.busy
                    and not compare._timer.isActive() and compare.panel.comparison
                    is not None, timeout=20000)


def _dump(tmp_path: Path) -> Path:
    session = Session(chain())
    session.execute([chain_input()])
    (tmp_path / "dump").mkdir()
    return write_dump(session, tmp_path / "dump", device_prefix="/data/local/tmp/foo")


def test_open_device_dump_compares_it_in_the_compare_panel(qtbot, window, tmp_path,
                                                           monkeypatch):
    graph = tmp_path / "chain.hexgraph"
    chain().save(graph)
    yaml = _dump(tmp_path)
    assert window.files.open_graph(str(graph))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(yaml), ""))
    _menu_action(window, "&File", "Open &device dump…").trigger()
    _wait_compare(qtbot, window)
    panel = window.compare.panel
    c = panel.comparison
    assert panel.target_key == "device" and "foo_graph.yaml" in c.b_name
    assert c.outputs and c.first_divergence is None
    # one flipped byte on the device: found at its node once compared again
    dat = yaml.parent / f"foo_{RELU_ID:x}_0.dat"
    data = bytearray(dat.read_bytes())
    data[5] ^= 0x10
    dat.write_bytes(bytes(data))
    panel.compare_button.click()
    qtbot.waitUntil(lambda: panel.comparison is not None
                    and panel.comparison.first_divergence is not None, timeout=20000)
    assert panel.comparison.first_divergence.node_id == RELU_ID


def test_a_partial_dump_says_what_is_missing_and_compares_the_rest(qtbot, window, tmp_path,
                                                                   monkeypatch):
    graph = tmp_path / "chain.hexgraph"
    chain().save(graph)
    yaml = _dump(tmp_path)
    (yaml.parent / "foo_107_0.dat").unlink()
    assert window.files.open_graph(str(graph))
    window.device.open_device_dump(str(yaml))
    _wait_compare(qtbot, window)
    panel = window.compare.panel
    assert "foo_107_0.dat (node 0x107 (QuantizedMaxPool_8), output 0): missing" in \
        panel.summary.text()
    assert panel.comparison.by_node()[RELU_ID][0].differing == 0


def test_imported_cycles_show_in_timing_and_as_a_heat_overlay(qtbot, window, tmp_path,
                                                              monkeypatch):
    graph = tmp_path / "conv.hexgraph"
    chain_graph().save(graph)
    perf = tmp_path / "perf.txt"
    perf.write_text(PERF)
    assert window.files.open_graph(str(graph))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(perf), ""))
    _menu_action(window, "&Timing", "&Import device profile…").trigger()
    assert (tmp_path / "conv.hexgraph.cycles.json").is_file()       # kept beside the graph
    with qtbot.waitSignal(window.controller.idle, timeout=30000):
        window.debug.actions["run"].trigger()
    qtbot.waitUntil(lambda: window.timing.table.rowCount() > 0)
    table = window.timing.table
    assert not table.isColumnHidden(4)
    assert table.horizontalHeaderItem(4).text() == "device cycles (imported)"
    assert "surviving node" in table.horizontalHeaderItem(4).toolTip()
    cells = {table.item(r, 0).text(): table.item(r, 4).text() for r in range(table.rowCount())}
    assert cells["0x24"] == "800" and cells["0x10"] == "100"
    # the overlay: on by itself after the import; the fused chain is said so
    assert _menu_action(window, "&Timing", "Colour canvas by device &cycles").isChecked()
    looks = window.scene.looks
    assert looks[0x24].overlay is not None and looks[0x10].overlay is not None
    assert looks[0x24].overlay != looks[0x10].overlay                 # 89% vs 11%
    assert "800 cycles (88.9% of the total)" in looks[0x24].overlay_note
    assert "reports for 0x20, 0x21, 0x22, 0x23" in looks[0x24].overlay_note
    assert "fused into 0x24" in looks[0x21].overlay_note
    assert "≥ 20% of device cycles" in window.run_label.text()
    assert "fused (counted on the surviving node)" in window.run_label.text()
    # reopened later, the graph finds its profile again
    _menu_action(window, "&Timing", "Colour canvas by device &cycles").trigger()
    assert window.scene.looks[0x24].overlay is None
    (tmp_path / "other.hexgraph").write_bytes(graph.read_bytes())
    assert window.files.open_graph(str(tmp_path / "other.hexgraph"))     # no profile there
    qtbot.waitUntil(lambda: window.device.profile is None)
    assert window.files.open_graph(str(graph))
    qtbot.waitUntil(lambda: window.device.profile is not None)
    assert window.device.profile.nodes[0x24].cycles == 800


def test_export_trace_writes_one_valid_slice_per_node_run(qtbot, window, tmp_path,
                                                          monkeypatch):
    graph = tmp_path / "conv.hexgraph"
    chain_graph().save(graph)
    (tmp_path / "conv.hexgraph.cycles.json").write_text("{}")       # a bad one: named
    assert window.files.open_graph(str(graph))
    qtbot.wait(50)
    assert window.device.profile is None
    assert any("conv.hexgraph.cycles.json: not a Hexscope cycles file" in line.text
               for line in window.log_panel.lines)
    with qtbot.waitSignal(window.controller.idle, timeout=30000):
        window.debug.actions["run"].trigger()
    out = tmp_path / "t.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    _menu_action(window, "&Timing", "&Export trace…").trigger()
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    session = window.session
    assert [int(s["args"]["node"], 16) for s in slices] == [
        i for i in session.plan if session.result(i) is not None]
    sn = next(s for s in slices if s["args"]["node"] == "0x24")
    assert sn["args"]["fused"][0].startswith("0x20") and "device_cycles" not in sn["args"]
    # no profile: the canvas can still be coloured by the simulator's time
    _menu_action(window, "&Timing", "Colour canvas by simulator &time").trigger()
    assert window.scene.looks[0x24].overlay is not None
    assert "ms (" in window.scene.looks[0x24].overlay_note
    assert "of simulator time" in window.run_label.text()
    assert np.isclose(sum(s["dur"] for s in slices),
                      sum(session.times.values()) * 1e6, rtol=1e-3)


def test_a_connected_devices_own_cycles_colour_the_canvas_without_a_profile(qtbot, window,
                                                                           tmp_path,
                                                                           monkeypatch):
    import hexscope.app.backend_actions as backend_actions

    graph = tmp_path / "conv.hexgraph"
    chain_graph().save(graph)
    assert window.files.open_graph(str(graph))
    with qtbot.waitSignal(window.controller.idle, timeout=30000):
        window.debug.actions["run"].trigger()
    by_cycles = _menu_action(window, "&Timing", "Colour canvas by device &cycles")
    assert not by_cycles.isEnabled()                   # the simulator counts no cycles
    # as a dsp:// backend reports them (hexagon_nn's perfinfo of the last run)
    monkeypatch.setattr(backend_actions, "device_counters",
                        lambda session: ({0x10: 50, 0x24: 950}, "cycles"))
    window.results_changed.emit()
    assert by_cycles.isEnabled()
    by_cycles.trigger()
    looks = window.scene.looks
    assert "950 cycles (95.0% of the total)" in looks[0x24].overlay_note
    assert "fused into 0x24" in looks[0x20].overlay_note
