"""InspectorPanel: the selected node's id, label, op, padding, ports, and a const's data.

The panel edits nothing itself: it emits ``*_edited`` signals that the app turns into undo
commands, and it is told to show the node again after every graph edit.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine.errors import InputError
from hexscope.engine.graph import Graph
from hexscope.engine.inputs import input_sources
from hexscope.engine.io.tflite.origin import tflite_origin
from hexscope.engine.nodes import Node, Padding
from hexscope.engine.ops.registry import REGISTRY, OpRegistry
from hexscope.widgets.graph_canvas.model import input_ports, output_ports
from hexscope.widgets.input_decl import InputDeclEditor
from hexscope.widgets.op_palette import doc_html

MAX_EDIT_ELEMENTS = 4096


def table_shape(shape: tuple[int, ...]) -> tuple[int, int]:
    """Rows and columns of the table that shows a 4-D const: depth across, the rest down."""
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    return rows, int(shape[-1]) if shape else 1


class InspectorPanel(QWidget):
    label_edited = Signal(int, str)
    padding_edited = Signal(int, str)
    const_edited = Signal(int, object)      # node id, new ndarray
    input_edited = Signal(int, int, object, str)   # INPUT node id, output, shape, dtype
    message = Signal(str)                   # something the user should read (a refused value)
    doc_link_clicked = Signal(QUrl)         # a citation in the op doc

    def __init__(self, graph: Graph, registry: OpRegistry = REGISTRY,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.graph = graph
        self.registry = registry
        self.node_id: int | None = None
        self.shape_of = None          # callable(node_id, k) -> str | None, from the app
        self._filling = False
        self._build_ui()
        self.label.editingFinished.connect(self._label_done)
        self.padding.activated.connect(self._padding_done)
        self.table.itemChanged.connect(self._cell_done)
        self.load_npy.clicked.connect(self._load_npy)
        self.input_decl.edited.connect(
            lambda k, shape, dtype: self.input_edited.emit(self.node_id, k, shape, dtype))
        self.input_decl.refused.connect(self.message)
        self.op_doc.anchorClicked.connect(self.doc_link_clicked)
        self.show_node(None)

    def _build_ui(self) -> None:
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.label = QLineEdit()
        self.padding = QComboBox()
        self.padding.addItems([p.name for p in Padding])
        self.op_doc = QTextBrowser()
        self.op_doc.setOpenLinks(False)
        self.op_doc.setPlaceholderText("The selected node's op: what it does, its ports.")
        self.ports = QLabel()
        self.ports.setTextFormat(Qt.TextFormat.RichText)
        self.ports.setWordWrap(True)
        self.ports.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget()
        self.const_note = QLabel()
        self.const_note.setWordWrap(True)
        # Long port lines wrap instead of widening the dock (and the canvas shrinking).
        for label in (self.title, self.ports, self.const_note):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            label.setMinimumWidth(60)
        self.load_npy = QPushButton("Load .npy…")
        form = QFormLayout()
        form.addRow("Label", self.label)
        form.addRow("Padding", self.padding)
        self.input_decl = InputDeclEditor()
        const_row = QHBoxLayout()
        const_row.addWidget(self.const_note, 1)
        const_row.addWidget(self.load_npy)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addLayout(form)
        layout.addWidget(self.input_decl)
        layout.addWidget(self.ports)
        layout.addLayout(const_row)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.op_doc, 1)
        layout.addStretch(1)
        self._layout = layout

    # showing ----------------------------------------------------------------------------------
    def set_graph(self, graph: Graph) -> None:
        self.graph = graph
        self.show_node(None)

    def refresh(self) -> None:
        self.show_node(self.node_id if self.node_id in self.graph else None)

    def show_node(self, node_id: int | None) -> None:
        self.node_id = node_id
        node = self.graph.node(node_id) if node_id is not None else None
        for w in (self.label, self.padding, self.load_npy):
            w.setEnabled(node is not None)
        if node is None:
            self.title.setText("<i>Select a node to inspect it.</i>")
            self.label.setText("")
            self.padding.setCurrentIndex(-1)      # no node, no padding (not the last one's)
            self.ports.setText("")
            self._show_const(None)
            self._show_input_decl(None)
            self.op_doc.clear()
            return
        spec = self.registry.get(node.op) if node.op in self.registry else None
        cat = spec.category.value if spec else "unknown op"
        origin = tflite_origin(self.graph, node.node_id)
        self.title.setText(f"<b>{node.op}</b> &nbsp; 0x{node.node_id:x} &nbsp; ({cat})"
                           + (f"<br>from {html.escape(origin)}" if origin else ""))
        self.label.setText(node.label)
        self.padding.setCurrentText(node.padding.name)
        self.padding.setEnabled(not node.is_const and (spec is None or spec.uses_padding
                                                       or node.padding is not Padding.NA))
        self.ports.setText(self._ports_html(node))
        self._show_const(node if node.is_const else None)
        self._show_input_decl(node)
        self.op_doc.setHtml(doc_html(spec) if spec is not None else
                            f"<p><i>{node.op}: not a registered op</i></p>")

    def _show_input_decl(self, node: Node | None) -> None:
        """An INPUT's shapes and element types, editable where the node is."""
        is_input = node is not None and node.op == "INPUT"
        self.input_decl.setVisible(is_input)
        if not is_input:
            return
        try:
            types = [src.dtype for src in input_sources(self.graph)]
        except InputError:
            types = []
        decls = [(o.max_sizes or None, types[k] if k < len(types) else "float32")
                 for k, o in enumerate(node.outputs)]  # type: ignore[union-attr]
        self.input_decl.set_outputs(decls)

    def _ports_html(self, node: Node) -> str:
        infos, _ = input_ports(self.graph, node, {}, self.registry)
        rows = ["<b>Inputs</b>"] if infos else []
        for k, info in enumerate(infos):
            src = (f"0x{node.inputs[k][0]:x}:{node.inputs[k][1]}" if k < len(node.inputs)
                   else "<i>not connected</i>")
            rows.append(f"&nbsp;{k} {info.name} <small>({info.type_text})</small> ← {src}")
        outs = output_ports(node, self.registry)
        if outs:
            rows.append("<b>Outputs</b>")
        for k, info in enumerate(outs):
            declared = node.outputs[k] if k < len(node.outputs) else None
            shape = "x".join(map(str, declared.max_sizes)) if declared and declared.max_sizes \
                else "size not declared"
            actual = self.shape_of(node.node_id, k) if self.shape_of else None
            ran = f" · ran: {actual}" if actual else ""
            rows.append(f"&nbsp;{k} {info.name} <small>({info.type_text})</small> "
                        f"declared {shape}{ran}")
        return "<br>".join(rows)

    def _show_const(self, node: Node | None) -> None:
        self._filling = True
        self.table.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        visible = node is not None
        self.table.setVisible(visible)
        self._layout.setStretch(self._layout.count() - 1, 0 if visible else 1)
        self.const_note.setVisible(visible)
        self.load_npy.setVisible(visible)
        if node is None or node.const is None:
            self._filling = False
            return
        tensor = node.const
        desc = tensor.describe()
        if not tensor.has_data:
            self.const_note.setText(f"shape-only const: {desc}")
        elif tensor.elements > MAX_EDIT_ELEMENTS:
            self.const_note.setText(f"{desc}: too large to edit here; load a .npy instead")
        else:
            self.const_note.setText(f"{desc} — edit a cell, or load a .npy")
            self._fill_table(np.asarray(tensor.array))
        self._filling = False

    def _fill_table(self, array: np.ndarray) -> None:
        rows, cols = table_shape(array.shape)
        flat = array.reshape(rows, cols)
        self.table.setRowCount(rows)
        self.table.setColumnCount(cols)
        for r in range(rows):
            for c in range(cols):
                value = flat[r, c]
                text = f"{float(value):.7g}" if array.dtype.kind == "f" else str(value)
                self.table.setItem(r, c, QTableWidgetItem(text))

    # editing ----------------------------------------------------------------------------------
    def _label_done(self) -> None:
        if self.node_id is not None and self.label.text() != self.graph.node(self.node_id).label:
            self.label_edited.emit(self.node_id, self.label.text())

    def _padding_done(self) -> None:
        if self.node_id is not None:
            if self.padding.currentText() != self.graph.node(self.node_id).padding.name:
                self.padding_edited.emit(self.node_id, self.padding.currentText())

    def _cell_done(self, item: QTableWidgetItem) -> None:
        if self._filling or self.node_id is None:
            return
        tensor = self.graph.node(self.node_id).const
        assert tensor is not None
        array = np.array(tensor.array)
        rows, cols = table_shape(array.shape)
        flat = array.reshape(rows, cols)
        try:
            flat[item.row(), item.column()] = float(item.text()) \
                if array.dtype.kind == "f" else int(item.text(), 0)
        except (ValueError, OverflowError):
            self.const_note.setText(f"'{item.text()}' is not a valid {array.dtype} value")
            self._show_const(self.graph.node(self.node_id))
            return
        self.const_edited.emit(self.node_id, flat.reshape(array.shape))

    def _load_npy(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load const data", "", "NumPy (*.npy)")
        if path and self.node_id is not None:
            self.load_npy_file(path)

    def load_npy_file(self, path: str) -> None:
        """Read a ``.npy`` into the shown const (through ``const_edited``)."""
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            self.const_note.setText(f"cannot read {path}: {exc}")
            return
        if self.node_id is not None:
            self.const_edited.emit(self.node_id, array)
