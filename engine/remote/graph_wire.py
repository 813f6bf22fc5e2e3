"""Hexscope's graph and tensors as the protocol carries them, and back."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from hexscope.engine.d32 import D32Padding, default_padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.nodes import Node
from hexscope.engine.ops.op_ids import OP_IDS
from hexscope.engine.ops.registry import OpRegistry, OpSpec
from hexscope.engine.remote import protocol as p
from hexscope.engine.tensor import Tensor


def wire_node(node: Node) -> p.WireNode:
    """A node as UPLOAD carries it (a const with its data and dtype code)."""
    op_id = OP_IDS.get(node.op, p.UNKNOWN)
    if node.is_const:
        tensor = node.const
        assert tensor is not None
        data = tensor.raw[:tensor.nbytes].tobytes() if tensor.has_data else b""
        size = tensor.dtype.numpy.itemsize if tensor.has_data else 0
        return p.WireNode(node.node_id, "Const", op_id, 0, (),
                          (p.WireOutput(tuple(tensor.shape), size),), data,
                          tensor.dtype.value if tensor.has_data else 0)
    outputs = tuple(p.WireOutput(tuple(o.max_sizes), o.elementsize, o.zero_offset,
                                 float(o.stepsize)) for o in node.outputs)
    return p.WireNode(node.node_id, node.op, op_id, node.padding.value, tuple(node.inputs),
                      outputs)


def wire_nodes(nodes: Iterable[Node]) -> list[p.WireNode]:
    """The nodes to upload, in append order; the graph's OUTPUT nodes stay home (the agent
    appends its own OUTPUT node from the taps, docs/protocol.md §3.3)."""
    return [wire_node(n) for n in nodes if n.op != "OUTPUT"]


def wire_input(tensor: Tensor) -> p.WireTensor:
    data = tensor.raw[:tensor.nbytes].tobytes() if tensor.has_data else b""
    return p.WireTensor(tensor.shape, data, tensor.dtype.value)


def tap_slots(nodes: Sequence[Node], registry: OpRegistry) -> list[tuple[int, int, int]]:
    """A tap on every output of every non-Const node: (node id, output index, max bytes)."""
    slots = []
    for node in nodes:
        if node.is_const or node.op == "OUTPUT":
            continue
        spec = registry.get(node.op) if node.op in registry else None
        d32 = bool(spec and spec.d32_output)
        for k, out in enumerate(node.outputs):
            slots.append((node.node_id, k, out.capacity(d32, k) if out.max_sizes else 0))
    return slots


def tensor_of(tap: p.Tap, spec: OpSpec | None, index: int) -> Tensor:
    """The Tensor a TAP frame carries. A device agent cannot know types or d32 padding
    (execute_new carries neither), so those come from the op's declaration when missing."""
    t = tap.tensor
    if t.dtype != p.UNKNOWN:
        try:
            dtype = DType(t.dtype)
        except ValueError:
            dtype = DType.UINT8
    else:
        dtype = _declared_dtype(spec, index)
    if t.layout == p.UNKNOWN:
        layout = Layout.D32 if spec is not None and spec.d32_output and \
            not (index > 0 and t.shape == (1, 1, 1, 1)) else Layout.FLAT
    else:
        layout = Layout(t.layout)
    padding = D32Padding(*t.padding) if layout is Layout.D32 else None
    if layout is Layout.D32 and (padding is None or t.layout == p.UNKNOWN):
        padding = default_padding(t.shape)
    raw = np.frombuffer(t.data, np.uint8) if t.data or _element_count(t.shape) == 0 else None
    if layout is Layout.D32:
        return Tensor(t.shape, dtype, raw, layout, padding)
    return Tensor(t.shape, dtype, raw)


def _element_count(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape))


def _declared_dtype(spec: OpSpec | None, index: int) -> DType:
    if spec is not None:
        ports = spec.outputs.ports_for(index + 1)
        if index < len(ports) and ports[index].dtype not in (None, DType.VOID):
            return ports[index].dtype
    return DType.UINT8
