"""The op docs in the palette and the Inspector, and their citations opened in the app."""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl

from hexscope.engine.ops.registry import REGISTRY
from hexscope.widgets.op_palette import doc_html


def test_the_palette_doc_pane_shows_no_raw_markup_and_links_to_the_section(qtbot, window):
    palette = window.palette
    item = palette.tree.findItems("QuantizedConv2d_8x8to32", Qt.MatchFlag.MatchRecursive)[0]
    palette.tree.setCurrentItem(item)
    text = palette.doc.toPlainText()
    assert "``" not in text and "hexagon_nn quantized ops §2" in text
    assert 'href="hexscope-doc:quantized-ops#2"' in doc_html(REGISTRY.get(
        "QuantizedConv2d_8x8to32"))
    palette.doc.anchorClicked.emit(QUrl("hexscope-doc:quantized-ops#1.7"))
    view = window.semantics
    assert view is not None and view.isVisible() and view.which == "quantized-ops"
    top = view.cursorForPosition(view.viewport().rect().topLeft()).block().text()
    assert top.startswith("1.7 ")


def test_the_inspector_shows_the_selected_nodes_op_doc(qtbot, window):
    from nop_graphs import A, nop_graph

    window.set_graph(nop_graph(), None)
    window.select_node(A)
    assert "Nop" in window.inspector.op_doc.toPlainText()
