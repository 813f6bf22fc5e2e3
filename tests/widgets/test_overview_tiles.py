"""Zoomed far out the canvas paints from cached tiles: what it shows must be what painting
the items shows, and an edit must show at once (never a stale tile)."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRect, QRectF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QGraphicsItem

from hexscope.widgets.graph_canvas import GraphScene, overview_tiles
from hexscope.widgets.graph_canvas.node_item import NodeItem
from hexscope.widgets.graph_canvas.overview_tiles import MAX_TILE_ZOOM
from hexscope.widgets.graph_canvas.view import GraphCanvas
from support.large_graph import residual_graph


@pytest.fixture()
def canvas(qtbot):
    scene = GraphScene(residual_graph(1500))
    view = GraphCanvas(scene)
    view.resize(900, 600)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    yield view
    scene.close()


def _pixels(view: GraphCanvas) -> np.ndarray:
    image = view.viewport().grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    data = np.frombuffer(image.constBits(), np.uint8)
    return data.reshape(image.height(), image.bytesPerLine())[:, :image.width() * 3] \
        .reshape(image.height(), image.width(), 3).astype(int)


def _settle(qtbot, view: GraphCanvas) -> None:
    view.viewport().repaint()
    qtbot.waitUntil(lambda: view.tiles.pending == 0, timeout=10000)
    QApplication.processEvents()


def _tiled_and_live(qtbot, view: GraphCanvas) -> tuple[np.ndarray, np.ndarray]:
    view.tiles.enabled = True
    _settle(qtbot, view)
    assert view.tiles.active()
    tiled = _pixels(view)
    view.tiles.enabled = False
    live = _pixels(view)
    view.tiles.enabled = True
    return tiled, live


@pytest.mark.parametrize("zoom", [0.03, 0.05, 0.1])
def test_overview_tiles_show_what_painting_the_items_shows(qtbot, canvas, zoom):
    canvas.zoom_to(zoom)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    tiled, live = _tiled_and_live(qtbot, canvas)
    background = np.array([0xec, 0xee, 0xf1])
    drawn = np.abs(live - background).sum(axis=2) > 30
    assert drawn.mean() > 0.03                     # the view does show part of the graph
    # Same picture up to smoothing: where the items paint, the tiles paint too.
    assert np.abs(tiled - live).mean() < 12
    assert (np.abs(tiled - background).sum(axis=2) > 30)[drawn].mean() > 0.8


def test_an_edit_shows_at_once_on_the_tiles(qtbot, canvas):
    canvas.zoom_to(0.1)
    scene = canvas.scene()
    target = [item for item in scene.items_by_id.values()
              if item.node.op == "QuantizedConv2d_8x8to32"][10]
    canvas.centerOn(target.sceneBoundingRect().center())
    _settle(qtbot, canvas)
    body = canvas.mapFromScene(target.mapToScene(
        QRectF(0, 0, target.width, target.height)).boundingRect()).boundingRect()

    def red_share() -> float:
        patch = _pixels(canvas)[body.top() + 1:body.bottom(), body.left() + 1:body.right()]
        red = (patch[..., 0] > 180) & (patch[..., 1] < 90) & (patch[..., 2] < 90)
        return float(red.mean())

    assert red_share() == 0
    rendered = canvas.tiles.rendered
    scene.set_look(target.node_id, status="failed")      # a run marks it failed: red
    QApplication.processEvents()
    assert canvas.tiles.active()
    assert canvas.tiles.rendered > rendered           # its tile was rendered again
    assert red_share() > 0.4           # (edges drawn above it and its ✕ badge cover some)


def test_tiles_stop_where_block_names_appear(qtbot, canvas):
    canvas.zoom_to(MAX_TILE_ZOOM * 1.2)
    assert not canvas.tiles.active()
    canvas.zoom_to(MAX_TILE_ZOOM * 0.9)
    assert canvas.tiles.active()


def test_a_new_zoom_level_is_drawn_a_row_at_a_time_then_refined_between_events(
        qtbot, canvas, monkeypatch):
    monkeypatch.setattr(overview_tiles, "PAINT_BUDGET_S", 0.0)    # one band per paint
    canvas.zoom_to(0.03)                 # no tiles yet: the first row's first band now
    canvas.viewport().repaint()
    first_row = canvas.tiles.rendered
    assert canvas.tiles.in_progress > 0 and canvas.tiles.pending > 0   # the rest later
    qtbot.waitUntil(lambda: canvas.tiles.pending == 0, timeout=10000)
    assert canvas.tiles.rendered > first_row
    rendered = canvas.tiles.rendered
    canvas.zoom_to(0.05)                 # a finer level: the coarser tiles stand in
    canvas.viewport().repaint()
    assert canvas.tiles.pending > 0 and canvas.tiles.rendered == rendered
    qtbot.waitUntil(lambda: canvas.tiles.pending == 0, timeout=10000)
    assert canvas.tiles.rendered > rendered


def test_nodes_cache_their_drawing_only_where_they_are_painted_live(qtbot, canvas):
    scene = canvas.scene()
    cached = QGraphicsItem.CacheMode.DeviceCoordinateCache
    canvas.zoom_to(0.5)
    canvas.viewport().repaint()
    # those in view in the paint (all 10,000 were 20-25 ms of a palette add's zoom in),
    # the others between events
    in_view = {i for i in scene.items(canvas.visible_scene_rect()) if isinstance(i, NodeItem)}
    assert in_view and {item.cacheMode() for item in in_view} == {cached}
    assert any(item.cacheMode() != cached for item in scene.items_by_id.values())
    qtbot.waitUntil(lambda: {item.cacheMode() for item in scene.items_by_id.values()}
                    == {cached}, timeout=5000)
    node = next(iter(scene.items_by_id.values())).node
    scene.graph.set_label(node.node_id, "renamed")       # an edit makes a new item
    assert scene.items_by_id[node.node_id].cacheMode() == cached
    canvas.zoom_to(0.1)
    canvas.viewport().repaint()
    qtbot.waitUntil(lambda: {item.cacheMode() for item in scene.items_by_id.values()} == {
        QGraphicsItem.CacheMode.NoCache}, timeout=5000)


def test_the_minimap_shows_each_node_in_its_colour_and_a_new_look(qtbot, canvas):
    canvas.zoom_to(0.5)                  # zoomed in: the minimap shows
    QApplication.processEvents()
    mini = canvas.minimap
    assert mini.isVisible()
    scene = canvas.scene()
    item = [i for i in scene.items_by_id.values() if i.node.op == "QuantizedRelu_8"][5]

    def colour_at_node() -> QColor:
        mini.invalidate()
        image = mini.grab().toImage()
        x, y, w, h = item.body_rect()
        at = mini.to_map(QPointF(x + w / 2, y + h / 2))
        return image.pixelColor(int(at.x()), int(at.y()))

    assert colour_at_node().name() == item.block_color().name()     # the relu's orange
    scene.set_look(item.node_id, status="failed")
    assert colour_at_node().name() == QColor("#d62828").name()


def test_the_minimap_reads_only_colours_after_looks_and_places_after_a_move(qtbot, canvas):
    """A run's end changes every node's look but moves none: the minimap read every item's
    geometry again (0.3-0.4 s at 10,000-20,000 nodes); now only their colours."""
    canvas.zoom_to(0.5)
    QApplication.processEvents()
    mini, scene = canvas.minimap, canvas.scene()
    mini.invalidate()
    mini.grab()
    item = [i for i in scene.items_by_id.values() if i.node.op == "QuantizedRelu_8"][5]
    read: list[int] = []
    item.x = lambda: read.append(1) or QGraphicsItem.x(item)    # where the minimap reads
    scene.set_look(item.node_id, status="failed")
    mini.invalidate()
    mini.grab()                                    # drawn: the items are read
    assert read == []                              # no geometry read: colours only
    row = [k for k, i in enumerate(mini._items) if i is item][0]
    assert int(mini._nodes[row, 4]) == item.block_color().rgb() == QColor("#d62828").rgb()
    item.setPos(item.pos() + QPointF(40, 0))
    mini.invalidate()
    mini.grab()
    assert read == [1]
    assert mini._nodes[row, 0] == item.pos().x()


def test_a_large_minimap_reads_the_places_between_events(qtbot, canvas, monkeypatch):
    """After Open, Import C or the const toggle at 20,000 nodes, the minimap's first
    drawing read every node's place in one paint (140-150 ms of the GUI thread)."""
    from hexscope.widgets.graph_canvas import minimap

    monkeypatch.setattr(minimap, "SLICE_ABOVE", 100)
    monkeypatch.setattr(minimap, "SLICE_S", 0.0)     # one chunk a slice
    canvas.zoom_to(0.5)
    QApplication.processEvents()
    mini, scene = canvas.minimap, canvas.scene()
    assert mini.isVisible()
    item = [i for i in scene.items_by_id.values() if i.node.op == "QuantizedRelu_8"][5]
    item.setPos(item.pos() + QPointF(40, 0))          # its place must be read again
    read: list[int] = []
    item.x = lambda: read.append(1) or QGraphicsItem.x(item)
    mini.invalidate()
    mini.grab()
    assert mini._reading is not None and read == []      # nothing read within the paint
    qtbot.waitUntil(lambda: mini._reading is None, timeout=5000)
    assert read == [1]
    image = mini.grab().toImage()
    x, y, w, h = item.body_rect()
    at = mini.to_map(QPointF(x + w / 2, y + h / 2))
    assert image.pixelColor(int(at.x()), int(at.y())).name() == item.block_color().name()


def test_a_selected_block_is_framed_in_the_overview(qtbot, canvas):
    canvas.zoom_to(0.1)
    scene = canvas.scene()
    item = [i for i in scene.items_by_id.values() if i.node.op == "QuantizedRelu_8"][7]
    canvas.centerOn(item.sceneBoundingRect().center())
    _settle(qtbot, canvas)
    frame = canvas.mapFromScene(QPointF(item.x() + item.width / 2, item.y()))

    def blue_near_top() -> bool:
        patch = _pixels(canvas)[frame.y() - 2:frame.y() + 3, frame.x() - 3:frame.x() + 4]
        return bool(((patch[..., 2] > 170) & (patch[..., 0] < 80)).any())

    assert not blue_near_top()
    scene.select_only(item.node_id)
    QApplication.processEvents()
    assert blue_near_top()


def test_a_look_set_again_unchanged_is_not_drawn_again(qtbot, canvas):
    # after each step every node's look is set again: only the changed ones redraw (and
    # make the overview's tiles be drawn again)
    canvas.zoom_to(0.05)
    _settle(qtbot, canvas)
    scene = canvas.scene()
    item = [i for i in scene.items_by_id.values() if i.node.op == "QuantizedRelu_8"][3]
    redrawn: list[int] = []
    for other in scene.items_by_id.values():
        other.set_look = (lambda nid: lambda: redrawn.append(nid))(other.node_id)
    scene.reset_looks(status="", error="", seconds=None)     # as they are
    assert redrawn == []
    scene.set_look(item.node_id, status="done", seconds=0.001)
    scene.set_look(item.node_id, status="done", seconds=0.001)
    assert redrawn == [item.node_id]


def test_a_change_under_every_tile_is_rendered_between_events(qtbot, canvas):
    """A run's end changes every node: the tiles are drawn as they were and rendered again
    a few at a time between events (issue 32), ending as the items paint."""
    from hexscope.widgets.graph_canvas.overview_tiles import SYNC_TILES

    canvas.zoom_to(0.05)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    _settle(qtbot, canvas)
    scene = canvas.scene()
    for node_id in scene.items_by_id:
        scene.set_look(node_id, status="done")
    QApplication.processEvents()                 # the scene reports its changes
    before = canvas.tiles.rendered
    stale = len(canvas.tiles._stale)
    canvas.viewport().repaint()
    assert canvas.tiles.rendered - before <= SYNC_TILES      # not all of them in the paint
    assert canvas.tiles.pending > SYNC_TILES and stale > SYNC_TILES
    tiled, live = _tiled_and_live(qtbot, canvas)
    assert canvas.tiles.rendered - before >= stale        # all rendered again, in the end
    assert not canvas.tiles._stale
    assert np.abs(tiled - live).mean() < 12               # as in the test above


def test_stale_neighbours_are_rendered_again_in_one_pass(qtbot, canvas):
    """After a run every tile in view is stale: rendered one at a time between events,
    they showed the old colours for 0.5 s at 10,000 nodes and 3 s at 20,000 after zooming
    out; neighbours in a row now share a pass (as many as fit in IDLE_RUN_S)."""
    canvas.zoom_to(0.05)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    _settle(qtbot, canvas)
    scene = canvas.scene()
    for node_id in scene.items_by_id:
        scene.set_look(node_id, status="done")
    QApplication.processEvents()
    canvas.viewport().repaint()
    stale = canvas.tiles.pending
    passes: list[QRectF] = []
    render = scene.render
    scene.render = lambda painter, target, source, mode: (passes.append(source),
                                                           render(painter, target, source, mode))
    tiled, live = _tiled_and_live(qtbot, canvas)
    # (how many passes depends on the machine's speed: bands as high as fit in a slice)
    tile = overview_tiles.TILE * 2.0 ** -math.ceil(math.log2(canvas.transform().m11()) - 1e-9)
    assert stale > 4 and max(source.width() for source in passes) > 2 * tile
    assert np.abs(tiled - live).mean() < 12


def test_a_paint_renders_few_slow_stale_tiles_and_leaves_the_rest_for_later(qtbot, canvas,
                                                                            monkeypatch):
    """During a run each paint finds a few tiles the last nodes changed: rendering them all
    in the paint held the GUI thread 55-95 ms at 10,000 nodes (issue 32). The first is
    shown at once (an edit's), the others only while SYNC_STALE_S lasts."""
    from PySide6.QtCore import QRect

    canvas.zoom_to(0.05)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    _settle(qtbot, canvas)
    tiles = canvas.tiles
    in_view = [key for key in tiles._tiles if key[0] == min(k[0] for k in tiles._tiles)]
    for key in in_view[:overview_tiles.SYNC_TILES]:
        tiles._stale[key] = QRect(10, 10, 20, 20)         # a node's pixels each
    rendered: list[object] = []

    def slow_render(keys: object, band: object) -> None:   # each longer than the budget
        rendered.append(keys)
        time.sleep(overview_tiles.SYNC_STALE_S * 1.2)

    monkeypatch.setattr(tiles, "_render_dirty", slow_render)
    image = QImage(10, 10, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    tiles.paint(painter, canvas.mapToScene(canvas.viewport().rect()).boundingRect())
    painter.end()
    assert len(rendered) == 1                        # one now, the rest between events
    assert tiles.pending >= overview_tiles.SYNC_TILES - 1


def test_a_step_renders_only_the_pixels_of_the_node_it_changed(qtbot, canvas):
    """After a step a whole tile (20-80 ms at 10,000 nodes) was rendered again for the one
    node whose look changed in it; now only that node's pixels (and a margin)."""
    canvas.zoom_to(0.05)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    _settle(qtbot, canvas)
    scene = canvas.scene()
    item = [i for i in scene.items_by_id.values() if i.node.op == "QuantizedRelu_8"][9]
    canvas.centerOn(item)
    _settle(qtbot, canvas)
    targets: list[QRectF] = []
    render = scene.render
    scene.render = lambda painter, target, source, mode: (targets.append(target),
                                                           render(painter, target, source, mode))
    scene.set_look(item.node_id, status="failed")
    QApplication.processEvents()
    canvas.viewport().repaint()
    assert targets                                  # shown at once
    box = canvas.mapFromScene(item.sceneBoundingRect()).boundingRect()
    # its pens' margin, the rendering's margin around it, and the rounding to pixels
    margin = 4 * math.ceil(overview_tiles.MARGIN_PX) + 4
    assert all(t.width() <= box.width() + margin and t.height() <= box.height() + margin
               for t in targets)
    del scene.render
    tiled, live = _tiled_and_live(qtbot, canvas)
    assert np.abs(tiled - live).mean() < 12


def test_a_change_under_every_tile_is_rendered_a_band_of_rows_per_pass(qtbot, canvas,
                                                                        monkeypatch):
    """A run's end changes every node: rendering whole stale tiles, four in a pass, held
    the GUI thread 50-80 ms a pass at 10,000 nodes. Now no pass renders a whole tile's
    rows (the first band of a run STALE_FIRST_ROWS, the next ones as fits), and the
    result is what painting the items shows."""
    monkeypatch.setattr(overview_tiles, "STALE_BAND_S", 0.0)      # bands as thin as allowed
    canvas.zoom_to(0.05)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    _settle(qtbot, canvas)
    scene = canvas.scene()
    for node_id in scene.items_by_id:
        scene.set_look(node_id, status="done")
    QApplication.processEvents()
    assert len(canvas.tiles._stale) > 4
    targets: list[QRectF] = []
    render = scene.render
    scene.render = lambda painter, target, source, mode: (targets.append(target),
                                                           render(painter, target, source, mode))
    canvas.viewport().repaint()
    qtbot.waitUntil(lambda: not canvas.tiles._stale, timeout=10000)
    margin = 2 * math.ceil(overview_tiles.MARGIN_PX)
    assert len(targets) > 8
    # bands, or a small change rendered within a paint (a tile's edge: few pixels)
    assert all(t.height() <= overview_tiles.STALE_FIRST_ROWS + margin
               or (t.width() - margin) * (t.height() - margin) <= overview_tiles.SYNC_DIRTY_PX
               for t in targets)
    del scene.render
    tiled, live = _tiled_and_live(qtbot, canvas)
    assert np.abs(tiled - live).mean() < 12


def test_rows_a_paint_left_are_rendered_though_the_next_paint_covers_a_strip(
        qtbot, canvas, monkeypatch):
    """A scroll repaints only a strip: the rows the paint before left blank were dropped
    from the tiles to render, and stayed blank (the const toggle's view, at 10,000 nodes)."""
    from PySide6.QtCore import QRect

    monkeypatch.setattr(overview_tiles, "PAINT_BUDGET_S", 0.0)    # one row per paint
    canvas.zoom_to(0.05)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    canvas.viewport().repaint()                  # the first row; the others left blank
    left = canvas.tiles.pending
    assert left > 0
    canvas.viewport().repaint(QRect(0, 0, 10, 10))
    assert canvas.tiles.pending >= left          # still to render, though not in the strip
    qtbot.waitUntil(lambda: canvas.tiles.pending == 0, timeout=10000)
    QApplication.processEvents()
    tiled = _pixels(canvas)
    canvas.tiles.enabled = False
    live = _pixels(canvas)
    background = np.array([0xec, 0xee, 0xf1])
    drawn = np.abs(live - background).sum(axis=2) > 30
    assert drawn.mean() > 0.03
    assert (np.abs(tiled - background).sum(axis=2) > 30)[drawn].mean() > 0.8


def test_the_minimap_chooses_to_show_without_a_pass_over_the_items_after_an_edit(qtbot,
                                                                                   canvas):
    """An edit replaces an item (the scene's geometry changes), and each later resize of
    the view (the run's progress bar appearing) made the minimap measure every item to
    choose whether to show: Qt's itemsBoundingRect, 30-50 ms at 10,000 nodes."""
    import numpy as np

    scene = canvas.scene()
    canvas.zoom_to(0.5)
    QApplication.processEvents()
    filt = next(n for n in scene.graph if n.is_const and n.const is not None
                and len(n.const.shape) == 4 and n.const.shape[-1] > 1)
    array = filt.const.array.copy()
    array.flat[0] ^= 1
    scene.graph.set_const(filt.node_id, np.asarray(array))
    passes: list[int] = []
    real = scene.itemsBoundingRect
    scene.itemsBoundingRect = lambda: passes.append(1) or real()
    canvas.minimap.refresh()
    assert passes == []
    assert canvas.minimap.isVisible()                  # zoomed in: the map shows
    bounds = canvas.minimap._shown_bounds()
    assert all(bounds.contains(QRectF(*item.body_rect()))   # every node's body, at least
               for item in scene.items_by_id.values())


def test_a_slow_tile_is_rendered_a_band_per_pass_as_one_pass_would(qtbot, canvas):
    """A tile of a fitted 20,000-node view covers ~1,000 nodes (50-100 ms to render):
    rendered whole between events, it was the longest gap of Open at 20,000 nodes."""
    canvas.zoom_to(0.05)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    _settle(qtbot, canvas)
    tiles, scene = canvas.tiles, canvas.scene()
    key = max(tiles._tiles, key=lambda k: _image_array(tiles._tiles[k]).std())
    whole = _image_array(tiles._tiles[key])
    del tiles._tiles[key]
    tiles._pending = [key]
    tiles._per_tile = 4 * overview_tiles.IDLE_RUN_S      # as the last passes found it
    heights: list[float] = []
    render = scene.render
    scene.render = lambda painter, target, source, mode: (heights.append(target.height()),
                                                           render(painter, target, source, mode))
    passes = 0
    while key not in tiles._tiles:
        tiles._render_pending()
        passes += 1
        assert passes <= overview_tiles.MAX_BANDS
    # several bands (a pass renders as many as fit in its slice), none a whole tile
    assert len(heights) >= 2 and max(heights) <= overview_tiles.TILE / 2
    banded = _image_array(tiles._tiles[key])
    assert np.abs(banded - whole).mean() < 1.0


def _image_array(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    data = np.frombuffer(image.constBits(), np.uint8)
    return data.reshape(image.height(), image.bytesPerLine())[:, :image.width() * 4] \
        .astype(int)


def test_the_first_paint_of_a_new_view_renders_one_band_of_its_first_row(qtbot, canvas,
                                                                         monkeypatch):
    """The first paint rendered its first row of tiles whole (at least one row, so that the
    view was not blank): 100-200 ms at 20,000 nodes. Now one band of it, the rest between
    events, shown as it comes; the bands make what one pass makes."""
    monkeypatch.setattr(overview_tiles, "PAINT_BUDGET_S", 0.0)    # one band per paint
    scene = canvas.scene()
    heights: list[float] = []
    render = scene.render
    scene.render = lambda painter, target, source, mode: (heights.append(target.height()),
                                                           render(painter, target, source, mode))
    canvas.zoom_to(0.05)
    canvas.centerOn(scene.itemsBoundingRect().center())
    canvas.viewport().repaint()
    assert len(heights) == 1 and heights[0] <= overview_tiles.TILE // overview_tiles.MAX_BANDS
    assert canvas.tiles.in_progress > 0 and canvas.tiles.rendered == 0
    qtbot.waitUntil(lambda: canvas.tiles.pending == 0 and canvas.tiles.in_progress == 0,
                    timeout=10000)
    assert len(heights) > 1
    del scene.render
    tiled, live = _tiled_and_live(qtbot, canvas)        # as in the first test
    background = np.array([0xec, 0xee, 0xf1])
    drawn = np.abs(live - background).sum(axis=2) > 30
    assert drawn.mean() > 0.03 and np.abs(tiled - live).mean() < 12
    assert (np.abs(tiled - background).sum(axis=2) > 30)[drawn].mean() > 0.8


def test_a_row_is_begun_an_eighth_high_whatever_the_last_rows_speed(qtbot, canvas,
                                                                    monkeypatch):
    """A fitted graph's top row of tiles is nearly empty (1 ms a band): from that speed the
    dense row under it was begun a whole tile high in the same paint, every item it
    reaches in one pass (60-90 ms of the first paint of a 10,000-node Open). Now each row
    begins 1/MAX_BANDS high, and a band is at most twice the one before it."""
    monkeypatch.setattr(overview_tiles, "PAINT_BUDGET_S", 0.0)    # one band per paint
    scene, tiles = canvas.scene(), canvas.tiles
    tiles._per_tile = 1e-3               # as the last passes found it (a sparse row)
    bands: list[tuple[float, float]] = []       # (source top, pixel rows) of each render
    render = scene.render

    def counted(painter, target, source, mode):
        if target.height() % overview_tiles.TILE:     # a band (not a few whole tiles
            bands.append((source.top(), target.height()))  # a later paint found missing)
        render(painter, target, source, mode)

    scene.render = counted
    canvas.zoom_to(0.05)
    canvas.centerOn(scene.itemsBoundingRect().center())
    canvas.viewport().repaint()
    assert bands == [(bands[0][0], overview_tiles.TILE // overview_tiles.MAX_BANDS)]
    qtbot.waitUntil(lambda: tiles.pending == 0 and tiles.in_progress == 0, timeout=10000)
    del scene.render
    eighth = overview_tiles.TILE // overview_tiles.MAX_BANDS
    unit = 2.0 ** -math.ceil(math.log2(canvas.transform().m11()) - 1e-9)  # scene per pixel
    begun = 1
    for (top, rows), (next_top, next_rows) in itertools.pairwise(bands):
        if math.isclose(next_top, top + rows * unit):     # the same row's next band
            assert next_rows <= 2 * rows
        else:                                             # a row begun
            assert next_rows == eighth
            begun += 1
    assert begun > 1 and len(bands) > begun


def test_a_change_reported_after_the_paint_is_still_rendered(qtbot, canvas):
    """Looks set a slice at a time between events: the view could paint an item's change
    before the scene reported it to the tiles, and the tile kept its old colours until
    some later paint (a Compare's tints at 10,000 nodes: for good, in the walk)."""
    canvas.zoom_to(0.05)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    _settle(qtbot, canvas)
    tiles, scene = canvas.tiles, canvas.scene()
    item = [i for i in scene.items_by_id.values() if i.node.op == "QuantizedRelu_8"][4]
    canvas.viewport().repaint()                  # the paint came first...
    tiles.invalidate([item.sceneBoundingRect()])  # ...the scene's report after it
    assert tiles._stale
    qtbot.waitUntil(lambda: not tiles._stale, timeout=5000)     # a paint saw it


def test_a_scene_that_outlives_its_view_changes_without_errors(qtbot):
    # the tiles listened to the scene after their view was deleted: each later change of
    # the scene raised "GraphCanvas already deleted" in the event loop
    import shiboken6

    scene = GraphScene(residual_graph(300))
    view = GraphCanvas(scene)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    view.zoom_to(0.05)
    _settle(qtbot, view)
    assert view.tiles.active()
    tiles = view.tiles
    shiboken6.delete(view)
    node_id = next(iter(scene.items_by_id))
    scene.set_look(node_id, status="failed")
    QApplication.processEvents()       # pytest-qt fails the test on an exception in a slot
    assert not tiles.active()
    scene.close()


def test_a_large_change_behind_a_small_one_is_rendered_between_events(qtbot, canvas):
    """A paint renders its tiles with few pixels changed at once and leaves them pending
    ahead of the tiles with many changed: the pass between events took those rendered ones
    off the list, and the stale tiles behind them with them, so a run's end could leave
    tiles in their old colours with nothing pending (the flaky band-per-pass test)."""
    from hexscope.widgets.graph_canvas.overview_tiles import SYNC_DIRTY_PX, TILE

    canvas.zoom_to(0.05)
    canvas.centerOn(canvas.scene().itemsBoundingRect().center())
    _settle(qtbot, canvas)
    tiles = canvas.tiles
    level = max(key[0] for key in tiles._tiles)
    small, large = sorted((k for k in tiles._tiles if k[0] == level),
                          key=lambda k: (k[2], k[1]))[:2]
    tiles._stale[small] = QRect(0, 0, 8, 8)
    tiles._stale[large] = QRect(0, 0, TILE, TILE)
    assert 64 <= SYNC_DIRTY_PX < TILE * TILE
    canvas.viewport().repaint()
    assert small not in tiles._stale and tiles._pending[:2] == [small, large]
    qtbot.waitUntil(lambda: tiles.pending == 0, timeout=5000)
    assert large not in tiles._stale
