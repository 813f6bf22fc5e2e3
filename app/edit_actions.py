"""Edit menu: undo/redo, delete, add op, connect, layout, inspector edits, find.

Every graph change goes through :mod:`hexscope.app.commands`, so it is one undo step.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QAction, QKeySequence

from hexscope.app.commands import push_edit, push_edits
from hexscope.engine.errors import EngineError, InputError
from hexscope.engine.inputs import input_node, input_sources, set_input_sources
from hexscope.engine.nodes import Node, OutputDef, Padding, const_tensor
from hexscope.engine.ops.registry import REGISTRY
from hexscope.widgets.graph_canvas.free_space import FreeSpace, search_area
from hexscope.widgets.graph_canvas.layout import NODE_WIDTH, node_size
from hexscope.widgets.graph_canvas.model import match_text
from hexscope.widgets.graph_canvas.node_item import NodeItem

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow


def new_node(node_id: int, op: str, position: tuple[float, float]) -> Node:
    """A node of ``op`` with the op's fixed outputs (at least one) and no inputs."""
    if op == "Const":
        tensor = const_tensor(np.zeros((1,), np.float32))
        return Node(node_id, "Const", (), (OutputDef(tensor.shape, 4),), const=tensor,
                    position=position)
    spec = REGISTRY.get(op)
    n_out = len(spec.outputs.head) + len(spec.outputs.tail)
    if spec.outputs.repeat is not None:
        n_out += max(1, spec.outputs.repeat.min) * len(spec.outputs.repeat.ports)
    outputs = tuple(OutputDef(max_sizes=(), elementsize=0) for _ in range(n_out))
    padding = Padding.SAME if spec.uses_padding else Padding.NA
    return Node(node_id, spec.name, (), outputs, padding, position=position)


class EditActions:
    def __init__(self, window: MainWindow) -> None:
        self.w = window
        self._matches: list[int] = []
        self._match_index = -1
        self._build_actions()

    def _build_actions(self) -> None:
        w = self.w
        menu = w.menuBar().addMenu("&Edit")
        self.undo = w.undo_stack.createUndoAction(w, "&Undo")
        self.undo.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo = w.undo_stack.createRedoAction(w, "&Redo")
        self.redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.delete = QAction("&Delete", w)
        self.delete.setShortcut(QKeySequence.StandardKey.Delete)
        self.delete.triggered.connect(self.delete_selected)
        self.layout = QAction("Auto &layout", w)
        self.layout.setShortcut(QKeySequence("Ctrl+L"))
        self.layout.triggered.connect(lambda: self.auto_layout())
        self.find = QAction("&Find node…", w)
        self.find.setShortcut(QKeySequence.StandardKey.Find)
        self.find.triggered.connect(lambda: (w.search.setFocus(), w.search.selectAll()))
        menu.addActions([self.undo, self.redo])
        menu.addSeparator()
        menu.addActions([self.delete, self.layout, self.find])
        for act in (self.undo, self.redo, self.delete, self.layout):
            w.addAction(act)

    # the one door for edits ---------------------------------------------------------------
    def edit(self, method: str, *args: object, text: str = "") -> bool:
        """Make one graph edit as an undo step; False (with a message) if refused.

        Edits are accepted during a run, as undo and redo are (one rule for every edit): the
        session takes them in before its next step or run, and the nodes they touch are
        marked stale."""
        try:
            push_edit(self.w.undo_stack, self.w.graph, method, *args, text=text)
        except (EngineError, ValueError) as exc:
            self.w.statusBar().showMessage(f"Edit refused: {exc}", 10000)
            return False
        return True

    def edit_many(self, text: str, calls: list[tuple[str, tuple[object, ...]]]) -> bool:
        try:
            push_edits(self.w.undo_stack, self.w.graph, text, calls)
        except (EngineError, ValueError) as exc:
            self.w.statusBar().showMessage(f"Edit refused: {exc}", 10000)
            return False
        return True

    # editor gestures ---------------------------------------------------------------------------
    def add_op(self, op: str, pos: QPointF | None = None) -> int | None:
        """Add a node of ``op`` with a fresh id at ``pos`` (default: the view's centre), or
        in the free place nearest to it (it landed on top of other nodes)."""
        if pos is None:
            pos = self.w.canvas.mapToScene(self.w.canvas.viewport().rect().center())
            pos -= QPointF(NODE_WIDTH / 2, 40)          # centred, not hung from the centre
        node_id = self.w.graph.free_id()
        node = new_node(node_id, op, (pos.x(), pos.y()))
        width, height = node_size(1, len(node.outputs))     # the append slot, its outputs
        width = max(width, 260.0)      # wider than the default: a long op name widens it
        # Only the nodes where the search can reach, from the scene's index: the places
        # of all nodes were 20,000 Python calls (30-300 ms at 20,000 nodes).
        near = self.w.scene.items(QRectF(*search_area(pos.x(), pos.y(), width, height)),
                                  Qt.ItemSelectionMode.IntersectsItemBoundingRect)
        space = FreeSpace(item.body_rect() for item in near
                          if isinstance(item, NodeItem) and item.isVisible())
        x, y = space.find(pos.x(), pos.y(), width, height)
        if self.edit("add_node", node.with_(position=(x, y)),
                     text=f"add {op} 0x{node_id:x}"):
            self.w.select_node(node_id)
            return node_id
        return None

    def connect(self, src: int, out: int, dst: int, port: int) -> bool:
        return self.edit("set_input", dst, port, (src, out),
                         text=f"connect 0x{src:x}:{out} to 0x{dst:x} input {port}")

    def move(self, positions: dict[int, tuple[float, float]]) -> None:
        if not self.edit("move", positions, text=f"move {len(positions)} node(s)"):
            self.w.scene.rebuild()      # put the items back where the graph says

    def auto_layout(self, text: str = "auto layout") -> None:
        if self.edit("move", self.w.scene.layout_positions(), text=text):
            self.w.canvas.zoom_to_fit()

    def delete_selected(self) -> None:
        """Delete the selected nodes (with their folded consts) and disconnect the selected
        edges, as one undo step."""
        ids = set(self.w.scene.selected_ids())
        ids |= {c for c, dst in self.w.scene.folded.items() if dst in ids}
        # Highest port first: hexagon_nn's inputs are positional, only the last one can go.
        wires = sorted({(e.dst.node_id, e.dst_port) for e in self.w.scene.selected_edges()
                        if e.dst.node_id not in ids}, key=lambda w: (w[0], -w[1]))
        calls = [("set_input", (dst, port, None)) for dst, port in wires]
        order = [i for i in reversed(self.w.graph.order) if i in ids]
        calls += [("remove_node", (i,)) for i in order]
        if calls:
            what = [f"{len(order)} node(s)"] * bool(order) + [f"{len(wires)} wire(s)"] * bool(wires)
            self.edit_many(f"delete {' and '.join(what)}", calls)

    def set_label(self, node_id: int, label: str) -> None:
        self.edit("set_label", node_id, label)

    def set_padding(self, node_id: int, padding: str) -> None:
        self.edit("set_padding", node_id, padding)

    def set_const(self, node_id: int, array: np.ndarray) -> None:
        self.edit("set_const", node_id, array)

    def set_input_decl(self, node_id: int, k: int, shape: tuple[int, ...], dtype: str) -> None:
        """An INPUT output's declared shape (an undo step) and the input's element type
        (saved with the graph's input settings)."""
        graph = self.w.graph
        node = graph.node(node_id)
        size = np.dtype(dtype).itemsize
        if k < len(node.outputs) and (node.outputs[k].max_sizes, node.outputs[k].elementsize) \
                != (shape, size):
            outputs = list(node.outputs)
            outputs[k] = OutputDef(max_sizes=tuple(shape), elementsize=size)
            if not self.edit("set_outputs", node_id, outputs,
                             text=f"shape of 0x{node_id:x} output {k}"):
                return
        try:
            sources = input_sources(graph)
        except InputError:
            sources = []
        if node_id == input_node(graph) and k < len(sources) and sources[k].dtype != dtype:
            sources[k] = replace(sources[k], dtype=dtype)
            set_input_sources(graph, sources)
            self.w.files.meta_dirty = True

    # find ----------------------------------------------------------------------------------------
    def find_next(self, text: str) -> int | None:
        """Select the next node whose id, label or op matches ``text``."""
        matches = [n.node_id for n in self.w.graph if match_text(n, text)]
        if matches != self._matches:
            self._matches, self._match_index = matches, -1
        if not matches:
            self.w.statusBar().showMessage(f"No node matches '{text}'", 4000)
            return None
        self._match_index = (self._match_index + 1) % len(matches)
        node_id = matches[self._match_index]
        self.w.select_node(node_id)
        self.w.statusBar().showMessage(
            f"Match {self._match_index + 1} of {len(matches)}: 0x{node_id:x}", 4000)
        return node_id


__all__ = ["EditActions", "new_node"]
