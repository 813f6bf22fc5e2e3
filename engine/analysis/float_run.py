"""The float-reference analyses, per node output (issue 12).

- **isolated** ("what does this node add?"): each node's float reference fed with the
  quantized inputs the run actually produced, against the node's own dequantized output;
- **accumulated** ("what has the graph lost by here?"): the whole graph run in float from the
  same inputs (each op's reference, in plan order), against each node's dequantized output.

Both read a finished (or part-run) :class:`~hexscope.engine.session.Session`, or a
:class:`~hexscope.engine.analysis.run_snapshot.RunSnapshot` of one (whose token can cancel
them between two nodes): nodes that have not run are left out, so the analyses follow a
stepped run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import nullcontext

import numpy as np

from hexscope.engine.analysis.diff import (
    QUANTIZED,
    OutputDiff,
    data_slots,
    lsb_of,
    metrics_against,
    range_slots,
    unit_of,
    values,
)
from hexscope.engine.analysis.op_reading import OpReading, op_inputs, reading_gap
from hexscope.engine.analysis.reuse import NodeWork, cache_for, same_inputs
from hexscope.engine.analysis.run_snapshot import RunSnapshot, check_cancel
from hexscope.engine.cooperate import paced
from hexscope.engine.d32 import NO_PADDING
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.nodes import Node
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.reference import (
    SELF,
    DeferredBound,
    NoReference,
    Reals,
    code_scale,
    ranges_deferred,
    ranges_unused,
    real,
)
from hexscope.engine.ops.registry import OpSpec
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor, fresh, is_frozen

RefValue = Tensor | np.ndarray | Reals | DeferredBound | None
FloatValues = dict[tuple[int, int], RefValue]

#: Nodes between two pause points of a comparison's passes (engine/cooperate.py): a node's
#: reference and metrics are 30-100 us, and the app's Compare ran them on its thread at
#: 10,000 nodes with no pause point (100 ms of its CPU in a 161 ms gap of the window)
ANALYSIS_EVERY = 16


class NoValue(Exception):
    """A node has no float value: why (a reference missing, an input without value)."""


def reference_context(node: Node, graph_inputs: tuple[Tensor, ...] = ()) -> KernelContext:
    # The references read geometry (padding mode, output defs) but never node state: a fresh
    # context per call keeps the analyses from touching the run's state.
    return KernelContext(node_id=node.node_id, op=node.op, padding=node.padding,
                         output_defs=node.outputs, input_refs=node.inputs,
                         graph_inputs=graph_inputs)


def call_reference(spec: OpSpec, node: Node, inputs: Sequence[Tensor],
                   graph_inputs: tuple[Tensor, ...] = ()) -> list[RefValue]:
    """The op's float reference on ``inputs``, one value per output (None: no meaning).

    Raises NoValue when the op has no reference or it fails on these inputs."""
    ref = spec.reference
    if ref is None:
        raise NoValue(f"{spec.name} declares no float reference")
    if isinstance(ref, NoReference):
        raise NoValue(f"{spec.name} has no float meaning: {ref.reason}")
    ctx = reference_context(node, graph_inputs)
    n = len(node.outputs)
    try:
        # a float run may overflow to inf or make NaN (a deep graph of random weights
        # does): values the metrics define, not numpy warnings on the user's terminal
        with np.errstate(all="ignore"):
            raw = _reference_values_of(spec, ref, ctx, inputs, n)
    except NoValue:
        raise
    except Exception as exc:  # noqa: BLE001  (any kernel error: the node just has no value)
        raise NoValue(f"the float reference of {spec.name} failed: {exc}") from None
    return (raw + [None] * n)[:n]


def _reference_values_of(spec: OpSpec, ref: object, ctx: KernelContext,
                         inputs: Sequence[Tensor], n: int) -> list[RefValue]:
    if ref is SELF:
        if spec.kernel is None:
            raise NoValue(f"{spec.name} is not simulated")
        raw = list(spec.kernel(ctx, *inputs))
        for k, value in enumerate(raw):
            if isinstance(value, np.ndarray):
                port = spec.outputs.port(k, n)
                raw[k] = Tensor.from_array(value, port.dtype if port else None)
        return raw
    return list(ref(ctx, *inputs))   # type: ignore[operator]


def compare_to_reference(node: Node, title: str, actual: tuple[Tensor, ...],
                         ref: Sequence[RefValue], tolerance_lsb: float,
                         ref_again: Callable[[], Sequence[RefValue]] | None = None,
                         ranges: dict[int, tuple[int, int]] | None = None,
                         op_ref: _OpReference | None = None) -> list[OutputDiff]:
    """Each data output of a node against its float reference value.

    The diffs can make their values again for the views: from ``ref_again()`` (the
    reference computed anew) when given, else from ``ref`` itself, which they then keep.
    ``ranges``: ``range_slots(actual)``, when the caller has it. ``op_ref``: the reference
    on the op's own reading of its inputs (``op_reading``), for the excess error."""
    if ranges is None:
        ranges = range_slots(actual)
    diffs = []
    for k in data_slots(actual, ranges):
        a = actual[k]
        r = _reals_of(ref[k]) if k < len(ref) else None
        if r is None or not a.has_data:
            continue
        if (a.dtype in QUANTIZED and k not in ranges
                and not (isinstance(r, Tensor) and r.dtype is a.dtype)):
            continue    # codes without a range (Convert_to_d32) cannot be read as reals
        mn, mx = (actual[ranges[k][0]], actual[ranges[k][1]]) if k in ranges else (None, None)
        bv = r if isinstance(r, Reals) else _reference_values(r, a, mn, mx)
        diff = OutputDiff(node.node_id, node.op, title, k, tuple(a.shape))
        if math.prod(bv.shape) != math.prod(a.shape):      # logical: d32 pads its memory
            diff.note = f"the reference has shape {bv.shape}, the output {tuple(a.shape)}"
            diff.exceeds = True
            diffs.append(diff)
            continue
        # a quantized output's step is the scale its codes are read with (one reading of
        # its range for both)
        read = code_scale(a, mn, mx) if mn is not None and a.dtype in QUANTIZED else None
        lsb = read[0] if read is not None else lsb_of(a, mn, mx)
        # A is the reference side of the metrics (signal for SQNR), B the quantized output,
        # read from its codes where it has them
        op_value = op_ref.output(k, a, mn, mx) if op_ref is not None else None
        diff.metrics = metrics_against(bv, a, mn, mx, lsb, tolerance_lsb, read, op_value)
        diff.unit = unit_of(a, lsb)
        diff.exceeds = diff.metrics.beyond > 0
        if op_ref is not None and diff.metrics.excess_lsb is not None and lsb:
            values_op = op_ref.values.get(k)
            if values_op is not None:
                gap = reading_gap(_reference_values(bv, a, mn, mx), values_op, lsb)
                diff.note = (f"the op reads its inputs with {op_ref.reading.note}: its ideal "
                             f"result is up to {gap:.4g} LSB from the reference; the excess "
                             "is over the nearer of the two")
        diff.source = _source(a, mn, mx, k, r if ref_again is None else None, ref_again)
        diffs.append(diff)
    return diffs


def _reference_values(r: Tensor | np.ndarray | Reals, a: Tensor, mn: Tensor | None,
                      mx: Tensor | None) -> np.ndarray:
    if isinstance(r, Reals):
        return r.array()
    if isinstance(r, Tensor):
        # a byte mover's value: codes mean what the node's own range says
        return values(r, mn, mx) if r.dtype is a.dtype else real(r, mn, mx)
    return np.asarray(r)


class _OpReference:
    """The reference on the op's own reading of its inputs, made once when an output's
    excess error first asks for it (only outputs beyond the tolerance do)."""

    def __init__(self, reading: OpReading, make: Callable[[], Sequence[RefValue]]) -> None:
        self.reading = reading
        self._make = make
        self._made: Sequence[RefValue] | None = None
        self.values: dict[int, np.ndarray] = {}     # output -> the values given

    def output(self, k: int, a: Tensor, mn: Tensor | None, mx: Tensor | None
               ) -> Callable[[], np.ndarray | None]:
        def value() -> np.ndarray | None:
            if self._made is None:
                try:
                    self._made = self._make()
                except NoValue:
                    self._made = ()
            r = _reals_of(self._made[k]) if k < len(self._made) else None
            if r is None:
                return None
            v = np.asarray(_reference_values(r, a, mn, mx), np.float64)
            if v.size != math.prod(a.shape):      # logical: d32 pads its memory
                return None
            self.values[k] = v
            return v
        return value


def _source(a: Tensor, mn: Tensor | None, mx: Tensor | None, k: int,
            kept: RefValue, again: Callable[[], Sequence[RefValue]] | None
            ) -> Callable[[], tuple[np.ndarray, np.ndarray] | None]:
    """(reference, output) values of output ``k``, made when the views ask."""
    def make() -> tuple[np.ndarray, np.ndarray] | None:
        r = kept
        if r is None and again is not None:
            try:
                r = again()[k]
            except NoValue:
                return None
        if r is None:
            return None
        r = _reals_of(r)
        av = values(a, mn, mx)
        return _reference_values(r, a, mn, mx).reshape(av.shape), av
    return make


def isolated(session: Session | RunSnapshot, tolerance_lsb: float = 1.0) -> tuple[list[OutputDiff],
                                                                     dict[int, str]]:
    """Per node output: the reference on the run's own inputs against the node's output.

    Returns the diffs in plan order and, per node left out, why."""
    prepared, ex = session.prepared, session.executor
    cache = cache_for(prepared)
    diffs: list[OutputDiff] = []
    skipped: dict[int, str] = {}
    for node_id in paced(prepared.plan, ANALYSIS_EVERY):
        check_cancel(session)
        result = ex.trace.get(node_id)
        if result is None or node_id in ex.stale:
            continue
        node = prepared.nodes[node_id]
        try:
            inputs = [ex.input_tensor(ref) for ref in node.inputs]
        except Exception as exc:  # noqa: BLE001  (an input gone after an edit)
            skipped[node_id] = str(exc)
            continue
        made_from = (*inputs, *result.outputs, *ex.graph_inputs)
        work = cache.node_work("isolated", node_id, made_from, tolerance_lsb)
        if work is None:
            work = _isolated_node(session, node, result.outputs, inputs, tolerance_lsb)
            work.made_from, work.tolerance = made_from, tolerance_lsb
            cache.nodes[("isolated", node_id)] = work
        if work.skipped is not None:
            skipped[node_id] = work.skipped
        diffs += work.diffs
    return diffs, skipped


def _isolated_node(session: Session | RunSnapshot, node: Node, outputs: tuple[Tensor, ...],
                   inputs: list[Tensor], tolerance_lsb: float) -> NodeWork:
    spec = session.registry.get(node.op)
    graph_inputs = session.executor.graph_inputs
    # only the data outputs are compared: when the others are all its range, the reference
    # need not take min and max of its result
    ranges = range_slots(outputs)
    only_data = data_slots(outputs, ranges) == [0]
    try:
        with ranges_unused() if only_data else nullcontext():
            ref = call_reference(spec, node, inputs, graph_inputs)
    except NoValue as exc:
        return NodeWork((), tolerance_lsb, [], str(exc))
    reading = op_inputs(spec, inputs)
    op_ref = None
    if reading is not None:
        def on_op_reading() -> list[RefValue]:
            with ranges_unused() if only_data else nullcontext():
                return call_reference(spec, node, reading.inputs, graph_inputs)
        op_ref = _OpReference(reading, on_op_reading)
    diffs = compare_to_reference(node, node.title, outputs, ref, tolerance_lsb,
                                 _again(spec, node, inputs, graph_inputs), ranges, op_ref)
    return NodeWork((), tolerance_lsb, diffs)


def _again(spec: OpSpec, node: Node, inputs: list[Tensor], graph_inputs: tuple[Tensor, ...]
           ) -> Callable[[], list[RefValue]]:
    return lambda: call_reference(spec, node, inputs, graph_inputs)


def float_values(session: Session | RunSnapshot) -> tuple[FloatValues, dict[int, str]]:
    """Run the prepared graph in float: every node's reference on its float inputs.

    Graph inputs are the session's inputs; Consts are their own data (read through their
    consumer's ranges). A node without a value (no reference, or an input without one)
    gives none to its consumers; the reasons are returned per node.

    The float run depends only on the prepared graph and the inputs: it is made once and
    reused while both are the same (``reuse``). Its arrays are read-only."""
    cache = cache_for(session.prepared)
    inputs = session.inputs
    if cache.float_run is not None and same_inputs(cache.float_run[0], inputs):
        return cache.float_run[1], cache.float_run[2]
    vals, missing = _float_run(session)
    cache.float_run = (inputs, vals, missing)
    return vals, missing


def _float_run(session: Session | RunSnapshot) -> tuple[FloatValues, dict[int, str]]:
    prepared = session.prepared
    vals: dict[tuple[int, int], RefValue] = {}
    as_inputs: dict[tuple[int, int], Tensor] = {}     # each value made a Tensor once
    missing: dict[int, str] = {}
    for node_id in prepared.order:
        node = prepared.nodes[node_id]
        if node.is_const and node.const is not None:
            vals[(node_id, 0)] = as_inputs[(node_id, 0)] = node.const
    for node_id in paced(prepared.plan, ANALYSIS_EVERY):
        check_cancel(session)
        node = prepared.nodes[node_id]
        try:
            inputs = []
            for src, idx in node.inputs:
                t = as_inputs.get((src, idx))
                if t is None:
                    v = vals.get((src, idx))
                    if v is None:
                        raise NoValue(missing[src] if src in missing else
                                      f"input 0x{src:x}:{idx} has no float value")
                    t = as_inputs[(src, idx)] = v if isinstance(v, Tensor) else \
                        _DeferredWord.of(v) if isinstance(v, DeferredBound) else _as_tensor(v)
                inputs.append(t)
            with ranges_deferred():
                ref = call_reference(session.registry.get(node.op), node, inputs,
                                     session.inputs)
        except NoValue as exc:
            missing[node_id] = str(exc)
            continue
        for k, v in enumerate(ref):
            if isinstance(v, Reals):       # only within ranges_unused(); never kept
                v = v.array()
            if isinstance(v, np.ndarray):
                v.setflags(write=False)    # shared by the consumers and kept for reuse
            vals[(node_id, k)] = v
    return vals, missing


class _DeferredWord(Tensor):
    """A range output of the float run as its consumers' input: a [1,1,1,1] float32
    tensor whose word (the min or max of the producer's data) is made when first read.
    Most consumers never read it (``real()`` reads a float input as it is)."""

    __slots__ = ("_bound",)

    @classmethod
    def of(cls, bound: DeferredBound) -> Tensor:
        t = object.__new__(cls)
        t.shape, t.dtype, t.layout, t.padding, t._tag = (1, 1, 1, 1), DType.FLOAT32, \
            Layout.FLAT, NO_PADDING, None
        t._bound = bound
        return t

    @property  # type: ignore[override]
    def _raw(self) -> np.ndarray:       # Tensor's own slot, read through the bound
        return self._bound.word().reshape(-1).view(np.uint8)


def _reals_of(r: RefValue) -> RefValue:
    return r.word() if isinstance(r, DeferredBound) else r


def _as_tensor(v: np.ndarray) -> Tensor:
    """A float32 tensor of ``v``, sharing its memory when it already is float32 (``v`` is
    read-only, so the tensor and the value it compares against cannot drift apart)."""
    a = np.ascontiguousarray(v, np.float32)
    if a is not v and a.base is not v:
        return Tensor.from_array(fresh(a), DType.FLOAT32)    # a new array: adopted
    if is_frozen(a):
        return Tensor.from_array(fresh(a), DType.FLOAT32)    # read-only: safe to share
    return Tensor.from_array(a, DType.FLOAT32)


def accumulated(session: Session | RunSnapshot, tolerance_lsb: float = 1.0,
                vals: dict[tuple[int, int], RefValue] | None = None
                ) -> tuple[list[OutputDiff], dict[int, str]]:
    """Per node output that has run: the float run's value against the node's output."""
    missing: dict[int, str] = {}
    if vals is None:
        vals, missing = float_values(session)
    prepared, ex = session.prepared, session.executor
    cache = cache_for(prepared)
    diffs: list[OutputDiff] = []
    for node_id in paced(prepared.plan, ANALYSIS_EVERY):
        check_cancel(session)
        result = ex.trace.get(node_id)
        if result is None or node_id in ex.stale:
            continue
        if node_id in missing:
            continue
        made_from = (*result.outputs, vals)
        work = cache.node_work("accumulated", node_id, made_from, tolerance_lsb)
        if work is None:
            node = prepared.nodes[node_id]
            ref = [vals.get((node_id, k)) for k in range(len(result.outputs))]
            work = NodeWork(made_from, tolerance_lsb, compare_to_reference(
                node, node.title, result.outputs, ref, tolerance_lsb))
            cache.nodes[("accumulated", node_id)] = work
        diffs += work.diffs
    return diffs, missing
