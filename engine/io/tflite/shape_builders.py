"""RESHAPE, SOFTMAX, PAD and MEAN as the delegate builds them (``builders/reshape_builder.cc``,
``softmax_builder.cc``, ``pad_builder.cc``, ``reduce_builder.cc``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.io.tflite.graph_builder import SCALAR, BuiltNode, GraphBuilder, dims4
from hexscope.engine.io.tflite.model import TfOperator


def build_reshape(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``ReshapeOpBuilder``: the data and the new shape as an int32 Const (from the shape
    tensor, else the options); one output, no range."""
    m = b.model
    out = m.tensor(op.outputs[0])
    node.inputs.append(b.hex_id(op.inputs[0]))
    shape_t = m.tensor(op.inputs[1]) if len(op.inputs) == 2 else None
    if shape_t is not None and not (len(shape_t.shape) == 1 and shape_t.dtype == "int32"):
        shape_t = None
    if shape_t is not None and not shape_t.is_const:
        node.inputs.append(b.hex_id(shape_t.index))      # a dynamic shape, passed along
    else:
        if shape_t is not None:
            assert shape_t.data is not None
            dims = [int(v) for v in shape_t.data]
        else:
            dims = [int(v) for v in op.options.get("NewShape", ())]  # type: ignore[attr-defined]
            if dims == [0]:
                dims = []       # legacy models: [0] for a scalar
        shape_c = b.const(np.array(dims, np.int32), (1, 1, 1, len(dims)), f"{out.name}:shape")
        node.inputs.append((shape_c.node_id, 0))
    b.register(out.index, node.add_output(dims4(out.shape), 1))


def build_softmax(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``SoftmaxOpBuilder``: the data, its range, beta."""
    x, out = b.model.tensor(op.inputs[0]), b.model.tensor(op.outputs[0])
    lo, hi = b.min_max_consts(x)
    beta = b.scalar(float(op.options.get("Beta", 1.0)), f"{out.name}:beta")  # type: ignore[arg-type]
    node.inputs += [b.hex_id(x.index), (lo.node_id, 0), (hi.node_id, 0), (beta.node_id, 0)]
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def build_pad(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``PadOpBuilder``: the data, its range, the paddings (the constant tensor itself)."""
    m = b.model
    x, pads, out = m.tensor(op.inputs[0]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    lo, hi = b.min_max_consts(x)
    node.inputs += [b.hex_id(x.index), (lo.node_id, 0), (hi.node_id, 0)]
    if pads.is_const:
        node.inputs.append((b.tensor_const(pads, False).node_id, 0))
    else:
        node.inputs.append(b.hex_id(pads.index))
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def build_mean(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``ReduceOpBuilder``: axes shifted to 4-D, the output range as inputs, then a
    Requantize_8to8 (the op does not honour that range). Its range outputs are declared with
    the output's element size, as the delegate does."""
    m = b.model
    x, axes, out = m.tensor(op.inputs[0]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    lo, hi = b.min_max_consts(x)
    node.inputs += [b.hex_id(x.index), (lo.node_id, 0), (hi.node_id, 0)]
    if axes.data is None:
        raise ValueError("the reduction axes are not constant")
    const_axes = b.tensor_const(axes, False)
    if len(x.shape) < 4:
        shifted = axes.data.astype(np.int32).ravel() + (4 - len(x.shape))
        const_axes = b.const(shifted, (1, 1, 1, shifted.size), f"{axes.name} (4-D)")
    node.inputs.append((const_axes.node_id, 0))
    omin, omax = b.min_max_consts(out)
    node.inputs += [(omin.node_id, 0), (omax.node_id, 0)]
    node.label = f"{out.name} ({node.op})"
    size = 1 if out.dtype in ("int8", "uint8") else 4
    src = (node.add_output(dims4(out.shape), size), node.add_output(SCALAR, size),
           node.add_output(SCALAR, size))
    req = b.add_node("Requantize_8to8", op.index)
    req.inputs += [*src, (omin.node_id, 0), (omax.node_id, 0)]
    b.register(out.index, req.add_q8_outputs(out.shape)[0])


def build_resize_bilinear(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``ResizeBilinearOpBuilder``: data, the size (1,1,1,2), data range, align_corners."""
    m = b.model
    x, size, out = m.tensor(op.inputs[0]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    if size.data is None:
        raise ValueError("the output size is not constant")
    dims = b.const(size.data.astype(np.int32).ravel()[:2], (1, 1, 1, 2), f"{out.name}:size")
    lo, hi = b.min_max_consts(x)
    align = b.const(np.array([int(bool(op.options.get("AlignCorners")))], np.int32), SCALAR,
                    f"{out.name}:align_corners")
    node.inputs += [b.hex_id(x.index), (dims.node_id, 0), (lo.node_id, 0), (hi.node_id, 0),
                    (align.node_id, 0)]
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def build_resize_nearest(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``ResizeNearestNeighborOpBuilder``: data, the size (the tensor's Const), data range,
    align_corners, half_pixel_centers."""
    m = b.model
    x, size, out = m.tensor(op.inputs[0]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    node.inputs.append(b.hex_id(x.index))
    node.inputs.append((b.tensor_const(size, False).node_id, 0) if size.is_const
                       else b.hex_id(size.index))
    lo, hi = b.min_max_consts(x)
    node.inputs += [(lo.node_id, 0), (hi.node_id, 0)]
    for key in ("AlignCorners", "HalfPixelCenters"):
        flag = b.const(np.array([int(bool(op.options.get(key)))], np.int32), SCALAR,
                       f"{out.name}:{key}")
        node.inputs.append((flag.node_id, 0))
    b.notes.append(f"{op.describe()}: the delegate passes ResizeNearestNeighbor_8 6 inputs "
                   "(half_pixel_centers last); nnlib declares 4 to 5 (op_resizenear.c "
                   "NN_IOCOUNT_RANGE(4,5)), so the graph does not validate (nor append on a "
                   "device with this nnlib)")
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def build_strided_slice(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``StridedSliceOpBuilder``: data, begin/end/step (their tensors' Consts), the begin, end
    and shrink-axis masks shifted to 4-D (bits 0-3 are B, H, W, D), the data range."""
    m = b.model
    x, out = m.tensor(op.inputs[0]), m.tensor(op.outputs[0])
    node.inputs.append(b.hex_id(x.index))
    for t in op.inputs[1:4]:
        node.inputs.append((b.tensor_const(m.tensor(t), False).node_id, 0))
    shift = 4 - len(x.shape)
    for key in ("BeginMask", "EndMask", "ShrinkAxisMask"):
        mask = int(op.options.get(key, 0)) << shift  # type: ignore[call-overload]
        node.inputs.append((b.const(np.array([mask], np.int32), SCALAR,
                                    f"{out.name}:{key}").node_id, 0))
    lo, hi = b.min_max_consts(x)
    node.inputs += [(lo.node_id, 0), (hi.node_id, 0)]
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


__all__ = ["build_mean", "build_pad", "build_reshape", "build_resize_bilinear",
           "build_resize_nearest", "build_softmax", "build_strided_slice"]
