"""MainWindow: the graph editor and step-through debugger.

The window composes the canvas, the docks and three action groups (file, edit, debug); the
worker thread that runs the session lives in :class:`ExecutionController`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from PySide6.QtCore import QPointF, QSignalBlocker, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QColor,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QShowEvent,
    QUndoStack,
)
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QProgressBar,
    QStackedWidget,
    QWidget,
)

from hexscope.app import dock_layout
from hexscope.app.app_icon import app_icon
from hexscope.app.backend_actions import BackendActions, device_counters
from hexscope.app.debug_actions import DebugActions
from hexscope.app.edit_actions import EditActions
from hexscope.app.execution_controller import ExecutionController
from hexscope.app.file_actions import FileActions
from hexscope.app.graph_loader import (
    CheckedGraph,
    GraphLoader,
    build_scene,
    dispose_later,
    draw_and_check,
)
from hexscope.app.help_actions import HelpActions
from hexscope.app.node_outputs import ran_shape, show_outputs
from hexscope.app.prepare_marks import MarksPreparer, show_marks
from hexscope.app.run_messages import preparing_text
from hexscope.app.run_progress import RunProgress
from hexscope.app.settings import AppSettings
from hexscope.app.view_menu import build_view_menu
from hexscope.app.warm_up import mark_warm
from hexscope.engine.events import GraphEdited, LogLine
from hexscope.engine.gc_pause import gc_paused
from hexscope.engine.graph import Graph
from hexscope.engine.prepare import prepare
from hexscope.engine.prepare.marks import Mark, marks_kept, marks_of
from hexscope.engine.session import Session
from hexscope.engine.validate import Issue, Validator, errors
from hexscope.widgets.doc_text import parse_link
from hexscope.widgets.graph_canvas import GraphCanvas, GraphScene
from hexscope.widgets.graph_canvas.look_slices import LookSlices
from hexscope.widgets.inspector_panel import InspectorPanel
from hexscope.widgets.log_panel import LogPanel
from hexscope.widgets.op_palette import OpPalette
from hexscope.widgets.outputs_panel import OutputsPanel
from hexscope.widgets.problems_panel import ProblemsPanel
from hexscope.widgets.semantics_view import SemanticsView
from hexscope.widgets.status_bar import ElidingStatusBar
from hexscope.widgets.timing_table import TimingTable
from hexscope.widgets.welcome_page import WelcomePage

DOCK = Qt.DockWidgetArea
LAYOUT_VERSION = 1                        # bump when the set of docks changes


class MainWindow(QMainWindow):
    """See APP_CONTRACT.md for the API the views use (signals, add_dock, select_node...)."""

    session_changed = Signal(object)
    graph_replaced = Signal()           # New, Open, restore: a different document
    document_shown = Signal()           # its graph and scene are in (the collector freezes)
    node_selected = Signal(int)
    results_changed = Signal()

    def __init__(self, settings: AppSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or AppSettings()
        self.graph = Graph()
        self.issues: list[Issue] = []
        self.run_errors: list[str] = []      # run-time errors outside a node, until New/Open
        self.startup_lines: list[LogLine] = []   # plugin files that failed to load
        self.semantics: SemanticsView | None = None   # opened from a doc citation
        self._validator = Validator()
        self._edited_ids: set[int] = set()     # nodes edited since the last validation
        self._marks: dict[int, Mark] = {}      # prepare's marks on the canvas, by node
        self.next_node: int | None = None
        self._session: Session | None = None
        self._overlay_legend: list[tuple[str, QColor]] = []
        self._overlay_slices = LookSlices(self)
        self.undo_stack = QUndoStack(self)
        self.scene = GraphScene(self.graph, parent=self)
        self.canvas = GraphCanvas(self.scene)
        # The canvas, or (when the app starts without a graph) the welcome page.
        self.central = QStackedWidget()
        self.central.addWidget(self.canvas)
        self.setCentralWidget(self.central)
        self.welcome: WelcomePage | None = None
        self.controller = ExecutionController(self.graph, None, self)
        self.loader = GraphLoader(self)      # reads and checks graphs off the GUI thread
        self.marks_preparer = MarksPreparer(self)    # an edit's prepare, off the GUI thread
        self._build_docks()
        self._build_status()
        self.files = FileActions(self)
        self.setAcceptDrops(True)          # a graph, C file or .tflite dropped on the window
        self.edits = EditActions(self)
        build_view_menu(self)
        self.debug = DebugActions(self)
        self.backend = BackendActions(self)
        self.help = HelpActions(self)
        self._validate_timer = QTimer(self, singleShot=True, interval=120)
        self._validate_timer.timeout.connect(self._revalidate_in_turns)
        self._connect()
        self._follow_graph()
        dock_layout.fit_to_screen(self)
        self.setWindowIcon(app_icon())
        self.update_title()
        self.revalidate()
        from hexscope.app.views import install_views

        install_views(self)
        from hexscope.app.reduce_actions import install_reduce
        install_reduce(self)          # Debug ▸ Reduce to the failing part… (issue 28)
        # The debugger's own panels come first; the views stay one tab away.
        self.problems_dock.raise_()
        self.default_dock_sizes()
        self._sized_on_show = False
        self._restore_layout()

    def _restore_layout(self) -> None:
        if dock_layout.restore(self, self.settings.layout(), LAYOUT_VERSION):
            self._sized_on_show = True      # the user's sizes, not the defaults

    def default_dock_sizes(self) -> None:
        dock_layout.default_sizes(self)

    def make_room_for(self, dock: QDockWidget) -> None:
        dock_layout.make_room_for(self, dock)

    # construction ---------------------------------------------------------------------------
    def _build_docks(self) -> None:
        self.palette = OpPalette()
        self.inspector = InspectorPanel(self.graph)
        self.inspector.shape_of = lambda node_id, k: ran_shape(self._session, node_id, k)
        self.outputs_panel = OutputsPanel()
        self.problems = ProblemsPanel()
        self.log_panel = LogPanel()
        self.timing = TimingTable()
        self.palette_dock = self.add_dock("Ops", self.palette, DOCK.LeftDockWidgetArea)
        self.inspector_dock = self.add_dock("Inspector", self.inspector, DOCK.RightDockWidgetArea)
        self.outputs_dock = self.add_dock("Outputs", self.outputs_panel, DOCK.RightDockWidgetArea)
        self.problems_dock = self.add_dock("Problems", self.problems, DOCK.BottomDockWidgetArea)
        self.log_dock = self.add_dock("Log", self.log_panel, DOCK.BottomDockWidgetArea)
        self.timing_dock = self.add_dock("Timing", self.timing, DOCK.BottomDockWidgetArea)
        self.tabifyDockWidget(self.problems_dock, self.log_dock)
        self.tabifyDockWidget(self.log_dock, self.timing_dock)
        self.problems_dock.raise_()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._sized_on_show:
            # Dock sizes only hold once the window has its real size: set them again then.
            self._sized_on_show = True
            QTimer.singleShot(0, self, self.default_dock_sizes)

    def _build_status(self) -> None:
        self.setStatusBar(ElidingStatusBar(self))
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setFormat("node %v of %m")
        self.progress.hide()
        self.run_label = QLabel()
        self.statusBar().addPermanentWidget(self.run_label)
        self.statusBar().addPermanentWidget(self.progress)
        self.run_progress = RunProgress(self.progress, self.statusBar())

    def _connect(self) -> None:
        self.palette.op_activated.connect(lambda op: self.edits.add_op(op))
        self.inspector.label_edited.connect(self.edits.set_label)
        self.inspector.padding_edited.connect(self.edits.set_padding)
        self.inspector.const_edited.connect(self.edits.set_const)
        self.inspector.input_edited.connect(self.edits.set_input_decl)
        self.inspector.doc_link_clicked.connect(self.open_doc_link)
        self.palette.doc_link_clicked.connect(self.open_doc_link)
        self.inspector.message.connect(lambda text: self.statusBar().showMessage(text, 10000))
        self.problems.node_activated.connect(self.select_node)
        self.timing.node_activated.connect(self.select_node)
        self.controller.session_changed.connect(self._on_session)
        self.marks_preparer.marks_ready.connect(self._marks_arrived)
        self.marks_preparer.failed.connect(self._marks_failed)
        self.controller.preparing.connect(lambda n: self.statusBar().showMessage(
            preparing_text(n)))
        self.controller.log_line.connect(self.log_panel.append)
        self.controller.log_line.connect(lambda _line: self._update_log_title())
        self.log_panel.clear_button.clicked.connect(self._update_log_title)
        # Bound methods, not lambdas: Qt drops a connection when its receiver is destroyed,
        # and the stack still emits while the window is being torn down.
        self.undo_stack.cleanChanged.connect(self._on_undo_changed)
        self.undo_stack.indexChanged.connect(self._on_undo_changed)

    def _follow_graph(self) -> None:
        """Connect the scene's gestures and the graph's edits (again after a new graph)."""
        self._follow_scene()
        self._unfollow = self.graph.edited.connect(self._on_graph_edited)

    def _follow_scene(self) -> None:
        s = self.scene
        s.nodes_moved.connect(self.edits.move)
        s.connect_requested.connect(self.edits.connect)
        s.op_dropped.connect(lambda op, pos: self.edits.add_op(op, QPointF(pos)))
        s.selection_ids_changed.connect(self._on_selection)
        s.connection_refused.connect(lambda text: self.statusBar().showMessage(text, 10000))

    # the document ---------------------------------------------------------------------------
    def set_graph(self, graph: Graph, path: str | None) -> bool:
        """Show another graph (New, Open, restore); False if the user cancelled. A large
        graph's items are made between events and it is validated and prepared on the
        loader's thread (app/graph_loader.py). Loaded graphs without positions are laid out."""
        drawn = draw_and_check(self.loader, self, graph, show_consts=self.show_consts
                               .isChecked(), direction=self.layout_direction.direction())
        if drawn is None:
            return False
        scene, checked, unplaced = drawn
        self.central.setCurrentWidget(self.canvas)
        with gc_paused():       # tens of thousands of new objects: see engine/gc_pause.py
            self._set_graph(graph, path, scene, checked)
        if unplaced:            # some nodes had positions, these had none
            # An edit: revalidated in turns, its prepare on the marks' thread (a move
            # changes no issue and no mark; revalidate() here prepared the whole graph
            # again on the GUI thread, 100-200 ms at 10,000 nodes).
            graph.move(self.scene.layout_positions())
        self.document_shown.emit()
        return True

    def _set_graph(self, graph: Graph, path: str | None, scene: GraphScene,
                   checked: CheckedGraph) -> None:
        self._unfollow()
        self._validate_timer.stop()       # it would validate the old scene against the new graph
        self.marks_preparer.drop()        # the old graph's marks
        self._overlay_slices.stop()       # the old graph's tints
        self.graph = graph
        self._swap_scene(scene)
        self.inspector.set_graph(graph)
        base = os.path.dirname(os.path.abspath(path)) if path else None
        self.controller.set_graph(graph, base)
        self.debug.breakpoints.clear()
        self.clear_run_state()
        self.graph_replaced.emit()
        self.undo_stack.clear()
        self.files.path = path
        self.files.imported_from = None
        self.files.mark_baseline()
        self.files.meta_dirty = False
        self._unfollow = self.graph.edited.connect(self._on_graph_edited)
        self._validator, self.issues, self._marks = \
            checked.validator, checked.issues, checked.marks
        self._edited_ids = set()
        self._show_issues()
        self._show_marks()
        self.update_title()
        # Again once the window has its final size, unless a node was selected (and centred)
        # in the meantime: the user's view wins. The window is the timer's context, so a
        # window closed meanwhile cancels it instead of being called after its deletion.
        QTimer.singleShot(0, self, self._show_graph_unless_selected)
        self.canvas.show_graph()

    def _show_graph_unless_selected(self) -> None:
        if not self.scene.selected_ids():
            self.canvas.show_graph()

    def show_welcome(self) -> None:
        """The first-run page: examples, recent files, New / Open / Import C, the keys."""
        if self.welcome is None:
            self.welcome = WelcomePage(self.settings.recent_files())
            self.welcome.open_requested.connect(self.files.open_graph)
            self.welcome.new_requested.connect(self.files.new_graph)
            self.welcome.open_dialog_requested.connect(self.files.open_graph)
            self.welcome.import_c_requested.connect(self._import_c_from_welcome)
            self.central.addWidget(self.welcome)
        self.welcome.set_recent(self.settings.recent_files())
        self.central.setCurrentWidget(self.welcome)

    def _import_c_from_welcome(self) -> None:
        self.files.open_graph(c_only=True)

    def clear_run_state(self) -> None:
        """What the last graph's runs left: errors, log, timings, progress, the next mark."""
        self.run_errors.clear()
        self.log_panel.clear()
        for line in self.startup_lines:     # still true of this app, whatever the graph
            self.log_panel.append(line)
        self._update_log_title()
        self.timing.set_times([])
        self.run_label.clear()
        self.hide_progress()
        self.statusBar().clearMessage()     # "Run finished" was about the last graph
        self.next_node = None
        self._on_session(None)          # the old session is being closed on the worker

    def open_doc_link(self, url: QUrl) -> None:
        """A citation in an op's doc: the shipped semantics document at that section; any
        other link goes to the desktop (a file, a web page)."""
        target = parse_link(url.toString())
        if target is None:
            QDesktopServices.openUrl(url)
            return
        if self.semantics is None:
            self.semantics = SemanticsView(self)
        self.semantics.show_section(*target)
        self.semantics.show()
        self.semantics.raise_()

    def _on_undo_changed(self, _value: object = None) -> None:
        self.update_title()
        self.files.note_change()
    def update_title(self) -> None:
        self.setWindowTitle(self.files.title())
        self.setWindowModified(self.files.modified)

    def _on_graph_edited(self, event: GraphEdited) -> None:
        self._edited_ids.update(event.changed)     # what the next validation visits
        self.marks_preparer.drop()     # a prepare under way is of the graph before this edit
        self.inspector.refresh()
        self.debug.on_graph_edited(event)
        self._validate_timer.start()

    def toggle_consts(self, shown: bool) -> None:
        """Draw the graph again with or without its consts as nodes: a new scene (made
        between events for a large graph) with the same looks, then swapped in."""
        old = self.scene
        scene = build_scene(self, self.graph, show_consts=shown, direction=old.direction,
                            prepared_view=old.prepared_view, looks=old.looks,
                            item_cache=old.item_cache)
        if scene is None:                  # cancelled: the check box says what is shown
            with QSignalBlocker(self.show_consts):
                self.show_consts.setChecked(not shown)
            return
        selected = old.selected_ids()
        self._swap_scene(scene)
        for node_id in selected:
            if (item := scene.items_by_id.get(scene.folded.get(node_id, node_id))) is not None:
                item.setSelected(True)
        self.document_shown.emit()

    def _swap_scene(self, scene: GraphScene) -> None:
        old, self.scene = self.scene, scene       # (dispose_later closes the old one)
        scene.read_only = old.read_only      # (a run under way)
        self._follow_scene()
        self.canvas.set_scene(scene)
        dispose_later(old)                   # its items a slice at a time

    # validation and prepare -----------------------------------------------------------------
    def revalidate(self) -> None:
        """Validate the whole graph and prepare it, here and now, and update the looks that
        changed. Not on an everyday action (an edit's prepare runs on the marks' thread, a
        large graph's checks on the loader's); the window's first, empty graph and tests
        call it."""
        with gc_paused():     # prepare builds a copy of the graph: see engine/gc_pause.py
            self._revalidate()

    def _revalidate_in_turns(self) -> None:
        """An edit's revalidate: the issues now; prepare's marks from a snapshot prepared on
        a thread (app/prepare_marks.py), shown when they arrive unless the graph was edited
        again meanwhile (100-200 ms of prepare at 10,000 nodes ran on the GUI thread, right
        before the F5 that follows an edit)."""
        with gc_paused():
            changed, self._edited_ids = self._edited_ids, set()
            self.issues = self._validator.validate(self.graph, changed)
            self._show_issues()
        if errors(self.issues):
            self.refresh_prepared()       # cannot be prepared: the marks that still hold
        else:
            self.marks_preparer.request(self.graph)

    def _marks_arrived(self, marks: dict[int, Mark]) -> None:
        self._marks = marks           # of the graph as it is: a stale result never arrives
        self._show_marks()

    def _marks_failed(self, text: str) -> None:
        self._marks = {}              # what prepare would rewrite is not known
        self._show_marks()
        self.statusBar().showMessage(f"Prepare failed, so its rewrites are not marked: {text}",
                                     10000)

    def _revalidate(self) -> None:
        self._edited_ids = set()
        self.issues = self._validator.validate(self.graph)
        self._show_issues()
        self.refresh_prepared()

    def _show_issues(self) -> None:
        self.show_problems()
        by_node: dict[int, list[str]] = {}
        for issue in self.issues:
            by_node.setdefault(issue.node_id, []).append(str(issue))
        looks = self.scene.looks
        for node_id in set(by_node) | {i for i, look in looks.items() if look.problems}:
            problems = by_node.get(node_id, [])
            look = looks.get(node_id)
            if look is None or look.problems != problems:
                self.scene.set_look(node_id, problems=problems)

    def show_problems(self, extra: list[str] = ()) -> None:  # type: ignore[assignment]
        """Validation issues, then what failed at run time: the failed nodes of the session
        (they stay until the node runs again or the graph changes) and the run's other
        errors (an input that cannot be made). ``extra`` adds such an error."""
        self.run_errors += [text for text in extra if text not in self.run_errors]
        session = self._session
        failed: list[tuple[int | None, str]] = []
        if session is not None and not self.controller.busy:
            nodes = session.prepared.nodes
            failed = [(node_id, f"0x{node_id:x} ({nodes[node_id].op}) failed: {text}")
                      for node_id, text in session.executor.failed.items() if node_id in nodes]
        run = failed + list(self.run_errors)
        warned = [(g.first, g.line()) for g in self.debug.warning_groups()] \
            if hasattr(self, "debug") else []
        self.problems.set_issues(self.issues, run, warned)
        total = len(self.issues) + len(run) + len(warned)
        self.problems_dock.setWindowTitle(f"Problems ({total})" if total else "Problems")
        self._update_log_title()
        if extra or failed or errors(self.issues):
            self.problems_dock.raise_()

    def refresh_prepared(self) -> None:
        """Mark prepare's rewrites in the authored view, always: removed and fused nodes
        greyed with the reason on hover, a replaced node "runs as" its new op (AutoQuantize, a
        Supernode). While the graph has errors it cannot be prepared: the marks of the last
        prepare stay where no edit touched their group (engine/prepare/marks.py). With
        "Show prepared graph" on, the nodes prepare removes are hidden as well. Prepare is
        linear and only the looks that changed are touched. This one prepares here (an
        edit's marks are made on a thread: _revalidate_in_turns)."""
        self.marks_preparer.drop()        # these marks are newer than any under way
        if errors(self.issues):
            if self.show_prepared.isChecked():
                self.statusBar().showMessage("Fix the problems to see the prepared graph", 6000)
            broken = {i.node_id for i in errors(self.issues)}
            self._marks = marks_kept(self._marks, self.graph, broken)
        else:
            self._marks = marks_of(self.graph, prepare(self.graph))
        self._show_marks()

    def prepared_view_toggled(self) -> None:
        """View ▸ Show prepared graph: the current marks (or those on their way) say what
        to hide."""
        if errors(self.issues) and self.show_prepared.isChecked():
            self.statusBar().showMessage("Fix the problems to see the prepared graph", 6000)
        self._show_marks()

    def _show_marks(self) -> None:
        show_marks(self.scene, self._marks, self.show_prepared.isChecked())

    # selection and results ------------------------------------------------------------------
    def _on_selection(self, ids: list[int]) -> None:
        node_id = ids[0] if len(ids) == 1 else None
        self.inspector.show_node(node_id)
        self.log_panel.set_selected_node(node_id)
        self._show_outputs(node_id)
        self.node_selected.emit(node_id if node_id is not None else -1)

    def _show_outputs(self, node_id: int | None) -> None:
        show_outputs(self, node_id)

    def refresh_results(self) -> None:
        session = self._session
        rows = []
        counters, unit = device_counters(session)     # a connected device's own counts
        if session is not None:
            for node_id, result in session.executor.trace.items():
                node = session.prepared.nodes.get(node_id)
                if node is not None:
                    rows.append((node_id, node.op, node.label, result.seconds,
                                 counters.get(node_id)))
        self.timing.set_times(rows, unit)
        total = sum(r[3] for r in rows)
        self.run_label.setText(f"{len(rows)} node(s) ran · {total * 1e3:.2f} ms" if rows else "")
        ids = self.scene.selected_ids()
        self._show_outputs(ids[0] if len(ids) == 1 else None)
        self.inspector.refresh()

    def show_progress(self, k: int, n: int, node_id: int) -> None:
        self.run_progress.show(k, n, node_id)

    def hide_progress(self) -> None:
        self.run_progress.hide()

    def _on_session(self, session: Session | None) -> None:
        self._session = session
        self.debug.update_stop()
        if session is not None:
            mark_warm()            # prepared: its kernels are compiled and cached now
        if session is None:
            self.debug.visual_stale.clear()
            self.debug.refresh_looks()
            self.refresh_results()
        self.session_changed.emit(session)

    def _update_log_title(self) -> None:
        n = len(self.log_panel.lines)
        # the log's own counts, over every line it holds: a node's warning is a level-0 line
        # marked as a warning (subtracting the current run's warnings from all runs' level-0
        # lines made each run of a warning graph add "errors")
        n_errors, n_warn = self.log_panel.errors, self.log_panel.warnings
        title = f"Log ({n})" if n else "Log"
        # The error marker stays on the tab until the log is cleared (New, Open, Clear).
        marks = [f"✖ {n_errors} error(s)"] * bool(n_errors) + [f"⚠ {n_warn} warning(s)"] * bool(
            n_warn)
        self.log_dock.setWindowTitle(" ".join([title, *marks]))

    def report_startup_errors(self, messages: list[str]) -> None:
        """Show what failed at start-up (plugin files, with file and line) in the log panel."""
        for text in messages:
            self.startup_lines.append(LogLine(0, text))
            self.log_panel.append(self.startup_lines[-1])
        self._update_log_title()
        if messages:
            self.log_dock.raise_()
            self.statusBar().showMessage(
                f"{len(messages)} plugin file(s) failed to load: see the Log panel", 20000)

    # the API of APP_CONTRACT.md ----------------------------------------------------------------
    @property
    def session(self) -> Session | None:
        return self._session

    def add_dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        return dock_layout.add_dock(self, title, widget, area)

    def select_node(self, node_id: int) -> None:
        item = self.scene.select_only(node_id)
        if item is not None:
            self.canvas.center_on_node(node_id)

    def set_overlay(self, colors: dict[int, QColor] | None,
                    legend: list[tuple[str, QColor]] = (),  # type: ignore[assignment]
                    notes: Mapping[int, str] | None = None) -> None:
        """Tint nodes (none: clear the tints); ``notes``, if given, are the tinted nodes'
        hover notes, set in the same pass (a second pass redrew every node's look and
        tooltip again: 70 ms of Compare's gap at 10,000 nodes)."""
        colors = colors or {}
        # between events, a slice at a time, on a large graph (look_slices.py)
        self._overlay_slices.set_looks(self.scene, (
            (node_id, {"overlay": colors.get(node_id)} if notes is None else
             {"overlay": colors.get(node_id), "overlay_note": notes.get(node_id, "")})
            for node_id in tuple(self.graph.order)), len(self.graph.order))
        self._overlay_legend = list(legend) if colors else []
        text = "  ".join(f"<span style='color:{c.name()}'>■</span> {name}"
                         for name, c in self._overlay_legend)
        self.run_label.setText(text)

    # closing ----------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if not self.files.maybe_save():
            event.ignore()
            return
        self.files.discard_unsaved()       # the user chose: saved, or discarded
        self.settings.save_layout(self.saveGeometry(), self.saveState(LAYOUT_VERSION))
        self.settings.flush()       # the settings' thread is a daemon: in the file before exit
        self.shutdown()
        event.accept()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        self.files.drag_enter(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        self.files.drop(event)

    def shutdown(self) -> None:
        """Stop the worker thread and the timers (tests call this too)."""
        if getattr(self, "_shut_down", False):
            return
        self._shut_down = True
        # Work nobody saved or discarded (a quit without the prompt) stays for the next start.
        self.files.autosaver.close(keep=self.files.modified)
        self._validate_timer.stop()
        for signal in (self.undo_stack.cleanChanged, self.undo_stack.indexChanged):
            signal.disconnect()
        compare = getattr(self, "compare", None)     # its jobs may run on the session thread
        if compare is not None:
            compare.shutdown()
        if getattr(self, "reduce", None) is not None:
            self.reduce.shutdown()
        self.controller.shutdown()
        self.loader.shutdown()
        self.marks_preparer.shutdown()
