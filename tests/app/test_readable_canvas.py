"""The canvas reads at the zoom a graph opens at (issue 32): whole names on the blocks, run
states told apart from category colours, breakpoints that show, Ctrl+1 around the selection."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor

from hexscope.engine.ops.registry import REGISTRY
from hexscope.widgets.graph_canvas.node_item import (
    BADGE_PX,
    BLOCK_TEXT_MIN_LOD,
    BREAKPOINT_COLOR,
    CATEGORY_COLORS,
    LOD_SIMPLE,
    STATUS_COLORS,
    _header_metrics,
)

EXAMPLES = Path(__file__).parents[2] / "resources" / "examples"


def _opened(qtbot, w, name: str, size: tuple[int, int] = (1280, 800)):
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    assert w.files.open_graph(str(EXAMPLES / name))
    qtbot.wait(50)
    w.canvas.show_graph()           # the zoom a graph opens at
    return w


def _pixel(w, item, x: float, y: float) -> QColor:
    """The canvas's colour at (x, y) of the block, in screen pixels from its top left."""
    image = w.canvas.viewport().grab().toImage()
    top_left = w.canvas.mapFromScene(item.scenePos())
    return image.pixelColor(round(top_left.x() + x), round(top_left.y() + y))


def _distance(a: QColor, b: QColor) -> int:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue())


# (900, 640): a canvas about 430 px wide, as at 1024x700 with docks a user widened
@pytest.mark.parametrize("size", [(1280, 800), (1024, 700), (900, 640)])
@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.hexgraph")))
def test_blocks_show_whole_names_at_the_opening_zoom(qtbot, window, name, size):
    # the classic example's 14 columns in one line fitted a 430 px canvas at a zoom too
    # small for any name: small graphs now wrap into bands too
    w = _opened(qtbot, window, name, size)
    lod = w.canvas.zoom
    assert lod > BLOCK_TEXT_MIN_LOD
    if lod >= LOD_SIMPLE:
        # drawn in full: each header is as wide as its op's name
        assert all(item.width >= 2 * 8 + _header_metrics().horizontalAdvance(item.node.op)
                   for item in w.scene.items_by_id.values())
        return
    names = {item.node.op: item.block_label(lod)[0] for item in w.scene.items_by_id.values()}
    cut = {op: text for op, text in names.items() if "…" in text or not text}
    assert not cut, cut
    quantize = [i for i in w.scene.items_by_id.values() if i.node.label == "quantize input"]
    for item in quantize:                               # "q…t" before
        assert item.block_label(lod)[0] in ("quantize input", "Quantize", "Quant")


def _as_blocks(w) -> None:
    """Zoomed out to blocks (the example opens in full detail at 1280x800: a large graph's
    opening zoom)."""
    if w.canvas.zoom >= LOD_SIMPLE:
        w.canvas.zoom_to((BLOCK_TEXT_MIN_LOD + LOD_SIMPLE) / 2)


def test_ran_is_a_badge_not_a_green_fill_and_failed_next_breakpoint_show(qtbot, window):
    from hexscope.engine.ops.registry import REGISTRY, Category

    w = _opened(qtbot, window, "classic_quantized.hexgraph")
    _as_blocks(w)
    pool = next(i for i in w.scene.items_by_id.values()
                if REGISTRY.get(i.node.op).category is Category.POOLING)
    relu = next(i for i in w.scene.items_by_id.values() if i.node.op == "QuantizedRelu_8")
    lod = w.canvas.zoom
    wpx, hpx = pool.width * lod, pool.height * lod
    r = BADGE_PX / 2
    w.select_node(relu.node_id)
    w.canvas.setFocus()
    qtbot.keyClick(w.canvas, Qt.Key.Key_F9)                 # a breakpoint on the relu
    w.canvas.show_graph()
    _as_blocks(w)
    w.scene.clearSelection()
    qtbot.wait(20)
    # the breakpoint shows at the opening zoom: a red dot in the block's top left
    assert _pixel(w, relu, 0.3 * r, -0.3 * r).name() == BREAKPOINT_COLOR.name()
    with qtbot.waitSignal(w.controller.idle, timeout=20000):
        qtbot.keyClick(w.canvas, Qt.Key.Key_F5)            # runs up to the breakpoint
    w.scene.clearSelection()
    w.canvas.show_graph()
    _as_blocks(w)
    qtbot.wait(20)
    assert w.scene.looks[relu.node_id].is_next
    category = QColor(CATEGORY_COLORS[Category.POOLING]).name()
    with qtbot.waitSignal(w.controller.idle, timeout=20000):
        qtbot.keyClick(w.canvas, Qt.Key.Key_F5)
    w.scene.clearSelection()
    qtbot.wait(20)
    assert w.scene.looks[pool.node_id].status == "done"
    lod = w.canvas.zoom
    wpx, hpx = pool.width * lod, pool.height * lod
    # the block keeps pooling's colour (below its name) ...
    assert _pixel(w, pool, 3, hpx - 3).name() == category
    # ... and "ran" is a slate badge at its top right, not a green fill
    corner = _pixel(w, pool, wpx - 0.3 * r + 0.3 * r, -0.3 * r + 0.45 * r)   # beside the ✓
    assert _distance(corner, STATUS_COLORS["done"]) < 30     # (smoothed edges)
    assert STATUS_COLORS["done"].name() not in {QColor(c).name()
                                                for c in CATEGORY_COLORS.values()}


def test_ctrl_1_zooms_around_the_selected_node(qtbot, window):
    w = _opened(qtbot, window, "classic_quantized.hexgraph")
    last = next(n.node_id for n in w.graph if n.op == "QuantizedMaxPool_8")
    w.select_node(last)
    w.canvas.show_graph()                  # the selection sits off the view's centre
    w.canvas.setFocus()
    qtbot.keyClick(w.canvas, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert w.canvas.zoom == pytest.approx(1.0)
    item = w.scene.items_by_id[last]
    at = w.canvas.mapFromScene(item.sceneBoundingRect().center())
    middle = w.canvas.viewport().rect().center()
    assert abs(at.x() - middle.x()) < 4          # (a short graph cannot scroll up and down)
    shown = w.canvas.mapToScene(w.canvas.viewport().rect()).boundingRect()
    assert shown.contains(item.sceneBoundingRect())


@pytest.mark.parametrize("size", [(1280, 800), (1024, 700)])
def test_a_large_graph_opens_where_its_blocks_are_named_at_its_inputs(qtbot, window, tmp_path,
                                                                      size):
    """Fitted, a 3,000-node graph's blocks are a few pixels with no name (a 10,000-node one
    opened at zoom 0.024): it opens at OPEN_MIN_ZOOM at its start instead, its INPUT in
    view and every block there named whole; Fit (Ctrl+0) still shows it all."""
    from hexscope.widgets.graph_canvas.view import OPEN_MIN_ZOOM
    from support.large_graph import residual_graph

    path = tmp_path / "big.hexgraph"
    residual_graph(3000).save(path)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    assert window.files.open_graph(str(path))
    qtbot.wait(50)
    canvas = window.canvas
    canvas.show_graph()
    assert canvas.zoom == pytest.approx(OPEN_MIN_ZOOM)
    assert not canvas.tiles.active()                 # items paint live, with their names
    seen = canvas.visible_scene_rect()
    items = window.scene.items_by_id.values()
    start = next(i for i in items if i.node.op == "INPUT")
    assert seen.contains(QRectF(*start.body_rect()))
    shown = [i for i in items if seen.contains(QRectF(*i.body_rect()))]
    assert len(shown) >= 20
    names = [i.block_label(canvas.zoom)[0] for i in shown]
    assert all(name and "…" not in name for name in names), names
    canvas.zoom_to_fit()
    assert canvas.zoom < OPEN_MIN_ZOOM / 2
    pixel = 1 / canvas.zoom                          # within a pixel of the whole graph
    assert canvas.visible_scene_rect().adjusted(-pixel, -pixel, pixel, pixel).contains(
        window.scene.content_rect())


@pytest.mark.parametrize("zoom", [0.06, 0.1])
def test_failed_next_ran_and_breakpoint_show_on_the_overview_tiles(qtbot, window, tmp_path,
                                                                   zoom):
    """Zoomed out to the overview (tiles, no badges), a failed node is red, the next one
    orange, one that ran carries a dark strip and a breakpoint a red one: the states read
    apart from the category colours at any zoom (issue 32)."""
    from support.large_graph import residual_graph

    path = tmp_path / "big.hexgraph"
    residual_graph(600).save(path)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    assert window.files.open_graph(str(path))
    qtbot.wait(50)
    scene, canvas = window.scene, window.canvas
    convs = [i for i in scene.items_by_id.values() if i.node.op == "QuantizedConv2d_8x8to32"]
    failed, nxt, ran, stopped = convs[2:6]
    scene.set_look(failed.node_id, status="failed")
    scene.set_look(nxt.node_id, is_next=True)
    scene.set_look(ran.node_id, status="done")
    scene.set_look(stopped.node_id, breakpoint=True)
    canvas.zoom_by(zoom / canvas.zoom)
    canvas.centerOn(failed.sceneBoundingRect().center())
    canvas.viewport().repaint()
    qtbot.waitUntil(lambda: canvas.tiles.pending == 0 and not canvas.tiles.in_progress,
                    timeout=10000)
    assert canvas.tiles.active()
    image = canvas.viewport().grab().toImage()

    def at(item, fx: float, fy: float) -> QColor:
        x, y, width, height = item.body_rect()
        point = canvas.mapFromScene(x + fx * width, y + fy * height)
        return image.pixelColor(point)

    category = QColor(CATEGORY_COLORS[REGISTRY.get("QuantizedConv2d_8x8to32").category])

    def reads_as(color: QColor, meant: QColor) -> bool:
        # a block is 5-9 px here, smoothed into its neighbours: the nearer colour is meant
        return _distance(color, meant) < min(_distance(color, other) for other in (
            category, STATUS_COLORS["failed"], STATUS_COLORS["next"], STATUS_COLORS["done"],
            BREAKPOINT_COLOR) if other.name() != meant.name())

    assert reads_as(at(failed, 0.5, 0.4), STATUS_COLORS["failed"])
    assert reads_as(at(nxt, 0.5, 0.4), STATUS_COLORS["next"])
    if zoom < 0.08:
        return          # 3-4 px high: the strips blend into the background (fills do not)
    assert reads_as(at(ran, 0.5, 0.9), STATUS_COLORS["done"])
    assert reads_as(at(ran, 0.5, 0.3), category)              # its colour above the strip
    assert reads_as(at(stopped, 0.1, 0.5), BREAKPOINT_COLOR)
    assert reads_as(at(stopped, 0.8, 0.4), category)
