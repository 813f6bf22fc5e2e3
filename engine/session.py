"""Session: validate, prepare, and step through a graph; keeps every node's outputs.

>>> s = Session(g)            # backend "sim"; raises GraphError listing every problem
>>> s.execute([x])            # returns the tensors fed to OUTPUT
>>> s.restart(); s.step(); s.run_to(0x2001); s.breakpoints.add(0x2002); s.run()

``run_to`` stops after the target has run, so its outputs can be inspected; a breakpoint
stops *before* its node runs, as in a source debugger. After the graph is edited, the next
step or run re-prepares and re-runs only the nodes downstream of the edit.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
from collections.abc import Callable, Iterable, Sequence
from enum import Enum

import numpy as np

from hexscope.engine.backends import Backend, make_backend
from hexscope.engine.dtypes import narrow_64bit
from hexscope.engine.errors import GraphError, InputError, NodeError
from hexscope.engine.events import Emitter, GraphEdited, RunFinished, RunStatus
from hexscope.engine.executor import CancelToken, Executor, NodeResult, NodeStatus
from hexscope.engine.graph import Graph
from hexscope.engine.log import Log
from hexscope.engine.ops.context import DEFAULT_PADDING_FILL, Shared
from hexscope.engine.ops.registry import REGISTRY, OpRegistry
from hexscope.engine.prepare import Prepared, Rewrite, prepare
from hexscope.engine.stale_results import stale_in_prepared
from hexscope.engine.tensor import Tensor, is_frozen
from hexscope.engine.validate import Issue, Validator, errors


def as_input_tensor(value: Tensor | np.ndarray) -> Tensor:
    """A graph input; float64/int64 arrays become float32/int32 (hexagon_nn has neither).

    The session freezes its inputs, and kernels keep work derived from read-only buffers
    between runs (the convolution's centred input and converted filter). So a Tensor whose
    buffer the caller could still write through another array is copied: freezing the
    Tensor's own view would not stop those writes, and a later run would read stale work."""
    if isinstance(value, Tensor):
        return value if not value.has_data or is_frozen(value.raw) else value.copy()
    try:
        return Tensor.from_array(narrow_64bit(np.asarray(value)))
    except ValueError as exc:
        raise InputError(f"graph input: {exc}") from None


_IMMUTABLE = (int, float, bool, str, bytes, type(None), np.generic, Enum)
# Types whose values are immutable (a set looks them up faster than isinstance walks a
# tuple; subclasses of these fall to the isinstance check).
_IMMUTABLE_TYPES = {int, float, bool, str, bytes, type(None), np.float32, np.float64,
                    np.int32, np.int64, np.uint8, np.uint32, Shared}
# a dataclass type -> its field names (dataclasses.fields costs microseconds a call)
_FIELDS: dict[type, tuple[str, ...]] = {}
# Tuples and frozen dataclasses found to hold only immutable values, by id: such an object
# cannot change, and node state keeps the same one run after run. The dict holds each
# object, so its id is not reused while listed; it is bounded.
_KNOWN_IMMUTABLE: dict[int, object] = {}
_KNOWN_MAX = 4096


def _immutable(value: object) -> bool:
    kind = type(value)
    if kind in _IMMUTABLE_TYPES or isinstance(value, _IMMUTABLE):
        return True
    # a tuple (or a named tuple: a shape, a padding, a key of them) of immutable values
    if kind is tuple or isinstance(value, tuple) and hasattr(kind, "_fields"):
        return all(map(_immutable, value))  # type: ignore[arg-type]
    return _frozen_scalars(value)


def _frozen_scalars(value: object) -> bool:
    """A frozen dataclass whose fields all hold immutable values (a node's kept scaling)."""
    params = getattr(type(value), "__dataclass_params__", None)
    if params is None or not params.frozen or isinstance(value, type):
        return False
    names = _field_names(value)
    return all(_immutable(getattr(value, name)) for name in names)


def _field_names(value: object) -> tuple[str, ...]:
    kind = type(value)
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))  # type: ignore[arg-type]
    return names


def _snapshot_value(value: object) -> object:
    """A copy of one node-state entry that later runs cannot change: ``Shared`` entries and
    scalars as they are; a list, or a dataclass, of scalars copied one level (what node state
    mostly holds: ranges); anything else deep-copied."""
    kind = type(value)
    if kind in _IMMUTABLE_TYPES or isinstance(value, (Shared, *_IMMUTABLE)) \
            or _KNOWN_IMMUTABLE.get(id(value)) is value:
        return value
    if kind is list and all(map(_immutable, value)):  # type: ignore[call-overload]
        return value.copy()  # type: ignore[attr-defined]
    names = _FIELDS.get(kind)
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _field_names(value)
    fields = getattr(value, "__dict__", None) if names is not None else None
    if fields is not None and _IMMUTABLE_TYPES.issuperset(map(type, fields.values())) \
            and not hasattr(kind, "__slots__") and not kind.__dataclass_params__.frozen:
        # every attribute of an exactly immutable type (a node's range state), in C; the
        # type's later values go straight to _clone_scalars
        _CLONERS[kind] = _clone_scalars
        return _clone_scalars(value)
    if (isinstance(value, tuple) or names is not None) and _immutable(value):
        # what deepcopy gives of a tuple of immutables (itself), and a frozen dataclass of
        # them needs no copy either; the same object (a node's kept strategy key or
        # scaling) is found again by identity next run
        if len(_KNOWN_IMMUTABLE) >= _KNOWN_MAX:
            _KNOWN_IMMUTABLE.clear()
        _KNOWN_IMMUTABLE[id(value)] = value
        return value
    if names is not None and all(_immutable(getattr(value, name)) for name in names):
        if hasattr(value, "__dict__") and not hasattr(kind, "__slots__"):
            twin = object.__new__(kind)     # copy.copy's result, without its reduce protocol
            twin.__dict__.update(value.__dict__)
            return twin
        return copy.copy(value)
    return copy.deepcopy(value)


def _clone_scalars(value: object) -> object:
    """A plain (non-frozen, unslotted) dataclass copied by its ``__dict__`` while every
    attribute holds an immutable type; :func:`_snapshot_value`'s other cases otherwise."""
    fields = value.__dict__
    if _IMMUTABLE_TYPES.issuperset(map(type, fields.values())):
        twin = object.__new__(type(value))
        twin.__dict__.update(fields)
        return twin
    del _CLONERS[type(value)]
    try:
        return _snapshot_value(value)
    finally:
        _CLONERS.setdefault(type(value), _clone_scalars)


#: node-state types copied by a function of their own (range dataclasses), found by type
_CLONERS: dict[type, Callable[[object], object]] = {}


def snapshot_states(states: dict[int, dict[str, object]],
                    memo: dict[int, tuple] | None = None) -> dict[int, dict[str, object]]:
    """Node state as a run starts, to roll back to: what ``copy.deepcopy`` gives, an entry at
    a time (a deep copy of MobileNetV2's 171 node states took 0.3 ms a run).

    With ``memo`` (kept by the caller from one call to the next), a node whose state holds
    the very objects it held at the last call, its range objects' fields included, gets the
    same copy as then: snapshots are never written, and that copy still equals the state
    (MobileNetV2's 62 nodes with range objects: 142 -> ~50 us a run)."""
    immutable = _IMMUTABLE_TYPES        # Shared entries and scalars as they are, inline
    cloners, snap = _CLONERS, _snapshot_value
    is_ = operator.is_
    recall = {}.get if memo is None else memo.get
    copies = {}
    for node_id, state in states.items():
        values = state.values()
        kept = recall(node_id)
        if kept is not None:
            # the same objects under the same keys, and each range object's fields the
            # ones its copy was made with (identity: 0.0 == -0.0 would pass an equality)
            seen, copied, twins = kept
            if len(state) == len(seen) and all(map(is_, values, seen.values())) \
                    and all(map(is_, state, seen)):
                for live, size, fields in twins:
                    now = live.__dict__
                    if len(now) != size or not all(map(is_, now.values(), fields)):
                        break
                else:
                    copies[node_id] = copied
                    continue
            if memo is not None:
                del memo[node_id]       # a stale copy would hold old objects
        if immutable.issuperset(map(type, values)):
            # only Shared entries and scalars (most nodes): the dict copied in C
            copies[node_id] = state.copy()
            continue
        copies[node_id] = copied = {k: v if (kind := type(v)) in immutable
                                    else cloners.get(kind, snap)(v)  # type: ignore[operator]
                                    for k, v in state.items()}
        if memo is not None:
            _remember(memo, node_id, state, copied)
    if memo is not None and len(memo) > len(states):
        # nodes gone (an edit, a reset): their entries no longer held
        for node_id in [i for i in memo if i not in states]:
            del memo[node_id]
    return copies


def _remember(memo: dict[int, tuple], node_id: int, state: dict[str, object],
              copied: dict[str, object]) -> None:
    """Keep ``copied`` for ``node_id`` when every entry is either shared with the state
    (immutable) or a scalar-only copy of a range object (its attributes the same objects,
    kept with it: a new value is a new object); a list or a deep copy could change inside
    without a new object, so such a node is copied every time."""
    twins = []
    for key, value in state.items():
        twin = copied[key]
        if twin is value:
            continue
        fields = getattr(value, "__dict__", None)
        if type(twin) is not type(value) or type(value) not in _CLONERS or fields is None \
                or list(fields) != list(twin.__dict__) \
                or not all(map(operator.is_, fields.values(), twin.__dict__.values())):
            memo.pop(node_id, None)
            return
        twins.append((value, len(fields), tuple(fields.values())))
    memo[node_id] = (state.copy(), copied, tuple(twins))


class Session:
    """Runs a graph on a backend, node by node. See the module docstring."""

    def __init__(self, graph: Graph, backend: str | Backend = "sim", *,
                 registry: OpRegistry = REGISTRY, debug_level: int = 0,
                 padding_fill: int = DEFAULT_PADDING_FILL, seed: int = 0,
                 padding_override: int | None = None, fusions: bool = True) -> None:
        self.graph = graph
        # False runs the graph as authored: no Supernode fusion (compare it with the fused one)
        self.fusions = fusions
        self.registry = registry
        self.backend = make_backend(backend)
        self.log = Log(debug_level)
        self.events: Emitter[object] = Emitter()
        self.log.written.connect(self.events.emit)   # listeners see log lines as events too
        self.breakpoints: set[int] = set()
        self.padding_fill = padding_fill
        self.seed = seed
        self.padding_override = padding_override
        self.issues: list[Issue] = []
        # kept from prepare to prepare: a node and its producers the same objects as last
        # time are not checked again (a re-prepare after an edit at 10,000 nodes: 66 -> 22
        # ms of validation, on the run's thread beside the window)
        self.validator = Validator(registry)
        self._inputs: tuple[Tensor, ...] = ()
        self._snapshot: tuple[dict, dict] = ({}, {})
        # begin_run's copies by node, reused while a node's state holds the same objects
        self._snapshot_memo: dict[int, tuple] = {}
        self._pending_edits: set[int] = set()
        self._output_nodes: tuple[Prepared, tuple[int, ...]] | None = None
        self.prepared: Prepared
        self.executor: Executor
        self.prepare()
        self._disconnect = graph.edited.connect(self._on_edit)

    # preparation ------------------------------------------------------------------------
    def prepare(self) -> None:
        """Validate and prepare from scratch; node state and Variables are reset."""
        self._prepare_taking_edits()
        self._new_executor({}, {})

    def _prepare_taking_edits(self) -> set[int]:
        """Prepare again; the pending edits, taken *before* preparing, are returned. An edit
        made while prepare reads the graph then stays pending for the next call instead of
        being cleared with these; if prepare fails, these stay pending too."""
        edits, self._pending_edits = self._pending_edits, set()
        try:
            self.prepared = self._checked_prepare()
        except BaseException:
            self._pending_edits |= edits
            raise
        return edits

    def _checked_prepare(self) -> Prepared:
        self.issues = self.validator.validate(self.graph)
        problems = errors(self.issues)
        if problems:
            raise GraphError(f"the graph has {len(problems)} problem(s)", problems)
        prepared = prepare(self.graph, self.registry, fusions=self.fusions)
        self.backend.prepare(prepared)
        return prepared

    def _new_executor(self, states: dict, store: dict) -> None:
        self.executor = Executor(self.prepared, self.backend, log=self.log,
                                 registry=self.registry, padding_fill=self.padding_fill,
                                 seed=self.seed, states=states, store=store,
                                 padding_override=self.padding_override)
        self.executor.graph_inputs = self._inputs
        self.executor.events.connect(self.events.emit)
        self._snapshot = (snapshot_states(states), dict(store))

    def _on_edit(self, event: GraphEdited) -> None:
        if event.affects_results:
            self._pending_edits |= set(event.changed)

    def follow(self, graph: Graph, changed: Iterable[int] = ()) -> None:
        """Run ``graph`` from now on: this session's graph as edited elsewhere (the app's
        editor keeps its own and sends a snapshot), ``changed`` the nodes whose edits affect
        results. They are prepared again before the next step or run."""
        self._disconnect()
        self.graph = graph
        self._disconnect = graph.edited.connect(self._on_edit)
        self._pending_edits |= set(changed)

    def _apply_edits(self) -> None:
        """Re-prepare after edits, keeping results of nodes the edits cannot affect."""
        if not self._pending_edits:
            return
        old = self.executor
        edits = self._prepare_taking_edits()
        stale = self.graph.downstream(edits) | edits
        # an edit can make or unmake a fusion far from where it was made (a second reader of
        # a requantize): a node that prepare now makes differently has a stale result too
        remade = {i for i, n in self.prepared.nodes.items() if not n.is_const
                  and (o := old.prepared.nodes.get(i)) is not None
                  and (o.op, o.inputs) != (n.op, n.inputs)}
        if remade:
            stale |= self.graph.downstream(remade) | remade
        # and prepare's own nodes (the d32 conversions, the Consts it folds) that read them
        stale = stale_in_prepared(self.prepared, old.prepared, stale)
        states = {i: s for i, s in old.states.items() if i not in stale}
        # the state this run began with too: a begin_run or Restart rolls back to it, and
        # an edited node's old state (a d32 Supernode's output range, built from its range
        # Consts once) made the edit vanish
        began, store = self._snapshot
        self._snapshot = ({i: s for i, s in began.items() if i not in stale}, store)
        self.executor = Executor(self.prepared, self.backend, log=self.log,
                                 registry=self.registry, padding_fill=self.padding_fill,
                                 seed=self.seed, states=states, store=old.store,
                                 padding_override=self.padding_override)
        self.executor.graph_inputs = self._inputs
        self.executor.events.connect(self.events.emit)
        for node_id, result in old.trace.items():
            if node_id in self.prepared.nodes:
                self.executor.trace[node_id] = result
                if node_id in stale or node_id in old.stale:
                    self.executor.stale.add(node_id)

    # inputs and runs ----------------------------------------------------------------------
    def set_inputs(self, inputs: Sequence[Tensor | np.ndarray]) -> None:
        """Set the graph inputs (one per INPUT output); the next run starts over with them."""
        self._inputs = tuple(as_input_tensor(x).readonly() for x in inputs)
        self.begin_run()

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return self._inputs

    def execute(self, inputs: Sequence[Tensor | np.ndarray] | None = None) -> list[Tensor]:
        """Run the whole graph once and return the tensors fed to OUTPUT.

        Node state (Variables, adaptive ranges) carries over from earlier executions, as on
        the device. Raises :class:`NodeError` naming the node that failed.
        """
        if inputs is not None:
            self._inputs = tuple(as_input_tensor(x).readonly() for x in inputs)
        self.begin_run()
        finished = self.executor.run()
        self._raise_on_failure(finished)
        return self.graph_outputs()

    def begin_run(self) -> None:
        """Start a new execution. A finished run's node state carries over, as on the device;
        a run that stopped part-way is rolled back to its start first."""
        self._apply_edits()
        if self.executor.trace and not self.executor.finished:
            self.restart()
        self._snapshot = (snapshot_states(self.executor.states, self._snapshot_memo),
                          dict(self.executor.store))
        self.executor.graph_inputs = self._inputs
        self.executor.reset()

    def reset_state(self) -> None:
        """Forget all node state and Variables, as a fresh prepare leaves them, keeping the
        prepared graph (batch runs use it so results do not depend on the order of inputs).

        Entries wrapped in ``Shared`` stay: they are data derived from a frozen Const and
        checked against it on use (weights packed for the GEMM), not state, and rebuilding
        them cost a batch run as much as the run itself."""
        self._apply_edits()
        kept = {node_id: {k: v for k, v in state.items() if isinstance(v, Shared)}
                for node_id, state in self.executor.states.items()}
        self.executor.states.clear()
        self.executor.states.update({node_id: d for node_id, d in kept.items() if d})
        self.executor.store.clear()
        self.executor.reset()
        self._snapshot = ({}, {})

    def restart(self) -> None:
        """Forget this run's results and restore the node state it started with."""
        self._apply_edits()
        states, store = self._snapshot
        self.executor.states.clear()
        self.executor.states.update(snapshot_states(states))
        self.executor.store.clear()
        self.executor.store.update(store)
        self.executor.graph_inputs = self._inputs
        self.executor.reset()

    def step(self) -> object:
        """Run the next node; returns NodeFinished, NodeFailed, or None at the end."""
        self._apply_edits()
        return self.executor.step()

    def run(self, cancel: CancelToken | None = None) -> RunFinished:
        """Continue until the end, a breakpoint, a failure or a cancel."""
        self._apply_edits()
        return self.executor.run(stop=self.breakpoints, cancel=cancel)

    def run_to(self, node_id: int, cancel: CancelToken | None = None) -> RunFinished:
        """Run until ``node_id`` has run (breakpoints on the way still stop)."""
        self._apply_edits()
        if node_id not in self.prepared.nodes:
            raise GraphError(f"node 0x{node_id:x} is not part of the prepared graph")
        if self.executor.status(node_id) is NodeStatus.DONE:
            return RunFinished(RunStatus.PAUSED, self.executor.next_node)
        return self.executor.run(stop=self.breakpoints, cancel=cancel, until=node_id)

    def _raise_on_failure(self, finished: RunFinished) -> None:
        if finished.status is RunStatus.FAILED and finished.failed_node is not None:
            node = self.prepared.nodes[finished.failed_node]
            raise NodeError(node.node_id, node.op, self.executor.failed[node.node_id])

    # inspection -----------------------------------------------------------------------------
    @property
    def plan(self) -> tuple[int, ...]:
        return self.executor.plan

    @property
    def next_node(self) -> int | None:
        return self.executor.next_node

    @property
    def rewrites(self) -> tuple[Rewrite, ...]:
        return self.prepared.rewrites

    def status(self, node_id: int) -> NodeStatus:
        return self.executor.status(node_id)

    def result(self, node_id: int) -> NodeResult | None:
        return self.executor.trace.get(node_id)

    def output(self, node_id: int, index: int = 0) -> Tensor:
        """Output ``index`` of a node that has run (or a Const's data)."""
        node = self.prepared.nodes.get(node_id)
        if node is not None and node.is_const and node.const is not None:
            return node.const
        result = self.executor.trace.get(node_id)
        if result is None:
            raise GraphError(f"node 0x{node_id:x} has not run")
        if not 0 <= index < len(result.outputs):
            raise GraphError(f"node 0x{node_id:x} has no output {index}")
        return self.executor.store.get((node_id, index), result.outputs[index])

    def graph_outputs(self) -> list[Tensor]:
        """The tensors fed to the OUTPUT node(s), in port order."""
        executor = self.executor
        prepared = executor.prepared
        kept = self._output_nodes
        if kept is None or kept[0] is not prepared:
            # the OUTPUT nodes in plan order, found once per prepared graph (a scan of the
            # plan each run: ~30 us at MobileNetV2)
            kept = self._output_nodes = (prepared, tuple(
                i for i in prepared.plan if prepared.nodes[i].op == "OUTPUT"))
        tensors = []
        trace = executor.trace
        for node_id in kept[1]:
            if node_id in trace:
                tensors.extend(executor.input_tensor(ref)
                               for ref in prepared.nodes[node_id].inputs)
        return tensors

    @property
    def times(self) -> dict[int, float]:
        return {i: r.seconds for i, r in self.executor.trace.items()}

    def close(self) -> None:
        self._disconnect()
        self.backend.close()
