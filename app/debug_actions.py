"""Debug menu and toolbar: Run/Continue F5, Step F10, Run to Ctrl+F10, Breakpoint F9,
Restart Ctrl+Shift+F5, Stop Shift+F5, and the node looks that follow the run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox, QStyle, QToolBar

from hexscope.app.warning_summary import WarningGroup, group_warnings
from hexscope.engine.errors import InputError
from hexscope.engine.events import (
    GraphEdited,
    LogLine,
    NodeFailed,
    NodeFinished,
    NodeStarted,
    RunFinished,
    RunStatus,
)
from hexscope.engine.executor import NodeStatus
from hexscope.engine.inputs import (
    InputSource,
    declared_shapes,
    input_sources,
    set_input_sources,
)
from hexscope.widgets.event_turns import may_run
from hexscope.widgets.inputs_dialog import InputsDialog

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow
    from hexscope.engine.session import Session

SP = QStyle.StandardPixmap
#: From this many nodes, refresh_looks sets the looks between events, this long at a time.
LOOKS_AT_ONCE = 2000
LOOKS_SLICE_S = 0.015
_NO_RUN: dict[str, object] = {"status": "", "is_next": False, "error": "", "seconds": None,
                               "warnings": []}


class DebugActions:
    def __init__(self, window: MainWindow) -> None:
        self.w = window
        self.breakpoints: set[int] = set()
        self.visual_stale: set[int] = set()
        self.run_to_target: int | None = None     # Ctrl+F10's node, until the run ends
        self.warnings: dict[int, tuple[str, ...]] = {}   # what nodes warned, this session
        self._looks: Iterator[tuple[int, dict[str, object]]] = iter(())   # still to set
        self._looks_scheduled = False
        self._build_actions()
        self._problems_timer = QTimer(window, singleShot=True, interval=250)
        self._problems_timer.timeout.connect(lambda: self.w.show_problems())
        c = window.controller
        c.node_started.connect(self._on_started)
        c.node_finished.connect(self._on_finished)
        c.node_failed.connect(self._on_failed)
        c.run_finished.connect(self._on_run_finished)
        c.idle.connect(self._on_idle)
        c.error.connect(self._on_error)
        c.busy_changed.connect(self._on_busy)

    def _build_actions(self) -> None:
        w = self.w
        style = w.style()
        spec = [
            ("run", "Run / &Continue", "F5", SP.SP_MediaPlay, self.run),
            ("step", "&Step", "F10", SP.SP_ArrowForward, self.step),
            ("run_to", "Run &to selected", "Ctrl+F10", SP.SP_MediaSeekForward, self.run_to),
            ("breakpoint", "Toggle &breakpoint", "F9", SP.SP_DialogNoButton,
             self.toggle_breakpoint),
            ("restart", "&Restart", "Ctrl+Shift+F5", SP.SP_BrowserReload, self.restart),
            ("stop", "St&op", "Shift+F5", SP.SP_MediaStop, self.stop),
            ("inputs", "&Inputs…", "Ctrl+I", SP.SP_FileDialogDetailedView, self.edit_inputs),
        ]
        menu = w.menuBar().addMenu("&Debug")
        self.toolbar = w.addToolBar("Debug")
        self.toolbar.setObjectName("debug-toolbar")
        view_bar = w.findChild(QToolBar, "view-toolbar")
        if view_bar is not None:
            # first in the row: where the toolbars overflow (1024 pixels wide), the
            # everyday actions stay and the view's rarer ones go behind the » button
            w.insertToolBar(view_bar, self.toolbar)
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.actions: dict[str, QAction] = {}
        for key, text, shortcut, icon, slot in spec:
            act = QAction(style.standardIcon(icon), text, w)
            act.setShortcut(QKeySequence(shortcut))
            act.setToolTip(f"{text.replace('&', '')} ({shortcut})")
            act.setIconText(text.replace("&", "").replace(" / Continue", "").replace("…", "")
                            .replace("Toggle b", "B").replace(" selected", ""))
            act.triggered.connect(slot)
            menu.addAction(act)
            self.toolbar.addAction(act)
            w.addAction(act)
            self.actions[key] = act
        self.actions["stop"].setEnabled(False)

    # commands -------------------------------------------------------------------------------
    def _start(self) -> None:
        self.visual_stale.clear()
        self.w.run_errors.clear()       # a new attempt: the last one's errors are answered

    def _refused(self) -> bool:
        """True (with a word in the status bar) when a debug command cannot start now."""
        w = self.w
        if w.welcome is not None and w.central.currentWidget() is w.welcome:
            # the graph behind the welcome page is not what the user is looking at
            w.statusBar().showMessage("Open a graph or an example first: the welcome page "
                                      "is shown", 6000)
            return True
        return w.controller.busy

    def run(self) -> None:
        if not self._refused():
            self._start()
            self.w.controller.run(self.breakpoints)

    def step(self) -> None:
        if not self._refused():
            self._start()
            self.w.controller.step(self.breakpoints)

    def run_to(self) -> None:
        """Run until the selected node is next: it stops *before* that node, as a
        breakpoint does (one rule for both; F10 then runs it)."""
        if self._refused():
            return
        ids = self.w.scene.selected_ids()
        if not ids:
            self.w.statusBar().showMessage("Select the node to run to", 5000)
            return
        target = ids[0]
        why = self._cannot_run_to(target)
        if why:
            self.w.statusBar().showMessage(why, 8000)
            return
        self._start()
        self.run_to_target = target
        self.w.controller.run(self.breakpoints | {target})

    def _cannot_run_to(self, target: int) -> str:
        session = self.w.session
        if session is None or getattr(self.w.controller, "edited_since_run", False):
            return ""           # the run prepares (again) first: nothing to check against
        if target not in session.prepared.nodes or session.prepared.nodes[target].is_const:
            return (f"0x{target:x} does not run: prepare fused or removed it, or it is a "
                    "Const (View ▸ Show prepared graph)")
        if session.next_node == target:
            return f"Already paused before 0x{target:x}: F10 runs it"
        if session.next_node is not None and session.status(target) is NodeStatus.DONE:
            return (f"0x{target:x} has already run in this run: Restart (Ctrl+Shift+F5) "
                    "to run to it again")
        return ""

    def restart(self) -> None:
        if not self._refused():
            self._start()
            self.w.controller.restart()

    def stop(self) -> None:
        """Stop a run between nodes; when nothing runs, end the debug session."""
        if self.w.controller.busy:
            self.w.controller.stop()
        else:
            self.w.controller.close_session()

    def toggle_breakpoint(self) -> None:
        for node_id in self.w.scene.selected_ids():
            self.breakpoints ^= {node_id}
            self.w.scene.set_look(node_id, breakpoint=node_id in self.breakpoints)

    def edit_inputs(self) -> None:
        graph = self.w.graph
        try:
            sources = input_sources(graph)
        except InputError as exc:
            # Damaged settings in the file: say so and start the dialog from the defaults.
            QMessageBox.warning(self.w, "Input settings", f"{exc}\n\nThe dialog starts from "
                                "the default inputs; OK saves them over the damaged ones.")
            sources = [InputSource(seed=k) for k, _ in enumerate(declared_shapes(graph))]
        dialog = InputsDialog(sources, declared_shapes(graph), self.w)
        if dialog.exec() != InputsDialog.DialogCode.Accepted:
            return
        set_input_sources(graph, dialog.sources())
        self.w.files.meta_dirty = True
        self.w.update_title()
        if self.w.controller.session is not None:
            self.restart()

    # following the graph --------------------------------------------------------------------
    def on_graph_edited(self, event: GraphEdited) -> None:
        """Mark nodes whose results the edit made stale, before the session re-prepares."""
        session = self.w.session
        if session is None or not event.affects_results:
            return
        ran = set(session.executor.trace)
        stale = (self.w.graph.downstream(event.changed) | set(event.changed)) & ran
        self.visual_stale |= stale
        # refresh_looks shows them stale (visual_stale), between events on a large graph:
        # setting the looks of a whole graph's downstream here first was 45 ms of the
        # GUI thread at 10,000 nodes, right before the F5 that usually follows an edit.
        self.refresh_looks()

    def warning_groups(self) -> list[WarningGroup]:
        """The session's node warnings, one group per distinct text, in plan order."""
        session = self.w.session
        order = session.plan if session is not None else ()
        ranked = sorted(self.warnings, key={n: k for k, n in enumerate(order)}.get
                        if order else None)
        return group_warnings((n, text) for n in ranked for text in self.warnings[n])

    def refresh_looks(self) -> None:
        """Every node's look from the session (when the worker is idle). The looks are
        read at once; on a large graph they are set a slice at a time between events (a
        restart changes all 10,000: 0.3 s of redrawn nodes), until a run starts."""
        self._looks = iter(())
        session = self.w.session
        if session is None:
            self.warnings.clear()
            looks = [(nid, _NO_RUN) for nid in self.w.graph.order]
        else:
            looks = self._session_looks(session)
        if len(looks) < LOOKS_AT_ONCE:
            for node_id, look in looks:
                self.w.scene.set_look(node_id, **look)
            return
        # All between events, the first slice too: at a run's end or after an edit it came
        # on top of the other views' updates in the same turn of the event loop.
        # the next node's mark (first) at once: F10's answer
        self.w.scene.set_look(looks[0][0], **looks[0][1])
        self._looks = iter(looks[1:])
        self._schedule_looks()

    def _schedule_looks(self) -> None:
        if not self._looks_scheduled:           # one chain of slices, however many refreshes
            self._looks_scheduled = True
            # a timer, not a posted call (0 ms): Qt runs posted calls back to back before
            # any timer, so chained slices and other views' work made one long turn
            QTimer.singleShot(1, self.w, self._set_looks_slice)

    def _set_looks_slice(self) -> None:
        self._looks_scheduled = False
        if not may_run(self):               # the pass has had its share (event_turns)
            self._schedule_looks()
            return
        scene, end = self.w.scene, time.perf_counter() + LOOKS_SLICE_S
        for node_id, look in self._looks:
            scene.set_look(node_id, **look)
            if time.perf_counter() > end:
                self._schedule_looks()
                return

    def _session_looks(self, session: Session) -> list[tuple[int, dict[str, object]]]:
        looks: list[tuple[int, dict[str, object]]] = []
        next_node = None
        # Read once: `in session.plan` (a tuple) for every node was quadratic after a run
        # to the end (no next node stops it): 0.4 s of 20,000 nodes' looks.
        planned, nodes, failed = set(session.plan), session.prepared.nodes, session.executor.failed
        waiting = (NodeStatus.PENDING, NodeStatus.STALE, NodeStatus.FAILED)
        for node_id in self.w.graph.order:
            node = nodes.get(node_id)
            if node is None or node.is_const:
                looks.append((node_id, _NO_RUN))
                continue
            status = session.status(node_id)
            if status is NodeStatus.DONE and node_id in self.visual_stale:
                status = NodeStatus.STALE
            result = session.result(node_id)
            if next_node is None and node_id in planned and status in waiting:
                next_node = node_id
            if result is None:
                self.warnings.pop(node_id, None)
            looks.append((node_id, {"status": status.value, "is_next": node_id == next_node,
                                    "error": failed.get(node_id, ""),
                                    "seconds": result.seconds if result else None,
                                    "warnings": list(self.warnings.get(node_id, ()))}))
        if next_node is not None:
            looks.insert(0, (next_node, {"is_next": True}))      # shown first
        self.w.next_node = next_node
        return looks

    # events from the worker -----------------------------------------------------------------
    def _on_started(self, event: NodeStarted) -> None:
        # the run's events set the looks from now on (the looks read before the run, such
        # as an edit's stale marks, are set until then: prepare comes first)
        self._looks = iter(())
        if self.w.next_node is not None:
            self.w.scene.set_look(self.w.next_node, is_next=False)
        self.w.scene.set_look(event.node_id, status="running", is_next=False)
        self.w.show_progress(event.index + 1, event.total, event.node_id)

    def _on_finished(self, event: NodeFinished) -> None:
        # a node's warnings: its badge, the Problems list and the Log's count agree
        if event.warnings:
            self.warnings[event.node_id] = tuple(event.warnings)
            self._problems_timer.start()        # at most a few times a second in a run
        else:
            self.warnings.pop(event.node_id, None)
        self.w.scene.set_look(event.node_id, status="done", seconds=event.seconds, error="",
                              warnings=list(event.warnings))
        self.w.results_changed.emit()

    def _on_failed(self, event: NodeFailed) -> None:
        self.w.scene.set_look(event.node_id, status="failed", error=event.message)
        self.w.statusBar().showMessage(
            f"node 0x{event.node_id:x} ({event.op}) failed: {event.message}", 15000)
        self.w.select_node(event.node_id)       # selected and centred: what to look at
        self.w.results_changed.emit()

    def _on_run_finished(self, event: RunFinished) -> None:
        target, self.run_to_target = self.run_to_target, None
        if event.status is RunStatus.PAUSED and event.next_node == target and \
                target is not None and target not in self.breakpoints:
            self.w.statusBar().showMessage(f"Paused before 0x{target:x} (run to selected; "
                                           "F10 runs it)", 15000)
            return
        text = {RunStatus.FINISHED: "Run finished",
                RunStatus.PAUSED: f"Paused before 0x{event.next_node:x}"
                if event.next_node is not None else "Paused",
                RunStatus.FAILED: f"Run failed: {event.message}"}[event.status]
        if event.status is RunStatus.PAUSED and event.message:
            text += f" ({event.message})"
        self.w.statusBar().showMessage(text, 15000)

    def _on_idle(self, kind: str) -> None:
        self.refresh_looks()
        self.w.hide_progress()
        if self.w.next_node is not None and kind != "close":
            self.w.canvas.ensure_node_visible(self.w.next_node)   # keep the next node in view
        if kind in ("step", "restart"):
            self.w.statusBar().showMessage(self._next_text(kind), 15000)
        if len(self.w.graph) < LOOKS_AT_ONCE:
            self._idle_results()
            self._idle_views()
            return
        # On a large graph the timings, then the problems and the other views, each in a
        # turn of its own: with the looks in the idle handler's turn they held the GUI
        # thread 60-100 ms at the end of a 10,000-node run.
        QTimer.singleShot(1, self.w, self._idle_results_then_views)

    def _idle_results_then_views(self) -> None:
        self._idle_results()
        QTimer.singleShot(1, self.w, self._idle_views)

    def _idle_results(self) -> None:
        self.w.refresh_results()

    def _idle_views(self) -> None:
        self.w.show_problems()
        self.update_stop()
        self.w.results_changed.emit()

    def _next_text(self, kind: str) -> str:
        """'Next: …', saying what prepare did to the next node and which authored nodes the
        step went past because prepare removed or fused them."""
        nxt, session, graph = self.w.next_node, self.w.session, self.w.graph
        if session is None:
            return ""
        if nxt is None:
            return "All nodes have run"
        text = f"Next: 0x{nxt:x}"
        ran = session.prepared.nodes.get(nxt)
        if ran is not None and nxt in graph and ran.op != graph.node(nxt).op:
            text += f" ({graph.node(nxt).op} runs as {ran.op})"
        plan = session.plan
        at = plan.index(nxt) if nxt in plan else 0
        order = graph.order
        start = order.index(plan[at - 1]) + 1 if kind == "step" and at > 0 and \
            plan[at - 1] in graph else 0
        end = order.index(nxt) if nxt in graph else len(order)
        rewrites = {r.node_id: r for r in session.prepared.rewrites}
        skipped = [i for i in order[start:end] if i in rewrites
                   and rewrites[i].kind in ("removed", "fused") and not graph.node(i).is_const]
        if skipped:
            names = ", ".join(f"0x{i:x} {graph.node(i).op}" for i in skipped[:4])
            more = f" and {len(skipped) - 4} more" if len(skipped) > 4 else ""
            text += (f" · skipped {names}{more}: removed or fused by prepare "
                     "(View ▸ Show prepared graph)")
        return text

    def _on_error(self, message: str) -> None:
        self.w.statusBar().showMessage(message.splitlines()[0], 15000)
        self.w.log_panel.append(LogLine(0, message.splitlines()[0]))
        self.w.show_problems(extra=[message.splitlines()[0]])

    def _on_busy(self, busy: bool) -> None:
        # The canvas stays editable during a run: edits are taken in like undo (edit_actions).
        for key in ("run", "step", "run_to", "restart", "inputs"):
            self.actions[key].setEnabled(not busy)
        self.update_stop()

    def update_stop(self) -> None:
        """Stop is for a run under way, or a session paused mid-plan (it ends the session,
        as Shift+F5 does in other debuggers); a finished or failed run has nothing to stop."""
        session = self.w.session
        paused = (session is not None and self.w.next_node is not None
                  and not session.executor.failed)
        self.actions["stop"].setEnabled(self.w.controller.busy or paused)
