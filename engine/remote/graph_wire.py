"""Hexscope's graph and tensors as the protocol carries them, and back."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from hexscope.engine.d32 import D32Padding, default_padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.nodes import Node
from hexscope.engine.ops.op_ids import OP_IDS
from hexscope.engine.ops.registry import OpRegistry, OpSpec, Port
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


def tensor_of(tap: p.Tap, spec: OpSpec | None, index: int, inherited: Tensor | None = None,
              count: int = 0) -> Tensor:
    """The Tensor a TAP frame carries (``count``: the node's number of outputs).

    A device agent cannot know types or d32 padding (execute_new carries neither). Then the
    type and layout are those the op declares for the output; for an op that declares none
    (INPUT, Nop, Flatten pass their input on) those of ``inherited``, the tensor the
    simulator would carry through (the graph input, or the op's first input). A d32 tensor's
    padding is inferred from its byte count (:func:`guess_d32_padding`).
    """
    t = tap.tensor
    port = _port(spec, index, max(count, index + 1))
    if t.dtype != p.UNKNOWN:
        try:
            dtype = DType(t.dtype)
        except ValueError:
            dtype = DType.UINT8
    elif port is not None and port.dtype not in (None, DType.VOID):
        dtype = port.dtype
    else:
        dtype = inherited.dtype if inherited is not None else DType.UINT8
    if t.layout != p.UNKNOWN:
        layout = Layout(t.layout) if t.layout in (0, 1) else Layout.FLAT
        padding = D32Padding(*t.padding)
    else:
        if port is not None and port.layout is not None:
            layout = port.layout
        elif inherited is not None:
            layout = inherited.layout
        else:
            layout = Layout.FLAT
        padding = guess_d32_padding(t.shape, len(t.data), dtype) if layout is Layout.D32 \
            else None
    tag = None
    if dtype is DType.QINT8 and port is not None and port.dtype is DType.QUINT8:
        # the device's qint8 tag over quint8 codes (QuantizedAdd_8p8to8's broadcast path):
        # read as the codes they are, tagged as the simulator tags them
        dtype, tag = DType.QUINT8, DType.QINT8
    raw = np.frombuffer(t.data, np.uint8) if t.data or _element_count(t.shape) == 0 else None
    if layout is Layout.D32 and padding is not None:
        tensor = Tensor(t.shape, dtype, raw, layout, padding)
    else:
        tensor = Tensor(t.shape, dtype, raw)
    return tensor if tag is None else tensor.tagged(tag)


def guess_d32_padding(shape: tuple[int, int, int, int], nbytes: int,
                      dtype: DType) -> D32Padding | None:
    """A d32 tensor's padding from its shape and byte count, when a device cannot say:
    hexagon_nn's default if the size fits, else the default with the right padding that
    makes the size fit (ops choose their own; top, bottom and left stay 4, depth goes to a
    multiple of 32), else the default when the bytes hold more (an allocation's tail). None
    when nothing fits: the tensor is then taken as flat."""
    size = dtype.numpy.itemsize
    default = default_padding(shape)
    if _d32_bytes(shape, default, size) == nbytes:
        return default
    b, h, w, d = shape
    depth = d + default.d_before + default.d_after
    row = b * (h + default.h_before + default.h_after) * depth * size
    if row and nbytes % row == 0:
        right = nbytes // row - w - default.w_before
        if right >= 0:
            return default._replace(w_after=right)
    if _d32_bytes(shape, default, size) <= nbytes:
        return default            # the rest is the tail of the allocation
    return None


def _d32_bytes(shape: tuple[int, int, int, int], pad: D32Padding, size: int) -> int:
    b, h, w, d = shape
    return b * (h + pad.h_before + pad.h_after) * (w + pad.w_before + pad.w_after) * \
        (d + pad.d_before + pad.d_after) * size


def _element_count(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape))


def _port(spec: OpSpec | None, index: int, count: int) -> Port | None:
    if spec is None:
        return None
    ports = spec.outputs.ports_for(count)
    return ports[index] if index < len(ports) else None
