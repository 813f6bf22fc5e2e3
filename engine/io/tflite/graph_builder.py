"""The delegate's GraphBuilder, restated: node ids, the const cache, the tensor map, and the
append order hexagon_nn sees (``builders/op_builder.cc``, ``op_builder.h``).

Node ids count every builder from 1 in creation order, consts included. Consts are appended to
hexagon_nn as they are created, the other nodes afterwards in creation order
(``GraphBuilder::Build``), so the graph lists every Const first. Consts with the same shape and
bytes are one node (the delegate's fingerprint cache).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.graph import Graph
from hexscope.engine.io.tflite.model import TfModel, TfTensor, short_name
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor

TensorId = tuple[int, int]
SCALAR = (1, 1, 1, 1)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def dims4(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """TFLite's shape padded with 1s on the left to four dimensions (``GetDims``)."""
    return (1,) * (4 - len(shape)) + tuple(shape)  # type: ignore[return-value]


def min_max(tensor: TfTensor) -> tuple[np.float32, np.float32]:
    """``ComputeMinAndMaxQuantValues``: scale * (qmin - zero_point), scale * (qmax - zero_point)
    in float32, from the first scale and zero point."""
    if tensor.quant is None:
        raise ValueError(f"{tensor.describe()} is not quantized")
    lo, hi = {"uint8": (0, 255), "int8": (-128, 127),
              "int32": (INT32_MIN, INT32_MAX)}.get(tensor.dtype, (None, None))
    if lo is None:
        raise ValueError(f"{tensor.describe()}: no quantized range for {tensor.dtype}")
    scale = np.float32(tensor.quant.scale[0])
    zp = np.float32(tensor.quant.zero_point[0])
    return scale * (np.float32(lo) - zp), scale * (np.float32(hi) - zp)


@dataclass
class BuiltNode:
    node_id: int
    op: str
    inputs: list[TensorId] = field(default_factory=list)
    outputs: list[OutputDef] = field(default_factory=list)
    padding: Padding = Padding.NA
    label: str = ""
    tflite_op: int = -1
    const: np.ndarray | None = None
    const_shape: tuple[int, ...] | None = None   # a shape-only const (strides, windows)

    def add_output(self, shape: tuple[int, ...], elementsize: int) -> TensorId:
        self.outputs.append(OutputDef(tuple(shape), elementsize))
        return (self.node_id, len(self.outputs) - 1)

    def add_q8_outputs(self, shape: tuple[int, ...]) -> tuple[TensorId, TensorId, TensorId]:
        """The usual data, min and max outputs of a quantized 8-bit op."""
        return (self.add_output(dims4(shape), 1), self.add_output(SCALAR, 4),
                self.add_output(SCALAR, 4))


class GraphBuilder:
    """Collects nodes as the delegate does, then writes them to a Hexscope :class:`Graph`."""

    def __init__(self, model: TfModel) -> None:
        self.model = model
        self.nodes: list[BuiltNode] = []
        self.tensors: dict[int, TensorId] = {}
        self._cache: dict[tuple[object, ...], BuiltNode] = {}
        # (node id, output index) -> the TFLite tensor that output is
        self.tensor_of_output: dict[tuple[int, int], int] = {}
        self.notes: list[str] = []          # what the builders did that a user should know
        self.device_refused: dict[int, str] = {}    # operator -> why the DSP cannot run it

    # nodes ------------------------------------------------------------------------------------
    def add_node(self, op: str, tflite_op: int = -1, label: str = "") -> BuiltNode:
        node = BuiltNode(len(self.nodes) + 1, op, label=label, tflite_op=tflite_op)
        self.nodes.append(node)
        return node

    def const(self, data: np.ndarray, shape: tuple[int, ...] = SCALAR, label: str = "",
              shape_only: bool = False) -> BuiltNode:
        """``AddConstNodeWithData(shape, data, size)``, cached on shape and bytes."""
        arr = np.ascontiguousarray(data)
        key = ("data", tuple(shape), arr.dtype.str, arr.tobytes())
        hit = self._cache.get(key)
        if hit is not None:
            if hit.const_shape is not None and not shape_only:
                # the delegate's strides and windows carry a dummy int 0, so a scalar int32
                # 0 of the same shape (RESIZE_BILINEAR's align_corners) is the same Const:
                # it keeps the bytes, which that reader needs
                hit.const, hit.const_shape = arr.reshape(shape), None
            return hit
        node = self.add_node("Const", label=label)
        if shape_only:
            node.const_shape = tuple(shape)
        else:
            node.const = arr.reshape(shape)
        self._cache[key] = node
        return node

    def scalar(self, value: float, label: str = "") -> BuiltNode:
        return self.const(np.array([value], np.float32), SCALAR, label)

    def min_max_consts(self, tensor: TfTensor) -> tuple[BuiltNode, BuiltNode]:
        lo, hi = min_max(tensor)
        return self.scalar(lo, f"{tensor.name}:min"), self.scalar(hi, f"{tensor.name}:max")

    def tensor_const(self, tensor: TfTensor, int8_to_uint8: bool) -> BuiltNode:
        """``AddConstNodeWithData(tensor_id, tensor, int8_to_uint8)``: the tensor's own data,
        4-D; an int8 tensor is followed by a Quantized_CastInt8ToUInt8 node when asked."""
        assert tensor.data is not None
        shape = dims4(tensor.shape)
        key = ("tensor", shape, tensor.data.dtype.str, tensor.data.tobytes(), int8_to_uint8)
        hit = self._cache.get(key)
        if hit is not None:
            self.tensors.setdefault(tensor.index, (hit.node_id, 0))
            return hit
        node = self.add_node("Const", label=tensor.name)
        node.const = np.ascontiguousarray(tensor.data).reshape(shape)
        # AddTensorWithID without overwrite: a tensor already mapped keeps its node
        self.tensors.setdefault(tensor.index, (node.node_id, 0))
        result = node
        if int8_to_uint8 and tensor.dtype == "int8":
            result = self.cast(tensor, "Quantized_CastInt8ToUInt8")
        self._cache[key] = result
        return result

    def cast(self, tensor: TfTensor, op: str) -> BuiltNode:
        """``AddCastOp``: the tensor cast in place; the map then points at the cast."""
        cast = self.add_node(op, label=f"{tensor.name} ({op})")
        lo, hi = min_max(tensor) if tensor.quant is not None else (np.float32(0), np.float32(0))
        min_c, max_c = self.scalar(lo, f"{tensor.name}:min"), self.scalar(hi, f"{tensor.name}:max")
        cast.inputs += [self.tensors[tensor.index], (min_c.node_id, 0), (max_c.node_id, 0)]
        out, _, _ = cast.add_q8_outputs(tensor.shape)
        self.tensors[tensor.index] = out
        return cast

    def register(self, tensor_index: int, output: TensorId) -> None:
        """``AddTensorWithID`` for an operator's output; labels the producing node."""
        self.tensors[tensor_index] = output
        node = self.nodes[output[0] - 1]
        self.tensor_of_output[output] = tensor_index
        if output[1] == 0:
            node.label = self.model.tensor(tensor_index).name

    def hex_id(self, tensor_index: int) -> TensorId:
        """``GetHexagonTensorId``: where a TFLite tensor lives in the hexagon graph."""
        try:
            return self.tensors[tensor_index]
        except KeyError:
            raise ValueError(f"{self.model.tensor(tensor_index).describe()} is read before any "
                             "node makes it") from None

    def _read_as_sums(self) -> set[int]:
        """The int32 Consts some node reads at a qint32 port (a bias)."""
        consts = {n.node_id for n in self.nodes if n.op == "Const" and n.const is not None
                  and n.const.dtype == np.int32}
        sums = set()
        for n in self.nodes:
            if n.op == "Const" or n.op not in REGISTRY:
                continue
            ports = REGISTRY.get(n.op).inputs.ports_for(len(n.inputs))
            for (src, _), port in zip(n.inputs, ports, strict=False):
                if src in consts and port.dtype is DType.QINT32:
                    sums.add(src)
        return sums

    # out ------------------------------------------------------------------------------------
    def to_graph(self) -> Graph:
        graph = Graph()
        sums = self._read_as_sums()
        for node in self.nodes:
            if node.op == "Const":
                if node.const_shape is not None:
                    graph.append_const_node(node.node_id, None, node.const_shape,
                                            label=short_name(node.label))
                else:
                    graph.append_const_node(node.node_id, node.const,
                                            label=short_name(node.label))
                    if node.const is not None and node.const.dtype == np.int8:
                        # TFLite's int8 tensors are quantized: qint8, as the casts take
                        tensor = Tensor.from_array(node.const, DType.QINT8).readonly()
                        graph.replace_node(graph.node(node.node_id).with_(const=tensor))
                    elif node.node_id in sums:
                        # a bias: qint32 sums, read through its min/max (the float reference
                        # read an int32 bias as plain integers: the FC's BiasAdd was 2% of
                        # its range off in float)
                        tensor = Tensor.from_array(node.const, DType.QINT32).readonly()
                        graph.replace_node(graph.node(node.node_id).with_(const=tensor))
        for node in self.nodes:
            if node.op != "Const":
                graph.append_node(node.node_id, node.op, node.inputs, node.outputs,
                                  node.padding, label=short_name(node.label))
        return graph


__all__ = ["SCALAR", "BuiltNode", "GraphBuilder", "dims4", "min_max"]
