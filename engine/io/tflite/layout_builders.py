"""SPLIT, TRANSPOSE, SPACE_TO_DEPTH and DEPTH_TO_SPACE as the delegate builds them
(``builders/split_builder.cc``, ``transpose_builder.cc``, ``space_to_depth_builder.cc``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.io.tflite.graph_builder import SCALAR, BuiltNode, GraphBuilder, dims4
from hexscope.engine.io.tflite.model import TfOperator


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


__all__ = ["build_space_to_depth", "build_split", "build_transpose"]
