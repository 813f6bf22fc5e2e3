"""TensorInspector: one output of a node as heatmap, value table and code histogram, with
export of the view (PNG), the tensor (.npy) and the PPrint text hexagon_nn would log."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLabel,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine import DType, Layout, QuantRange, Tensor
from hexscope.engine.ops.debug.pprint import pprint_lines
from hexscope.widgets._plane import Index, quant_range_of
from hexscope.widgets.code_histogram import CodeHistogramView
from hexscope.widgets.flow_layout import FlowLayout
from hexscope.widgets.tensor_heatmap import TensorHeatmapView
from hexscope.widgets.tensor_table import TensorTableView


def pprint_kind(tensor: Tensor) -> str:
    """The PPrint op a graph would use for this tensor."""
    if tensor.layout is Layout.D32:
        return "PPrint_8_d32"
    if tensor.dtype is DType.FLOAT32:
        return "PPrint_f"
    return "PPrint_32" if tensor.dtype.size == 4 else "PPrint_8"


class TensorInspector(QWidget):
    """See the module docstring."""

    element_selected = Signal(object)
    #: The user picked another output in the combo (not emitted by :meth:`set_outputs`).
    output_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._outputs: tuple[Tensor, ...] = ()
        self._title = ""
        self._build_ui()
        self._output.currentIndexChanged.connect(self._show_output)
        self._output.currentIndexChanged.connect(lambda _k: self.output_changed.emit())
        for view in (self.heatmap, self.table):
            view.element_selected.connect(self._on_element)

    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        bar = FlowLayout()        # wraps when the dock is narrow (beside the d32 view)
        self._name = QLabel("no node selected")
        self._output = QComboBox()
        self._dim = QComboBox()
        self._dim.addItems(["no limit", "B", "H", "W", "D"])
        self._start, self._end = QSpinBox(), QSpinBox()
        for s in (self._start, self._end):
            s.setRange(-100000, 100000)
        self._end.setValue(1)
        bar.addWidget(self._name)
        bar.addWidget(QLabel("output"))
        bar.addWidget(self._output)
        for text, slot in (("PNG…", self._ask_png), (".npy…", self._ask_npy),
                           ("PPrint text…", self._ask_pprint)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            bar.addWidget(button)
        bar.addWidget(QLabel("limit"))
        bar.addWidget(self._dim)
        bar.addWidget(self._start)
        bar.addWidget(self._end)
        lay.addLayout(bar)
        self.tabs = QTabWidget()
        self.heatmap = TensorHeatmapView()
        self.table = TensorTableView()
        self.histogram = CodeHistogramView()
        self.tabs.addTab(self.heatmap, "Heatmap")
        self.tabs.addTab(self.table, "Values")
        self.tabs.addTab(self.histogram, "Histogram")
        lay.addWidget(self.tabs, 1)

    # model ------------------------------------------------------------------------------------
    def set_outputs(self, title: str, outputs: Sequence[Tensor], index: int = 0) -> None:
        """Show output ``index`` of a node (``outputs`` are all its outputs)."""
        self._outputs = tuple(outputs)
        self._title = title
        self._output.blockSignals(True)
        self._output.clear()
        for k, t in enumerate(self._outputs):
            self._output.addItem(f"{k}: {t.describe()}")
        self._output.setCurrentIndex(min(index, max(0, len(self._outputs) - 1)))
        self._output.blockSignals(False)
        self._name.setText(title or "no node selected")
        self._show_output()

    @property
    def tensor(self) -> Tensor | None:
        k = self._output.currentIndex()
        return self._outputs[k] if 0 <= k < len(self._outputs) else None

    @property
    def qrange(self) -> QuantRange | None:
        k = self._output.currentIndex()
        return quant_range_of(self._outputs, k) if 0 <= k < len(self._outputs) else None

    def _show_output(self) -> None:
        t, q = self.tensor, self.qrange
        self.heatmap.set_tensor(t, q)
        self.table.set_tensor(t, q)
        self.histogram.set_tensor(t, q)
        if q is not None:
            self._name.setText(f"{self._title}   range [{q.min:.6g}, {q.max:.6g}], step "
                               f"{q.stepsize:.4g}, 0.0 at code {q.zero_code}"
                               + ("" if q.zero_exact else " (not exact)"))
        else:
            self._name.setText(self._title or "no node selected")

    def select(self, index: Index | None) -> None:
        t = self.tensor
        inside = index is not None and t is not None and all(
            0 <= index[a] < t.shape[a] for a in range(4))
        self.heatmap.select(index if inside else None)
        self.table.select(index)

    def _on_element(self, index: Index) -> None:
        self.select(index)
        self.element_selected.emit(index)

    # export -----------------------------------------------------------------------------------
    @property
    def limit(self) -> tuple[int | None, int, int]:
        k = self._dim.currentIndex()
        return (None if k == 0 else k - 1), self._start.value(), self._end.value()

    def set_limit(self, dim: int | None, start: int = 0, end: int = 1) -> None:
        self._start.setValue(start)
        self._end.setValue(end)
        self._dim.setCurrentIndex(0 if dim is None else dim + 1)

    def pprint_text(self) -> list[str]:
        """The PPrint log messages for the shown output, under the current limit."""
        t = self.tensor
        if t is None or not t.has_data:
            return []
        dim, start, end = self.limit
        if dim is None:
            return pprint_lines(t, pprint_kind(t))
        return pprint_lines(t, pprint_kind(t), dim, start, end)

    def export_pprint(self, path: str | Path) -> None:
        Path(path).write_text("\n".join(self.pprint_text()) + "\n")

    def _ask(self, caption: str, filt: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self, caption, "", filt)
        return path

    def _guarded(self, action, path: str) -> None:
        if not path:
            return
        try:
            action(path)
        except Exception as exc:    # noqa: BLE001 - a file error or the formatter's: say it
            QMessageBox.warning(self, "Export failed", str(exc) or type(exc).__name__)

    def _ask_png(self) -> None:
        self._guarded(self.heatmap.export_png, self._ask("Save view as PNG", "PNG (*.png)"))

    def _ask_npy(self) -> None:
        self._guarded(self.heatmap.export_npy, self._ask("Save tensor", "numpy (*.npy)"))

    def _ask_pprint(self) -> None:
        self._guarded(self.export_pprint, self._ask("Save PPrint text", "text (*.txt)"))
