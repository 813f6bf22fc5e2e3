"""The Ranges panel's actions (issue 29): apply a calibrated ranges file as one undo step,
and rank the nodes by sensitivity, shown on the canvas and in the Compare panel.

Applying reads the file (``hexscope calibrate``'s, or an AIMET/QNN one by node labels),
rewrites the graph (``engine.ranges.apply``) and pushes the edits as one command; the panel
then shows each changed node's range in the last run beside the range it now has (the op's
own nudge included). Undo takes the whole change back and hides that table.

The ranking runs on a thread of its own, on a copy of the graph and the last run's inputs;
its top nodes get a colour (red for the biggest share of the output error) and a rank badge.
"""

from __future__ import annotations

import html
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFileDialog, QMessageBox

from hexscope.app.commands import GraphEditCommand
from hexscope.engine import EngineError
from hexscope.engine.analysis.ranges import output_range, quantized_outputs
from hexscope.engine.graph import Graph
from hexscope.engine.ranges.apply import Applied, apply_ranges
from hexscope.engine.ranges.encodings import read_ranges
from hexscope.engine.ranges.sensitivity import Sensitivity, sensitivity
from hexscope.widgets.range_panel import AppliedRow

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

#: How many of the ranked nodes the canvas marks.
TOP = 10


def share_color(share: float) -> QColor:
    """Pale orange for a small share of the output error, deep red for half or more."""
    x = max(0.0, min(1.0, share / 0.5))
    return QColor(int(250 - 40 * x), int(200 - 170 * x), int(120 - 90 * x))


class RangesController(QObject):
    """See the module docstring."""

    _ranked = Signal(int, object)           # job, Future of the ranking (from its thread)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.panel = window.views.range_panel  # type: ignore[attr-defined]
        self.ranking: Sensitivity | None = None
        self._ranked_ids: list[int] = []
        self._applied_at = -1
        self._job = 0
        self.panel.apply_requested.connect(self.ask_apply)
        self.panel.sensitivity_requested.connect(self.rank)
        self._ranked.connect(self._ranking_arrived)        # queued: arrives here
        window.undo_stack.indexChanged.connect(self._on_undo_index)
        window.graph_replaced.connect(self._forget)

    # applying a ranges file -------------------------------------------------------------------
    def ask_apply(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.w, "Apply calibrated ranges", "",
                                              "Ranges (*.json);;All files (*)")
        if path:
            self.apply_file(path)

    def apply_file(self, path: str) -> Applied | None:
        """Apply ``path`` to the window's graph as one undo step; None when nothing changed
        (the reason is shown)."""
        graph = self.w.graph
        before = self._last_ranges()
        try:
            ranges = read_ranges(path, graph)
            applied = apply_ranges(graph, ranges)
        except EngineError as exc:
            QMessageBox.warning(self.w, "Cannot apply the ranges", str(exc))
            return None
        if not applied.changes:
            self.w.statusBar().showMessage(
                f"{path}: no range for any node that finds its range at run time", 10000)
            return None
        text = f"Apply calibrated ranges ({len(applied.changes)} nodes)"
        self.w.undo_stack.push(GraphEditCommand(graph, applied.edits, text))
        self._applied_at = self.w.undo_stack.index()
        rows = [AppliedRow(c.node_id, c.before,
                           before.get(c.node_id) or before.get(c.source[0]), c.after,
                           c.used, f"0x{c.source[0]:x}:{c.source[1]}")
                for c in applied.changes]
        left = f"; left as they were: {len(applied.left)}" if applied.left else ""
        self.panel.show_applied(f"<b>Applied</b> {html.escape(path)}: "
                                f"{len(applied.changes)} node(s) given fixed ranges{left} "
                                "(Ctrl+Z takes them back)", rows)
        return applied

    def _last_ranges(self) -> dict[int, tuple[float, float]]:
        """Output 0's range per node in the last run (when the session is idle)."""
        s = self.w.session
        controller = getattr(self.w, "controller", None)
        if s is None or (controller is not None and controller.busy):
            return {}
        found: dict[int, tuple[float, float]] = {}
        for node_id in s.plan:
            result = s.result(node_id)
            if result is not None and 0 in quantized_outputs(result.outputs):
                r = output_range(result.outputs, 0)
                found[node_id] = (r.min, r.max)
        return found

    def _on_undo_index(self, index: int) -> None:
        if self._applied_at >= 0 and index < self._applied_at:
            self._applied_at = -1
            self.panel.show_applied("", [])

    # sensitivity -----------------------------------------------------------------------------
    def rank(self) -> None:
        """Rank on the last run's inputs, off the GUI thread."""
        s = self.w.session
        controller = getattr(self.w, "controller", None)
        if s is None or not s.inputs or (controller is not None and controller.busy):
            self.w.statusBar().showMessage(
                "Run the graph first: the ranking uses the last run's inputs", 10000)
            return
        graph = Graph.from_snapshot(self.w.graph.snapshot())
        inputs, fusions = [list(s.inputs)], s.fusions
        self._job += 1
        job = self._job
        self.panel.sensitivity_button.setEnabled(False)
        self.panel.sensitivity_button.setText("Ranking…")
        _thread().submit(sensitivity, graph, inputs, fusions=fusions).add_done_callback(
            lambda done: self._ranked.emit(job, done))

    def _ranking_arrived(self, job: int, done: Future) -> None:
        if job != self._job:
            return
        self.panel.sensitivity_button.setEnabled(True)
        self.panel.sensitivity_button.setText("Rank by sensitivity")
        try:
            ranking = done.result()
        except EngineError as exc:
            QMessageBox.warning(self.w, "Cannot rank by sensitivity", str(exc))
            return
        self.show_ranking(ranking)

    def show_ranking(self, ranking: Sensitivity) -> None:
        """Colour and badge the top nodes on the canvas; list them in the Compare panel."""
        self._clear_ranks()
        self.ranking = ranking
        top = [n for n in ranking.top(TOP) if n.drop > 0]
        base = ranking.baseline or 1.0
        colors = {n.node_id: share_color(n.drop / base) for n in top}
        self.w.set_overlay(colors, [("small share of the output error", share_color(0.02)),
                                    ("half or more", share_color(0.5))])
        for n in top:
            self.w.scene.set_look(
                n.node_id, rank=f"#{n.rank}",
                overlay_note=f"sensitivity #{n.rank}: with this node in float the output "
                             f"error drops by {n.drop / base:.1%} ({ranking.baseline:.4g} → "
                             f"{n.error_in_float:.4g} RMS)")
        self._ranked_ids = [n.node_id for n in top]
        compare = getattr(self.w, "compare", None)
        if compare is not None:
            items = ", ".join(
                f"<a href='node:{n.node_id:x}'>#{n.rank} 0x{n.node_id:x} "
                f"{html.escape(n.label or n.op)}</a> {n.drop / base:.1%}" for n in top)
            compare.panel.show_sensitivity(
                "<b>Sensitivity</b> (share of the output error removed with the node alone "
                f"in float): {items or 'no node lowers the error'}")

    def _clear_ranks(self) -> None:
        for node_id in self._ranked_ids:
            self.w.scene.set_look(node_id, rank="", overlay_note="")
        self._ranked_ids = []

    def _forget(self) -> None:
        self._clear_ranks()
        self.ranking = None
        self._applied_at = -1
        self.panel.show_applied("", [])
        compare = getattr(self.w, "compare", None)
        if compare is not None:
            compare.panel.show_sensitivity("")


def _thread() -> ThreadPoolExecutor:
    if not _THREAD:
        _THREAD.append(ThreadPoolExecutor(1, thread_name_prefix="hexscope-sensitivity"))
    return _THREAD[0]


_THREAD: list[ThreadPoolExecutor] = []


def install_ranges(window: MainWindow) -> RangesController:
    """The Ranges panel's apply and sensitivity actions (needs the views installed)."""
    controller = RangesController(window)
    window.ranges = controller  # type: ignore[attr-defined]
    return controller
