"""The app opens hexagon_nn's graph-init C files (Open, Import) and exports them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox

from hexscope.engine.io.c_import import import_c
from support.titles import shown_title

C_DIR = Path(__file__).parents[1] / "data" / "c"


def _a_c_file() -> Path:
    return sorted(C_DIR.glob("*.c"))[0]


def test_open_accepts_a_c_file_and_save_asks_for_a_hexgraph(window, monkeypatch, tmp_path):
    source = _a_c_file()
    assert window.files.open_graph(str(source))
    assert window.graph.to_bytes() == _relaid(window, import_c(source))
    assert shown_title(window).startswith(f"{source.name} (imported C)")
    asked: list[str] = []

    def save_dialog(parent, title, default, filters):
        asked.append(default)
        return str(tmp_path / "saved.hexgraph"), ""
    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    assert window.files.save_graph()
    assert asked == [str(source.with_suffix(".hexgraph"))]      # never over the .c file
    assert (tmp_path / "saved.hexgraph").exists() and source.read_bytes().startswith(b"/")  \
        or source.exists()
    assert shown_title(window).startswith("saved.hexgraph")


def _relaid(window, graph):
    """The imported graph as the window lays it out on opening."""
    graph.move({n.node_id: window.graph.node(n.node_id).position for n in graph})
    return graph.to_bytes()


def test_a_broken_c_file_says_file_line_and_column(window, monkeypatch, tmp_path):
    bad = tmp_path / "broken.c"
    bad.write_text('#include "hexagon_nn.h"\nstatic int x[] = { 1, 2, ;\n')
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    assert not window.files.open_graph(str(bad))
    assert len(shown) == 1 and f"{bad}:2:" in shown[0]


def test_export_c_writes_a_file_that_imports_to_the_same_graph(window, tmp_path):
    source = _a_c_file()
    window.files.open_graph(str(source))
    out = tmp_path / "out.c"
    assert window.files.export_graph_c(str(out))
    again = import_c(out)
    assert [(n.node_id, n.op, n.inputs) for n in again] == [
        (n.node_id, n.op, n.inputs) for n in window.graph]
