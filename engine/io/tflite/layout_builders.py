"""SPLIT, TRANSPOSE, SPACE_TO_DEPTH, DEPTH_TO_SPACE, SLICE, PACK, MIRROR_PAD and ARG_MAX/MIN
as the delegate builds them (``builders/split_builder.cc``, ``transpose_builder.cc``,
``space_to_depth_builder.cc``, ``slice_builder.cc``, ``pack_builder.cc``,
``mirror_pad_builder.cc``, ``arg_min_max_builder.cc``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.io.tflite.graph_builder import SCALAR, BuiltNode, GraphBuilder, dims4
from hexscope.engine.io.tflite.model import TfOperator
from hexscope.engine.nodes import Padding


def build_split(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``SplitOpBuilder``: the axis (counted in 4-D) as a Const, the data and its range; one
    output per TFLite output, then one min and one max for them all."""
    m = b.model
    axis_t, x = m.tensor(op.inputs[0]), m.tensor(op.inputs[1])
    if axis_t.data is None:
        raise ValueError("the split axis is not constant")
    axis = int(axis_t.data.ravel()[0])
    axis = (axis + len(x.shape) if axis < 0 else axis) + 4 - len(x.shape)
    axis_c = b.const(np.array([axis], np.int32), SCALAR, f"{x.name}:split_axis")
    lo, hi = b.min_max_consts(x)
    node.inputs += [(axis_c.node_id, 0), b.hex_id(x.index), (lo.node_id, 0), (hi.node_id, 0)]
    outs = [node.add_output(dims4(m.tensor(t).shape), 1) for t in op.outputs]
    node.add_output(SCALAR, 4)
    node.add_output(SCALAR, 4)
    for t, out in zip(op.outputs, outs, strict=True):
        b.register(t, out)
    node.label = m.tensor(op.outputs[0]).name


def build_transpose(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``TransposeOpBuilder``: data, the permutation (its tensor's Const), data range."""
    m = b.model
    x, perm, out = m.tensor(op.inputs[0]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    node.inputs.append(b.hex_id(x.index))
    node.inputs.append((b.tensor_const(perm, False).node_id, 0) if perm.is_const
                       else b.hex_id(perm.index))
    lo, hi = b.min_max_consts(x)
    node.inputs += [(lo.node_id, 0), (hi.node_id, 0)]
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def build_space_to_depth(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``SpaceToDepthOpBuilder`` (also DEPTH_TO_SPACE): data, block size, data range."""
    m = b.model
    x, out = m.tensor(op.inputs[0]), m.tensor(op.outputs[0])
    lo, hi = b.min_max_consts(x)
    block = b.const(np.array([int(op.options.get("BlockSize", 1))], np.int32), SCALAR,  # type: ignore[call-overload]
                    f"{out.name}:block_size")
    node.inputs += [b.hex_id(x.index), (block.node_id, 0), (lo.node_id, 0), (hi.node_id, 0)]
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def build_slice(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``SliceOpBuilder``: data, begins and sizes as int32 Consts (1,1,1,rank), data range."""
    m = b.model
    x, begin, size, out = (m.tensor(t) for t in (*op.inputs[:3], op.outputs[0]))
    if begin.data is None or size.data is None:
        raise ValueError("the slice's begin and size are not constant")
    rank = len(x.shape)
    node.inputs.append(b.hex_id(x.index))
    for name, t in (("begin", begin), ("size", size)):
        values = np.asarray(t.data).ravel()[:rank].astype(np.int32)
        node.inputs.append((b.const(values, (1, 1, 1, rank), f"{out.name}:{name}").node_id, 0))
    lo, hi = b.min_max_consts(x)
    node.inputs += [(lo.node_id, 0), (hi.node_id, 0)]
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def build_pack(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``PackOpBuilder``: axis in 4-D, the inputs, their minima, their maxima, then always a
    Requantize_8to8 to the output range."""
    m = b.model
    first, out = m.tensor(op.inputs[0]), m.tensor(op.outputs[0])
    axis = int(op.options.get("Axis", 0))  # type: ignore[call-overload]
    if axis < 0:
        axis += len(first.shape) + 1
    axis = 4 - len(first.shape) + axis - 1
    node.inputs.append((b.const(np.array([axis], np.int32), SCALAR, f"{out.name}:axis")
                        .node_id, 0))
    node.inputs += [b.hex_id(t) for t in op.inputs]
    ranges = [b.min_max_consts(m.tensor(t)) for t in op.inputs]
    node.inputs += [(lo.node_id, 0) for lo, _ in ranges]
    node.inputs += [(hi.node_id, 0) for _, hi in ranges]
    node.label = f"{out.name} ({node.op})"
    src = node.add_output(dims4(out.shape), 1)
    omin, omax = b.min_max_consts(out)
    src_min, src_max = node.add_output(SCALAR, 4), node.add_output(SCALAR, 4)
    req = b.add_node("Requantize_8to8", op.index)
    req.inputs += [src, src_min, src_max, (omin.node_id, 0), (omax.node_id, 0)]
    b.register(out.index, req.add_q8_outputs(out.shape)[0])


def build_mirror_pad(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``MirrorPadOpBuilder``: data, the paddings as (1,1,4,2) int32 (missing leading
    dimensions padded by 0), the mode as the node's padding, data range."""
    m = b.model
    x, pads, out = m.tensor(op.inputs[0]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    if pads.data is None or pads.data.ndim != 2 or pads.data.shape[0] > 4 or \
            pads.data.shape[1] != 2:
        raise ValueError(f"invalid paddings {pads.describe()}")
    data = np.zeros(8, np.int32)
    flat = pads.data.astype(np.int32).ravel()
    data[8 - flat.size:] = flat
    node.inputs += [b.hex_id(x.index),
                    (b.const(data, (1, 1, 4, 2), f"{out.name}:paddings").node_id, 0)]
    node.padding = (Padding.MIRROR_REFLECT if int(op.options.get("Mode", 0)) == 0  # type: ignore[call-overload]
                    else Padding.MIRROR_SYMMETRIC)
    lo, hi = b.min_max_consts(x)
    node.inputs += [(lo.node_id, 0), (hi.node_id, 0)]
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def build_arg_min_max(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``ArgMinMaxOpBuilder``: data, the axis (made positive but, as the delegate does, not
    shifted to 4-D), data range; one output of the output type's size."""
    m = b.model
    x, axis_t, out = m.tensor(op.inputs[0]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    if axis_t.data is None:
        raise ValueError("the axis is not constant")
    axis = int(axis_t.data.ravel()[0])
    if axis < 0:
        axis += len(x.shape)
    node.inputs += [b.hex_id(x.index),
                    (b.const(np.array([axis], np.int32), SCALAR, f"{out.name}:axis").node_id, 0)]
    lo, hi = b.min_max_consts(x)
    node.inputs += [(lo.node_id, 0), (hi.node_id, 0)]
    size = {"int32": 4, "int64": 8, "uint8": 1, "int8": 1}.get(out.dtype, 4)
    b.register(out.index, node.add_output(dims4(out.shape), size))


__all__ = ["build_arg_min_max", "build_mirror_pad", "build_pack", "build_slice",
           "build_space_to_depth", "build_split", "build_transpose"]
