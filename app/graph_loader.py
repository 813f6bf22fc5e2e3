"""Opening and drawing a graph without freezing the window (issue 32).

A graph file (a .hexgraph, or graph-init C through the importer) is read, validated and
prepared on a worker thread; then the canvas's items are made a slice at a time between
events. Both wait under a window-modal progress dialog with Cancel: the window repaints and
answers, and nothing else can change the document meanwhile (an Open replaces it). The
callers stay synchronous: :meth:`GraphLoader.load` returns once the graph is read (or the
user cancelled), running the event loop meanwhile.
"""

from __future__ import annotations

import enum
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QEventLoop,
    QObject,
    Qt,
    QThread,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtWidgets import QGraphicsItem, QProgressDialog, QWidget

from hexscope.engine import cooperate
from hexscope.engine.errors import EngineError, GraphFileError
from hexscope.engine.gc_pause import gc_paused, keep_as_old
from hexscope.engine.graph import Graph
from hexscope.engine.io.any_graph import load_any
from hexscope.engine.io.hexgraph import save_graph
from hexscope.engine.prepare import prepare
from hexscope.engine.prepare.marks import Mark, marks_of
from hexscope.engine.validate import Issue, Validator, errors
from hexscope.widgets.event_turns import gated, may_run
from hexscope.widgets.graph_canvas import GraphScene
from hexscope.widgets.graph_canvas.node_item import NodeLook
from hexscope.widgets.graph_canvas.scene import HEAVY, WAITING

#: Seconds of work per slice on the GUI thread: the window answers within about this.
SLICE_S = 0.03
#: From this many nodes, a graph is drawn and checked between events (smaller ones at once).
BIG_GRAPH = 500
#: The progress dialog appears only for work that takes longer than this (ms).
SHOW_AFTER_MS = 400
#: A build step waiting for another thread (the layout) ends its slice; the next comes
#: after this many ms of idle event loop, when that thread has the GIL to itself.
WAIT_MS = 5
#: Nodes (or edges) per build step: a step is the slice's grain (100 made one of ~30 ms
#: run past the budget by up to a step).
BUILD_CHUNK = 25


@dataclass(frozen=True)
class CheckedGraph:
    """A graph validated and prepared, ready to be shown."""

    graph: Graph
    issues: list[Issue]
    validator: Validator               # holds the checks of every node, for later edits
    marks: dict[int, Mark]             # prepare's rewrites, for the canvas


@dataclass(frozen=True)
class ReadGraph:
    """A graph as read from its file."""

    graph: Graph
    notes: list[str]                   # the C importer's notes


def read_graph(path: str) -> ReadGraph:
    """Read ``path`` (the worker's part; no Qt). Raises GraphFileError naming the file."""
    notes: list[str] = []
    # tens of thousands of new objects: see engine/gc_pause.py
    with gc_paused(), cooperate.on_this_thread(aging_hook()):
        graph = load_any(path, notes)
        keep_as_old()
    return ReadGraph(graph, notes)


#: Seconds between two agings of what a loader's pass made (at its pause points).
AGE_EVERY_S = 0.05


def aging_hook() -> Callable[[], None]:
    """A pause-point hook that counts every object made so far as old (keep_as_old) every
    ``AGE_EVERY_S``: the GUI thread's collector (app/collector.py) runs while the loader
    reads, and its young and middle passes walked all the reading had made since the last
    (a middle pass of 89 ms at 10,000 nodes, 179 ms at 20,000: Open's longest gap)."""
    last = [time.perf_counter()]

    def hook() -> None:
        now = time.perf_counter()
        if now - last[0] >= AGE_EVERY_S:
            last[0] = now
            keep_as_old()

    return hook


def check_graph(graph: Graph, positions: dict[int, tuple[float, float]] | None = None
                ) -> CheckedGraph:
    """Store ``positions`` (the canvas's layout of a graph that had none), then validate
    and prepare ``graph``; the worker's part, while no one else reads the graph."""
    with gc_paused(), cooperate.on_this_thread(aging_hook()):
        if positions:
            graph.move(positions)
        validator = Validator()
        issues = validator.validate(graph)
        marks = {} if errors(issues) else marks_of(graph, prepare(graph))
        keep_as_old()
    return CheckedGraph(graph, issues, validator, marks)


class _LoadWorker(QObject):
    """Lives on the loader's thread."""

    finished = Signal(int, object)     # generation, the result or a _Failure

    @Slot(int, object)
    def call(self, generation: int, work: Callable[[], object]) -> None:
        try:
            result: object = work()
        except GraphFileError as exc:
            result = _Failure(str(exc))
        except Exception as exc:  # noqa: BLE001 - a reader bug must not stop the thread
            result = _Failure(f"internal error: {type(exc).__name__}: {exc}")
        self.finished.emit(generation, result)


@dataclass(frozen=True)
class _Failure:
    message: str


class GraphLoader(QObject):
    """Reads and checks graphs on its own thread, one job at a time; a cancelled job's
    result is dropped when it arrives (a parse cannot be interrupted)."""

    _request = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._generation = 0
        self._result: object = None
        self._loop: QEventLoop | None = None
        self._thread = QThread(self)
        self._thread.setObjectName("hexscope-loader")
        self._worker = _LoadWorker()
        self._worker.moveToThread(self._thread)
        self._request.connect(self._worker.call)        # queued: runs on the thread
        self._worker.finished.connect(self._arrived)    # queued: arrives here
        self._thread.start()

    def read(self, path: str, parent: QWidget) -> ReadGraph | None:
        """Read ``path`` off the GUI thread, running the event loop until done; None if
        the user cancelled. Raises GraphFileError naming the file."""
        result = self.call(lambda: read_graph(path), parent,
                           f"Reading {os.path.basename(path)}…")
        assert result is None or isinstance(result, ReadGraph)
        return result

    def check(self, graph: Graph, parent: QWidget,
              positions: dict[int, tuple[float, float]] | None = None) -> CheckedGraph | None:
        """:func:`check_graph` off the GUI thread; None if the user cancelled."""
        result = self.call(lambda: check_graph(graph, positions), parent,
                           f"Checking {len(graph):,} nodes…")
        assert result is None or isinstance(result, CheckedGraph)
        return result

    def save(self, graph: Graph, path: str, parent: QWidget) -> None:
        """Write ``graph`` to ``path`` off the GUI thread (a snapshot: nodes are immutable),
        running the event loop until done, under a dialog without Cancel. Raises
        GraphFileError naming the file."""
        snapshot = graph.snapshot()

        def write() -> bool:
            try:
                save_graph(snapshot, path)
            except (OSError, EngineError) as exc:
                raise GraphFileError(f"{path}: {exc}") from None
            return True

        self.call(write, parent, f"Saving {os.path.basename(path)}…", cancellable=False)

    def call(self, work: Callable[[], object], parent: QWidget, text: str,
             cancellable: bool = True) -> object:
        """``work()`` on the loader's thread while the event loop runs, under a progress
        dialog; None if the user cancelled. Raises GraphFileError if ``work`` did."""
        self._generation += 1
        self._result = None
        dialog = progress_dialog(parent, text)
        loop = QEventLoop()
        self._loop = loop
        if cancellable:
            dialog.canceled.connect(loop.quit)
        else:
            dialog.setCancelButton(None)  # type: ignore[arg-type]
        self._request.emit(self._generation, work)
        loop.exec()
        self._loop = None
        close_dialog(dialog, parent)
        result, self._result = self._result, None
        if result is None:
            self._generation += 1           # cancelled: its result is dropped
            return None
        if isinstance(result, _Failure):
            raise GraphFileError(result.message)
        return result

    @Slot(int, object)
    def _arrived(self, generation: int, result: object) -> None:
        if generation == self._generation and self._loop is not None:
            self._result = result
            self._loop.quit()

    def shutdown(self) -> None:
        """Stop the thread (a read under way finishes first)."""
        self._generation += 1
        self._thread.quit()
        self._thread.wait(30000)


def build_scene(parent: QWidget, graph: Graph, *, show_consts: bool, direction: str,
                prepared_view: bool = False, looks: dict[int, NodeLook] | None = None,
                item_cache: QGraphicsItem.CacheMode = QGraphicsItem.CacheMode.NoCache
                ) -> GraphScene | None:
    """A scene of ``graph`` (with ``looks``, a scene's the new one replaces); a large
    graph's items are made between events under a progress dialog. None if cancelled."""
    scene = GraphScene(graph, parent=parent, show_consts=show_consts, direction=direction,
                       looks=looks, build=False)
    scene.prepared_view = prepared_view
    scene.item_cache = item_cache
    if len(graph) < BIG_GRAPH:
        scene.rebuild()
        return scene
    dialog = progress_dialog(parent, f"Drawing {len(graph):,} nodes…")
    try:
        built = run_in_slices(scene.build_steps(chunk=BUILD_CHUNK), dialog)
    finally:
        close_dialog(dialog, parent)
    if not built:
        dispose_later(scene)
        return None
    # Qt kept a changed rect for every item added while no view showed the scene (20,567
    # at 10,000 nodes), and the first `changed` once it was shown handed them all to each
    # Python slot (the minimap, the overview tiles): about 90 ms of the turn that shows a
    # 20,000-node graph. A new scene is drawn whole anyway: one rect (reported, to no one,
    # while the graph is checked).
    scene.update()
    return scene


def draw_and_check(loader: GraphLoader, parent: QWidget, graph: Graph, *, show_consts: bool,
                   direction: str) -> tuple[GraphScene, CheckedGraph, bool] | None:
    """The scene of a graph about to be shown and its checks (a large graph's on the
    loader's thread), laid out if it had no positions; the last item is True if some
    non-const nodes had none while others had (lay it out once shown). None if cancelled."""
    scene = build_scene(parent, graph, show_consts=show_consts, direction=direction)
    if scene is None:
        return None
    scene.close()           # a new layout is stored while the scene does not follow
    unplaced = [item.node for item in scene.items_by_id.values() if item.node.position is None]
    laid_out = bool(unplaced) and len(unplaced) == len(scene.items_by_id)
    positions = scene.item_positions() if laid_out else None     # the scene laid it out
    checked = (loader.check(graph, parent, positions) if len(graph) >= BIG_GRAPH
               else check_graph(graph, positions))
    if checked is None:
        dispose_later(scene)
        return None
    scene.follow()
    # Consts saved while folded may lack a position: the scene put each by its consumer,
    # and the graph stays as the file has it (opening never changes a graph).
    return scene, checked, not laid_out and any(not node.is_const for node in unplaced)


def dispose_later(scene: GraphScene) -> None:
    """Delete a scene no longer shown, its items a chunk at a time between events; scenes
    replaced in a row (the const toggle twice, an Open) are taken apart one after the
    other, one slice per event (each with its own timer, two slices ran in one event)."""
    scene.close()
    _DISPOSALS.append((scene, scene.dispose_steps(chunk=DISPOSE_CHUNK)))
    if _DISPOSAL_TIMER:
        _DISPOSAL_TIMER[0].start()
        return
    timer = QTimer(QCoreApplication.instance(), interval=DISPOSE_INTERVAL_MS)
    timer.timeout.connect(gated(timer, _dispose_slice))
    _DISPOSAL_TIMER.append(timer)
    timer.start()


#: Items taken out between two looks at the clock (removeItem costs ~10 us an item, an
#: item with its edges up to ~0.3 ms: 50 ran a slice to 50 ms).
DISPOSE_CHUNK = 10
#: Seconds of taking apart per slice, and ms between slices: a scene no longer shown can
#: wait, and its slices ran in the same turns as the new scene's first paint and looks
#: (Import C at 10,000 nodes: a 34 + 15 ms slice inside a 144 ms gap).
DISPOSE_SLICE_S = 0.01
DISPOSE_INTERVAL_MS = 10
_DISPOSALS: list[tuple[GraphScene, Iterator[None]]] = []
_DISPOSAL_TIMER: list[QTimer] = []


def _dispose_slice() -> None:
    end = time.perf_counter() + DISPOSE_SLICE_S
    while _DISPOSALS and time.perf_counter() < end:
        scene, steps = _DISPOSALS[0]
        if not shiboken6.isValid(scene):    # deleted with its window meanwhile
            _DISPOSALS.pop(0)
            continue
        try:
            next(steps)
        except StopIteration:
            _DISPOSALS.pop(0)
            scene.deleteLater()
    if not _DISPOSALS:
        _DISPOSAL_TIMER[0].stop()
    else:
        _DISPOSAL_TIMER[0].start()       # the pause counts from the slice's end


def close_dialog(dialog: QProgressDialog, parent: QWidget | None) -> None:
    """Close a progress dialog; the window it covered is active again (its shortcuts)."""
    was_shown = dialog.isVisible()
    dialog.close()
    dialog.deleteLater()
    if was_shown and parent is not None:
        parent.window().activateWindow()


def progress_dialog(parent: QWidget, text: str) -> QProgressDialog:
    """A window-modal progress dialog with Cancel that appears only if the work lasts."""
    dialog = QProgressDialog(text, "Cancel", 0, 0, parent)
    dialog.setWindowTitle("Hexscope")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    dialog.setMinimumDuration(SHOW_AFTER_MS)
    dialog.setValue(0)          # starts the clock of the minimum duration
    return dialog


class SliceEnd(enum.Enum):
    """Why a slice of build steps ended."""

    MORE = "more"           # its budget is spent; the next slice comes after the events
    WAIT = "wait"           # a step waits for another thread
    DONE = "done"           # the steps are exhausted


def advance(steps: Iterator[tuple[int, int]], budget: float,
            clock: Callable[[], float] = time.perf_counter
            ) -> tuple[SliceEnd, int, int]:
    """One slice: advance ``steps`` while ``budget`` seconds last, and return why it ended
    with the last ``(done, total)``. A step is not begun when the last one's cost would
    carry the slice past its budget (at 10,000 nodes, 25-node steps of 1-2 ms began at 29
    ms made 31-47 ms slices), nor after others when the steps announce a long one
    (``HEAVY``: the scene's index, ~30 ms, begins a slice of its own); the first step of
    a slice always runs."""
    start = now = clock()
    end = start + budget
    done = total = 0
    last_cost = 0.0
    first = True
    while first or now + last_cost < end:
        try:
            step_done, step_total = next(steps)
        except StopIteration:
            return SliceEnd.DONE, done, total
        before, now = now, clock()
        last_cost = now - before
        if step_done == WAITING:        # for another thread: let it run, events too
            return SliceEnd.WAIT, done, total
        total = step_total
        if step_done == HEAVY:
            if not first:
                return SliceEnd.MORE, done, total
            last_cost = 0.0             # the announcement itself costs nothing
            continue
        done = step_done
        first = False
    return SliceEnd.MORE, done, total


def run_in_slices(steps: Iterator[tuple[int, int]], dialog: QProgressDialog,
                  budget: float = SLICE_S) -> bool:
    """Advance ``steps`` (yielding ``(done, total)``) between events, ``budget`` seconds
    at a time, until it is exhausted (True) or the dialog is cancelled (False)."""
    loop = QEventLoop()
    state: dict[str, object] = {"finished": False, "inside": False, "error": None}
    timer = QTimer(interval=0, singleShot=True)

    def one_slice() -> None:
        if state["inside"]:      # the dialog's own event processing called us again
            return
        if not may_run(timer):   # the pass has had its share (event_turns)
            timer.start(0)
            return
        state["inside"] = True
        try:
            ended, done, total = advance(steps, budget)
            if ended is SliceEnd.DONE:
                state["finished"] = True
                loop.quit()
                return
            if ended is SliceEnd.MORE and total:
                dialog.setMaximum(max(total, 1))
                dialog.setValue(min(done, total))
            # Armed from the slice's end, not its start: a repeating timer re-armed as it
            # fired came due before a 10 ms timer that fired after it, and two slices ran
            # back to back with no other timer between (60 ms gaps at 10,000 nodes).
            timer.start(WAIT_MS if ended is SliceEnd.WAIT else 0)
        except Exception as exc:  # noqa: BLE001 - raised again below, out of Qt's loop
            state["error"] = exc
            loop.quit()
        finally:
            state["inside"] = False

    timer.timeout.connect(one_slice)
    dialog.canceled.connect(loop.quit)
    timer.start()
    loop.exec()
    timer.stop()
    if isinstance(state["error"], Exception):
        raise state["error"]
    return bool(state["finished"])


__all__ = ["AGE_EVERY_S", "BIG_GRAPH", "CheckedGraph", "GraphLoader", "ReadGraph", "SliceEnd",
           "advance", "aging_hook", "build_scene", "check_graph", "close_dialog",
           "dispose_later", "draw_and_check", "progress_dialog", "read_graph", "run_in_slices"]
