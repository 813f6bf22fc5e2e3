"""InputsDialog: where each INPUT output comes from (.npy, image, constant, seeded random)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine.inputs import KINDS, InputSource
from hexscope.engine.tensor import as_shape
from hexscope.widgets.theme_colors import mark_error_text

DTYPES = ("float32", "uint8", "int32", "int8", "int16", "uint16")


class _SourceRow:
    def __init__(self, grid: QGridLayout, row: int, source: InputSource,
                 declared: tuple[int, ...] | None, parent: QWidget) -> None:
        self.kind = QComboBox()
        self.kind.addItems(KINDS)
        self.kind.setCurrentText(source.kind)
        self.path = QLineEdit(source.path)
        self.browse = QPushButton("…")
        self.value = QDoubleSpinBox(decimals=4, minimum=-1e9, maximum=1e9, value=source.value)
        self.seed = QSpinBox(minimum=0, maximum=2**31 - 1, value=source.seed)
        self.dtype = QComboBox()
        self.dtype.addItems(DTYPES)
        self.dtype.setCurrentText(source.dtype)
        shape = source.shape or declared
        self.shape = QLineEdit("x".join(map(str, shape)) if shape else "")
        self.shape.setPlaceholderText("e.g. 1x224x224x3")
        self._parent = parent
        path_box = QHBoxLayout()
        path_box.addWidget(self.path)
        path_box.addWidget(self.browse)
        grid.addWidget(QLabel(f"input {row}"), row + 1, 0)
        grid.addWidget(self.kind, row + 1, 1)
        grid.addLayout(path_box, row + 1, 2)
        for c, w in enumerate((self.value, self.seed, self.dtype, self.shape)):
            grid.addWidget(w, row + 1, 3 + c)
        self.kind.currentTextChanged.connect(self._enable)
        self.browse.clicked.connect(self._browse)
        self._declared = declared
        self._base = source
        self._enable(source.kind)

    def _enable(self, kind: str) -> None:
        self.path.setEnabled(kind in ("npy", "image"))
        self.browse.setEnabled(kind in ("npy", "image"))
        self.value.setEnabled(kind == "constant")
        self.seed.setEnabled(kind == "random")

    def _browse(self) -> None:
        pattern = "NumPy (*.npy)" if self.kind.currentText() == "npy" else \
            "Images (*.png *.jpg *.jpeg *.bmp *.pgm *.ppm)"
        path, _ = QFileDialog.getOpenFileName(self._parent, "Choose input", "", pattern)
        if path:
            self.path.setText(path)

    def source(self) -> InputSource:
        text = self.shape.text().strip().lower().replace(",", "x").replace(" ", "")
        shape = as_shape([int(v) for v in text.split("x")]) if text else None
        if shape == self._declared:
            shape = None
        return InputSource(kind=self.kind.currentText(), path=self.path.text().strip(),
                           value=self.value.value(), seed=self.seed.value(),
                           dtype=self.dtype.currentText(), shape=shape,
                           low=self._base.low, high=self._base.high,
                           d32_padding=self._base.d32_padding)   # read with a 5-D .npy only


class InputsDialog(QDialog):
    """One row per INPUT output; ``sources()`` reads the choices back."""

    def __init__(self, sources: list[InputSource], declared: list[tuple[int, ...] | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Graph inputs")
        grid = QGridLayout()
        for c, text in enumerate(("", "Source", "File", "Constant", "Seed", "Type", "Shape")):
            grid.addWidget(QLabel(f"<b>{text}</b>"), 0, c)
        self.rows = [_SourceRow(grid, k, src, declared[k] if k < len(declared) else None, self)
                     for k, src in enumerate(sources)]
        self.error = QLabel()
        mark_error_text(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._check_and_accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        if not self.rows:
            layout.addWidget(QLabel("This graph has no INPUT node."))
        layout.addLayout(grid)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def sources(self) -> list[InputSource]:
        return [row.source() for row in self.rows]

    def _check_and_accept(self) -> None:
        try:
            self.sources()
        except ValueError as exc:
            self.error.setText(f"shape: {exc}")
            return
        self.accept()
