"""The app opens a .tflite model (File ▸ Open, drag and drop, recent files) as the graph the
Hexagon delegate builds, and Save As writes a .hexgraph (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox

from hexscope.app.file_actions import OPEN_FILTER

pytest.importorskip("tflite", reason="the 'tflite' extra is not installed")
DATA = Path(__file__).resolve().parents[1] / "data" / "tflite"


def test_open_filter_offers_tflite():
    assert "*.tflite" in OPEN_FILTER.split(";;")[0]


def test_open_tflite_recent_and_save_as_hexgraph(window, monkeypatch, tmp_path):
    model = DATA / "u8_relu_pools_concat.tflite"
    assert window.files.open_graph(str(model))
    assert {n.op for n in window.graph} >= {"INPUT", "QuantizedRelu_8", "OUTPUT"}
    assert window.windowTitle().startswith(f"{model.name} (imported TFLite)")
    assert str(model) in window.settings.recent_files()[0]
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *a: (str(tmp_path / "saved.hexgraph"), ""))
    assert window.files.save_graph()
    assert (tmp_path / "saved.hexgraph").exists() and model.exists()


def test_drop_a_tflite_file_on_the_window_opens_it(window, qtbot):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(DATA / "pools.tflite"))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert any(n.op == "QuantizedMaxPool_8" for n in window.graph)
    assert window.graph.meta["tflite"]["model"] == "pools.tflite"


def test_open_a_float_model_says_why(window, monkeypatch):
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    assert not window.files.open_graph(str(DATA / "bad_float.tflite"))
    assert "float model" in shown[0]


def test_inspector_shows_the_tflite_operator_a_node_comes_from(window):
    assert window.files.open_graph(str(DATA / "u8_relu_pools_concat.tflite"))
    pool = next(n for n in window.graph if n.label == "MaxPool2d_1")
    window.inspector.show_node(pool.node_id)
    text = window.inspector.title.text()
    assert "from TFLite operator 2 (MAX_POOL_2D), tensor" in text and "MaxPool2d_1" in text
    window.inspector.show_node(next(n.node_id for n in window.graph if n.op == "INPUT"))
    assert "TFLite operator" not in window.inspector.title.text()


def test_open_lists_refused_operators_in_the_log(window):
    assert window.files.open_graph(str(DATA / "resize_pad_mean.tflite"))
    texts = [line.text for line in window.log_panel.lines]
    assert any("operator 0 RESIZE_BILINEAR (v3) stays on the CPU: version 3" in t for t in texts)
