"""PaddingCheckPanel: runs the padding check and lists the nodes that read d32 padding.

The check itself is :func:`hexscope.engine.analysis.padding_check.check_padding`; this panel
picks the two patterns, shows the findings (and the nodes that changed only through their inputs),
selects a node on click and offers an overlay for the graph canvas.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine import EngineError, Graph, Tensor
from hexscope.engine.analysis.padding_check import PaddingReport, check_padding

READS = QColor(230, 50, 50)
INHERITS = QColor(240, 170, 60)
_ID_ROLE = Qt.ItemDataRole.UserRole


class PaddingCheckPanel(QWidget):
    """See the module docstring. Give it a graph (and inputs, or a provider of them)."""

    node_activated = Signal(int)
    overlay_changed = Signal(object, object)      # colours or None, legend

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._graph: Callable[[], Graph | None] = lambda: None
        self._inputs: Callable[[], Sequence[Tensor] | None] = lambda: None
        self.report: PaddingReport | None = None
        self._build_ui()
        self._run.clicked.connect(self.run_check)
        self._tree.itemClicked.connect(self._on_item)

    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        bar = QHBoxLayout()
        self._patterns = [QSpinBox(), QSpinBox()]
        for spin, value in zip(self._patterns, (0x00, 0xFF), strict=True):
            spin.setRange(0, 255)
            spin.setDisplayIntegerBase(16)
            spin.setPrefix("0x")
            spin.setValue(value)
        self._run = QPushButton("Run padding check")
        bar.addWidget(QLabel("fill padding with"))
        bar.addWidget(self._patterns[0])
        bar.addWidget(QLabel("and"))
        bar.addWidget(self._patterns[1])
        bar.addWidget(self._run)
        bar.addStretch(1)
        lay.addLayout(bar)
        self._tree = QTreeWidget()
        self._tree.setHeaderLabels(["node", "op", "changed", "first difference (b,h,w,d)"])
        self._tree.setRootIsDecorated(False)
        lay.addWidget(self._tree, 1)
        self._status = QLabel("reruns the graph with every d32 output's padding set to each "
                              "pattern; a node whose valid output changes reads padding")
        self._status.setWordWrap(True)
        lay.addWidget(self._status)

    def set_graph(self, graph: Graph | Callable[[], Graph | None] | None,
                  inputs: Callable[[], Sequence[Tensor] | None] | None = None) -> None:
        """The graph to check (or a function giving the current one); ``inputs`` returns the
        inputs to use (None: the graph's saved input sources)."""
        self._graph = graph if callable(graph) else (lambda: graph)
        self._inputs = inputs or (lambda: None)

    def run_check(self) -> PaddingReport | None:
        graph = self._graph()
        if graph is None:
            return None
        patterns = tuple(s.value() for s in self._patterns)
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            self.report = check_padding(graph, self._inputs(), patterns)
        except EngineError as exc:
            self.report = None
            self._status.setText(f"padding check failed: {exc}")
            self._tree.clear()
            self.overlay_changed.emit(None, [])
            return None
        finally:
            QApplication.restoreOverrideCursor()
        self.show_report(self.report)
        return self.report

    def show_report(self, report: PaddingReport) -> None:
        self.report = report
        self._tree.clear()
        for f in report.findings:
            item = QTreeWidgetItem([f"0x{f.node_id:x}", f.op,
                                    f"{f.changed} of {f.total}" + (f" ({f.note})" if f.note
                                                                    else ""),
                                    "" if f.first is None else str(f.first)])
            item.setData(0, _ID_ROLE, f.node_id)
            item.setForeground(0, READS)
            self._tree.addTopLevelItem(item)
        for node_id in report.inherited:
            item = QTreeWidgetItem([f"0x{node_id:x}", "", "inherited from an input", ""])
            item.setData(0, _ID_ROLE, node_id)
            item.setForeground(0, INHERITS)
            self._tree.addTopLevelItem(item)
        for k in range(4):
            self._tree.resizeColumnToContents(k)
        n = len(report.findings)
        verdict = f"{n} node(s) read padding" if n else "no node reads padding"
        self._status.setText(f"{report.lines()[0]}\n{verdict}")
        colors = {i: READS for i in report.readers}
        colors.update({i: INHERITS for i in report.inherited})
        self.overlay_changed.emit(colors, [("reads padding", READS),
                                           ("changed through an input", INHERITS)])

    def listed_ids(self) -> list[int]:
        return [self._tree.topLevelItem(k).data(0, _ID_ROLE)
                for k in range(self._tree.topLevelItemCount())]

    def _on_item(self, item: QTreeWidgetItem) -> None:
        self.node_activated.emit(int(item.data(0, _ID_ROLE)))
