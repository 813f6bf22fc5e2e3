"""What a user sees: room for the canvas, stable docks, title, empty-canvas hint, next node
kept in view."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSizeF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from support.titles import shown_title

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


def _do(qtbot, window, action: str) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=5000):
        window.debug.actions[action].trigger()


def test_the_canvas_gets_most_of_the_window(qtbot, shown):
    w = shown
    assert (w.width(), w.height()) == (1280, 800)
    qtbot.waitUntil(lambda: w.problems_dock.height() <= 800 * 0.2, timeout=3000)
    assert w.problems.isVisible()                      # the bottom tabs are still there
    assert w.canvas.height() >= 0.65 * w.height()
    assert w.canvas.width() >= 0.5 * w.width()


def test_docks_keep_their_width_when_a_long_tensor_is_shown(qtbot, shown):
    w = shown
    w.files.open_graph(str(EXAMPLES / "d32_pipeline.hexgraph"))
    qtbot.waitUntil(lambda: w.problems_dock.height() <= 800 * 0.2, timeout=3000)
    before = (w.inspector_dock.width(), w.canvas.width())
    _do(qtbot, w, "run")
    fill = next(n.node_id for n in w.graph if n.op == "FillPadding_8_d32")
    w.select_node(fill)
    qtbot.wait(50)          # let the layout settle, as after a click
    assert "pad=(4, 4, 4, 1, 0, 24)" in w.outputs_panel.info.text()   # the long description
    assert (w.inspector_dock.width(), w.canvas.width()) == before


def test_title_shows_file_name_and_modified_marker(window, graph_file, tmp_path):
    assert shown_title(window) == "untitled — Hexscope"
    window.files.open_graph(graph_file)
    assert shown_title(window) == "nops.hexgraph — Hexscope"
    window.edits.set_label(0x101, "renamed")
    assert shown_title(window) == "nops.hexgraph* — Hexscope" and window.isWindowModified()
    assert window.files.save_graph_as(str(tmp_path / "other.hexgraph"))
    assert shown_title(window) == "other.hexgraph — Hexscope"
    window.undo_stack.undo()                            # back before the save point
    assert shown_title(window) == "other.hexgraph* — Hexscope"


def _hint_pixels(canvas) -> int:
    """Pixels of the hint text's colour in the middle band of the canvas."""
    image = canvas.viewport().grab().toImage()
    hint = QColor("#7b8494")
    y0, y1 = image.height() // 2 - 30, image.height() // 2 + 30
    count = 0
    for y in range(y0, y1, 2):
        for x in range(0, image.width(), 2):
            c = image.pixelColor(x, y)
            count += abs(c.red() - hint.red()) + abs(c.green() - hint.green()) < 40 \
                and abs(c.blue() - hint.blue()) < 30
    return count


def test_an_empty_canvas_says_how_to_start(qtbot, shown, graph_file):
    w = shown
    assert "Open" in w.canvas.empty_hint()
    assert _hint_pixels(w.canvas) > 50                 # the text is drawn
    w.files.open_graph(graph_file)
    assert w.canvas.empty_hint() == ""
    w.files.new_graph()
    assert "Open" in w.canvas.empty_hint() and _hint_pixels(w.canvas) > 50


def test_stepping_keeps_the_next_node_in_view(qtbot, shown):
    w = shown
    w.files.open_graph(str(EXAMPLES / "classic_quantized.hexgraph"))
    QApplication.processEvents()                       # the first view is set after opening
    w.canvas.zoom_by(1.2 / w.canvas.zoom)              # zoomed in: the graph is wider than the view
    seen_outside = False
    for _ in range(len(w.graph.order)):
        _do(qtbot, w, "step")
        if w.next_node is None:
            break
        item = w.scene.items_by_id[w.next_node]
        body = QRectF(item.pos(), QSizeF(item.width, item.height))
        view = w.canvas.visible_scene_rect()
        assert view.contains(body), hex(w.next_node)
        seen_outside |= body.left() > w.scene.items_by_id[w.session.plan[0]].x() + view.width()
    assert w.next_node is None and seen_outside        # it had to scroll at least once


def test_log_tab_counts_its_lines(qtbot, window):
    window.files.open_graph(str(EXAMPLES / "float_lookup.hexgraph"))
    assert window.log_dock.windowTitle() == "Log"
    _do(qtbot, window, "run")
    n = len(window.log_panel.lines)
    assert n > 0 and any("0x" in line.text or line.node_id for line in window.log_panel.lines)
    assert window.log_dock.windowTitle() == f"Log ({n})"
    window.log_panel.clear_button.click()
    assert window.log_dock.windowTitle() == "Log"


def test_inspector_and_outputs_share_the_right_side(qtbot, shown):
    w = shown
    qtbot.waitUntil(lambda: w.problems_dock.height() <= 800 * 0.2, timeout=3000)
    side = w.inspector_dock.height() + w.outputs_dock.height()
    assert 0.3 * side <= w.inspector_dock.height() <= 0.55 * side


def _bodies_in_view(w) -> list[bool]:
    view = w.canvas.visible_scene_rect()
    return [view.contains(QRectF(item.pos(), QSizeF(item.width, item.height)))
            for item in w.scene.items_by_id.values()]


def test_a_graph_opens_fitted_to_the_view_small_or_large(qtbot, shown, graph_file):
    w = shown
    qtbot.waitUntil(lambda: w.problems_dock.height() <= 800 * 0.2, timeout=3000)
    w.files.open_graph(graph_file)
    QApplication.processEvents()
    assert w.canvas.zoom <= 1.0 and all(_bodies_in_view(w))
    w.files.open_graph(str(EXAMPLES / "classic_quantized.hexgraph"))
    QApplication.processEvents()
    assert all(_bodies_in_view(w))                       # fitted, however wide
    start = next(item for item in w.scene.items_by_id.values() if item.node.op == "INPUT")
    assert w.canvas.visible_scene_rect().contains(
        QRectF(start.pos(), QSizeF(start.width, start.height)))   # its start is shown


def test_a_data_view_brought_to_the_front_opens_tall_enough_to_see(qtbot, shown):
    w = shown
    w.files.open_graph(str(EXAMPLES / "d32_pipeline.hexgraph"))
    qtbot.waitUntil(lambda: w.problems_dock.height() <= 800 * 0.2, timeout=3000)
    tensor = w.views.docks["tensor"]
    tensor.raise_()
    qtbot.waitUntil(lambda: tensor.height() >= 0.4 * w.height(), timeout=3000)
    w.problems_dock.raise_()                   # back to the problems: the height stays
    assert w.problems_dock.height() >= 0.4 * w.height()


def test_palette_names_keep_their_suffix(qtbot, shown):
    """The suffix tells hexagon_nn's variants apart: a name too long for the palette loses
    its middle (as Qt draws it with the tree's elide mode), never its end."""
    w = shown
    qtbot.waitUntil(lambda: w.palette_dock.width() >= 250, timeout=3000)
    tree = w.palette.tree
    for name in ("QuantizeDownAndShrinkRange_32to8", "QuantizedConv2d_8x8to32"):
        item = tree.findItems(name, Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)[0]
        room = tree.viewport().width() - tree.visualItemRect(item).left() - 8
        shown_text = tree.fontMetrics().elidedText(name, tree.textElideMode(), room)
        assert shown_text.endswith(name[-6:]) and shown_text.startswith(name[:8])
    assert tree.fontMetrics().elidedText("QuantizedConv2d_8x8to32", tree.textElideMode(),
                                         room) == "QuantizedConv2d_8x8to32"


def test_the_layout_the_user_chose_is_there_at_the_next_start(qtbot, settings):
    from hexscope.app.main_window import MainWindow

    first = MainWindow(settings)
    first.show()
    qtbot.waitExposed(first)
    first.timing_dock.hide()
    first.resize(760, 560)          # within the offscreen screen (800 x 600)
    first.close()
    second = MainWindow(settings)
    try:
        second.show()
        qtbot.waitExposed(second)
        assert not second.timing_dock.isVisible() and second.problems_dock.isVisible()
        assert (second.width(), second.height()) == (760, 560)
    finally:
        second.shutdown()
        second.deleteLater()
