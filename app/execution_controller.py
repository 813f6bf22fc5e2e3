"""ExecutionController: runs a Session on a worker thread and relays its events as signals.

Every Session call happens on the worker thread (STYLE §6); the GUI thread only sends
requests and the cancel token, and receives engine events through queued signals. The
session is created lazily on the worker, on the first step or run.

The worker never reads the editor's graph, which the GUI thread edits at any time (an undo
during a run): a request that runs carries a snapshot of it, taken on the GUI thread when
it was edited since the last one, with the ids of the nodes whose edits affect results. The
session runs its own copy and re-prepares those nodes before it runs again (issue 32: an
undo made while the run's thread was preparing the shared graph was lost for good).
"""

from __future__ import annotations

import collections
import copy
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from hexscope.app import gil, kernel_preload
from hexscope.engine.backends.remote import RemoteBackend, make_remote_backend
from hexscope.engine.errors import EngineError
from hexscope.engine.events import (
    BreakpointHit,
    GraphEdited,
    NodeFailed,
    NodeFinished,
    NodeStarted,
    RunFinished,
)
from hexscope.engine.executor import CancelToken
from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.inputs import make_inputs
from hexscope.engine.session import Session


@dataclass(frozen=True)
class Request:
    kind: str                          # "step", "run", "run_to", "restart", "close", "graph",
                                       # "backend", "reconnect"
    node_id: int | None = None
    breakpoints: frozenset[int] = field(default_factory=frozenset)
    new_run_if_done: bool = False
    base_dir: str | None = None        # "graph": where the new graph's input files are
    # the editor's graph as it is now, when edited since the last request (None: unchanged),
    # and the nodes whose edits since then affect results
    snapshot: GraphSnapshot | None = None
    changed: frozenset[int] = frozenset()
    backend: str = "sim"               # "backend": run on this from now on (dsp://HOST:PORT)
    token: str | None = None


class SessionWorker(QObject):
    """Lives on the worker thread; owns the Session."""

    event = Signal(object)
    log_line = Signal(object)
    session_created = Signal(object)
    preparing = Signal(int)            # node count, before validate + prepare of a new session
    error = Signal(str)
    done = Signal(str)
    backend_status = Signal(object)    # a ConnectionStatus (connected or not), None: simulator

    def __init__(self, graph: Graph, base_dir: str | None, token: CancelToken,
                 debug_level: int = 2) -> None:
        super().__init__()
        self.graph = graph
        self.base_dir = base_dir
        self.token = token
        self.debug_level = debug_level
        self.session: Session | None = None
        self.remote: RemoteBackend | None = None    # the connected DSP, when chosen

    @Slot(object)
    def handle(self, request: Request) -> None:
        try:
            self._handle(request)
        except EngineError as exc:
            self.error.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - the window must survive any engine bug
            self.error.emit(f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self.done.emit(request.kind)

    def _handle(self, request: Request) -> None:
        if request.kind == "close":
            self.close_session()
            return
        if request.kind == "graph":
            self.close_session()
            self.base_dir = request.base_dir
            return
        if request.kind == "backend":
            self._set_backend(request.backend, request.token)
            return
        if request.kind == "reconnect":
            if self.remote is not None:
                self.close_session()      # a new session uploads to the new connection
                self.remote.connect()
            return
        if request.snapshot is not None:
            self.graph = Graph.from_snapshot(request.snapshot)
            if self.session is not None:
                self.session.follow(self.graph, request.changed)
        session = self.session or self._create()
        if session is None:
            return
        session.breakpoints = set(request.breakpoints)
        if request.kind == "restart":
            # Back to the node state this run started with (Variables, adaptive ranges),
            # so stepping again reproduces it; the inputs are made again (they may have
            # changed in the inputs dialog).
            session.restart()
            session.set_inputs(make_inputs(self.graph, self.base_dir))
        elif request.kind == "step":
            session.step()
        elif request.kind == "run":
            if request.new_run_if_done and session.next_node is None:
                # Run again after the end: a new execution whose node state carries over
                # from the last one, as on the device.
                session.begin_run()
            session.run(cancel=self.token)
        elif request.kind == "run_to" and request.node_id is not None:
            session.run_to(request.node_id, cancel=self.token)

    def _set_backend(self, spec: str, token: str | None) -> None:
        """Run on ``spec`` from now on; the old session (and connection) is closed."""
        self.close_session()
        if self.remote is not None:
            self.remote.close()
            self.remote = None
        if spec == "sim":
            self.backend_status.emit(None)
            return
        remote = make_remote_backend(spec, token)
        remote.status.connect(self.backend_status.emit)
        self.remote = remote
        remote.connect()          # a failure is reported (status, error) and kept chosen

    def _create(self) -> Session | None:
        self.preparing.emit(len(self.graph))
        session = Session(self.graph, self.remote or "sim", debug_level=self.debug_level)
        session.events.connect(_give_way_after_node)
        session.events.connect(self.event.emit)
        session.log.written.connect(self.log_line.emit)
        try:
            session.set_inputs(make_inputs(self.graph, self.base_dir))
        except EngineError:
            session.close()
            raise
        self.session = session
        self.session_created.emit(session)
        return session

    def close_session(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
            self.session_created.emit(None)


def _give_way_after_node(event: object) -> None:
    """Between two nodes of a run, on its thread: the GUI thread's turn if it is busy (a
    node's own work is not cut; app/gil.py). The request's graph copy, validation, prepare
    and the executor's plans give way at the engine's pause points (engine/cooperate.py,
    installed by gil.install): under giving_way's trace hook, tried first, a re-prepare
    after an edit made F5 1.5-3 times as long (bench/README.md, eighth round)."""
    if isinstance(event, NodeFinished):
        gil.give_way()


class ExecutionController(QObject):
    """The GUI side: send requests, receive events; ``busy`` while a request runs."""

    node_started = Signal(object)
    node_finished = Signal(object)
    node_failed = Signal(object)
    breakpoint_hit = Signal(object)
    run_finished = Signal(object)
    log_line = Signal(object)
    session_changed = Signal(object)
    error = Signal(str)
    busy_changed = Signal(bool)
    idle = Signal(str)
    preparing = Signal(int)             # a first run validates and prepares: say so
    backend_status = Signal(object)     # ConnectionStatus of the connected DSP; None: sim
    _request = Signal(object)
    _wake = Signal()                    # from the worker: its queue has news

    def __init__(self, graph: Graph, base_dir: str | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        gil.install()               # the run's thread gives the window its turns
        self.token = CancelToken()
        self.session: Session | None = None
        self.edited_since_run = False
        self._pending = 0
        self._thread = QThread(self)
        self._thread.setObjectName("hexscope-session")
        # One worker for the controller's life: a QObject deleted on the worker thread
        # (deleteLater) while the GUI thread deletes another one can deadlock PySide6 (each
        # side holds what the other waits for: the GIL, and Qt's connection lock).
        worker = SessionWorker(Graph(), base_dir, self.token)
        worker.moveToThread(self._thread)
        self._request.connect(worker.handle)
        # What the worker says is queued here, in order, and handed on between events a
        # slice at a time: one queued signal per message made Qt deliver every message
        # posted meanwhile in one go (a 10,000-node run posts 8,000, and the window stopped
        # for 0.3-0.8 s at a time while the run's thread held the GIL for the rest).
        self._inbox: collections.deque[tuple[Callable[[object], object], object]] = \
            collections.deque()
        self._inbox_lock = threading.Lock()
        self._woken = False
        direct = Qt.ConnectionType.DirectConnection
        for signal, handler in ((worker.event, self._relay), (worker.log_line, self.log_line.emit),
                                (worker.session_created, self._session_created),
                                (worker.preparing, self.preparing.emit),
                                (worker.error, self.error.emit),
                                (worker.backend_status, self.backend_status.emit),
                                (worker.done, self._done)):
            signal.connect(functools.partial(self._post, handler), direct)
        self._wake.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._worker = worker
        self._thread.start()
        self.graph = graph
        self._unfollow = graph.edited.connect(self._on_edit)
        self._edited = True                  # since the last snapshot sent (none yet)
        self._changed: set[int] = set()     # of which these affect results
        self._sent_meta: dict[str, object] = {}

    def set_graph(self, graph: Graph, base_dir: str | None) -> None:
        """Follow another graph; the old session (if any) is closed on the worker."""
        self.token.cancel()
        self._send(Request("graph", base_dir=base_dir))
        self._unfollow()
        self.graph = graph
        self._unfollow = graph.edited.connect(self._on_edit)
        self._edited, self._changed = True, set()

    def _on_edit(self, event: GraphEdited) -> None:
        self._edited = True
        if event.affects_results:
            self.edited_since_run = True
            self._changed |= event.changed

    def _with_graph(self, request: Request) -> Request:
        """The request with the graph as edited since the last one sent (GUI thread). The
        graph's meta (the inputs dialog's choices) is no edit: it is compared instead."""
        if not self._edited and self.graph.meta == self._sent_meta:
            return request
        snapshot, changed = self.graph.snapshot(), frozenset(self._changed)
        self._edited, self._changed = False, set()
        self._sent_meta = copy.deepcopy(snapshot.meta)
        return replace(request, snapshot=snapshot, changed=changed)

    @property
    def busy(self) -> bool:
        return self._pending > 0

    # requests -------------------------------------------------------------------------------
    def _send(self, request: Request) -> None:
        if request.kind in ("step", "run", "run_to", "restart"):
            request = self._with_graph(request)
            kernel_preload.hurry()      # the run may need a kernel it is loading
        if request.kind in ("run", "run_to"):
            self.token.reset()
        if request.kind not in ("close", "graph"):     # not runs the user waits for
            self._pending += 1
            if self._pending == 1:
                self.busy_changed.emit(True)
        self._request.emit(request)

    def step(self, breakpoints: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        self._send(Request("step", breakpoints=frozenset(breakpoints)))

    def run(self, breakpoints: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        self._send(Request("run", breakpoints=frozenset(breakpoints),
                           new_run_if_done=not self.edited_since_run))

    def run_to(self, node_id: int, breakpoints: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        self._send(Request("run_to", node_id, frozenset(breakpoints)))

    def restart(self) -> None:
        self._send(Request("restart"))

    def close_session(self) -> None:
        self.token.cancel()
        self._send(Request("close"))

    def set_backend(self, spec: str, token: str | None = None) -> None:
        """Run on ``spec`` ("sim" or dsp://HOST:PORT) from the next step or run on; the
        connection is made on the worker, and its status comes back as backend_status."""
        self.token.cancel()
        self._send(Request("backend", backend=spec, token=token))

    def reconnect(self) -> None:
        self._send(Request("reconnect"))

    def stop(self) -> None:
        """Stop a run between nodes (the node that is running finishes)."""
        self.token.cancel()

    def shutdown(self) -> None:
        """Cancel, stop the thread and wait for it; then close the session here."""
        self.token.cancel()
        self._thread.quit()
        self._thread.wait(10000)
        if self._worker.session is not None:
            self._worker.session.close()
            self._worker.session = None
        if self._worker.remote is not None:
            self._worker.remote.close()

    @property
    def thread_running(self) -> bool:
        return self._thread.isRunning()

    # events from the worker -------------------------------------------------------------
    def _post(self, handler: Callable[[object], object], message: object) -> None:
        """On the worker's thread: queue a message, and wake the GUI thread when it is not
        woken already."""
        with self._inbox_lock:
            self._inbox.append((handler, message))
            if self._woken:
                return
            self._woken = True
        self._wake.emit()

    def _deliver(self) -> None:
        """On the GUI thread: hand on the queued messages, in order, for at most
        DELIVER_SLICE_S; what is left waits for the next turn of the event loop."""
        end = time.perf_counter() + DELIVER_SLICE_S
        while True:
            with self._inbox_lock:
                if not self._inbox:
                    self._woken = False
                    return
                handler, message = self._inbox.popleft()
            handler(message)
            if time.perf_counter() > end:
                # a timer, not a posted call: posted calls run back to back before timers
                QTimer.singleShot(1, self, self._deliver)
                return

    def _relay(self, event: object) -> None:
        if isinstance(event, NodeStarted):
            self.node_started.emit(event)
        elif isinstance(event, NodeFinished):
            self.node_finished.emit(event)
        elif isinstance(event, NodeFailed):
            self.node_failed.emit(event)
        elif isinstance(event, BreakpointHit):
            self.breakpoint_hit.emit(event)
        elif isinstance(event, RunFinished):
            self.edited_since_run = False
            self.run_finished.emit(event)

    def _session_created(self, session: Session | None) -> None:
        self.session = session
        self.session_changed.emit(session)

    def _done(self, kind: str) -> None:
        if kind in ("close", "graph"):
            return
        self._pending = max(0, self._pending - 1)
        if self._pending == 0:
            self.busy_changed.emit(False)
        if kind == "step":
            self.edited_since_run = False
        self.idle.emit(kind)


#: The longest the GUI thread hands on the worker's messages before it answers other events.
DELIVER_SLICE_S = 0.02

__all__ = ["ExecutionController", "Request", "SessionWorker"]
