"""Statistics of node outputs for batch runs: per-tensor ranges and saturation, and ranges
over all runs (min, max, percentiles) for calibration and the range views."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hexscope.engine.batch.sketch import RELATIVE_ACCURACY, new_sketch, quantile, sketch_of
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.batch.records import NodeRecord
    from hexscope.engine.session import Session

PERCENTILES = (0.1, 1.0, 5.0, 50.0, 95.0, 99.0, 99.9)


def _number(value: float | int) -> float | int | None:
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    return int(value)


def quant_range(outputs: Sequence[Tensor], k: int) -> list[float] | None:
    """[min, max] of a quantized triplet: a quint8 output followed by its float32 min and
    max scalar outputs (hexagon_nn's convention for quantized ops)."""
    if outputs[k].dtype is not DType.QUINT8 or len(outputs) < k + 3:
        return None
    lo, hi = outputs[k + 1], outputs[k + 2]
    if not all(t.dtype is DType.FLOAT32 and t.has_data and t.elements == 1 for t in (lo, hi)):
        return None
    values = [float(lo.scalar_value(float)), float(hi.scalar_value(float))]
    return values if all(math.isfinite(v) for v in values) else None


def tensor_stats(tensor: Tensor, index: int, outputs: Sequence[Tensor]) -> dict[str, object]:
    """Shape, type, layout, range, non-finite counts and saturation of one output."""
    info: dict[str, object] = {
        "index": index, "shape": list(tensor.shape), "dtype": tensor.device_dtype.c_name,
        "layout": tensor.layout.name.lower(),
        "padding": list(tensor.padding) if tensor.layout is Layout.D32 else None,
        "min": None, "max": None, "nan": 0, "inf": 0, "saturation": None,
        "quant_range": quant_range(outputs, index),
    }
    if not tensor.has_data or tensor.elements == 0:
        return info
    arr = tensor.array
    if arr.dtype.kind == "f":
        finite_mask = np.isfinite(arr)
        info["nan"] = int(np.isnan(arr).sum())
        info["inf"] = int((~finite_mask).sum()) - info["nan"]  # type: ignore[operator]
        finite = arr[finite_mask]
        if finite.size:
            info["min"], info["max"] = _number(finite.min()), _number(finite.max())
        return info
    info["min"], info["max"] = _number(arr.min()), _number(arr.max())
    if tensor.dtype is not DType.VOID:
        bounds = np.iinfo(arr.dtype)
        info["saturation"] = {"low": float(np.count_nonzero(arr == bounds.min)) / arr.size,
                              "high": float(np.count_nonzero(arr == bounds.max)) / arr.size}
    return info


RangePartial = dict[tuple[int, int], dict[str, object]]


class RangeAccumulator:
    """Ranges over all runs, per (node, output): exact min/max, percentiles from a
    mergeable sketch (``sketch.py``: relative error RELATIVE_ACCURACY, bounded memory).

    Runs are merged in run order as they arrive (``merge_in_order``), so what is kept is one
    sketch per output plus the partials of runs that finished before an earlier one: the
    memory does not grow with the number of runs, and the ranges are the same for any
    number of workers."""

    def __init__(self) -> None:
        self.entries: dict[tuple[int, int], dict[str, object]] = {}
        self._waiting: dict[int, RangePartial] = {}
        self._next = 0

    def partial(self, session: Session, nodes: Sequence[NodeRecord]) -> RangePartial:
        """One run's contribution, small enough to send from a worker process: per output
        its count, min, max, quantized range and sketch."""
        out: RangePartial = {}
        for node in nodes:
            result = session.result(node.node_id) if node.status == "done" else None
            if result is None:
                continue
            for k, tensor in enumerate(result.outputs):
                if tensor.has_data and tensor.elements:
                    out[(node.node_id, k)] = self._one(tensor, quant_range(result.outputs, k))
        return out

    def _one(self, tensor: Tensor, qrange: list[float] | None) -> dict[str, object]:
        values = np.asarray(tensor.array).reshape(-1)
        if values.dtype.kind == "f":
            values = values[np.isfinite(values)]
        part: dict[str, object] = {"dtype": tensor.dtype.c_name, "count": int(values.size),
                                   "min": None, "max": None, "sketch": None,
                                   "quant_range": qrange}
        if values.size and values.dtype == np.uint8:
            # 8-bit codes are counted exactly (256 bins: bounded, mergeable, no error and
            # ~100x cheaper than feeding the sketch); everything else goes to the sketch
            counts = count_codes(values)
            seen = np.flatnonzero(counts)
            part["min"], part["max"] = np.uint8(seen[0]), np.uint8(seen[-1])
            part["sketch"] = counts
        elif values.size:
            part["min"], part["max"] = values.min(), values.max()
            part["sketch"] = sketch_of(values)
        return part

    def merge_in_order(self, k: int, partial: RangePartial) -> None:
        """Merge run ``k``'s partial once every earlier run's is merged (runs may finish in
        any order)."""
        self._waiting[k] = partial
        while self._next in self._waiting:
            self.merge(self._waiting.pop(self._next))
            self._next += 1

    def merge(self, partial: RangePartial) -> None:
        """Add one run's partial; runs merged in the same order give the same ranges, in one
        process or many (min and max exact, sketches added bin by bin)."""
        for key, part in partial.items():
            entry = self.entries.setdefault(key, {
                "dtype": part["dtype"], "runs": 0, "count": 0, "min": None, "max": None,
                "sketch": None, "quant_range": None})
            entry["runs"] += 1  # type: ignore[operator]
            entry["count"] += part["count"]  # type: ignore[operator]
            if part["sketch"] is None:
                continue
            lo, hi = part["min"], part["max"]
            entry["min"] = lo if entry["min"] is None else min(entry["min"], lo)  # type: ignore
            entry["max"] = hi if entry["max"] is None else max(entry["max"], hi)  # type: ignore
            entry["sketch"] = _merged(entry["sketch"], part["sketch"])
            qrange = part["quant_range"]
            if qrange is not None:
                old = entry["quant_range"]
                entry["quant_range"] = (qrange if old is None else  # type: ignore[index]
                                        [min(old[0], qrange[0]), max(old[1], qrange[1])])

    def records(self, session: Session) -> list[dict[str, object]]:
        for k in sorted(self._waiting):       # runs after one that never reported
            self.merge(self._waiting.pop(k))
        out = []
        for (node_id, k), entry in sorted(self.entries.items(),
                                          key=lambda item: _order(session, item[0])):
            node = session.prepared.nodes.get(node_id)
            sketch = entry.pop("sketch")
            percentiles = None
            if sketch is not None:
                lo, hi = float(entry["min"]), float(entry["max"])  # type: ignore[arg-type]
                percentiles = {f"p{p:g}": (_counted(sketch, p / 100.0)
                                           if isinstance(sketch, np.ndarray)
                                           else quantile(sketch, p / 100.0, lo, hi))
                               for p in PERCENTILES}
            out.append({"node": node_id, "op": node.op if node else "", "index": k,
                        "label": node.label if node else "", **entry,
                        "min": None if entry["min"] is None else _number(entry["min"]),
                        "max": None if entry["max"] is None else _number(entry["max"]),
                        "percentiles": percentiles,
                        "percentile_relative_error": RELATIVE_ACCURACY})
        return out


def count_codes(values: np.ndarray) -> np.ndarray:
    """How many of the uint8 ``values`` hold each code (256 int64 counts)."""
    kernel = compiled.kernel("count_codes")
    if kernel is None:
        return np.bincount(values, minlength=256)
    counts = np.zeros(256, np.int64)
    kernel(np.ascontiguousarray(values), counts)
    return counts


def _merged(old: object, new: object) -> object:
    if isinstance(new, np.ndarray):         # exact counts of 8-bit codes
        return new.copy() if old is None else old + new
    if old is None:
        old = new_sketch()
    old.merge(new)  # type: ignore[attr-defined]
    return old


def _counted(counts: np.ndarray, q: float) -> float:
    """The exact order statistic x[floor(q * (n - 1))] of counted codes (the sketch's
    definition, with no error)."""
    rank = math.floor(q * (int(counts.sum()) - 1))
    return float(np.searchsorted(np.cumsum(counts), rank, side="right"))


def _order(session: Session, key: tuple[int, int]) -> tuple[int, int]:
    plan = session.plan
    return (plan.index(key[0]) if key[0] in plan else len(plan), key[1])
