"""GraphScene: the graph's nodes and edges as items, kept in step with ``graph.edited``.

The scene never edits the graph. It reports what the user did (moved nodes, dragged a
connection, dropped an op) through signals; the app turns those into undoable commands.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QPointF, QRectF, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
)

from hexscope.engine.events import GraphEdited
from hexscope.engine.gc_pause import gc_paused, keep_as_old
from hexscope.engine.graph import Graph
from hexscope.engine.nodes import Node
from hexscope.engine.ops.registry import REGISTRY, OpRegistry
from hexscope.widgets.graph_canvas.crossings import NodeGrid
from hexscope.widgets.graph_canvas.edge_item import EdgeItem
from hexscope.widgets.graph_canvas.free_space import FreeSpace
from hexscope.widgets.graph_canvas.item_cache import CacheModes
from hexscope.widgets.graph_canvas.layout import (
    COLUMN_GAP,
    LEFT_TO_RIGHT,
    NODE_WIDTH,
    layered_layout,
)
from hexscope.widgets.graph_canvas.model import (
    fold_target,
    folded_consts,
    input_ports,
    output_ports,
)
from hexscope.widgets.graph_canvas.node_item import NodeItem, NodeLook
from hexscope.widgets.graph_canvas.scene_mouse import BAD_COLOR, OK_COLOR, SceneMouse
from hexscope.widgets.graph_canvas.scene_rect import SceneRect

Progress = Callable[[int, int], None]
HIGHLIGHT_COLOR = QColor("#1f78d1")
HIGHLIGHT_MAX_NODES = 50      # a rubber band over thousands of nodes highlights none
#: The ``done`` of a build step that only waits for the layout's thread.
WAITING = -1
#: The ``done`` of a build step that announces a long next step (one Qt call of 10-30 ms
#: at 10,000 nodes): a caller working in slices begins it in a slice of its own.
HEAVY = -2


def index_depth(items: int) -> int:
    """The depth of the scene's BSP tree for ``items`` items: Qt's own choice (log2 of the
    count) capped at 10, where a leaf still holds only a few dozen nodes of a 20,000-node
    graph; deeper, each long edge (a wrapped band's) went into thousands of leaves (the
    tree of a 10,000-node graph took 90-120 ms to make at depth 15, ~60 at 10)."""
    return max(5, min(10, math.ceil(math.log2(max(items, 2)))))


def _layout_thread() -> ThreadPoolExecutor:
    """One thread for the layouts of large graphs being built (see build_steps)."""
    if not _LAYOUT_THREAD:
        _LAYOUT_THREAD.append(ThreadPoolExecutor(1, thread_name_prefix="hexscope-layout"))
    return _LAYOUT_THREAD[0]


_LAYOUT_THREAD: list[ThreadPoolExecutor] = []


class GraphScene(SceneMouse, SceneRect, QGraphicsScene):
    """Items for the nodes of ``graph``; tiny single-use consts fold onto their consumer."""

    nodes_moved = Signal(object)                 # {node_id: (x, y)} after a drag
    connect_requested = Signal(int, int, int, int)   # src id, output, dst id, input port
    op_dropped = Signal(str, QPointF)            # op name, scene position
    selection_ids_changed = Signal(object)       # list of selected node ids
    connection_refused = Signal(str)             # why a dropped connection was not made

    def __init__(self, graph: Graph, registry: OpRegistry = REGISTRY,
                 parent: QObject | None = None, show_consts: bool = False,
                 progress: Progress | None = None, direction: str = LEFT_TO_RIGHT,
                 looks: dict[int, NodeLook] | None = None, build: bool = True) -> None:
        """``looks`` starts the nodes' looks (another scene's, when the const toggle
        builds the graph again); with ``build`` False the items are made later, by
        :meth:`build_steps` (between events) or :meth:`rebuild`."""
        super().__init__(parent)
        self.graph = graph
        self.registry = registry
        self.show_consts = show_consts
        self.direction = direction         # of layout_positions (View > Layout direction)
        self.read_only = False
        self.prepared_view = False       # hide what prepare removes ("Show prepared graph")
        self._highlighted: set[EdgeItem] = set()
        self.folded: dict[int, int] = {}
        self.items_by_id: dict[int, NodeItem] = {}
        self.looks: dict[int, NodeLook] = looks if looks is not None else {}
        self._press_positions: dict[int, QPointF] = {}
        self._drag: tuple[NodeItem, int] | None = None
        self._drag_line: QGraphicsPathItem | None = None
        self._drag_label: QGraphicsSimpleTextItem | None = None
        self.drag_problem: str | None = None
        self.item_cache = QGraphicsItem.CacheMode.NoCache   # see set_item_cache
        self._cache_modes = CacheModes(self)
        self.node_grid = NodeGrid()          # which edges pass over a node (crossings.py)
        self._building = False
        # Counts changes of where nodes are, which are shown and which exist (not of their
        # looks): the minimap reads every item's geometry again only when it moved on.
        self.geometry_version = 0
        self._content: tuple[int, QRectF] = (-1, QRectF())    # see content_rect
        # Counted as active from the start, so that Qt never sends an activation event to
        # every item: it does when a view shows the scene or stops showing it, and when the
        # window is activated or deactivated (as many calls into Python's item wrappers as
        # there are items, after sorting them all: ~20 ms of each Open and const toggle at
        # 10,000 nodes). The items do not use these events.
        QCoreApplication.sendEvent(self, QEvent(QEvent.Type.WindowActivate))
        self._disconnect = graph.edited.connect(self._on_edited)
        self.selectionChanged.connect(self._emit_selection)
        self._selected_before: list[int] = []
        self._built_edges: list[EdgeItem] = []
        if build:
            self.rebuild(progress)

    def close(self) -> None:
        """Stop following the graph (call before dropping the scene)."""
        self._disconnect()
        self._disconnect = lambda: None

    def dispose_steps(self, chunk: int = 200) -> Iterator[None]:
        """Take the items out a chunk at a time, yielding between chunks, breaking the
        references between nodes and edges so each is freed as it goes; then the empty
        scene can be deleted at once. (Deleting a scene of 10,000 nodes with its items took
        the GUI thread 0.5-1.5 s in one go.) The scene must be closed and off the view."""
        self.blockSignals(True)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.node_grid = NodeGrid()
        self._highlighted, self._built_edges = set(), []
        items = list(self.items_by_id.values())
        self.items_by_id = {}
        k = 0
        while items:
            item = items.pop()
            for edge in item.edges:
                if edge.scene() is self:  # type: ignore[attr-defined]
                    self.removeItem(edge)  # type: ignore[arg-type]
            item.edges = []
            self.removeItem(item)
            del item
            k += 1
            if k % chunk == 0:
                yield
        self.clear()

    def follow(self) -> None:
        """Follow the graph's edits again after :meth:`close`, taking its nodes as they are
        now (the app stores a new graph's layout while the scene does not follow it)."""
        self._disconnect()
        self._disconnect = self.graph.edited.connect(self._on_edited)
        for nid, item in self.items_by_id.items():
            item.node = self.graph.node(nid)

    # building ---------------------------------------------------------------------------------
    def rebuild(self, progress: Progress | None = None) -> None:
        """Recreate every item (after a load or the const toggle); ``progress(done, total)``
        is called every thousand nodes, so the app can show how far it is."""
        report = progress or (lambda done, total: None)
        for done, total in self.build_steps(chunk=1000, layout_apart=False):
            if done % 1000 == 0 or done == total:
                report(done, total)

    def build_steps(self, chunk: int = 100, layout_apart: bool = True
                    ) -> Iterator[tuple[int, int]]:
        """Recreate every item a chunk of ``chunk`` nodes (or edges) at a time, yielding
        ``(done, total)`` between chunks, so the app can build a large graph's scene
        between events (one pass over the nodes, one over their edges, one layout and one
        crossing check: linear). A graph without positions is laid out on another thread
        (``layout_apart``; the layout is pure Python, without Qt) while this yields. Edits
        must wait until it is exhausted."""
        # No item index while building: between two slices Qt would bring its BSP tree up
        # to date with the items added so far (calling Python's boundingRect for each), and
        # again after each slice: quadratic (a 10,000-node scene took 28 s). Indexed once
        # at the end, at the first query.
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self._set_rect(QRectF(0, 0, 1, 1))     # set from the items at the end
        with gc_paused():
            self._building = True
            index = QGraphicsScene.ItemIndexMethod.BspTreeIndex
            try:
                yield from self._build_items(chunk, layout_apart)
                yield HEAVY, 2 * len(self.graph)
                self.setItemIndexMethod(index)       # before the rect: it learns the rect
                self.setBspTreeDepth(index_depth(self._item_count()))
                yield from self._fit_rect_steps(chunk)
                yield HEAVY, 2 * len(self.graph)
                self.items(self.sceneRect().topLeft())   # the index, in a step of its own
                yield 2 * len(self.graph), 2 * len(self.graph)
            finally:
                self._building = False
                if self.itemIndexMethod() != index:
                    self.setItemIndexMethod(index)
                keep_as_old()
        yield from self._crossing_steps(chunk, self._built_edges)
        self._built_edges = []
        self._select(self._selected_before)

    def _item_count(self) -> int:
        """How many items the scene holds, for its tree's depth: from the build's own counts
        when that depth is reached anyway (``items()`` made a list of every item's Python
        wrapper: 32 ms at 20,000 nodes with consts shown)."""
        built = len(self.items_by_id) + len(self._built_edges)
        return built if index_depth(built) == index_depth(1 << 30) else len(self.items())

    def _build_items(self, chunk: int, layout_apart: bool) -> Iterator[tuple[int, int]]:
        self._selected_before = self.selected_ids()
        self.blockSignals(True)
        self._highlighted = set()            # clear() deletes them
        self.clear()
        self.items_by_id.clear()
        self.folded = {} if self.show_consts else folded_consts(self.graph)
        total = 2 * len(self.graph)          # the nodes' items, then their edges
        for k, node in enumerate(self.graph, 1):
            if node.node_id not in self.folded:
                self._add_item(node)
            if k % chunk == 0:
                yield k, total
        if self.items_by_id and all(item.node.position is None
                                    for item in self.items_by_id.values()):
            # A graph never laid out (a script's, an import): placed before the edges
            # exist, so each edge is routed once; the app stores item_positions().
            sizes = {}
            for k, (nid, item) in enumerate(self.items_by_id.items(), 1):
                sizes[nid] = (item.width, item.height)
                if k % chunk == 0:
                    yield len(self.graph), total
            if layout_apart:
                job = _layout_thread().submit(layered_layout, self.graph, list(sizes),
                                              sizes.__getitem__, direction=self.direction)
                while not job.done():
                    time.sleep(0.002)       # leave the GIL to the layout meanwhile
                    yield WAITING, total    # (the caller can let events run meanwhile)
                positions = job.result()
            else:
                positions = layered_layout(self.graph, list(sizes), sizes.__getitem__,
                                           direction=self.direction)
            for k, (nid, (x, y)) in enumerate(positions.items(), 1):
                self.items_by_id[nid].setPos(x, y)
                if k % chunk == 0:
                    yield len(self.graph), total
        else:
            # Consts saved while folded have no position: now that their consumers are in,
            # each goes left of its first one (it went to 0,0 when added before them), in
            # the nearest free place (all at the same spot, they piled up).
            unplaced = [i for i in self.items_by_id.values() if i.node.position is None]
            if unplaced:
                # the placed nodes' rectangles a chunk at a time too: all of them in one
                # step were 50-70 ms of the const toggle's longest gap at 10,000 nodes
                space = FreeSpace()
                for k, placed in enumerate(self.items_by_id.values(), 1):
                    if placed.node.position is not None:
                        space.add(placed.body_rect())
                    if k % chunk == 0:
                        yield len(self.graph), total
                for k, item in enumerate(unplaced, 1):
                    want = self._position_for(item.node)
                    item.setPos(*space.find(want.x(), want.y(), item.width, item.height))
                    if k % chunk == 0:
                        yield len(self.graph), total
        done = len(self.graph)
        yield done, total
        self._built_edges = []
        for k, item in enumerate(list(self.items_by_id.values()), 1):
            self._built_edges += self._add_incoming_edges(item, check=False)
            if k % chunk == 0:
                yield min(total, done + k), total
        yield total, total

    def check_crossings(self) -> None:
        """Find every edge that passes over another node, in one pass (numpy): after a
        load, a layout or hiding nodes."""
        for _ in self._crossing_steps(len(self.items_by_id) + 1):
            pass

    def _crossing_steps(self, chunk: int, edges: list[EdgeItem] | None = None
                        ) -> Iterator[tuple[int, int]]:
        """check_crossings, yielding every ``chunk`` nodes or edges (``edges``: all of the
        scene's, when the caller has them)."""
        items = list(self.items_by_id.values())
        total = 2 * len(self.graph)
        for _ in self.node_grid.rebuild_steps((i for i in items if i.isVisible()), chunk):
            yield total, total
        if edges is None:
            edges = [edge for item in items for edge in item.edges  # type: ignore[misc]
                     if edge.dst is item]  # type: ignore[attr-defined]
        for start in range(0, len(edges), chunk):
            part = edges[start:start + chunk]
            flags = self.node_grid.crossing([(e.src, e.dst, e.segments) for e in part])
            for edge, flag in zip(part, flags, strict=True):
                edge.set_crossing(bool(flag))
            yield total, total

    def node_moved(self, item: NodeItem) -> None:
        """Keep the crossing grid up to date as one node moves (a drag, an edit)."""
        self.geometry_version += 1
        if self._building or not item.isVisible():
            return
        self._grow_rect(item)
        if not self.node_grid.place(item):
            self.node_grid.rebuild(i for i in self.items_by_id.values() if i.isVisible())

    def _add_item(self, node: Node) -> NodeItem:
        spec = self.registry.get(node.op) if node.op in self.registry else None
        inputs, can_append = input_ports(self.graph, node, self.folded, self.registry)
        if node.is_const:
            inputs, can_append = [], False
        item = NodeItem(node, spec.category if spec else None, inputs,
                        output_ports(node, self.registry), can_append,
                        spec.summary if spec else "")
        item.look = self.looks.setdefault(node.node_id, NodeLook())
        item.set_look()
        item.setPos(self._position_for(node))
        item.setCacheMode(self.item_cache)
        if self.prepared_view:
            self._show_away(item)
        self.addItem(item)
        self.items_by_id[node.node_id] = item
        self.node_moved(item)
        return item

    def _position_for(self, node: Node) -> QPointF:
        if node.position is not None:
            return QPointF(*node.position)
        # A const with no position yet (shown after folding): left of its first consumer.
        for dst, port, _ in self.graph.consumers(node.node_id):
            if dst in self.items_by_id:
                target = self.items_by_id[dst].input_pos(port)
                return QPointF(target.x() - NODE_WIDTH - COLUMN_GAP / 2, target.y() - 30)
        return QPointF(0, 0)

    def _add_incoming_edges(self, item: NodeItem, check: bool = True) -> list[EdgeItem]:
        made = []
        for port, (src, out) in enumerate(item.node.inputs):
            producer = self.items_by_id.get(src)
            if producer is not None and out < len(producer.outputs):
                made.append(EdgeItem(producer, out, item, port))
                self._add_edge(made[-1], check)
        return made

    def _add_edge(self, edge: EdgeItem, check: bool = True) -> None:
        self.addItem(edge)
        if check:
            edge.update_path()

    def _remove_item(self, node_id: int) -> None:
        item = self.items_by_id.pop(node_id, None)
        if item is None:
            return
        self.geometry_version += 1
        for edge in list(item.edges):
            edge.detach()  # type: ignore[attr-defined]
            self.removeItem(edge)  # type: ignore[arg-type]
        self.node_grid.remove(item)
        self.removeItem(item)

    # following edits ------------------------------------------------------------------------
    def _on_edited(self, event: GraphEdited) -> None:
        self.geometry_version += 1
        if len(event.changed) > 200:
            # A layout of the whole graph only moves items: no need to build them again.
            if all(self._moved_only(nid) for nid in event.changed):
                self._move_all(event.changed)
                return
            self.rebuild()
            return
        old_folded = self.folded
        folded = {} if self.show_consts else self._refolded(event.changed)
        refold = {c for c in set(folded) ^ set(old_folded)}
        refold |= {folded.get(c) or old_folded.get(c) for c in refold} - {None}  # type: ignore[misc]
        self.folded = folded
        affected = set(refold)
        for nid in event.changed:
            if self._moved_only(nid):
                self.items_by_id[nid].node = self.graph.node(nid)
                self.items_by_id[nid].setPos(QPointF(*self.graph.node(nid).position))
                continue
            affected.add(nid)
            # Only the changed node's item is rebuilt, with all its edges. A producer's item
            # does not depend on its consumers, and a consumer's only on its own inputs,
            # except for the value of a const folded into it: rebuilding neighbours made one
            # edit next to a const shared by 1,000 nodes rebuild 1,000 edges (seconds).
            for was in (old_folded.get(nid), folded.get(nid)):
                if was is not None:
                    affected.add(was)
        if affected:
            self._refresh(affected)

    def _refolded(self, changed: frozenset[int]) -> dict[int, int]:
        """The folded consts after an edit, rechecking only the consts it could concern:
        the changed nodes and what they read, before and after (not the whole graph)."""
        candidates = set(changed)
        for nid in changed:
            if nid in self.graph:
                candidates.update(s for s, _ in self.graph.node(nid).inputs)
            item = self.items_by_id.get(nid)
            if item is not None:
                candidates.update(s for s, _ in item.node.inputs)
        folded = dict(self.folded)
        for nid in candidates:
            folded.pop(nid, None)
            if nid in self.graph:
                consumer = fold_target(self.graph, self.graph.node(nid))
                if consumer is not None:
                    folded[nid] = consumer
        return folded

    def _move_all(self, ids: frozenset[int]) -> None:
        """Move many items, then route each edge once (not once per moved end)."""
        edges: set[EdgeItem] = set()
        for nid in ids:
            item = self.items_by_id[nid]
            item.node = self.graph.node(nid)
            pos = QPointF(*item.node.position)  # type: ignore[misc]
            if item.pos() != pos:
                item.follow_edges = False
                item.setPos(pos)
                item.follow_edges = True
                self._grow_rect(item)
                edges.update(item.edges)  # type: ignore[arg-type]
        for edge in edges:
            edge.update_path(check=False)
        if edges:          # (a graph laid out by the scene itself is stored without moves)
            self.check_crossings()

    def _moved_only(self, nid: int) -> bool:
        item = self.items_by_id.get(nid)
        if item is None or nid not in self.graph:
            return False
        node, old = self.graph.node(nid), item.node
        if node.position is None:
            return False
        if old.const is node.const and (old.op, old.inputs, old.outputs, old.padding,
                                        old.label) == (node.op, node.inputs, node.outputs,
                                                       node.padding, node.label):
            return True     # the common case, without copying the node (10,000 on a layout)
        return old.with_(position=node.position) == node

    def _refresh(self, affected: set[int]) -> None:
        selected = self.selected_ids()
        self.blockSignals(True)
        for nid in affected:
            self._remove_item(nid)
        fresh = [self._add_item(self.graph.node(nid)) for nid in self.graph.order
                 if nid in affected and nid not in self.folded]
        for item in fresh:
            self._add_incoming_edges(item)
            for dst, port, out in self.graph.consumers(item.node_id):
                consumer = self.items_by_id.get(dst)
                if consumer is not None and dst not in affected and out < len(item.outputs):
                    self._add_edge(EdgeItem(item, out, consumer, port))
        self._select(selected)

    def set_item_cache(self, cached: bool, first: QRectF | None = None) -> None:
        """Cache each node's drawing as a pixmap in device coordinates (zoomed in: a
        repaint at the same zoom, a pan, a hover or one node's new look then blits the other
        nodes instead of painting their text again), or not (zoomed out, where the view paints
        from its own tiles and a cache per node would only slow their rendering). The
        nodes in ``first`` (the view's) at once, the others between events (item_cache.py)."""
        mode = (QGraphicsItem.CacheMode.DeviceCoordinateCache if cached
                else QGraphicsItem.CacheMode.NoCache)
        if mode != self.item_cache:
            self.item_cache = mode
            self._cache_modes.start(mode, first)
        else:
            self._cache_modes.in_view(first)

    # looks ----------------------------------------------------------------------------------------
    def set_look(self, node_id: int, **changes: object) -> None:
        look = self.looks.setdefault(node_id, NodeLook())
        changed = False
        for key, value in changes.items():
            if getattr(look, key) != value:
                setattr(look, key, value)
                changed = True
        item = self.items_by_id.get(node_id)
        # a look that did not change is not redrawn: after each step every node's look is
        # set again, and each redraw also made the overview's tiles be drawn again
        if item is not None and changed:
            item.set_look()

    def hide_prepared_away(self, hidden: bool) -> None:
        """Hide (or show again) the nodes prepare removes or fuses, with their edges."""
        self.prepared_view = hidden
        changed = False
        for nid, look in self.looks.items():
            item = self.items_by_id.get(nid)
            if item is not None and look.rewrite in ("fused", "removed"):
                changed |= self._show_away(item)
        if changed:
            self.check_crossings()

    def _show_away(self, item: NodeItem) -> bool:
        """Hide or show ``item`` as the prepared view wants; True if that changed it."""
        visible = not (self.prepared_view and item.look.rewrite in ("fused", "removed"))
        if item.isVisible() == visible:
            return False
        self.geometry_version += 1
        item.setVisible(visible)
        for edge in item.edges:
            edge.setVisible(visible and edge.src.isVisible()  # type: ignore[attr-defined]
                            and edge.dst.isVisible())  # type: ignore[attr-defined]
        return True

    def reset_looks(self, **values: object) -> None:
        """Set the same fields on every node (e.g. clear all run states)."""
        for nid in self.graph.order:
            self.set_look(nid, **values)

    # selection ----------------------------------------------------------------------------------
    def selected_ids(self) -> list[int]:
        return [i.node_id for i in self.selectedItems() if isinstance(i, NodeItem)]

    def selected_edges(self) -> list[EdgeItem]:
        return [i for i in self.selectedItems() if isinstance(i, EdgeItem)]

    def _select(self, ids: list[int]) -> None:
        """Reselect ``ids`` after items were recreated; signals only if the set changed."""
        self.blockSignals(True)
        for nid in ids:
            item = self.items_by_id.get(nid)
            if item is not None:
                item.setSelected(True)
        self.blockSignals(False)
        if self.selected_ids() != ids:
            self._emit_selection()
        else:
            self._highlight_edges(ids)       # the re-created items' edges

    def select_only(self, node_id: int) -> NodeItem | None:
        """Select one node (a folded const selects its consumer); returns its item."""
        nid = self.folded.get(node_id, node_id)
        self.clearSelection()
        item = self.items_by_id.get(nid)
        if item is not None:
            item.setSelected(True)
        return item

    def _emit_selection(self) -> None:
        ids = self.selected_ids()
        self._highlight_edges(ids)
        self.selection_ids_changed.emit(ids)

    def _highlight_edges(self, ids: list[int]) -> None:
        """All edges of the selected nodes: bold, coloured and drawn above the nodes with a
        halo, so an edge that passes behind another node is still read as its own."""
        wanted: set[EdgeItem] = set()
        for nid in ids[:HIGHLIGHT_MAX_NODES]:
            item = self.items_by_id.get(nid)
            if item is not None:
                wanted.update(item.edges)  # type: ignore[arg-type]
        for edge in self._highlighted - wanted:
            if edge.scene() is self:
                edge.set_highlight(None)
        for edge in wanted - self._highlighted:
            edge.set_highlight(HIGHLIGHT_COLOR)
        self._highlighted = wanted

    # layout ---------------------------------------------------------------------------------------
    def item_positions(self) -> dict[int, tuple[float, float]]:
        """Where the items are now."""
        return {nid: (item.pos().x(), item.pos().y()) for nid, item in self.items_by_id.items()}

    def layout_positions(self) -> dict[int, tuple[float, float]]:
        """Where the layered layout puts every visible node."""
        items = self.items_by_id
        return layered_layout(self.graph, items,
                              lambda nid: (items[nid].width, items[nid].height),
                              direction=self.direction)


__all__ = ["BAD_COLOR", "HEAVY", "OK_COLOR", "WAITING", "GraphScene"]
