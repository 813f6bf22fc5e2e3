"""Per-node values as Model Explorer's node data JSON (its ``GraphNodeData``: ``results``
keyed by node, each ``{"value": number}``, and a ``gradient`` from the smallest value to the
largest), so users overlay hexscope's error, time or cycles in the tool they already use.

Model Explorer matches a key against a node's id or one of its output tensor names: each
node is written under its id (``0x1005``) and, when it has one, under its label (a TFLite
model's import labels its nodes by tensor)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from os import PathLike
from pathlib import Path

from hexscope.engine.analysis.compare_report import CompareResult
from hexscope.engine.batch.records import BatchResult
from hexscope.engine.nodes import Node
from hexscope.engine.report.html_compare import node_errors

GRADIENT = ({"stop": 0, "bgColor": "#8fd19e"}, {"stop": 0.5, "bgColor": "#ffe066"},
            {"stop": 1, "bgColor": "#e53935"})


def node_data(values: Mapping[int, float], nodes: Mapping[int, Node] | None = None
              ) -> dict[str, object]:
    """``GraphNodeData`` for ``values`` (node id -> value; non-finite values left out)."""
    results: dict[str, dict[str, float]] = {}
    for node_id, value in values.items():
        if not math.isfinite(value):
            continue
        results[f"0x{node_id:x}"] = {"value": float(value)}
        node = (nodes or {}).get(node_id)
        if node is not None and node.label:
            results.setdefault(node.label, {"value": float(value)})
    return {"results": results, "gradient": [dict(g) for g in GRADIENT]}


def compare_values(result: CompareResult) -> dict[int, float]:
    """Each node's largest error (LSB where known) in the first compared input set."""
    for run in result.runs:
        if run.comparison is not None:
            return node_errors(run.comparison)
    return {}


def run_values(result: BatchResult) -> tuple[dict[int, float], str]:
    """Each node's mean device counter (cycles) over the runs when every run that ran it has
    one, else its mean time in microseconds; and which of the two it is."""
    done = [n for r in result.runs for n in r.nodes if n.status == "done"]
    cycles = bool(done) and all(n.device_counter is not None for n in done)
    sums: dict[int, list[float]] = {}
    for n in done:
        value = float(n.device_counter) if cycles else n.seconds * 1e6  # type: ignore[arg-type]
        sums.setdefault(n.node_id, []).append(value)
    means = {i: sum(v) / len(v) for i, v in sums.items()}
    return means, "cycles" if cycles else "microseconds"


def write_node_data(doc: Mapping[str, object], path: str | PathLike[str]) -> None:
    Path(path).write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")


__all__ = ["GRADIENT", "compare_values", "node_data", "run_values", "write_node_data"]
