"""Two graphs side by side (issue 31): two canvases kept in step (selection, zoom, scroll),
the removed and changed nodes marked in A, the added and changed in B, and the list of the
differences, which selects in both.

The canvases are the editor's (level of detail and minimap included), read only. Scroll
is kept in step through the nodes, not the coordinates: the view that follows centres on
the node matched to the one nearest the centre of the view that moved, at the same offset,
so two layouts that differ stay aligned where the user looks.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterator

import shiboken6
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QSizePolicy,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine.graph import Graph
from hexscope.engine.structural_diff import (
    ADDED,
    CHANGED,
    KIND_COLOURS,
    REMOVED,
    NodeDiff,
    StructuralDiff,
)
from hexscope.widgets.event_turns import gated
from hexscope.widgets.graph_canvas import GraphCanvas, GraphScene, NodeItem, NodeLook

ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
BUILD_CHUNK = 400         # nodes per step while the scenes build between events
MAX_LISTED = 20000        # a list longer than this names the rest in its last row


class SyncedCanvas(GraphCanvas):
    """A canvas that says when what it shows moved (scroll, zoom, fit)."""

    view_moved = Signal()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 - Qt override
        super().scrollContentsBy(dx, dy)
        self.view_moved.emit()

    def zoom_by(self, factor: float) -> None:
        super().zoom_by(factor)
        self.view_moved.emit()

    def zoom_to_fit(self) -> None:
        super().zoom_to_fit()
        self.view_moved.emit()


class SideBySideView(QWidget):
    """Graph A and graph B, and what differs between them (``diff``: B against A)."""

    ready = Signal()                     # both scenes are built and marked
    selected = Signal(object, object)    # (A node id or None, B node id or None)

    def __init__(self, a: Graph, b: Graph, diff: StructuralDiff,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.a, self.b, self.diff = a, b, diff
        self.b_to_a = {j: i for i, j in diff.pairs.items()}
        self._syncing = False
        self.is_ready = False
        self.scene_a = self._scene(a, self._looks(diff.by_a, REMOVED))
        self.scene_b = self._scene(b, self._looks(diff.by_b, ADDED))
        self._build_ui()
        self._connect()
        self._steps = self._build_both()
        self._timer = QTimer(self, interval=0)
        self._timer.timeout.connect(gated(self._timer, self._step))
        self._timer.start()

    # building -------------------------------------------------------------------------------
    def _scene(self, graph: Graph, looks: dict[int, NodeLook]) -> GraphScene:
        scene = GraphScene(graph, parent=self, looks=looks, build=False)
        scene.read_only = True
        return scene

    @staticmethod
    def _looks(entries: dict[int, NodeDiff], only_here: str) -> dict[int, NodeLook]:
        looks = {}
        for node_id, e in entries.items():
            what = "; ".join(c.text() for c in e.changes) or (
                "only in this graph" if e.kind == only_here else "")
            looks[node_id] = NodeLook(overlay=QColor(KIND_COLOURS[e.kind]),
                                      overlay_note=f"{e.kind}: {what}")
        return looks

    def _build_ui(self) -> None:
        self.summary = QLabel(f"Building the two graphs… {self.diff.summary()}")
        self.summary.setWordWrap(True)
        self.canvas_a = SyncedCanvas(self.scene_a)
        self.canvas_b = SyncedCanvas(self.scene_b)
        self.title_a = _title("A", self.diff.a_name)
        self.title_b = _title("B", self.diff.b_name)
        panes = QSplitter(Qt.Orientation.Horizontal)
        for title, canvas in ((self.title_a, self.canvas_a), (self.title_b, self.canvas_b)):
            pane = QWidget()
            box = QVBoxLayout(pane)
            box.setContentsMargins(0, 0, 0, 0)
            box.addWidget(title)
            box.addWidget(canvas)
            panes.addWidget(pane)
            panes.setStretchFactor(panes.count() - 1, 1)     # two equal panes
        self.differences = QTreeWidget()
        self.differences.setHeaderLabels(["kind", "A", "B", "op", "what changed"])
        self.differences.setRootIsDecorated(False)
        self.differences.setUniformRowHeights(True)
        self.differences.header().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self._fill_differences()
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(panes)
        split.addWidget(self.differences)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setSizes([560, 140])
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(split)

    def _fill_differences(self) -> None:
        rows = []
        for e in self.diff.entries[:MAX_LISTED]:
            row = QTreeWidgetItem([e.kind, _hex(e.a_id), _hex(e.b_id), e.op,
                                   "; ".join(c.text() for c in e.changes)])
            row.setData(0, ENTRY_ROLE, e)
            row.setForeground(0, QColor(KIND_COLOURS[e.kind]).darker(170))
            rows.append(row)
        if len(self.diff.entries) > MAX_LISTED:
            rows.append(QTreeWidgetItem(
                ["…", "", "", "", f"{len(self.diff.entries) - MAX_LISTED} more: hexscope "
                                  "diff --json lists all"]))
        self.differences.addTopLevelItems(rows)
        for col in range(4):
            self.differences.resizeColumnToContents(col)

    def _build_both(self) -> Iterator[None]:
        for scene in (self.scene_a, self.scene_b):
            for _ in scene.build_steps(chunk=BUILD_CHUNK):
                yield

    def _step(self) -> None:
        try:
            next(self._steps)
        except StopIteration:
            self._timer.stop()
            self._built()

    def _built(self) -> None:
        for scene, entries in ((self.scene_a, self.diff.by_a), (self.scene_b, self.diff.by_b)):
            _mark_fold_targets(scene, entries)
        self.is_ready = True
        self.summary.setText(self.diff.summary())
        self.canvas_a.show_graph()
        self.canvas_b.show_graph()
        self.ready.emit()

    def close_scenes(self) -> None:
        """Stop following the graphs (the window is closing)."""
        self._timer.stop()
        self.is_ready = False
        self.scene_a.close()
        self.scene_b.close()

    # keeping the two in step ------------------------------------------------------------------
    def _connect(self) -> None:
        self.canvas_a.view_moved.connect(lambda: self._follow(self.canvas_a, self.canvas_b))
        self.canvas_b.view_moved.connect(lambda: self._follow(self.canvas_b, self.canvas_a))
        self.scene_a.selection_ids_changed.connect(lambda ids: self._selected_in(True, ids))
        self.scene_b.selection_ids_changed.connect(lambda ids: self._selected_in(False, ids))
        # a click, or the arrow keys moving through the list
        self.differences.itemClicked.connect(self._entry_clicked)
        self.differences.currentItemChanged.connect(
            lambda row, _old: row is not None and self._entry_clicked(row))

    def matched(self, node_id: int, from_a: bool) -> int | None:
        """The node of the other graph matched to ``node_id`` (None: only in this one)."""
        return (self.diff.pairs if from_a else self.b_to_a).get(node_id)

    def _follow(self, src: SyncedCanvas, dst: SyncedCanvas) -> None:
        if self._syncing or not self.is_ready:
            return
        self._syncing = True
        try:
            if abs(dst.zoom - src.zoom) > 1e-9:
                dst.scale(src.zoom / dst.zoom, src.zoom / dst.zoom)
                dst.minimap.refresh()
            from_a = src is self.canvas_a
            src_scene, dst_scene = ((self.scene_a, self.scene_b) if from_a
                                    else (self.scene_b, self.scene_a))
            center = src.visible_scene_rect().center()
            anchor = _nearest_node(src_scene, center, src.visible_scene_rect())
            target = center
            if anchor is not None:
                other = self.matched(anchor.node_id, from_a)
                item = dst_scene.items_by_id.get(dst_scene.folded.get(other, other)) \
                    if other is not None else None
                if item is not None:
                    target = item.pos() + (center - anchor.pos())
            dst.centerOn(target)
        finally:
            self._syncing = False

    def _selected_in(self, in_a: bool, ids: list[int]) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            other_scene = self.scene_b if in_a else self.scene_a
            other = [self.matched(i, in_a) for i in ids]
            other_scene.clearSelection()
            for j in other:
                item = other_scene.items_by_id.get(other_scene.folded.get(j, j)) \
                    if j is not None else None
                if item is not None:
                    item.setSelected(True)
        finally:
            self._syncing = False
        if ids:
            first = ids[0], other[0]
            self.selected.emit(*(first if in_a else first[::-1]))

    def _entry_clicked(self, row: QTreeWidgetItem, _column: int = 0) -> None:
        # the list tells of its rows going while the view is deleted, after the scenes
        if not (self.is_ready and shiboken6.isValid(self.scene_a)
                and shiboken6.isValid(self.scene_b)):
            return
        entry = row.data(0, ENTRY_ROLE)
        if isinstance(entry, NodeDiff):
            self.show_entry(entry)

    def show_entry(self, entry: NodeDiff) -> None:
        """Select the entry's node in both graphs (where it is) and bring it into view."""
        self._syncing = True
        try:
            for scene, canvas, node_id in ((self.scene_a, self.canvas_a, entry.a_id),
                                           (self.scene_b, self.canvas_b, entry.b_id)):
                scene.clearSelection()
                if node_id is not None and scene.select_only(node_id) is not None:
                    canvas.center_on_node(node_id)
        finally:
            self._syncing = False
        if entry.a_id is None and entry.b_id is not None:   # added: show where it would be
            self._follow(self.canvas_b, self.canvas_a)
        elif entry.b_id is None:
            self._follow(self.canvas_a, self.canvas_b)
        self.selected.emit(entry.a_id, entry.b_id)


def _mark_fold_targets(scene: GraphScene, entries: dict[int, NodeDiff]) -> None:
    """A differing const folded onto its consumer has no item: its consumer carries the
    mark (when it has none of its own), so a changed range const still shows."""
    for node_id, e in entries.items():
        target = scene.folded.get(node_id)
        if target is None or target in entries:
            continue
        what = "; ".join(c.text() for c in e.changes) or e.kind
        scene.set_look(target, overlay=QColor(KIND_COLOURS[CHANGED]),
                       overlay_note=f"its const 0x{node_id:x} {e.kind}: {what}")


def _nearest_node(scene: GraphScene, center: QPointF, visible: QRectF) -> NodeItem | None:
    """The node nearest ``center``, looked for near it first (a zoomed-out view of 10,000
    nodes must not walk them all on every scroll step)."""
    half = min(visible.width(), visible.height()) / 4
    for radius in (min(half, 400.0), half * 2):
        box = QRectF(center.x() - radius, center.y() - radius, 2 * radius, 2 * radius)
        near = [i for i in scene.items(box) if isinstance(i, NodeItem)]
        if near:
            return min(near, key=lambda i: _distance(i.sceneBoundingRect().center(), center))
    return None


def _distance(p: QPointF, q: QPointF) -> float:
    d = p - q
    return d.x() * d.x() + d.y() * d.y()


def _title(side: str, name: str) -> QLabel:
    """The pane's title: the file's name (its path in the tooltip), never wider than the
    pane (a long path made one pane wider than the other)."""
    label = QLabel(f"<b>{side}</b>: {html.escape(os.path.basename(name) or name)}")
    label.setToolTip(name)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    return label


def _hex(node_id: int | None) -> str:
    return "" if node_id is None else f"0x{node_id:x}"


__all__ = ["SideBySideView", "SyncedCanvas"]
