"""OutputsPanel: a node's outputs after it ran: shape, type, range and a value table."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine.tensor import Tensor
from hexscope.widgets.node_state import StateLine

MAX_ROWS = 256
#: Columns (depth) shown: a QTableWidget item per cell, so a 1x1x1x100000 output took seconds.
MAX_COLUMNS = 256


def summary(tensor: Tensor) -> str:
    """One line: type, shape, layout and the min/max of the logical data."""
    if not tensor.has_data:
        return f"{tensor.describe()} (no data)"
    data = np.asarray(tensor.array)
    if data.size == 0:
        return f"{tensor.describe()} (empty)"
    lo, hi = data.min(), data.max()
    fmt = (lambda v: f"{float(v):.6g}") if data.dtype.kind == "f" else str
    return f"{tensor.describe()}   min {fmt(lo)}   max {fmt(hi)}"


class OutputsPanel(QWidget):
    """Shows one node's outputs; pick the output with the combo box."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.outputs: list[Tensor] = []
        self.state_lines: list[StateLine] = []
        self.header = QLabel("<i>Select a node that has run.</i>")
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.state = QLabel()
        self.state.setTextFormat(Qt.TextFormat.RichText)
        self.state.setWordWrap(True)
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.state.setToolTip("State the node keeps between executions (Variables, adaptive "
                              "output ranges); Restart restores what the run started with.")
        self.state.hide()
        self.choice = QComboBox()
        self.choice.hide()
        self.info = QLabel()
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.info.setWordWrap(True)
        # Long tensor descriptions wrap instead of widening the dock (and the canvas shrinking).
        for label in (self.header, self.state, self.info):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            label.setMinimumWidth(60)
        self.table = QTableWidget()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.hide()
        row = QHBoxLayout()
        row.addWidget(self.choice)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.state)
        layout.addLayout(row)
        layout.addWidget(self.info)
        layout.addWidget(self.table, 1)
        layout.addStretch(0)          # keeps the text at the top while the table is hidden
        self.choice.currentIndexChanged.connect(self._show_output)

    def show_result(self, title: str, outputs: list[Tensor] | None, error: str = "",
                    note: str = "") -> None:
        """``outputs`` None: the node has not run (``note`` says why)."""
        self.outputs = list(outputs or [])
        if error:
            self.header.setText(f"<b>{title}</b> <span style='color:#c1121f'>failed: "
                                f"{_esc(error)}</span>")
        elif outputs is None:
            self.header.setText(f"<b>{title}</b> <i>{_esc(note or 'has not run')}</i>")
        else:
            self.header.setText(f"<b>{title}</b> {_esc(note)}")
        self.choice.blockSignals(True)
        self.choice.clear()
        self.choice.addItems([f"output {k}" for k in range(len(self.outputs))])
        self.choice.blockSignals(False)
        self.choice.setVisible(bool(self.outputs))
        self.table.setVisible(bool(self.outputs))     # no empty grid for a node that has not run
        self._show_output(0)

    def set_state(self, lines: list[StateLine], note: str = "") -> None:
        """The state the node keeps between executions (hidden when it keeps none)."""
        self.state_lines = list(lines)
        rows = [f"{_esc(line.label)}: <tt>{_esc(line.value)}</tt>" for line in lines]
        if note:
            rows.append(f"<i>{_esc(note)}</i>")
        self.state.setText("<b>Kept between runs</b><br>" + "<br>".join(rows) if rows else "")
        self.state.setVisible(bool(rows))

    def _show_output(self, index: int) -> None:
        self.table.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        if not 0 <= index < len(self.outputs):
            self.info.setText("")
            return
        tensor = self.outputs[index]
        self.info.setText(summary(tensor))
        if not tensor.has_data:
            return
        data = np.asarray(tensor.array)
        depth = data.shape[-1] if data.ndim else 1
        whole = data.reshape(-1, max(depth, 1))
        flat = whole[:MAX_ROWS, :MAX_COLUMNS]
        if flat.shape != whole.shape:
            self.info.setText(f"{summary(tensor)}  (table: the first {flat.shape[0]} of "
                              f"{whole.shape[0]} rows and {flat.shape[1]} of {whole.shape[1]} "
                              "columns; the Tensor view shows all)")
        self.table.setRowCount(flat.shape[0])
        self.table.setColumnCount(flat.shape[1])
        b, h, w, _ = tensor.shape
        self.table.setHorizontalHeaderLabels([f"d{c}" for c in range(flat.shape[1])])
        self.table.setVerticalHeaderLabels([_row_label(r, b, h, w) for r in range(flat.shape[0])])
        is_float = data.dtype.kind == "f"
        for r in range(flat.shape[0]):
            for c in range(flat.shape[1]):
                value = flat[r, c]
                self.table.setItem(r, c, QTableWidgetItem(
                    f"{float(value):.6g}" if is_float else str(value)))

    def cell_text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item else ""


def _row_label(r: int, b: int, h: int, w: int) -> str:
    return f"b{r // (h * w)} h{(r // w) % h} w{r % w}" if h * w else str(r)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
