"""Calibration: the range each node output should have, from a batch run over a data set.

The runs are a ``hexscope run`` batch (:func:`~hexscope.engine.batch.runner.run_batch`, with
its ``jobs`` and ``scheduler``); each run's range partial (``batch/stats.py``) is read as it
arrives. A quantized output's codes mean different reals from run to run (a
QuantizeDownAndShrinkRange picks its range per run), so its exact code counts are turned
into real values with that run's range before they go into a value sketch (``batch/
sketch.py``, DDSketch, 1 % relative accuracy); float outputs bring their own sketch.

Methods (``--method``):

* ``minmax``: the smallest and largest value over all runs;
* ``percentile:P``: the P-th percentile of all values as max and the (100 - P)-th as min;
* ``per-run-percentile:P``: TensorFlow's ``freeze_requantization_ranges``: the P-th
  percentile of the runs' maxima as max, the (100 - P)-th of their minima as min.

Every range then includes 0 (hexagon_nn's quint8 ranges must) and is written as the grid the
device uses (``encodings.grid``). Only data outputs are calibrated: quint8 outputs with
their range, and float32 outputs of more than one element.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.backends import Backend
from hexscope.engine.batch.records import BatchResult, InputSet
from hexscope.engine.batch.runner import run_batch
from hexscope.engine.batch.sketch import add_weighted, new_sketch, quantile
from hexscope.engine.batch.stats import RangePartial
from hexscope.engine.errors import InputError
from hexscope.engine.graph import Graph
from hexscope.engine.quant import QuantRange
from hexscope.engine.ranges.encodings import Encoding, Key, RangesFile, grid

METHODS = ("minmax", "percentile:P", "per-run-percentile:P")


@dataclass(frozen=True, slots=True)
class Method:
    """How runs' values become one range."""

    kind: str              # "minmax", "percentile" or "per-run-percentile"
    p: float = 100.0

    @classmethod
    def parse(cls, text: str) -> Method:
        """``minmax``, ``percentile:P`` or ``per-run-percentile:P`` with 50 < P <= 100.

        Raises
        ------
        InputError
            Not one of these.
        """
        kind, _, value = text.partition(":")
        if kind == "minmax" and not value:
            return cls("minmax")
        if kind in ("percentile", "per-run-percentile") and value:
            try:
                p = float(value)
            except ValueError:
                p = math.nan
            if 50.0 < p <= 100.0:
                return cls(kind, p)
            raise InputError(f"--method {text}: P must be a number above 50 and at most 100 "
                             "(e.g. percentile:99.9)")
        raise InputError(f"--method {text!r}: choose one of {', '.join(METHODS)}")

    def __str__(self) -> str:
        return self.kind if self.kind == "minmax" else f"{self.kind}:{self.p:g}"


@dataclass
class _Tensor:
    dtype: str
    run_min: dict[int, float] = field(default_factory=dict)     # run index -> its min
    run_max: dict[int, float] = field(default_factory=dict)
    sketch: object = None


class Collector:
    """Per output: each run's real min and max, and (``sketch``: for ``percentile:P``) a
    sketch of all real values."""

    def __init__(self, keep: Sequence[int] | None = None, sketch: bool = True) -> None:
        self.tensors: dict[Key, _Tensor] = {}
        self._keep = None if keep is None else set(keep)
        self._sketch = sketch

    def add(self, run: int, partial: RangePartial) -> None:
        for key, part in partial.items():
            if self._keep is not None and key[0] not in self._keep:
                continue
            values = _real_values(part)
            if values is None:
                continue
            reals, counts = values
            t = self.tensors.setdefault(key, _Tensor(str(part["dtype"])))
            t.run_min[run], t.run_max[run] = float(reals.min()), float(reals.max())
            if not self._sketch:
                continue
            if t.sketch is None:
                t.sketch = new_sketch()
            if counts is None:
                t.sketch.merge(part["sketch"])  # type: ignore[attr-defined]
            else:
                add_weighted(t.sketch, reals, counts)  # type: ignore[arg-type]

    def range_of(self, key: Key, method: Method) -> tuple[float, float]:
        t = self.tensors[key]
        lo, hi = min(t.run_min.values()), max(t.run_max.values())
        if method.kind == "percentile":
            q = method.p / 100.0
            return (quantile(t.sketch, 1.0 - q, lo, hi),  # type: ignore[arg-type]
                    quantile(t.sketch, q, lo, hi))  # type: ignore[arg-type]
        if method.kind == "per-run-percentile":
            return (float(np.percentile(list(t.run_min.values()), 100.0 - method.p)),
                    float(np.percentile(list(t.run_max.values()), method.p)))
        return lo, hi


def _real_values(part: dict[str, object]) -> tuple[np.ndarray, np.ndarray | None] | None:
    """(values, counts) of a partial's data: quint8 codes as reals under their run's range,
    with their exact counts; a float tensor's min and max (its sketch holds the rest)."""
    if int(part["count"]) <= 1 or part["sketch"] is None:    # type: ignore[call-overload]
        return None                 # a range scalar, or nothing finite
    if part["dtype"] == "quint8" and part["quant_range"] is not None:
        lo, hi = part["quant_range"]  # type: ignore[misc]
        counts = np.asarray(part["sketch"])
        codes = np.flatnonzero(counts)
        return QuantRange(lo, hi).dequantize(codes).astype(np.float64), counts[codes]
    if part["dtype"] == "float32":
        return np.array([float(part["min"]), float(part["max"])]), None  # type: ignore[arg-type]
    return None


@dataclass
class Calibration:
    """What ``calibrate`` found: the batch and the ranges file it makes."""

    result: BatchResult
    ranges: RangesFile


def calibrate(graph: Graph, input_sets: Sequence[InputSet], method: Method, *,
              backend: str | Backend = "sim", graph_name: str = "graph",
              data_set: str = "", jobs: int = 1, scheduler: str | None = None,
              fusions: bool = True, seed: int = 0, progress: object = None) -> Calibration:
    """Run ``graph`` over the input sets and make its ranges file.

    The ranges are keyed by the prepared graph's node ids (a Supernode carries the id of
    the last node of its chain), keeping only ids the graph has; the batch result says
    whether every run passed.
    """
    collector = Collector(keep=graph.order, sketch=method.kind == "percentile")
    result = run_batch(graph, input_sets, backend, graph_name=graph_name, seed=seed,
                       jobs=jobs, fusions=fusions, scheduler=scheduler,
                       progress=progress, on_partial=collector.add)  # type: ignore[arg-type]
    ranges = RangesFile(info={"method": str(method), "data_set": data_set,
                              "graph": graph_name, "runs": len(result.runs),
                              "fusions": fusions})
    order = {node_id: k for k, node_id in enumerate(graph.order)}
    for key in sorted(collector.tensors, key=lambda k: (order.get(k[0], 0), k[1])):
        lo, hi = collector.range_of(key, method)
        node = graph.node(key[0])
        ranges.encodings[key] = Encoding(*grid(lo, hi), observed=(lo, hi))
        ranges.tensors[key] = {"op": node.op, "label": node.label,
                               "dtype": collector.tensors[key].dtype,
                               "runs": len(collector.tensors[key].run_min)}
    return Calibration(result, ranges)


__all__ = ["METHODS", "Calibration", "Collector", "Method", "calibrate"]
