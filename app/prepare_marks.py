"""Prepare's marks of an edited graph, made off the GUI thread (issue 32).

After an edit the canvas marks what prepare rewrites (fused, removed, "runs as"). That
needs a whole prepare: 100-200 ms of Python at 10,000 nodes, which ran on the GUI thread
right before the F5 that usually follows an edit. Here the GUI thread takes a snapshot
of the graph (its nodes are immutable: a tuple of references, a few ms), and a thread of
this object's own builds a graph from it and prepares that. Each request has a token; an
edit (or another graph) drops the token, and a result whose token is not the latest is
discarded where it arrives, so the marks shown are always those of the graph shown. A
request that is already stale when the thread takes it up is skipped.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread, Signal, Slot

from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.prepare import prepare
from hexscope.engine.prepare.marks import Mark, marks_of
from hexscope.widgets.graph_canvas import GraphScene


def snapshot_marks(snapshot: GraphSnapshot) -> dict[int, Mark]:
    """The marks of the graph a snapshot holds (the thread's part; no Qt). Mark.node is
    the snapshot's node, the very object the window's graph held when it was taken."""
    graph = Graph.from_snapshot(snapshot)
    return marks_of(graph, prepare(graph))


class _Worker(QObject):
    """Lives on the preparer's thread."""

    done = Signal(int, object)        # token, the marks (or the error's text)

    def __init__(self, latest: list[int]) -> None:
        super().__init__()
        self._latest = latest          # the owner's latest token (read here, an int)

    @Slot(int, object)
    def make(self, token: int, snapshot: GraphSnapshot) -> None:
        if token != self._latest[0]:
            return                     # edited again since: its own request follows
        try:
            # a graph's copy and a whole prepare in Python: they give way at the engine's
            # pause points while the window is busy (app/gil.py; the trace hook used before
            # made them 1.5-2 times as slow)
            result: object = snapshot_marks(snapshot)
        except Exception as exc:  # noqa: BLE001 - a prepare bug must not stop the thread
            result = f"{type(exc).__name__}: {exc}"
        self.done.emit(token, result)


class MarksPreparer(QObject):
    """Prepares snapshots of the window's graph on a thread, one request at a time; only
    the result of the latest request (:meth:`request`, not :meth:`drop`-ped since)
    is handed on, as :attr:`marks_ready`."""

    marks_ready = Signal(object)       # dict[int, Mark] of the graph as last requested
    failed = Signal(str)               # prepare raised: what it said
    _make = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._latest = [0]
        self._thread = QThread(self)
        self._thread.setObjectName("hexscope-marks")
        self._worker = _Worker(self._latest)
        self._worker.moveToThread(self._thread)
        self._make.connect(self._worker.make)          # queued: runs on the thread
        self._worker.done.connect(self._arrived)        # queued: arrives here
        self._pending = False
        self._thread.start()

    @property
    def pending(self) -> bool:
        """True while the latest request's marks have not arrived."""
        return self._pending

    def request(self, graph: Graph) -> None:
        """Prepare ``graph`` as it is now; any earlier request is dropped."""
        self._latest[0] += 1
        self._pending = True
        self._make.emit(self._latest[0], graph.snapshot())

    def drop(self) -> None:
        """The graph changed (an edit, another graph): what is under way is stale."""
        self._latest[0] += 1
        self._pending = False

    @Slot(int, object)
    def _arrived(self, token: int, result: object) -> None:
        if token != self._latest[0]:
            return
        self._pending = False
        if isinstance(result, str):
            self.failed.emit(result)
        else:
            self.marks_ready.emit(result)

    def shutdown(self) -> None:
        """Stop the thread (a prepare under way finishes first)."""
        self.drop()
        self._thread.quit()
        self._thread.wait(30000)


def show_marks(scene: GraphScene, marks: dict[int, Mark], prepared_view: bool) -> None:
    """Set the rewrite looks of ``scene`` to ``marks`` (only those that changed: an edit's
    marks differ from the last ones in a handful of nodes) and hide what prepare removes
    if ``prepared_view``."""
    looks = scene.looks
    for node_id in set(marks) | {i for i, look in looks.items() if look.rewrite}:
        m = marks.get(node_id)
        kind, reason, runs_as = (m.kind, m.reason, m.runs_as) if m else ("", "", "")
        look = looks.get(node_id)
        if look is None or (look.rewrite, look.rewrite_reason, look.runs_as) != (
                kind, reason, runs_as):
            scene.set_look(node_id, rewrite=kind, rewrite_reason=reason, runs_as=runs_as)
    scene.hide_prepared_away(prepared_view)


__all__ = ["MarksPreparer", "show_marks", "snapshot_marks"]
