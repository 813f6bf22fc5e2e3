"""InputDeclEditor: the shape and element type of each output of an INPUT node.

A new graph's INPUT declares no shape, and a run then cannot make its input: this is where
the user gives it one, next to the node, instead of in a dialog of the Debug menu.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLineEdit, QWidget

# The element types an input can be made of (engine.inputs reads them with numpy).
INPUT_DTYPES = ("uint8", "float32", "int32", "int16", "int8")
_SEPARATORS = re.compile(r"[\s,x×*]+")


def parse_shape(text: str) -> tuple[int, ...]:
    """``"1,224,224,3"`` (or ``1x224x224x3``) as sizes; ValueError says what is wrong."""
    words = [w for w in _SEPARATORS.split(text.strip()) if w]
    if not 1 <= len(words) <= 4 or not all(w.isdigit() for w in words):
        raise ValueError(f"'{text}' is not a shape: give 1 to 4 whole numbers, "
                         "e.g. 1,224,224,3 (batch, height, width, depth)")
    sizes = tuple(int(w) for w in words)
    if min(sizes) < 1:
        raise ValueError(f"'{text}': every size must be at least 1")
    return sizes


class InputDeclEditor(QWidget):
    """One row per INPUT output: its shape and its element type."""

    edited = Signal(int, object, str)       # output index, shape tuple, dtype name
    refused = Signal(str)                   # why a typed shape was not taken

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._form = QFormLayout(self)
        self._form.setContentsMargins(0, 0, 0, 0)
        self.shapes: list[QLineEdit] = []
        self.types: list[QComboBox] = []

    def set_outputs(self, decls: Sequence[tuple[tuple[int, ...] | None, str]]) -> None:
        """``decls``: per output, the declared shape (None: none yet) and the input's type."""
        while self._form.rowCount():
            self._form.removeRow(0)
        self.shapes, self.types = [], []
        for k, (shape, dtype) in enumerate(decls):
            edit = QLineEdit(",".join(map(str, shape)) if shape else "")
            edit.setPlaceholderText("no shape yet: e.g. 1,224,224,3")
            kind = QComboBox()
            kind.addItems(INPUT_DTYPES)
            kind.setCurrentText(dtype if dtype in INPUT_DTYPES else "float32")
            edit.editingFinished.connect(lambda k=k: self._commit(k))
            kind.activated.connect(lambda _i, k=k: self._commit(k))
            row = QHBoxLayout()
            row.addWidget(edit, 1)
            row.addWidget(kind)
            self._form.addRow(f"Shape {k}" if len(decls) > 1 else "Shape", row)
            self.shapes.append(edit)
            self.types.append(kind)

    def _commit(self, k: int) -> None:
        text = self.shapes[k].text()
        if not text.strip():
            return
        try:
            shape = parse_shape(text)
        except ValueError as exc:
            self.shapes[k].setToolTip(str(exc))
            self.shapes[k].setStyleSheet("border: 1px solid #d62828")
            self.refused.emit(str(exc))
            return
        self.shapes[k].setToolTip("")
        self.shapes[k].setStyleSheet("")
        self.edited.emit(k, shape, self.types[k].currentText())


__all__ = ["INPUT_DTYPES", "InputDeclEditor", "parse_shape"]
