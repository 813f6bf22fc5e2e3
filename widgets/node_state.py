"""Readable text for the state a node keeps between executions (issue 3).

hexagon_nn keeps some state inside nodes from one execution to the next: the adaptive output
range of QuantizedAdd_8p8to8 and of the d32 add, sub and mul (quantized-ops spec §1.9,
§13.7), and the values of Variables (graph spec §4.28). The session keeps it in
``executor.states[node_id]`` and ``executor.store[(node_id, k)]``; this module turns it into
short lines for the outputs panel. Simulator caches (e.g. a convolution's prepared filter)
are not state a user can observe and are not listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from hexscope.engine.tensor import Tensor


@dataclass(frozen=True)
class StateLine:
    """One fact: ``label`` (e.g. "output range") and its ``value`` text."""

    label: str
    value: str


def _num(value: object) -> str:
    return f"{float(value):.6g}"  # type: ignore[arg-type]


def _field(state: object, name: str) -> object:
    if isinstance(state, Mapping):
        return state.get(name)
    return getattr(state, name, None)


def _fixed_ends(state: object) -> tuple[bool, bool] | None:
    """Which ends of the range the graph fixes (inputs out_min / out_max), if known."""
    lo, hi = _field(state, "min_fixed"), _field(state, "max_fixed")
    if lo is not None and hi is not None:
        return bool(lo), bool(hi)
    precalc = _field(state, "precalc")       # d32 add/sub/mul: bit 0 min, bit 1 max
    if precalc is not None:
        return bool(int(precalc) & 1), bool(int(precalc) & 2)   # type: ignore[call-overload]
    return None


def range_state(state: object) -> StateLine | None:
    """The adaptive output range ``[out_min, out_max]`` a node keeps, if it keeps one."""
    lo, hi = _field(state, "out_min"), _field(state, "out_max")
    if lo is None or hi is None:
        return None
    notes = []
    ends = _fixed_ends(state)
    if ends is not None:
        notes.append({(True, True): "both ends fixed", (True, False): "min fixed, max adapts",
                      (False, True): "max fixed, min adapts",
                      (False, False): "adapts"}[ends])
    ran = _field(state, "has_run_before")
    if ran is not None:
        notes.append("from the data seen so far" if ran else "as prepared, before any data")
    extra = f" ({', '.join(notes)})" if notes else ""
    return StateLine("output range", f"[{_num(lo)}, {_num(hi)}]{extra}")


def tensor_text(tensor: Tensor) -> str:
    """Type, shape and the range of the values of a stored tensor."""
    if not tensor.has_data:
        return f"{tensor.describe()} (no data)"
    data = np.asarray(tensor.array)
    if data.size == 0:
        return f"{tensor.describe()} (empty)"
    if data.size <= 4:
        values = " ".join(_num(v) if data.dtype.kind == "f" else str(v) for v in data.ravel())
        return f"{tensor.describe()} = [{values}]"
    return f"{tensor.describe()} min {_num(data.min())} max {_num(data.max())}"


def state_lines(node_id: int, states: Mapping[int, Mapping[str, object]],
                store: Mapping[tuple[int, int], Tensor]) -> list[StateLine]:
    """What ``node_id`` keeps between executions: its range state and its stored values."""
    lines: list[StateLine] = []
    for value in (states.get(node_id) or {}).values():
        line = range_state(value)           # QuantizedAdd_8p8to8 keeps an AddState
        if line is not None:
            lines.append(line)
    line = range_state(states.get(node_id) or {})   # the d32 ops keep the dict itself
    if line is not None:
        lines.append(line)
    for (owner, k), tensor in sorted(store.items(), key=lambda kv: kv[0]):
        if owner == node_id:
            lines.append(StateLine(f"value {k}", tensor_text(tensor)))
    return lines


__all__ = ["StateLine", "range_state", "state_lines", "tensor_text"]
