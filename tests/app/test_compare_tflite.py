"""TFLite as B in the Compare panel (issue 27): a model opened in the app is compared with
TFLite's own CPU kernels, tensor by tensor, without naming the model again."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

pytest.importorskip("tflite")
pytest.importorskip("ai_edge_litert")

MODELS = Path(__file__).parents[1] / "data" / "tflite"


def _wait_result(qtbot, window, timeout: int = 30000) -> None:
    compare = window.compare
    qtbot.waitUntil(lambda: compare.running is None and not compare.panel.busy
                    and not compare._timer.isActive(), timeout=timeout)


def _compare_with_tflite(qtbot, window):
    with qtbot.waitSignal(window.controller.idle, timeout=30000):
        window.debug.actions["run"].trigger()
    panel = window.compare.panel
    panel.target.setCurrentIndex(panel.target.findData("tflite"))
    qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    _wait_result(qtbot, window)
    return panel


def test_an_opened_model_is_compared_with_tflite_tensor_by_tensor(qtbot, window,
                                                                  monkeypatch):
    def no_dialog(*args, **kwargs):
        raise AssertionError("the model opened is used: no dialog")

    monkeypatch.setattr(QFileDialog, "getOpenFileName", no_dialog)
    assert window.files.open_graph(str(MODELS / "pools.tflite"))
    panel = _compare_with_tflite(qtbot, window)
    comparison = panel.comparison
    assert comparison is not None, panel.summary.text()
    assert comparison.outputs, "every TFLite tensor a node computes is a row"
    # pools.tflite runs exactly as TFLite does (docs/tflite.md): nothing beyond 1 LSB
    assert comparison.first_divergence is None
    assert comparison.mode == "tflite" and "TFLite" in comparison.b_name
    assert all(d.metrics is not None and d.metrics.max_lsb is not None
               for d in comparison.outputs), "each row in steps of its tensor's scale"


def test_a_graph_not_from_a_model_asks_for_one_and_a_cancel_compares_nothing(
        qtbot, window, graph_file, monkeypatch):
    asked: list[str] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda *a, **k: (asked.append(a[1]) or ("", "")))
    assert window.files.open_graph(graph_file)
    panel = window.compare.panel
    panel.target.setCurrentIndex(panel.target.findData("tflite"))
    qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    assert asked == ["The TFLite model this graph came from"]
    assert panel.comparison is None


def test_long_tensor_names_leave_the_figures_in_view(qtbot, window):
    # a TFLite tensor's name ('StatefulPartitionedCall_1:0 (Quantized_CastUInt8ToInt8)')
    # made the node column as wide as the table: the max LSB column was scrolled away
    from hexscope.widgets.compare_table import COLUMNS

    window.resize(1280, 800)
    window.show()
    assert window.files.open_graph(str(MODELS / "conv_relu6.tflite"))
    panel = _compare_with_tflite(qtbot, window)
    assert panel.comparison is not None and panel.comparison.outputs
    table = panel.table
    node, figure = COLUMNS.index("node"), COLUMNS.index("max LSB")
    assert table.columnWidth(node) <= max(120, table.viewport().width() // 3)
    assert table.columnViewportPosition(figure) < table.viewport().width()


def test_the_comparison_is_of_the_runs_own_input_and_its_rows_show_a_and_b(qtbot, window):
    # the model's committed input set as the graph's input: TFLite ran on seeded random codes
    # instead, so the table was of another run than the canvas; and a TFLite row had no
    # values, so A, B and A − B stayed blank when it was selected
    import numpy as np

    from hexscope.engine.inputs import InputSource, set_input_sources
    from hexscope.engine.io.tflite.importer import import_tflite
    from hexscope.engine.io.tflite.reference import compare_with_tflite

    model = MODELS / "pad_slice_pack.tflite"
    x = np.load(MODELS / "pad_slice_pack.input.npy")
    assert window.files.open_graph(str(model))
    set_input_sources(window.graph, [InputSource("npy", str(model.with_suffix(".input.npy")))])
    panel = _compare_with_tflite(qtbot, window)
    shown = panel.comparison
    assert shown is not None, panel.summary.text()
    expected = compare_with_tflite(import_tflite(model), model, [x])
    assert [d.metrics.max_lsb for d in shown.outputs] == \
        [d.metrics.max_lsb for d in expected.outputs]
    assert [d.metrics.rms_lsb for d in shown.outputs] != \
        [d.metrics.rms_lsb for d in compare_with_tflite(import_tflite(model), model).outputs]
    panel.go_to_first_divergence()
    a, b = shown.first_divergence.values()
    assert a.shape == b.shape == shown.first_divergence.shape
    assert panel.view_a.tensor is not None and panel.view_b.tensor is not None


def test_tflite_and_the_float_reference_together_show_both_errors(qtbot, window):
    # issue 27: TFLite combined with the float reference: two more columns (each side
    # against float) and the lines that say which side parts first
    from hexscope.engine.inputs import InputSource, set_input_sources
    from hexscope.widgets.compare_table import FLOAT_COLUMNS

    model = MODELS / "conv_relu6.tflite"
    assert window.files.open_graph(str(model))
    set_input_sources(window.graph, [InputSource("npy", str(model.with_suffix(".input.npy")))])
    with qtbot.waitSignal(window.controller.idle, timeout=30000):
        window.debug.actions["run"].trigger()
    panel = window.compare.panel
    panel.target.setCurrentIndex(panel.target.findData("tflite_float"))
    qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    _wait_result(qtbot, window)
    c = panel.comparison
    assert c is not None and c.float_mode == "accumulated", panel.summary.text()
    model_ = panel.model
    headers = [model_.headerData(i, Qt.Orientation.Horizontal) for i in
               range(model_.columnCount())]
    at = headers.index("max LSB")
    assert tuple(headers[at + 1:at + 3]) == FLOAT_COLUMNS
    row = model_.row_of(0x16, 0)
    assert model_.data(model_.index(row, at + 1)) == "1.909 ✱"     # Hexscope's excess
    assert "Float reference (accumulated): sim leaves it first, at 0x16 (Requantize_8to8); " \
           "at the first divergence sim is 1.909 LSB (excess), TFLite ≤ 0.496 LSB from it" \
        in panel.summary.text()
    assert "sim parts first" in panel.summary.toolTip()
    # back to TFLite alone: the float columns go
    panel.target.setCurrentIndex(panel.target.findData("tflite"))
    qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    _wait_result(qtbot, window)
    assert model_.columnCount() == len(headers) - 2


def test_a_model_the_dsp_cannot_run_is_compared_up_to_that_node(qtbot, window):
    # the wake word's first DEPTHWISE_CONV_2D (5x1 filter; op_dwise_snode_8bit.c has kernels
    # for widths 3, 5, 7) stops the run: the panel shows the rows before it and says where
    # and why, as loudly as a divergence
    assert window.files.open_graph(str(MODELS / "wakeword_hey_jarvis.tflite"))
    with qtbot.waitSignal(window.controller.idle, timeout=30000):
        window.debug.actions["run"].trigger()
    panel = window.compare.panel
    panel.target.setCurrentIndex(panel.target.findData("tflite"))
    qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    _wait_result(qtbot, window)
    comparison = panel.comparison
    assert comparison is not None, panel.summary.text()
    assert len(comparison.outputs) == 6 and comparison.first_divergence is None
    text = panel.summary.text()
    assert "The run stopped at node 0x31 (DepthwiseSupernode_8x8p32to8_d32, TFLite " \
           "operator 21 DEPTHWISE_CONV_2D (v3)" in text, text
    # the width-1 d32 concat before it has no left padding (op_concat_d32.c:496), checked
    # before the filter's width (op_dwise_snode_8bit.c:716)
    assert "Need at least 1 left pad" in text and "26 after it not compared" in text


def test_opening_a_model_lists_the_operators_the_dsp_cannot_run_in_problems(qtbot, window):
    # before any run: the wake word's four Hx1 depthwise convs (device_limits.py), each named
    # with its filter; a model the DSP runs gets none
    assert window.files.open_graph(str(MODELS / "wakeword_hey_jarvis.tflite"))
    items = [window.problems.list.item(k).text() for k in range(window.problems.list.count())]
    said = [t for t in items if "the DSP cannot run it" in t]
    assert [t.split(":")[0] for t in said] == [
        f"✖ TFLite operator {i} DEPTHWISE_CONV_2D" for i in (21, 26, 31, 36)]
    assert "its 5x1 filter (height x width" in said[0] and "filter width 1" in said[0]
    assert window.problems_dock.windowTitle() == "Problems (4)"
    window.undo_stack.setClean()
    window.files.meta_dirty = False
    assert window.files.open_graph(str(MODELS / "depthwise.tflite"))
    items = [window.problems.list.item(k).text() for k in range(window.problems.list.count())]
    assert not [t for t in items if "the DSP cannot run it" in t]


def test_a_real_model_runs_end_to_end_and_parts_from_tflite_at_its_first_conv(qtbot, window):
    # BlazeFace (docs/tflite.md): all 77 operators delegated, the run reaches the outputs;
    # the first divergence is the second CONV_2D (its first one is within 1 LSB since the
    # d32 Supernodes keep the per-channel scales), and no tensor is further than
    # test_run.py's bound
    from hexscope.engine.inputs import InputSource, set_input_sources

    model = MODELS / "blazeface.tflite"
    assert window.files.open_graph(str(model))
    set_input_sources(window.graph, [InputSource("npy", str(model.with_suffix(".input.npy")))])
    panel = _compare_with_tflite(qtbot, window)
    comparison = panel.comparison
    assert comparison is not None, panel.summary.text()
    assert not comparison.stopped and len(comparison.outputs) == 79
    first = comparison.first_divergence
    assert first is not None and (first.node_id, first.op) == (0x29, "Supernode_8x8p32to8")
    assert first.metrics.max_lsb == pytest.approx(3.0, abs=1e-6)
    assert max(d.metrics.max_lsb for d in comparison.outputs) <= 114 + 1e-6
