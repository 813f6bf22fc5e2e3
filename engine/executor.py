"""Executor: runs a prepared graph one node at a time, on the calling thread.

It owns no thread and never sleeps. Events go to ``events`` synchronously; every node's
outputs stay in ``trace`` (read-only tensors, shared rather than copied).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Container, Mapping, MutableMapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from enum import Enum

import numpy as np

from hexscope.engine.analysis.degenerate import degenerate_origin
from hexscope.engine.backends.base import Backend
from hexscope.engine.cooperate import paced
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import EngineError, KernelContractError, NodeError
from hexscope.engine.events import (
    BreakpointHit,
    Emitter,
    NodeFailed,
    NodeFinished,
    NodeStarted,
    RunFinished,
    RunStatus,
)
from hexscope.engine.executor_plan import Source, build_plan, node_context
from hexscope.engine.log import Log
from hexscope.engine.nodes import Node
from hexscope.engine.ops.context import DEFAULT_PADDING_FILL, KernelContext, capacity_error
from hexscope.engine.ops.registry import REGISTRY, OpRegistry, OpSpec
from hexscope.engine.prepare import Prepared
from hexscope.engine.prepare.supernode import find_chains
from hexscope.engine.tensor import Tensor, freeze_fitting


def fill_padding(tensor: Tensor, value: int) -> Tensor:
    """A copy of a d32 tensor whose padding bytes (not its tail) all hold ``value``."""
    filled = tensor.copy()
    mask = filled.padding_mask().reshape(-1)
    flat_bytes = filled.buffer.view(filled.dtype.numpy).reshape(-1)
    flat_bytes[mask] = np.array(value).astype(filled.dtype.numpy)
    return filled


class NodeStatus(Enum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    STALE = "stale"      # ran before an edit that changed what it reads


@dataclass(frozen=True, slots=True)
class NodeResult:
    outputs: tuple[Tensor, ...]
    seconds: float
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _NodePlan:
    """What the executor needs of a node at each step, fixed by the prepared graph."""

    spec: OpSpec
    input_ops: tuple[str, ...]
    output_checks: tuple[tuple[DType | None, int | None], ...]
    # per input, the Const's tensor (what lookup_input gives first), or None: looked up
    consts: tuple[Tensor | None, ...] = ()


#: A fast-plan step as the run unpacks it: node id, node, input sources, the inputs with each
#: Const's tensor in place (None for the others), (slot, producer, output index) of each
#: other input, kernel (None: through the backend), kernel context, the node's plan.
_FastStep = tuple[int, Node, tuple[Source, ...], tuple[Tensor | None, ...],
                  tuple[tuple[int, int, int], ...],
                  Callable[..., Sequence[Tensor | np.ndarray]] | None, KernelContext, _NodePlan]


def _consts_of(sources: tuple[Source, ...]) -> tuple[Tensor | None, ...]:
    return tuple(None if type(s) is tuple else s for s in sources)  # type: ignore[misc]


def _results_of(sources: tuple[Source, ...]) -> tuple[tuple[int, int, int], ...]:
    return tuple((slot, s[0], s[1]) for slot, s in enumerate(sources)
                 if type(s) is tuple)  # type: ignore[index]


def lookup_input(prepared: Prepared, store: Mapping[tuple[int, int], Tensor],
                 trace: Mapping[int, NodeResult], stale: AbstractSet[int],
                 ref: tuple[int, int]) -> Tensor:
    """The tensor an input reference names: a Const's data, a stored value, or the output
    of a node that has run (and is not stale)."""
    src, idx = ref
    node = prepared.nodes.get(src)
    if node is None:
        raise EngineError(f"input refers to node 0x{src:x}, which prepare removed")
    if node.is_const:
        assert node.const is not None
        return node.const
    if (src, idx) in store:
        return store[(src, idx)]
    result = trace.get(src)
    if result is None or src in stale:
        raise EngineError(f"input 0x{src:x}:{idx} has not been computed yet")
    return result.outputs[idx]


_SEQUENCES = (tuple, list)


def plain_outputs(raw: Sequence[Tensor | np.ndarray],
                  checks: tuple[tuple[DType | None, int | None], ...]
                  ) -> tuple[Tensor, ...] | None:
    """A kernel's outputs frozen, when each is a Tensor of the port's type whose allocation
    fits the declared capacity (what :meth:`Executor._check_outputs` lets through unchanged,
    found with a few comparisons); None when any output needs the full check (an array to
    wrap, another type, an allocation past the capacity, a count that differs)."""
    if type(raw) not in _SEQUENCES or len(raw) != len(checks) \
            or not freeze_fitting(raw, checks):
        return None
    return tuple(raw)  # type: ignore[arg-type]


def failure_message(spec: OpSpec, exc: Exception) -> str:
    """What a node's failure says: the engine's own message, or a kernel bug named as one."""
    if isinstance(exc, NodeError):
        return exc.reason
    if isinstance(exc, EngineError):
        return str(exc)
    return f"internal error in the {spec.name} kernel: {type(exc).__name__}: {exc}"


class CancelToken:
    """Set from any thread; the executor checks it between nodes."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    def reset(self) -> None:
        self._event.clear()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


class Executor:
    """Steps through ``prepared.plan``; see :class:`hexscope.engine.session.Session`."""

    def __init__(self, prepared: Prepared, backend: Backend, *, log: Log | None = None,
                 registry: OpRegistry = REGISTRY, padding_fill: int = DEFAULT_PADDING_FILL,
                 seed: int = 0, states: dict[int, dict[str, object]] | None = None,
                 store: MutableMapping[tuple[int, int], Tensor] | None = None,
                 padding_override: int | None = None) -> None:
        self.prepared = prepared
        self.backend = backend
        self.registry = registry
        self.log = log or Log()
        self.padding_fill = padding_fill
        self.seed = seed
        self.states: dict[int, dict[str, object]] = states if states is not None else {}
        self.store: MutableMapping[tuple[int, int], Tensor] = store if store is not None else {}
        self.events: Emitter[object] = Emitter()
        self.trace: dict[int, NodeResult] = {}
        self.stale: set[int] = set()
        self.failed: dict[int, str] = {}
        self.graph_inputs: tuple[Tensor, ...] = ()
        # The padding check reruns a graph with every d32 output's padding overwritten.
        self.padding_override = padding_override
        self._cursor = 0
        self._position = {node_id: k for k, node_id in enumerate(prepared.plan)}
        # Everything per node that the prepared graph fixes, worked out once, off the hot path.
        self._plans = {i: self._node_plan(n) for i, n in paced(prepared.nodes.items())
                       if not n.is_const}
        self._fast: list[_FastStep] | None = None
        # False: every run steps node by node (the bench times one against the other)
        self.use_plan = True
        self._fast_built = False
        # what the fast plan's contexts were given at the last run that went through
        self._ctx_fields: tuple[object, ...] | None = None

    def _node_plan(self, node: Node) -> _NodePlan:
        spec = self.registry.get(node.op)
        nodes = self.prepared.nodes
        input_ops = tuple(nodes[s].op if s in nodes else "" for s, _ in node.inputs)
        ports = spec.outputs.ports_for(len(node.outputs))
        # Per output: the declared type (None for any) and the declared capacity in bytes
        # (None when the node declares no size).
        checks = tuple(
            (port.dtype if port.dtype not in (None, DType.VOID) else None,
             out_def.capacity(spec.d32_output, k) if out_def.max_sizes else None)
            for k, (port, out_def) in enumerate(zip(ports, node.outputs, strict=False)))
        consts = tuple(nodes[s].const if s in nodes and nodes[s].is_const else None
                       for s, _ in node.inputs)
        return _NodePlan(spec, input_ops, checks, consts)

    # state ----------------------------------------------------------------------------------
    @property
    def plan(self) -> tuple[int, ...]:
        return self.prepared.plan

    def status(self, node_id: int) -> NodeStatus:
        if node_id in self.failed:
            return NodeStatus.FAILED
        if node_id in self.stale:
            return NodeStatus.STALE
        return NodeStatus.DONE if node_id in self.trace else NodeStatus.PENDING

    @property
    def next_node(self) -> int | None:
        """The node the next step runs: the first in the plan that has no fresh result."""
        # Every node before the cursor has a fresh result, so the scan resumes there; reset()
        # rewinds it, and a new executor (after an edit) starts from the top.
        plan = self.plan
        while self._cursor < len(plan):
            node_id = plan[self._cursor]
            if node_id not in self.trace or node_id in self.stale:
                return node_id
            self._cursor += 1
        return None

    @property
    def finished(self) -> bool:
        return self.next_node is None

    def reset(self) -> None:
        self._cursor = 0
        self.trace.clear()
        self.stale.clear()
        self.failed.clear()
        if getattr(self.backend, "runs_graph", False):
            self.backend.begin_run()  # type: ignore[attr-defined]

    # running --------------------------------------------------------------------------------
    def step(self) -> NodeFinished | NodeFailed | None:
        """Run exactly one node; None when the plan is done. A failure is returned, not
        raised, and the node stays next so it can be retried after an edit."""
        node_id = self.next_node
        if node_id is None:
            return None
        node = self.prepared.nodes[node_id]
        plan = self._plans[node_id]
        spec = plan.spec
        self.events.emit(NodeStarted(node_id, self._position[node_id], len(self.plan)))
        ctx = self._context(node, plan)
        start = time.perf_counter()
        try:
            inputs = [self.input_tensor(ref) if const is None else const
                      for ref, const in zip(node.inputs, plan.consts, strict=True)]
            raw = self.backend.run_node(node, spec, inputs, ctx)
            outputs = self._check_outputs(node, plan, raw, ctx)
        except Exception as exc:  # noqa: BLE001 - a kernel bug must not take the session down
            return self._fail(node, failure_message(spec, exc), time.perf_counter() - start)
        seconds = time.perf_counter() - start
        result = NodeResult(outputs, seconds, tuple(ctx.warnings))
        self.trace[node_id] = result
        self.stale.discard(node_id)
        self.failed.pop(node_id, None)
        event = NodeFinished(node_id, outputs, seconds, result.warnings)
        self.events.emit(event)
        return event

    def run(self, stop: Container[int] = (), cancel: CancelToken | None = None,
            until: int | None = None) -> RunFinished:
        """Step until the end, a failure, a node in ``stop`` (before it runs; not the first
        node of this call), ``until`` (after it runs), or a cancel between nodes."""
        runs_graph = getattr(self.backend, "runs_graph", False)
        if runs_graph:
            # a backend that runs whole graphs runs this one as far as this call can go
            self.backend.set_target(self._run_target(stop, until))  # type: ignore[attr-defined]
        try:
            return self._run(stop, cancel, until)
        finally:
            if runs_graph:
                self.backend.set_target(None)  # type: ignore[attr-defined]

    def _run_target(self, stop: Container[int], until: int | None) -> int | None:
        """The last node this run can reach: ``until``, the node before the next breakpoint
        (the first node never stops), or the plan's end."""
        if until is not None:
            return until
        start = self.next_node
        if start is None:
            return None
        plan = self.plan
        k = self._position[start]
        for j in range(k + 1, len(plan)):
            if plan[j] in stop:
                return plan[j - 1]
        return plan[-1]

    def _run(self, stop: Container[int], cancel: CancelToken | None,
             until: int | None) -> RunFinished:
        first = True
        if self.use_plan and until is None and not self.trace \
                and self.padding_override is None:
            ran, failed = self._run_plan(stop, cancel)
            if failed is not None:
                return self._failed_run(failed)
            first = not ran
        while (node_id := self.next_node) is not None:
            if cancel is not None and cancel.cancelled:
                return self._finish(RunFinished(RunStatus.PAUSED, node_id, message="stopped"))
            if not first and node_id in stop:
                self.events.emit(BreakpointHit(node_id))
                return self._finish(RunFinished(RunStatus.PAUSED, node_id,
                                                message=f"breakpoint at 0x{node_id:x}"))
            first = False
            event = self.step()
            if isinstance(event, NodeFailed):
                return self._failed_run(event)
            if until is not None and node_id == until:
                return self._finish(RunFinished(RunStatus.PAUSED, self.next_node))
        return self._finish(RunFinished(RunStatus.FINISHED))

    def _failed_run(self, event: NodeFailed) -> RunFinished:
        node_id = event.node_id
        return self._finish(RunFinished(RunStatus.FAILED, node_id, node_id,
                                        f"node 0x{node_id:x} ({event.op}): {event.message}"))

    def _fast_plan(self) -> list[_FastStep] | None:
        if not self._fast_built:
            specs = {i: p.spec for i, p in self._plans.items()}
            input_ops = {i: p.input_ops for i, p in self._plans.items()}
            steps = build_plan(self.plan, self.prepared.nodes, specs, input_ops,
                               self.backend, self.log)
            # each step as one tuple the run unpacks: no attribute or plan look-up a node
            self._fast = None if steps is None else [
                (s.node.node_id, s.node, s.sources, _consts_of(s.sources),
                 _results_of(s.sources), s.kernel, s.ctx, self._plans[s.node.node_id])
                for s in steps]
            self._fast_built = True
        return self._fast

    def _run_plan(self, stop: Container[int],
                  cancel: CancelToken | None) -> tuple[int, NodeFailed | None]:
        """Run the fast plan from a fresh start until a node in ``stop`` (not the first), a
        cancel or a failure: (how many nodes ran, the failure). What is left, the stepping
        loop does; the trace, node state, log and events are as its steps leave them."""
        steps = self._fast_plan()
        if steps is None or getattr(self.backend, "runs_graph", False):
            return 0, None
        listened = self.events.listened()
        total = len(steps)
        trace, store, failed, stale = self.trace, self.store, self.failed, self.stale
        run_node = self.backend.run_node
        clock = time.perf_counter
        states, graph_inputs, padding_fill = self.states, self.graph_inputs, self.padding_fill
        seed, debug_level = self.seed, self.log.debug_level
        # The plan's contexts keep what the last whole run set; only the node's state is set
        # at each node while these are the same (5 attribute writes a node otherwise)
        fields = (store, graph_inputs, padding_fill, seed, debug_level)
        last = self._ctx_fields
        set_fields = last is None or any(a is not b for a, b in zip(fields, last, strict=True))
        self._ctx_fields = None
        k = 0
        for node_id, node, sources, consts, results, kernel, ctx, plan in steps:
            if k and node_id in stop or cancel is not None and cancel.cancelled:
                self._cursor = k
                return k, None
            if listened:
                self.events.emit(NodeStarted(node_id, k, total))
            # _run_fields, inline (a method call a node cost ~3 % of the bookkeeping)
            state = states.get(node_id)
            if state is None:
                state = states[node_id] = {}
            ctx.state = state
            if set_fields:
                ctx.store, ctx.graph_inputs = store, graph_inputs
                ctx.padding_fill, ctx.seed, ctx.debug_level = padding_fill, seed, debug_level
            if ctx.warnings:
                ctx.warnings = []
            start = clock()
            try:
                if store:       # a Variable's value may stand for any result
                    inputs = [source if type(source) is not tuple  # noqa: E721 - a Const
                              else store[source] if source in store
                              else trace[source[0]].outputs[source[1]]
                              for source in sources]
                else:           # the Consts in place, each earlier result put in its slot
                    inputs = list(consts)
                    for slot, producer, index in results:
                        inputs[slot] = trace[producer].outputs[index]
                raw = (kernel(ctx, *inputs) if kernel is not None
                       else run_node(node, plan.spec, inputs, ctx))
                # what _check_outputs lets through unchanged, found with a few comparisons
                # (the plan runs only without a padding override)
                outputs = plain_outputs(raw, plan.output_checks)
                if outputs is None:
                    outputs = self._check_outputs(node, plan, raw, ctx)
            except Exception as exc:  # noqa: BLE001 - as step(): the node fails, not the run
                self._cursor = k
                return k, self._fail(node, failure_message(plan.spec, exc), clock() - start)
            seconds = clock() - start
            warnings = tuple(ctx.warnings) if ctx.warnings else ()
            trace[node_id] = NodeResult(outputs, seconds, warnings)
            if failed or stale:
                failed.pop(node_id, None)
                stale.discard(node_id)
            if listened:
                self.events.emit(NodeFinished(node_id, outputs, seconds, warnings))
            k += 1
        self._cursor = total
        self._ctx_fields = fields
        return total, None

    def _finish(self, event: RunFinished) -> RunFinished:
        self.events.emit(event)
        return event

    def input_tensor(self, ref: tuple[int, int]) -> Tensor:
        return lookup_input(self.prepared, self.store, self.trace, self.stale, ref)

    def _context(self, node: Node, plan: _NodePlan) -> KernelContext:
        ctx = node_context(node, plan.input_ops, self.log)
        self._run_fields(ctx)
        return ctx

    def _run_fields(self, ctx: KernelContext) -> None:
        """Set what a context takes from this executor at the time of the call."""
        ctx.state = self.states.setdefault(ctx.node_id, {})
        ctx.store = self.store
        ctx.graph_inputs = self.graph_inputs
        ctx.padding_fill = self.padding_fill
        ctx.seed = self.seed
        ctx.debug_level = self.log.debug_level

    def _check_outputs(self, node: Node, plan: _NodePlan, raw: Sequence[Tensor | np.ndarray],
                       ctx: KernelContext) -> tuple[Tensor, ...]:
        raw = list(raw)
        if len(raw) != len(node.outputs):
            raise KernelContractError(f"{plan.spec.name} produced {len(raw)} outputs, the node "
                                      f"declares {len(node.outputs)}")
        outputs = []
        for k, value in enumerate(raw):
            want, capacity = plan.output_checks[k]
            tensor = value if isinstance(value, Tensor) else Tensor.from_array(value, want)
            if want is not None and not want.compatible(tensor.dtype):
                raise KernelContractError(f"output {k} is {tensor.dtype.c_name}, the op "
                                          f"declares {want.c_name}")
            if capacity is not None and tensor.layout is Layout.D32 \
                    and not plan.spec.d32_output:
                # a flat op's d32 result: a device's prepare ran it in its d32 form (every
                # QuantizedConcat_8), whose D32_OUTPUT flag widens the allocation
                capacity = node.outputs[k].capacity(True, k)
            # the allocation's size bounds the data's (nbytes works out d32 geometry): most
            # outputs are cleared by it
            if capacity is not None and tensor.has_data and tensor.raw.size > capacity \
                    and tensor.nbytes > capacity:
                error = capacity_error(k, tensor.nbytes, tensor.describe(), capacity)
                if plan.spec.name != "INPUT":
                    # The device's one policy (context.output_fits); kernels that know the
                    # device's own wording check earlier, this catches every other op.
                    note = self._fusion_note(node.node_id)
                    if note:
                        raise type(error)(f"{error}. {note}")
                    raise error
                ctx.warn(str(error))   # graph spec §4.1: a larger graph input is only reported
            if self.padding_override is not None and tensor.layout is Layout.D32:
                tensor = fill_padding(tensor, self.padding_override)
            outputs.append(tensor.readonly())
        return tuple(outputs)

    def _fusion_note(self, node_id: int) -> str:
        """What prepare does with this node on the device, when that explains a failure: a
        convolution run as authored that the device fuses into a Supernode, or a chain
        prepare would fuse into an op Hexscope does not simulate (prepare's notes)."""
        prepared = self.prepared
        tag = f"0x{node_id:x}:"
        for note in prepared.notes:
            if note.startswith(tag):
                return note[len(tag):].strip()
        if prepared.fusions or prepared.nodes[node_id].op != "QuantizedConv2d_8x8to32":
            return ""
        fusions, _, _ = find_chains(dict(prepared.nodes), list(prepared.order))
        for fusion in fusions:
            if node_id in fusion.fused:
                return (f"On the device, prepare fuses this convolution chain into "
                        f"{fusion.supernode.op} 0x{fusion.supernode.node_id:x}, whose output "
                        "fits; this run is as authored (prepare's fusions off)")
        return ""

    def _degenerate_note(self, node_id: int) -> str:
        """Name where a NaN, infinite or zero-width range that reached the node began."""
        def spec_of(op: str) -> OpSpec | None:
            return self.registry.get(op) if op in self.registry else None

        def tensor_of(ref: tuple[int, int]) -> Tensor | None:
            try:
                return self.input_tensor(ref)
            except EngineError:
                return None

        found = degenerate_origin(node_id, self.prepared.nodes, spec_of, tensor_of)
        if found is None:
            return ""
        origin, what = found
        if origin == node_id:
            return f" (its range input is degenerate: {what})"
        op = self.prepared.nodes[origin].op
        return f" (a degenerate range from node 0x{origin:x} ({op}): {what})"

    def _fail(self, node: Node, message: str, seconds: float) -> NodeFailed:
        message += self._degenerate_note(node.node_id)
        self.failed[node.node_id] = message
        self.log.write(0, f"node 0x{node.node_id:x} ({node.op}) failed: {message}",
                       node.node_id)
        event = NodeFailed(node.node_id, node.op, message, seconds)
        self.events.emit(event)
        return event
