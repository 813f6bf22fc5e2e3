"""Which nodes' quantization costs the graph's accuracy most (``hexscope sensitivity``).

Per input set, the graph runs quantized (each quantized output's range is read from that
run) and in float (the compare engine's float references, ``analysis.float_run``). A third
run uses the same float references with every quantized output quantized and dequantized
again in its run's range (a "fake-quantized" float run, as AIMET's QuantSim does): its error
at the graph's outputs against the float run is the baseline. A node's sensitivity is how
much that error drops when that node alone runs in float, its output's
quantize-dequantize taken away. Only the nodes downstream of it are computed again.

The error is the RMS of the graph outputs (the tensors fed to OUTPUT) against the float run,
in real units, averaged over the input sets. With ``jobs`` > 1 the nodes are shared among
worker processes (each runs the sets once to get its baseline); the ranking is the same.
"""

from __future__ import annotations

import math
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.analysis.float_run import NoValue, call_reference, float_values
from hexscope.engine.analysis.ranges import output_range, quantized_outputs
from hexscope.engine.d32_ops import logical_source
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import InputError
from hexscope.engine.graph import Graph
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

Values = dict[tuple[int, int], object]


@dataclass(frozen=True, slots=True)
class NodeCost:
    """One node's place in the ranking."""

    rank: int
    node_id: int
    op: str
    label: str
    error_in_float: float      # the graph's output error with this node in float
    drop: float                # baseline - error_in_float

    def as_dict(self, baseline: float) -> dict[str, object]:
        return {"rank": self.rank, "node": f"0x{self.node_id:x}", "op": self.op,
                "label": self.label, "error_in_float": self.error_in_float,
                "drop": self.drop, "share": self.drop / baseline if baseline else 0.0}


@dataclass
class Sensitivity:
    """The ranking, best first, with the errors it is measured against."""

    baseline: float                      # fake-quantized float run vs float run
    quantized: float                     # the quantized run itself vs float run
    runs: int
    nodes: list[NodeCost] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)

    def top(self, n: int) -> list[NodeCost]:
        return self.nodes[:n]

    def report(self, graph_name: str = "graph") -> dict[str, object]:
        """The ``--report`` JSON document."""
        return {"format": "hexscope-sensitivity", "version": 1, "graph": graph_name,
                "runs": self.runs,
                "metric": "RMS of the graph outputs against the float reference",
                "baseline_error": self.baseline, "quantized_error": self.quantized,
                "nodes": [n.as_dict(self.baseline) for n in self.nodes],
                "skipped": {f"0x{k:x}": v for k, v in self.skipped.items()}}


@dataclass
class _SetState:
    """One input set: ranges of the quantized run, the float run, the baseline values."""

    ranges: dict[tuple[int, int], tuple[float, float]]
    reference: list[np.ndarray]
    baseline: Values
    quantized_error: float
    inputs: tuple[Tensor, ...] = ()


class _Evaluator:
    """The fake-quantized float runs of one graph over the input sets."""

    def __init__(self, graph: Graph, inputs: Sequence[Sequence[Tensor]], fusions: bool) -> None:
        self.session = Session(graph, fusions=fusions)
        p = self.session.prepared
        self.plan = p.plan
        self.readers: dict[int, set[int]] = {}
        for node_id in self.plan:
            for src, _ in p.nodes[node_id].inputs:
                self.readers.setdefault(src, set()).add(node_id)
        # an output read through a layout conversion (prepare's Convert_from_d32 after a
        # d32 Supernode) is its d32 node's: the conversion's codes have no range words
        self.outputs = [logical_source(p.nodes, ref) for i in self.plan
                        if p.nodes[i].op == "OUTPUT" for ref in p.nodes[i].inputs]
        if not self.outputs:
            raise InputError("the graph has no OUTPUT node: there is no output error to rank by")
        self._data_only = False
        self.skipped: dict[int, str] = {}
        self.sets = [self._set_state(tensors) for tensors in inputs]

    def _set_state(self, tensors: Sequence[Tensor]) -> _SetState:
        s = self.session
        s.reset_state()
        s.execute(tensors)
        ranges: dict[tuple[int, int], tuple[float, float]] = {}
        for node_id in self.plan:
            result = s.result(node_id)
            for k in quantized_outputs(result.outputs) if result is not None else ():
                r = output_range(result.outputs, k)
                ranges[(node_id, k)] = (r.min, r.max)
        if not self._data_only:
            # a quantized output's range words are read with it, not compared
            words = {(i, k + d) for i, k in ranges for d in (1, 2)}
            self.outputs = [ref for ref in self.outputs if ref not in words]
            self._data_only = True
        vals, missing = float_values(s)
        self.skipped.update(missing)
        try:
            reference = [np.asarray(vals[ref], np.float64).reshape(-1) for ref in self.outputs]
        except (KeyError, TypeError):
            raise InputError("the graph's outputs have no float reference ("
                             + "; ".join(f"0x{k:x}: {v}" for k, v in list(missing.items())[:3])
                             + ")") from None
        state = _SetState(ranges, reference, {}, 0.0, s.inputs)
        state.baseline = self._run(state, None, {})
        state.quantized_error = _rms([self._run_value(ref, ranges) for ref in self.outputs],
                                     reference)
        return state

    def _run_value(self, ref: tuple[int, int], ranges: dict[tuple[int, int], tuple[float, float]]
                   ) -> np.ndarray:
        """An output of the quantized run in real units (codes read with their range, as
        the compare engine reads them)."""
        from hexscope.engine.analysis.diff import values

        s, (node_id, k) = self.session, ref
        if ref in ranges:
            t = values(s.output(node_id, k), s.output(node_id, k + 1), s.output(node_id, k + 2))
        else:
            t = values(s.output(node_id, k), None, None)
        return np.asarray(t, np.float64).reshape(-1)

    def candidates(self) -> list[int]:
        keys = self.sets[0].ranges if self.sets else {}
        return [i for i in self.plan if any(k[0] == i for k in keys) and i not in self.skipped]

    def error(self, state: _SetState, values: Values) -> float:
        return _rms([np.asarray(values[ref], np.float64).reshape(-1) for ref in self.outputs],
                    state.reference)

    def error_with_float(self, node_id: int) -> float:
        """The mean output error over the sets with ``node_id``'s quantization taken away."""
        errors = []
        for state in self.sets:
            values = self._run(state, node_id, state.baseline)
            errors.append(self.error(state, values))
        return float(np.mean(errors))

    def _run(self, state: _SetState, in_float: int | None, base: Values) -> Values:
        """The fake-quantized float run; with ``in_float``, only its downstream again."""
        p, s = self.session.prepared, self.session
        values: Values = dict(base)
        todo = _downstream(self.readers, in_float) if in_float is not None else None
        if not base:
            for node_id in p.order:
                node = p.nodes[node_id]
                if node.is_const and node.const is not None:
                    values[(node_id, 0)] = node.const
        for node_id in self.plan:
            if todo is not None and node_id not in todo:
                continue
            node = p.nodes[node_id]
            if todo is not None and node_id != in_float and all(
                    values.get(ref) is base.get(ref) for ref in node.inputs):
                continue        # its inputs came out as before (a Relu after a requantize)
            try:
                inputs = [_tensor(values[ref]) for ref in node.inputs]
                out = call_reference(s.registry.get(node.op), node, inputs, state.inputs)
            except (NoValue, KeyError) as exc:
                self.skipped.setdefault(node_id, str(exc))
                continue
            for k, v in enumerate(out):
                rng = state.ranges.get((node_id, k))
                if rng is not None and node_id != in_float and v is not None:
                    v = _fake_quant(v, *rng)
                old = base.get((node_id, k))
                same = isinstance(old, np.ndarray) and isinstance(v, np.ndarray) and \
                    old.shape == v.shape and np.array_equal(old, v)
                values[(node_id, k)] = old if same else v
        return values


def _downstream(readers: dict[int, set[int]], start: int) -> set[int]:
    seen, stack = set(), [start]
    while stack:
        i = stack.pop()
        if i not in seen:
            seen.add(i)
            stack.extend(readers.get(i, ()))
    return seen


def _tensor(v: object) -> Tensor:
    if isinstance(v, Tensor):
        return v
    if v is None:
        raise NoValue("an input has no float value")
    return Tensor.from_array(np.ascontiguousarray(v, np.float32), DType.FLOAT32)


def _fake_quant(v: object, lo: float, hi: float) -> np.ndarray:
    """v quantized to quint8 in [lo, hi] and read back (round to nearest, saturating)."""
    from hexscope.engine.quant import QuantRange

    arr = v.array if isinstance(v, Tensor) else np.asarray(v)
    r = QuantRange(lo, hi)
    return r.dequantize(r.quantize(arr))


def _rms(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    diff = np.concatenate([g - w for g, w in zip(got, want, strict=True)])
    return float(np.sqrt(np.mean(diff * diff))) if diff.size else 0.0


# worker processes ---------------------------------------------------------------------------

_WORKER: dict[str, _Evaluator] = {}


def _init(graph_bytes: bytes, arrays: list[list[np.ndarray]], fusions: bool) -> None:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="hexscope-sens-") as folder:
        path = Path(folder) / "graph.hexgraph"
        path.write_bytes(graph_bytes)
        graph = Graph.load(path)
    _WORKER["e"] = _Evaluator(graph, [[Tensor.from_array(a) for a in s] for s in arrays],
                              fusions)


def _errors(node_ids: list[int]) -> list[float]:
    e = _WORKER["e"]
    return [e.error_with_float(i) for i in node_ids]


def sensitivity(graph: Graph, inputs: Sequence[Sequence[Tensor]], *, jobs: int = 1,
                fusions: bool = True) -> Sensitivity:
    """Rank the prepared graph's quantized nodes by how much the output error drops with
    each alone in float (see the module doc).

    Raises
    ------
    InputError
        No input sets, no OUTPUT node, or outputs without a float reference.
    EngineError
        The graph does not validate or a run fails (the node is named).
    """
    if not inputs:
        raise InputError("sensitivity needs at least one input set")
    ev = _Evaluator(graph, inputs, fusions)
    candidates = ev.candidates()
    if jobs > 1 and len(candidates) > 1:
        chunks = [candidates[k::jobs] for k in range(jobs)]
        arrays = [[np.asarray(t.array) for t in s] for s in inputs]
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_init,
                                 initargs=(graph.to_bytes(), arrays, fusions)) as pool:
            parts = list(pool.map(_errors, chunks))
        errors = {i: e for chunk, part in zip(chunks, parts, strict=True)
                  for i, e in zip(chunk, part, strict=True)}
    else:
        errors = {i: ev.error_with_float(i) for i in candidates}
    baseline = float(np.mean([ev.error(s, s.baseline) for s in ev.sets]))
    order = sorted(candidates, key=lambda i: (-(baseline - errors[i]), ev.plan.index(i)))
    nodes = ev.session.prepared.nodes
    result = Sensitivity(baseline, float(np.mean([s.quantized_error for s in ev.sets])),
                         len(inputs), skipped=dict(ev.skipped))
    result.nodes = [NodeCost(k + 1, i, nodes[i].op, nodes[i].label, errors[i],
                             baseline - errors[i])
                    for k, i in enumerate(order) if math.isfinite(errors[i])]
    return result


__all__ = ["NodeCost", "Sensitivity", "sensitivity"]
