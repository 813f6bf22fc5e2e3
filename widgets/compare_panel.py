"""The Compare panel (issue 12): a run against the float reference, a pinned run, another
graph file or another backend, node by node.

A table in plan order (sortable by any metric), "Go to first divergence", the canvas coloured
by the chosen metric, and A, B and A − B of the selected output with the worst element
marked. The panel shows a :class:`~hexscope.engine.analysis.compare.Comparison`; the app's
compare controller makes it.
"""

from __future__ import annotations

import html
import math

import numpy as np
from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QStyle,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine.analysis.compare import Comparison
from hexscope.engine.analysis.compare_report import first_divergence_text
from hexscope.engine.analysis.diff import OutputDiff
from hexscope.engine.io.tflite.float_check import (
    TfliteComparison,
    float_parting_line,
    float_parting_text,
)
from hexscope.engine.tensor import Tensor
from hexscope.widgets.compare_table import COLUMNS, CompareTableModel
from hexscope.widgets.flow_layout import FlowLayout
from hexscope.widgets.tensor_heatmap import TensorHeatmapView

#: What to compare against, as (key, text) for the combo box.
TARGETS = (("isolated", "Float reference (isolated)"),
           ("accumulated", "Float reference (accumulated)"),
           ("pinned", "Pinned run"),
           ("graph", "Other graph file…"),
           ("backend", "Other backend…"),
           ("tflite", "TFLite model (CPU kernels)"),
           ("tflite_float", "TFLite model + float reference"),
           ("device", "Device dump (hexagon_nn)…"))

#: What each B can and cannot see (issue 32: a broken const is invisible to the float
#: reference, which computes with the same const).
SEES = {
    "isolated": "Each node's float reference on the run's own inputs: the error each node "
                "adds, judged by its excess error over ideal rounding (a convolution that "
                "rounds an inexact zero code, as a [-1, 1] filter's, over its own ideal "
                "result; max LSB keeps the error against the spec's reading). It cannot see a "
                "wrong const or weight: the reference computes with the same one. For that, "
                "compare with the other graph file (the good one) or look at the accumulated "
                "analysis.",
    "accumulated": "The whole graph in float from the same inputs: what the graph has lost "
                   "by each node. Errors add up along the graph, so deep graphs drift past "
                   "one step (a rounded zero code counts here in full); a wrong const is "
                   "still computed with in both runs.",
    "pinned": "A run you pinned (Ctrl+Shift+P): what your edit changed downstream, byte "
              "for byte.",
    "graph": "The same inputs through another graph file: finds a changed const or weight "
             "(nodes matched by id, then label).",
    "backend": "The same graph on another backend (a connected DSP): where the simulator "
               "and the device first disagree.",
    "tflite": "A graph opened from a .tflite model against TFLite's own CPU kernels, "
              "tensor by tensor in steps of each tensor's scale: where the delegate's graph "
              "parts from TFLite. Both run the model's input (the seeded one), fed to the "
              "delegated partition as TFLite computes it.",
    "tflite_float": "TFLite's CPU kernels as B, and both this run and TFLite against the "
                    "graph's float reference (accumulated from the partition's inputs): two "
                    "more columns, each side's error against float beyond ideal rounding, and "
                    "which side leaves the float meaning first. The float meaning is the "
                    "delegate's graph's: where the delegate changes the math, TFLite parts.",
    "device": "hexagon_nn's own dump (NN_OPTION_ENABLE_GRAPH_PRINT and TENSOR_PRINT: "
              "<prefix>_graph.yaml and a .dat per output): this graph runs on the dump's "
              "INPUT data and each node is compared with the device's outputs by id. Nodes "
              "the device's prepare made and this one did not are listed, not guessed.",
}

#: Metric -> (text, how to read it from an OutputDiff: larger is worse).
METRICS = {
    "max_lsb": "max error (LSB)",
    "rms_lsb": "RMS error (LSB)",
    "max_abs": "max abs error",
    "cosine": "1 − cosine",
    "sqnr": "SQNR (low is bad)",
}

#: Colour scale of the overlay: (upper bound in units of the tolerance, colour, legend).
SCALE = ((0.0, QColor("#2a9d8f"), "exact"), (0.5, QColor("#8ab17d"), "≤ ½ tol"),
         (1.0, QColor("#e9c46a"), "≤ tol"), (4.0, QColor("#f4a261"), "≤ 4 tol"),
         (math.inf, QColor("#e76f51"), "> 4 tol"))


def badness(d: OutputDiff, metric: str) -> float | None:
    """The chosen metric of ``d``, larger is worse; None when not defined."""
    m = d.metrics
    if m is None:
        return math.inf if d.exceeds else None
    if metric == "max_lsb":
        if m.by_excess and m.excess_lsb is not None:
            return m.excess_lsb        # what the verdict is taken on (a float reference)
        return m.max_lsb if m.max_lsb is not None else (m.max_abs if m.lsb is None else None)
    if metric == "rms_lsb":
        return m.rms_lsb if m.rms_lsb is not None else m.rms_abs
    if metric == "max_abs":
        return m.max_abs
    if metric == "cosine":
        return 1.0 - m.cosine
    return -m.sqnr_db                                       # sqnr: low is bad


def color_for(value: float | None, metric: str, tolerance: float) -> QColor | None:
    """The overlay colour of one value on the scale (tolerance 0 reads as 1 LSB)."""
    if value is None:
        return None
    if metric == "sqnr":      # SQNR: +inf exact, else buckets at 60/40/20 dB
        if value == -math.inf:
            return SCALE[0][1]
        sqnr = -value
        return SCALE[1][1] if sqnr >= 60 else SCALE[2][1] if sqnr >= 40 else \
            SCALE[3][1] if sqnr >= 20 else SCALE[4][1]
    if metric == "cosine":
        unit = 1e-4
    else:
        unit = tolerance if tolerance > 0 else 1.0
    if value <= 0:
        return SCALE[0][1]
    for bound, color, _ in SCALE[1:]:
        if value <= bound * unit:
            return color
    return SCALE[-1][1]


def legend(metric: str) -> list[tuple[str, QColor]]:
    if metric == "sqnr":
        return [("exact", SCALE[0][1]), ("≥ 60 dB", SCALE[1][1]), ("≥ 40 dB", SCALE[2][1]),
                ("≥ 20 dB", SCALE[3][1]), ("< 20 dB", SCALE[4][1])]
    if metric == "cosine":
        return [("1 − cos = 0", SCALE[0][1]), ("≤ 5e-5", SCALE[1][1]),
                ("≤ 1e-4", SCALE[2][1]), ("≤ 4e-4", SCALE[3][1]), ("> 4e-4", SCALE[4][1])]
    return [(text, color) for _, color, text in SCALE]


class ComparePanel(QWidget):
    """See the module docstring."""

    #: A comparison shows its busy row once it has taken this long.
    BUSY_DELAY_MS = 250
    TABS_BELOW = 1100       # panel width (px) under which A, B and A − B become tabs
    #: The least height of each picture (A, B, A − B): a 1024x700 window's Compare dock
    #: gave it ~60 px, an axis and a colour bar with no picture between.
    PICTURE_MIN_HEIGHT = 150

    compare_requested = Signal(str)          # a TARGETS key: the controller compares
    split_moved = Signal()                   # the user dragged the table/pictures splitter
    change_requested = Signal(str)           # picked in the list: choose B's file or backend
    cancel_requested = Signal()              # abandon the comparison in flight
    node_activated = Signal(object)     # a node id (uint32: prepare's own reach 0xffffffff)
    overlay_changed = Signal(object, object)  # ({node: QColor} | None, legend)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comparison: Comparison | None = None
        self.selected: OutputDiff | None = None
        self._rows: list[OutputDiff] = []
        self._sized: tuple[str, ...] = ()
        self._selecting = False
        self._opened = False        # the selection is the panel's own opening, not a pick
        self._build_ui()

    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        bar = FlowLayout()        # wraps in a narrow window rather than squeezing each control
        self.target = QComboBox()
        for key, text in TARGETS:
            self.target.addItem(text, key)
            self.target.setItemData(self.target.count() - 1, SEES[key],
                                    Qt.ItemDataRole.ToolTipRole)
        self.target.setToolTip(SEES[TARGETS[0][0]])
        self.target.currentIndexChanged.connect(
            lambda _i: self.target.setToolTip(SEES.get(self.target.currentData(), "")))
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Compare the current run with B (again)")
        self.tolerance = QDoubleSpinBox()
        self.tolerance.setRange(0.0, 1e6)
        self.tolerance.setDecimals(2)
        self.tolerance.setValue(1.0)
        self.tolerance.setSuffix(" LSB")
        self.tolerance.setToolTip("An output diverges beyond this many LSB (0: bit exact)")
        self.metric_box = QComboBox()
        for key, text in METRICS.items():
            self.metric_box.addItem(text, key)
        self.metric_box.setToolTip("The metric that colours the canvas")
        self.first_button = QPushButton("Go to first divergence")
        self.first_button.setEnabled(False)
        self.first_button.setShortcut("Ctrl+Shift+D")
        self.first_button.setToolTip("Select the earliest node beyond the tolerance "
                                     "(Ctrl+Shift+D)")
        self.legend = QLabel()
        self.legend.setToolTip("The canvas colours")
        for w in (QLabel("B:"), self.target, self.compare_button, QLabel("tolerance"),
                  self.tolerance, QLabel("colour by"), self.metric_box, self.first_button,
                  self.legend):
            bar.addWidget(w)
        lay.addLayout(bar)
        lay.addWidget(self._build_busy_row())
        self.summary = QLabel("Run the graph, then Compare.")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.summary)
        # the sensitivity ranking (issue 29), when one was made: each node a link that selects
        self.sensitivity = QLabel()
        self.sensitivity.setWordWrap(True)
        self.sensitivity.hide()
        self.sensitivity.linkActivated.connect(lambda href: self.node_activated.emit(
            int(href.removeprefix("node:"), 16)))
        lay.addWidget(self.sensitivity)
        split = self._split = QSplitter(Qt.Orientation.Horizontal)
        self.model = CompareTableModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        # column widths from the rows in view only: a pass over thousands of rows per
        # comparison would undo what the model saves
        self.table.horizontalHeader().setResizeContentsPrecision(0)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        # wrapped, a title broke at its space and only "0x6 'functional_1/..." showed
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)     # plan order first
        split.addWidget(self.table)
        views = self._build_views()
        split.addWidget(views)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([520, 760])
        split.splitterMoved.connect(lambda *_: self.split_moved.emit())
        lay.addWidget(split, 1)
        self.compare_button.clicked.connect(
            lambda: self.compare_requested.emit(self.target.currentData()))
        self.target.activated.connect(
            lambda _i: self.change_requested.emit(self.target.currentData()))
        self.first_button.clicked.connect(self.go_to_first_divergence)
        self.metric_box.currentIndexChanged.connect(lambda _i: self._emit_overlay())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._on_row())
        self.table.doubleClicked.connect(lambda _i: self._on_row())

    def _build_views(self) -> QWidget:
        """A, B and A − B side by side, or as tabs in a narrow panel (a 1024-wide window
        left each heatmap too thin for its picture and controls)."""
        self.view_a, self.view_b, self.view_diff = (TensorHeatmapView() for _ in range(3))
        self.view_titles = []
        self._view_boxes: list[QWidget] = []
        self._side = QWidget()
        QHBoxLayout(self._side).setContentsMargins(0, 0, 0, 0)
        self.view_tabs = QTabWidget()
        self.view_tabs.setDocumentMode(True)
        for title, view in (("A", self.view_a), ("B", self.view_b), ("A − B", self.view_diff)):
            box = QWidget()
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            label = QLabel(f"<b>{title}</b>")
            self.view_titles.append(label)
            lay.addWidget(label)
            lay.addWidget(view, 1)
            view.setMinimumWidth(140)     # squeeze the controls rather than scroll the dock
            view.set_picture_min_height(self.PICTURE_MIN_HEIGHT)
            self._view_boxes.append(box)
        self._views = QStackedWidget()
        self._views.addWidget(self._side)
        self._views.addWidget(self.view_tabs)
        self._tabbed: bool | None = None
        self._place_views(tabbed=False)
        return self._views

    def _place_views(self, tabbed: bool) -> None:
        if tabbed == self._tabbed:
            return
        self._tabbed = tabbed
        names = ("A", "B", "A − B")
        for box, name, title in zip(self._view_boxes, names, self.view_titles, strict=True):
            # a tab already names its side: its title line would take the picture's height
            title.setVisible(not tabbed)
            if tabbed:
                self.view_tabs.addTab(box, name)
            else:
                self._side.layout().addWidget(box, 1)
                box.show()      # a tab's hidden page stays hidden when moved back
        self._views.setCurrentWidget(self.view_tabs if tabbed else self._side)
        if hasattr(self, "comparison"):
            self._set_titles()

    def split_state(self) -> QByteArray:
        """The table/pictures splitter as the user left it (for the settings)."""
        return self._split.saveState()

    def restore_split(self, state: QByteArray) -> bool:
        return self._split.restoreState(state)

    @property
    def tabbed(self) -> bool:
        """Whether A, B and A − B are shown one at a time (a narrow panel)."""
        return bool(self._tabbed)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        # The word-wrapped summary and the flowing bar give the panel a height-for-width,
        # which a scroll area (the dock's) takes as the least height it may have: with the
        # table and pictures at their preferred size, taller than the dock, so the A, B and
        # A − B pictures sat below the dock's edge behind a scroll bar. Count the table and
        # pictures at their least height: the dock then gives them what it has.
        full = super().heightForWidth(width)
        split = self._split
        return full - split.sizeHint().height() + split.minimumSizeHint().height()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        self._place_views(tabbed=event.size().width() < self.TABS_BELOW)
        super().resizeEvent(event)

    def _build_busy_row(self) -> QWidget:
        # Shown while a comparison is made (on a worker): the table keeps the last result.
        self.busy_row = QWidget()
        row = QHBoxLayout(self.busy_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)                 # no known end: Qt animates it
        self.busy_bar.setTextVisible(False)
        self.busy_bar.setMaximumWidth(120)
        self.busy_bar.setMaximumHeight(14)
        self.busy_label = QLabel()
        self.busy_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop this comparison (its result is not shown)")
        self.cancel_button.clicked.connect(self.cancel_requested)
        row.addWidget(self.busy_bar)
        row.addWidget(self.busy_label, 1)
        row.addWidget(self.cancel_button)
        self.busy_row.setVisible(False)
        self._busy_text: str | None = None
        # A comparison that ends within the delay never shows the row: following a stepped
        # run, a row shown and hidden at every step would make the table jump.
        self._busy_timer = QTimer(self, singleShot=True, interval=self.BUSY_DELAY_MS)
        self._busy_timer.timeout.connect(lambda: self.busy_row.setVisible(True))
        return self.busy_row

    # model ----------------------------------------------------------------------------------
    def set_busy(self, text: str | None) -> None:
        """Say what the comparison in flight is doing (shown after ``BUSY_DELAY_MS``);
        None: nothing is in flight."""
        self._busy_text = text
        self.busy_label.setText(text or "")
        if text is None:
            self._busy_timer.stop()
            self.busy_row.setVisible(False)
        elif self.busy_row.isHidden() and not self._busy_timer.isActive():
            self._busy_timer.start()

    @property
    def busy(self) -> bool:
        """Whether a comparison is in flight (its row may not be shown yet)."""
        return self._busy_text is not None

    @property
    def target_key(self) -> str:
        return str(self.target.currentData())

    def set_target(self, key: str) -> None:
        self.target.setCurrentIndex(max(0, self.target.findData(key)))

    def set_target_text(self, key: str, text: str) -> None:
        """Name what B is for ``key`` (the chosen file) in the list."""
        index = self.target.findData(key)
        if index >= 0:
            self.target.setItemText(index, text)

    def _node_width(self) -> int:
        """The width the node column needs for its longest name (by characters: no
        pass over thousands of rows measuring each), with the mark if a row has one."""
        longest = max(self._rows, key=lambda d: len(d.row_name))
        marked = any(d.exceeds for d in self._rows)
        text = longest.row_name + (" ✱" if marked else "")
        margin = 2 * (self.table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin,
                                                     None, self.table) + 1)
        return self.table.fontMetrics().horizontalAdvance(text) + margin + 2

    def set_comparison(self, comparison: Comparison | None, note: str = "") -> None:
        """Show a comparison (keeps the selected output when it is still there)."""
        keep = (self.selected.node_id, self.selected.index) \
            if self.selected and not self._opened else None
        self.comparison = comparison
        self._rows = list(comparison.outputs) if comparison else []
        floats = comparison if isinstance(comparison, TfliteComparison) \
            and comparison.float_mode else None
        self.model.set_rows(self._rows, floats.against_float if floats else None)
        node = COLUMNS.index("node")
        # a long name (a TFLite tensor's) took the whole table and hid the figures: the
        # name column gets at most a third of the table (a quarter with the two float
        # columns), elided in the middle
        widest = max(120, self.table.viewport().width() // (4 if floats else 3))
        if self._rows and self._sized != self.model.columns:
            # once per set of columns: later the user's widths stay
            self._sized = self.model.columns
            self.table.resizeColumnsToContents()
            if self.table.columnWidth(node) > widest:
                self.table.setColumnWidth(node, widest)
        if self._rows:
            # Sized from the rows in view (0x10, 0x11...), the column cut a marked row
            # further down (or of a later comparison) to "0x... ✱": room for the longest
            # name with its mark, up to the same limit.
            wanted = min(widest, self._node_width())
            if self.table.columnWidth(node) < wanted:
                self.table.setColumnWidth(node, wanted)
        if comparison is None:
            self.summary.setText(note or "Run the graph, then Compare.")
        else:
            counts = f"{len(self._rows)} output(s), {len(comparison.exceeding)} beyond " \
                     f"{comparison.tolerance_lsb:g} LSB"
            extra = ""
            if comparison.unmatched_a or comparison.unmatched_b:
                extra = (f"<br>unmatched in A: {', '.join(comparison.unmatched_a) or 'none'}"
                         f"; in B: {', '.join(comparison.unmatched_b) or 'none'}")
            parting = html.escape(float_parting_line(floats)) if floats else ""
            self.summary.setText(f"A: {comparison.a_name} · B: {comparison.b_name} · {counts}"
                                 f"<br><b>{first_divergence_text(comparison)}</b>"
                                 + (f"<br>{parting}" if parting else "")
                                 + extra + (f"<br>{note}" if note else ""))
        # the long form, with why (the summary keeps one line: room for the pictures)
        self.summary.setToolTip(float_parting_text(floats) if floats else "")
        self.first_button.setEnabled(bool(comparison and comparison.first_divergence))
        self._set_titles()
        self._emit_overlay()
        if not (keep and self.show_output(*keep, emit=False)):
            self._show_opening()

    def show_sensitivity(self, html_text: str) -> None:
        """The sensitivity ranking's top nodes (links ``node:0xID``); '' hides it."""
        self.sensitivity.setText(html_text)
        self.sensitivity.setVisible(bool(html_text))

    def show_hint(self, text: str) -> None:
        """Say what to do next while no comparison is shown (a comparison's summary stays)."""
        if self.comparison is None and not self.busy and self.summary.text() != text:
            self.summary.setText(text)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        # A theme switch: the rows beyond the tolerance take the new theme's error colour
        # (the model reads it as the view paints).
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.table.viewport().update()
        super().changeEvent(event)

    def row_of(self, node_id: int, index: int = 0) -> int | None:
        return self.model.row_of(node_id, index)

    def show_output(self, node_id: int, index: int = 0, emit: bool = False) -> bool:
        """Select the row of (node, output) and show its A, B and A − B."""
        self._opened = False
        row = self.model.row_of(node_id, index)
        if row is None:
            row = self.model.row_of(node_id)
        if row is None:
            # no row of it (a node just added): no row stays selected over empty pictures
            self._selecting = True
            try:
                self.table.clearSelection()
            finally:
                self._selecting = False
            self._show(None)
            return False
        self._select_row(row)
        if emit and self.selected is not None:
            self.node_activated.emit(self.selected.node_id)
        return True

    def _show_opening(self) -> None:
        # Open on the first divergence (else the table's top row), so the pictures are not
        # empty axes until a row is picked; no node_activated: the canvas stays where it is.
        c = self.comparison
        d = c.first_divergence if c is not None else None
        row = self.model.row_of(d.node_id, d.index) if d is not None else None
        if row is None and self.model.rowCount() > 0:
            row = 0
        if row is None:
            self._show(None)
        else:
            self._select_row(row)
        # a later comparison (the next step) opens on its own first divergence again
        self._opened = True

    def _select_row(self, row: int) -> None:
        self._selecting = True               # no node_activated for our own selection
        try:
            self.table.selectRow(row)
        finally:
            self._selecting = False
        self.table.scrollTo(self.model.index(row, 0))
        self._show(self.model.diff(row))

    def go_to_first_divergence(self) -> None:
        d = self.comparison.first_divergence if self.comparison else None
        if d is not None:
            self.show_output(d.node_id, d.index, emit=True)

    # internals ------------------------------------------------------------------------------
    def _on_row(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or self._selecting:
            return
        d = self.model.diff(rows[0].row())
        self._opened = False
        self._show(d)
        self.node_activated.emit(d.node_id)

    def _show(self, d: OutputDiff | None) -> None:
        self.selected = d
        pair = d.values() if d is not None else None     # made again for this output only
        if d is None or pair is None:
            for view in (self.view_a, self.view_b, self.view_diff):
                view.set_tensor(None)
            return
        a = np.asarray(pair[0], np.float32).reshape(d.shape)
        b = np.asarray(pair[1], np.float32).reshape(d.shape)
        lsb = d.metrics.lsb if d.metrics else None
        diff = (a.astype(np.float64) - b) / (lsb if lsb else 1.0)
        unit = "LSB" if lsb else ("codes" if d.unit == "codes" else "real")
        self.view_titles[2].setText(f"<b>A − B</b> ({unit})")
        worst = d.metrics.worst_index if d.metrics else None
        for view, values in ((self.view_a, a), (self.view_b, b),
                             (self.view_diff, diff.astype(np.float32))):
            view.set_tensor(Tensor.from_array(np.nan_to_num(values, posinf=0, neginf=0)))
            if worst is not None and len(worst) == 4:
                view.select(tuple(worst))

    def _set_titles(self) -> None:
        # with every comparison, not only when a row is shown: the last comparison's names
        # ("float reference", "sim") stayed over another kind's pictures
        c = self.comparison
        for k, (name, label) in enumerate((("A", c.a_name if c else ""),
                                           ("B", c.b_name if c else ""))):
            self.view_titles[k].setText(f"<b>{name}</b> {label}")
            if self.tabbed:
                self.view_tabs.setTabText(k, f"{name}: {label}" if label else name)

    def _emit_overlay(self) -> None:
        if self.comparison is None:
            self.legend.setText("")
            self.overlay_changed.emit(None, [])
            return
        metric = str(self.metric_box.currentData())
        colors: dict[int, QColor] = {}
        worst: dict[int, float] = {}
        for d in self.comparison.outputs:
            value = badness(d, metric)
            if value is not None and (d.node_id not in worst or value > worst[d.node_id]):
                worst[d.node_id] = value
        for node_id, value in worst.items():
            color = color_for(value, metric, self.comparison.tolerance_lsb)
            if color is not None:
                colors[node_id] = color
        scale = legend(metric)
        self.legend.setText("  ".join(f"<span style='color:{c.name()}'>■</span> {text}"
                                      for text, c in scale))
        self.overlay_changed.emit(colors, scale)
