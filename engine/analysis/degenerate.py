"""Where a degenerate range began: a NaN or infinite min/max, or a zero-width range.

A node that fails on such a range is rarely the culprit: the range is passed along from node
to node (requantize, relu and pooling copy or derive it) until an op refuses it. This walks
the range inputs back, through producers whose own range inputs were degenerate too, to the
first node that *made* the degenerate range, so the error can name it. The walk visits each
upstream node once: linear in the part of the graph it reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.nodes import Node
from hexscope.engine.ops.registry import OpSpec
from hexscope.engine.tensor import Tensor

Ref = tuple[int, int]


def _scalar(tensor: Tensor | None) -> float | None:
    if tensor is None or tensor.dtype is not DType.FLOAT32 or not tensor.has_data:
        return None
    if int(np.prod(tensor.shape)) != 1:
        return None
    return float(tensor.array.reshape(-1)[0])


def _is_range(name: str) -> bool:
    return name in ("min", "max") or name.endswith(("_min", "_max"))


def degenerate_inputs(spec: OpSpec | None, inputs: Sequence[Tensor | None]) -> list[str]:
    """What is degenerate among a node's range inputs (ports named ``min``/``max`` or
    ``*_min``/``*_max``, or
    every float scalar when the op's ports are unknown): NaN, infinite, or min == max."""
    ports = spec.inputs.ports_for(len(inputs)) if spec is not None else ()
    names = [p.name for p in ports] if len(ports) == len(inputs) else [""] * len(inputs)
    values = {k: _scalar(t) for k, t in enumerate(inputs)}
    found = []
    for k, value in values.items():
        is_range = _is_range(names[k]) or (not names[k] and value is not None)
        if not is_range or value is None:
            continue
        if math.isnan(value) or math.isinf(value):
            found.append(f"{names[k] or f'input {k}'} is {value}")
    for k, name in enumerate(names[:-1]):
        if _is_range(name) and name[-3:] == "min" and names[k + 1] == name[:-3] + "max":
            lo, hi = values[k], values[k + 1]
            what = name[:-4] or "input"
            # a zero-width bias range is a bias of zeros (its scale 0: nothing added), as
            # converters write one: not a cause to name beside a failure
            if lo is not None and hi is not None and lo == hi and math.isfinite(lo) \
                    and what != "bias":
                found.append(f"{what} range has zero width ({lo} to {hi})")
    return found


def degenerate_origin(node_id: int, nodes: dict[int, Node], spec_of: Callable[[str], OpSpec | None],
                      tensor_of: Callable[[Ref], Tensor | None]) -> tuple[int, str] | None:
    """The earliest node upstream of ``node_id`` (or the node itself) whose range inputs are
    fine but whose range outputs are degenerate, with what is wrong; None when the node's
    range inputs are not degenerate."""
    node = nodes.get(node_id)
    if node is None:
        return None
    here = degenerate_inputs(spec_of(node.op), [tensor_of(r) for r in node.inputs])
    if not here:
        return None
    origin: tuple[int, str] = (node_id, here[0])
    seen = {node_id}
    frontier = [node_id]
    while frontier:
        current = nodes[frontier.pop()]
        for src, idx in current.inputs:
            producer = nodes.get(src)
            value = _scalar(tensor_of((src, idx)))
            if src in seen or producer is None or value is None or math.isfinite(value):
                continue
            seen.add(src)
            # Each step back is earlier in the plan: the last one found made the range.
            if producer.is_const:
                origin = (src, f"the const holds {value}")
                continue
            origin = (src, f"output {idx} is {value}")
            if degenerate_inputs(spec_of(producer.op), [tensor_of(r) for r in producer.inputs]):
                frontier.append(src)
    return origin


__all__ = ["degenerate_inputs", "degenerate_origin"]
