"""install_views(window): the tensor, d32 padding, FillPadding, padding check and range docks.

The views follow the main window through the APP_CONTRACT API only: ``session_changed``,
``graph_replaced``, ``node_selected``, ``results_changed``, ``add_dock``, ``select_node`` and
``set_overlay``.
Tensors are read on the GUI thread after ``results_changed``; they are read-only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QSplitter, QWidget

from hexscope.engine import EngineError, Layout, Session, Tensor
from hexscope.engine.analysis.ranges import load_references, node_ranges
from hexscope.widgets.d32_view import D32PaddingView
from hexscope.widgets.fill_padding_view import FillPaddingView
from hexscope.widgets.padding_check_panel import PaddingCheckPanel
from hexscope.widgets.range_panel import RangePanel
from hexscope.widgets.range_plot import RangePlotView
from hexscope.widgets.tensor_inspector import TensorInspector

DOCK = Qt.DockWidgetArea


class ViewsController(QObject):
    """Keeps the views in step with the window's session and selected node."""

    _ranges_ready = Signal(int, object)     # job, a Future of node_ranges (from its thread)

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.w = window
        self.node_id = -1
        self.references: dict[int, object] | None = None
        self.batch_stats: list = []
        self._shown: object = _UNSHOWN
        self._build()
        self._ranges_timer = QTimer(self, singleShot=True, interval=150)
        self._ranges_timer.timeout.connect(self.refresh_ranges)
        self._ranges_job = 0
        self._ranges_ready.connect(self._ranges_arrived)     # queued: arrives here
        self._connect()

    def _build(self) -> None:
        self.inspector = TensorInspector()
        self.d32 = D32PaddingView()
        self.fill = FillPaddingView()
        self.check = PaddingCheckPanel()
        self.range_panel = RangePanel()
        self.range_plot = RangePlotView()
        ranges = QSplitter(Qt.Orientation.Vertical)
        ranges.addWidget(self.range_panel)
        ranges.addWidget(self.range_plot)
        w = self.w
        self.docks = {
            "tensor": w.add_dock("Tensor", self.inspector, DOCK.BottomDockWidgetArea),
            "d32": w.add_dock("d32 padding", self.d32, DOCK.BottomDockWidgetArea),
            "fill": w.add_dock("FillPadding", self.fill, DOCK.BottomDockWidgetArea),
            "check": w.add_dock("Padding check", self.check, DOCK.BottomDockWidgetArea),
            "ranges": w.add_dock("Ranges", ranges, DOCK.BottomDockWidgetArea),
        }
        if hasattr(w, "splitDockWidget"):
            w.splitDockWidget(self.docks["tensor"], self.docks["d32"], Qt.Orientation.Horizontal)
            for key in ("fill", "check", "ranges"):
                w.tabifyDockWidget(self.docks["d32"], self.docks[key])
            self.docks["d32"].raise_()

    def _connect(self) -> None:
        w = self.w
        w.session_changed.connect(self._on_session)
        w.graph_replaced.connect(self._on_graph_replaced)
        w.node_selected.connect(self._on_node)
        w.results_changed.connect(self._on_results)
        self.inspector.element_selected.connect(self._inspector_selected)
        self.inspector.output_changed.connect(self._inspector_output)
        self.d32.element_selected.connect(self._d32_selected)
        for source in (self.range_panel, self.range_plot, self.check):
            source.node_activated.connect(w.select_node)
        self.range_panel.overlay_changed.connect(self._range_overlay)
        self.check.overlay_changed.connect(w.set_overlay)
        self.range_panel.load_reference_requested.connect(self._load_reference)
        self.range_panel.load_batch_requested.connect(self._load_batch)
        self.docks["ranges"].visibilityChanged.connect(self._on_ranges_visible)
        for dock in self.docks.values():
            dock.visibilityChanged.connect(self._on_view_shown)
        self.check.set_graph(lambda: w.graph, self._check_inputs)

    # following the window ---------------------------------------------------------------------
    @property
    def session(self) -> Session | None:
        return self.w.session

    def _on_session(self, session: Session | None) -> None:
        self.check.set_graph(lambda: self.w.graph, self._check_inputs)
        self._shown = _UNSHOWN
        self.show_node()
        self._ranges_timer.start()

    def _on_view_shown(self, visible: bool) -> None:
        """A data view brought to the front gets room for its picture (the bottom dock area
        opens at a height fit for a problems list)."""
        dock = self.sender()
        if visible and hasattr(self.w, "make_room_for"):
            self.w.make_room_for(dock)

    def _on_ranges_visible(self, _visible: bool) -> None:
        self._ranges_timer.start()

    def _on_graph_replaced(self) -> None:
        """New, Open or restore: what was loaded for the old graph goes with it."""
        self.references = None
        self.batch_stats = []
        self.node_id = -1
        self.range_panel.set_stats([])
        self.range_plot.set_stats([])

    def _on_node(self, node_id: int) -> None:
        self.node_id = node_id
        self._shown = _UNSHOWN
        self.show_node()

    def _on_results(self) -> None:
        self.show_node()
        self._ranges_timer.start()

    def _result(self):
        s = self.session
        if s is None or self.node_id < 0:
            return None
        node = s.prepared.nodes.get(self.node_id)
        if node is not None and node.is_const and node.const is not None:
            return (node.const,)
        result = s.result(self.node_id)
        return None if result is None else result.outputs

    def show_node(self) -> None:
        """Show the selected node's outputs (only when they changed: runs emit often)."""
        outputs = self._result()
        # None (nothing selected, or not run) counts as shown too: with no node selected,
        # every node a run finished cleared all the views again (185 ms of a 0.45 s run of
        # a 1,073-node graph whose nodes computed in 55 ms)
        if outputs is self._shown:
            return
        self._shown = outputs
        s = self.session
        title = ""
        if s is not None and self.node_id >= 0 and self.node_id in s.prepared.nodes:
            node = s.prepared.nodes[self.node_id]
            title = f"0x{self.node_id:x} {node.op}" + (f" '{node.label}'" if node.label else "")
        outputs = tuple(outputs or ())
        index = next((k for k, t in enumerate(outputs) if t.layout is Layout.D32), 0)
        # Each view on its own: one that cannot show an odd tensor must not leave the others
        # showing the previous node.
        _guarded("Tensor", self.inspector.set_outputs, title, outputs, index)
        _guarded("d32 padding", self.d32.set_tensor, self.inspector.tensor,
                 self.inspector.qrange)
        _guarded("FillPadding", lambda: self.fill.set_tensors(
            *self._fill_pair(outputs), title,
            unwritten=s.padding_fill if s is not None else None))

    def _range_overlay(self, colors: object, legend: object) -> None:
        """The range panel's overlay. Its "none" (sent on every refresh of its table) clears
        only its own overlay, not the one another panel (Compare) shows."""
        if colors is None and not getattr(self, "_range_overlay_on", False):
            return
        self._range_overlay_on = colors is not None
        self.w.set_overlay(colors, legend)

    def _inspector_output(self) -> None:
        """The d32 view follows the output picked in the Tensor view when it is a d32 one."""
        tensor = self.inspector.tensor
        if tensor is not None and tensor.layout is Layout.D32:
            _guarded("d32 padding", self.d32.set_tensor, tensor, self.inspector.qrange)

    # The d32 view may still show another output than the Tensor view (a flat one picked
    # there): an index is only shared while both show the same tensor (it could lie outside
    # the other one).
    def _inspector_selected(self, index: object) -> None:
        if self.inspector.tensor is self.d32.tensor:
            self.d32.select(index)

    def _d32_selected(self, index: object) -> None:
        if self.inspector.tensor is self.d32.tensor:
            self.inspector.select(index)

    def _fill_pair(self, outputs: tuple[Tensor, ...]) -> tuple[Tensor | None, Tensor | None]:
        """Input 0 and output 0 of a node that takes and gives d32 (FillPadding above all)."""
        s = self.session
        if s is None or not outputs or self.node_id not in s.prepared.nodes:
            return None, None
        node = s.prepared.nodes[self.node_id]
        if not node.inputs or outputs[0].layout is not Layout.D32:
            return None, None
        try:
            before = s.executor.input_tensor(node.inputs[0])
        except EngineError:
            return None, None
        return (before, outputs[0]) if before.layout is Layout.D32 else (None, None)

    # ranges -----------------------------------------------------------------------------------
    def refresh_ranges(self) -> None:
        controller = getattr(self.w, "controller", None)
        # Not while the session's thread runs: it adds results meanwhile (the run's end
        # brings results_changed, and so this, again).
        if not self.docks["ranges"].isVisible() or (controller is not None and controller.busy):
            return
        s = self.session
        self._ranges_job += 1
        if s is not None and len(s.plan) >= RANGES_APART:
            # Off the GUI thread, from a copy of what it reads (the results are immutable):
            # a bincount per output of 3,000 outputs was 0.1-0.4 s of a frozen window.
            job, run = self._ranges_job, _RunCopy(s)
            _ranges_thread().submit(node_ranges, run, self.references).add_done_callback(
                lambda done: self._ranges_ready.emit(job, done))
            return
        stats = node_ranges(s, self.references) if s is not None else []  # type: ignore[arg-type]
        self._show_ranges(self._ranges_job, stats)

    def _ranges_arrived(self, job: int, done: Future) -> None:
        try:
            stats = done.result()
        except EngineError as exc:
            _LOG.warning("the Ranges view could not read the run: %s", exc)
            stats = []
        self._show_ranges(job, stats)

    def _show_ranges(self, job: int, stats: list) -> None:
        if job != self._ranges_job:
            return                        # a newer refresh was asked for
        stats = stats + list(self.batch_stats)
        self.range_panel.set_stats(stats)
        self.range_plot.set_stats(stats)

    def _load_reference(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.w, "Float reference per node", "",
                                              "numpy archive (*.npz)")
        if not path:
            return
        try:
            self.references = load_references(path)
        except EngineError as exc:
            QMessageBox.warning(self.w, "Cannot load reference", str(exc))
            return
        self.refresh_ranges()

    def _load_batch(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.w, "Batch report", "", "JSON (*.json)")
        if not path:
            return
        try:
            from hexscope.engine.analysis.ranges import load_batch_ranges

            self.batch_stats = load_batch_ranges(path)
        except (EngineError, ImportError) as exc:
            QMessageBox.warning(self.w, "Cannot load batch ranges", str(exc))
            return
        self.refresh_ranges()

    # padding check ------------------------------------------------------------------------------
    def _check_inputs(self):
        s = self.session
        if s is not None and s.inputs:
            return list(s.inputs)
        from hexscope.engine.inputs import make_inputs

        files = getattr(self.w, "files", None)
        path = getattr(files, "path", None)
        base = os.path.dirname(os.path.abspath(path)) if path else None
        return make_inputs(self.w.graph, Path(base) if base else None)


#: From this many planned nodes, the Ranges view's statistics are made on another thread.
RANGES_APART = 500


class _RunCopy:
    """What node_ranges reads of an idle session, copied (the results are immutable)."""

    def __init__(self, session: Session) -> None:
        self.plan = tuple(session.plan)
        self._results = {nid: session.result(nid) for nid in self.plan}
        self.prepared = SimpleNamespace(nodes=dict(session.prepared.nodes))

    def result(self, node_id: int) -> object:
        return self._results.get(node_id)


def _ranges_thread() -> ThreadPoolExecutor:
    if not _RANGES_THREAD:
        _RANGES_THREAD.append(ThreadPoolExecutor(1, thread_name_prefix="hexscope-ranges"))
    return _RANGES_THREAD[0]


_RANGES_THREAD: list[ThreadPoolExecutor] = []

#: What the views show before any node's outputs (None is "no outputs", a state too).
_UNSHOWN = object()


def _guarded(view: str, show: Callable[..., object], *args: object) -> None:
    """Call a view's setter; a failure is logged (the view keeps its empty or last state)
    instead of escaping into Qt's event loop and stopping the views after it."""
    try:
        show(*args)
    except Exception as exc:  # noqa: BLE001 - a view bug must not stop the other views
        _LOG.warning("the %s view could not show this node: %s: %s", view,
                     type(exc).__name__, exc)


_LOG = logging.getLogger("hexscope.views")


def install_views(window: QWidget) -> ViewsController:
    """Add the views' docks to ``window`` and wire them to its signals."""
    controller = ViewsController(window)
    window.views = controller  # type: ignore[attr-defined]
    if hasattr(window, "controller") and hasattr(window, "scene"):   # the real main window
        from hexscope.app.compare_actions import install_compare

        install_compare(window)  # type: ignore[arg-type]
        from hexscope.app.ranges_actions import install_ranges

        install_ranges(window)  # type: ignore[arg-type]
        from hexscope.app.device_actions import install_device_actions
        install_device_actions(window)  # type: ignore[arg-type]
    return controller
