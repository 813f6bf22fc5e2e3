"""Statistics of node outputs for batch runs: per-tensor ranges and saturation, and ranges
over all runs (min, max, percentiles) for calibration and the range views."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.batch.runner import NodeRecord
    from hexscope.engine.session import Session

PERCENTILES = (0.1, 1.0, 5.0, 50.0, 95.0, 99.0, 99.9)
SAMPLE_BUDGET = 65536         # values kept per output over all runs, for the percentiles


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
    """Ranges over all runs, per (node, output): exact min/max, percentiles from a sample
    (every value while the budget allows, else an evenly strided subset per run)."""

    def __init__(self, runs: int) -> None:
        self.per_run = max(256, SAMPLE_BUDGET // max(1, runs))
        self.entries: dict[tuple[int, int], dict[str, object]] = {}

    def partial(self, session: Session, nodes: Sequence[NodeRecord]) -> RangePartial:
        """One run's contribution, small enough to send from a worker process: per output
        its count, min, max, quantized range and sample (already cut to the per-run share)."""
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
                                   "min": None, "max": None, "sample": None, "sampled": False,
                                   "quant_range": qrange}
        if values.size:
            part["min"], part["max"] = values.min(), values.max()
            if values.size > self.per_run:
                values = values[:: -(-values.size // self.per_run)]
                part["sampled"] = True
            part["sample"] = values.astype(np.float64)
        return part

    def merge(self, partial: RangePartial) -> None:
        """Add one run's partial; runs merged in the same order give the same ranges, in one
        process or many (min and max exact, samples joined in run order)."""
        for key, part in partial.items():
            entry = self.entries.setdefault(key, {
                "dtype": part["dtype"], "runs": 0, "count": 0, "min": None, "max": None,
                "samples": [], "sampled": False, "quant_range": None})
            entry["runs"] += 1  # type: ignore[operator]
            entry["count"] += part["count"]  # type: ignore[operator]
            if part["sample"] is None:
                continue
            lo, hi = part["min"], part["max"]
            entry["min"] = lo if entry["min"] is None else min(entry["min"], lo)  # type: ignore
            entry["max"] = hi if entry["max"] is None else max(entry["max"], hi)  # type: ignore
            entry["sampled"] = bool(entry["sampled"] or part["sampled"])
            entry["samples"].append(part["sample"])  # type: ignore[union-attr]
            qrange = part["quant_range"]
            if qrange is not None:
                old = entry["quant_range"]
                entry["quant_range"] = (qrange if old is None else  # type: ignore[index]
                                        [min(old[0], qrange[0]), max(old[1], qrange[1])])

    def records(self, session: Session) -> list[dict[str, object]]:
        out = []
        for (node_id, k), entry in sorted(self.entries.items(),
                                          key=lambda item: _order(session, item[0])):
            node = session.prepared.nodes.get(node_id)
            samples = entry.pop("samples")
            percentiles = None
            if samples:
                joined = np.concatenate(samples)  # type: ignore[arg-type]
                values = np.percentile(joined, PERCENTILES)
                percentiles = {f"p{p:g}": float(v) for p, v in zip(PERCENTILES, values,
                                                                    strict=True)}
            out.append({"node": node_id, "op": node.op if node else "", "index": k,
                        "label": node.label if node else "", **entry,
                        "min": None if entry["min"] is None else _number(entry["min"]),
                        "max": None if entry["max"] is None else _number(entry["max"]),
                        "percentiles": percentiles})
        return out


def _order(session: Session, key: tuple[int, int]) -> tuple[int, int]:
    plan = session.plan
    return (plan.index(key[0]) if key[0] in plan else len(plan), key[1])
