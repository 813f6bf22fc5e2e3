"""Elementwise, pooling, concatenation, activation and QUANTIZE operators as the delegate
builds them (``builders/arithmetic_builder.cc``, ``pool_2d_builder.cc``, ``concat_builder.cc``,
``activation_builder.cc``, ``quantize_builder.cc``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.io.tflite.conv_builders import padding_of
from hexscope.engine.io.tflite.graph_builder import (
    SCALAR,
    BuiltNode,
    GraphBuilder,
    TensorId,
    dims4,
    min_max,
)
from hexscope.engine.io.tflite.model import TfOperator, TfTensor


def _requantize(b: GraphBuilder, op: TfOperator, kind: str,
                source: tuple[TensorId, TensorId, TensorId], lo: int, hi: int) -> TensorId:
    out = b.model.tensor(op.outputs[0])
    req = b.add_node(kind, op.index)
    req.inputs += [*source, (lo, 0), (hi, 0)]
    return req.add_q8_outputs(out.shape)[0]


def build_arithmetic(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``ArithmeticOpBuilder``: the op on both inputs with their ranges, then a Requantize to
    the output tensor's range (Requantize_32to8 after QuantizedMul_8x8to32)."""
    m = b.model
    x, y, out = m.tensor(op.inputs[0]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    node.label = f"{out.name} ({node.op})"
    node.inputs += [b.hex_id(x.index), b.hex_id(y.index)]
    for t in (x, y):
        lo, hi = b.min_max_consts(t)
        node.inputs += [(lo.node_id, 0), (hi.node_id, 0)]
    omin, omax = b.min_max_consts(out)
    if node.op == "QuantizedAdd_8p8to8" and min_max(out)[1] != 0:
        node.inputs += [(omin.node_id, 0), (omax.node_id, 0)]
    if node.op == "QuantizedMul_8x8to32":
        first = node.add_output(dims4(out.shape), 4)
        src = (first, node.add_output(SCALAR, 4), node.add_output(SCALAR, 4))
        kind = "Requantize_32to8"
    else:
        src = node.add_q8_outputs(out.shape)
        kind = "Requantize_8to8"
    b.register(out.index, _requantize(b, op, kind, src, omin.node_id, omax.node_id))


def build_pool(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``Pool2dOpBuilder``: window and stride as shape-only consts; AvgPool is requantized to
    the output range, MaxPool keeps its input's."""
    m = b.model
    x, out = m.tensor(op.inputs[0]), m.tensor(op.outputs[0])
    lo, hi = b.min_max_consts(x)
    node.inputs += [b.hex_id(x.index), (lo.node_id, 0), (hi.node_id, 0)]
    node.padding = padding_of(op)
    o = op.options
    window = b.const(np.zeros(1, np.int32), (1, int(o["FilterHeight"]), int(o["FilterWidth"]), 1),  # type: ignore[call-overload]
                     f"{out.name}:window", shape_only=True)
    stride = b.const(np.zeros(1, np.int32), (1, int(o["StrideH"]), int(o["StrideW"]), 1),  # type: ignore[call-overload]
                     f"{out.name}:stride", shape_only=True)
    node.inputs += [(window.node_id, 0), (stride.node_id, 0)]
    src = node.add_q8_outputs(out.shape)
    if node.op == "QuantizedMaxPool_8":
        b.register(out.index, src[0])
        return
    node.label = f"{out.name} ({node.op})"
    omin, omax = b.min_max_consts(out)
    b.register(out.index, _requantize(b, op, "Requantize_8to8", src, omin.node_id,
                                      omax.node_id))


def build_concat(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``ConcatOpBuilder``: axis counted in 4-D; a Requantize to the output range unless that
    range is exactly the union of the inputs'."""
    m = b.model
    out = m.tensor(op.outputs[0])
    axis = int(op.options.get("Axis", 0))  # type: ignore[call-overload]
    axis = axis + 4 if axis < 0 else axis + 4 - len(out.shape)
    axis_c = b.const(np.array([axis], np.int32), SCALAR, f"{out.name}:axis")
    node.inputs.append((axis_c.node_id, 0))
    note = off_depth_concat_note(op, axis, dims4(out.shape)) if axis != 3 else ""
    if note:
        b.notes.append(note)
    ranges = [min_max(m.tensor(t)) for t in op.inputs]
    node.inputs += [b.hex_id(t) for t in op.inputs]
    node.inputs += [(b.scalar(lo, f"{m.tensor(t).name}:min").node_id, 0)
                    for t, (lo, _) in zip(op.inputs, ranges, strict=True)]
    node.inputs += [(b.scalar(hi, f"{m.tensor(t).name}:max").node_id, 0)
                    for t, (_, hi) in zip(op.inputs, ranges, strict=True)]
    src = node.add_q8_outputs(out.shape)
    omin, omax = b.min_max_consts(out)
    lo, hi = min_max(out)
    if lo == min(r[0] for r in ranges) and hi == max(r[1] for r in ranges):
        b.register(out.index, src[0])
        return
    node.label = f"{out.name} ({node.op})"
    b.register(out.index, _requantize(b, op, "Requantize_8to8", src, omin.node_id,
                                      omax.node_id))


def off_depth_concat_note(op: TfOperator, axis: int, out: tuple[int, ...]) -> str:
    """Why a QuantizedConcat_8 off depth stops the run, or "" when it runs: nnlib's flat op
    refuses axis != 3 (op_concat.c ``concat_execute``: "only depth"), and prepare.c's
    ``do_convert_concat_depth32`` runs it as QuantizedConcat_8_d32 (any axis), as Hexscope's
    prepare does, unless the output is 1x1xD."""
    if out[1] == 1 and out[2] == 1:
        return (f"{op.describe()}: QuantizedConcat_8 on axis {axis}; nnlib's flat op only "
                "concatenates depth (op_concat.c: \"only depth\") and the output is 1x1xD, "
                "which prepare keeps flat: the device fails too")
    return ""


def build_activation(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``ActivationOpBuilder``: the input and its range (ReluX_8 adds the constant 6.0)."""
    x, out = b.model.tensor(op.inputs[0]), b.model.tensor(op.outputs[0])
    lo, hi = b.min_max_consts(x)
    node.inputs += [b.hex_id(x.index), (lo.node_id, 0), (hi.node_id, 0)]
    if node.op == "QuantizedReluX_8":
        node.inputs.append((b.scalar(6.0, "relu6:max").node_id, 0))
    b.register(out.index, node.add_q8_outputs(out.shape)[0])
    note = activation_range_note(op, x, out) if node.op in RANGE_KEEPING else ""
    if note:
        b.notes.append(note)


# the activations whose nnlib op passes its input's range through (op_relu.c: relu_execute
# and reluX_execute copy in_min/in_max to the outputs)
RANGE_KEEPING = ("QuantizedRelu_8", "QuantizedReluX_8")


def activation_range_note(op: TfOperator, x: TfTensor, out: TfTensor) -> str:
    """Where an activation's output tensor has another range than its input, by more than one
    step of the output: the delegate's node keeps the input's range and adds no requantize
    (``activation_builder.cc``; ``op_relu.c`` passes min and max through), while the next
    builders read its codes with the output tensor's range (their ``ComputeAndAddMinAndMax``),
    so every value after it is misread. "" when the ranges agree."""
    if x.quant is None or out.quant is None:
        return ""
    (xlo, xhi), (olo, ohi) = min_max(x), min_max(out)
    step = (float(ohi) - float(olo)) / 255.0
    worst = max(abs(float(xlo) - float(olo)), abs(float(xhi) - float(ohi)))
    if step <= 0 or worst <= step:
        return ""
    return (f"{op.describe()}: its output {out.describe()} has the range [{float(olo):.6g}, "
            f"{float(ohi):.6g}], its input [{float(xlo):.6g}, {float(xhi):.6g}]: the "
            "delegate's node keeps the input's range and adds no requantize "
            "(activation_builder.cc), and the operators after it read its codes with the "
            f"output's range ({worst / step:.0f} steps apart): TFLite requantizes, the DSP "
            "does not (a RELU fused into the operator before it has no such step)")


def build_quantize(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``QuantizeOpBuilder``: TFLite's QUANTIZE (8-bit to 8-bit) as Requantize_8to8."""
    x, out = b.model.tensor(op.inputs[0]), b.model.tensor(op.outputs[0])
    node.inputs.append(b.hex_id(x.index))
    for t in (x, out):
        lo, hi = b.min_max_consts(t)
        node.inputs += [(lo.node_id, 0), (hi.node_id, 0)]
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def build_hard_swish(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``HardSwishOpBuilder``: the input, its range, the output range."""
    build_quantize(b, op, node)       # the same inputs and outputs as QUANTIZE's


def build_min_max(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``MinMaxOpBuilder``: a constant operand is added again without the int8 cast (the
    mapping keeps the cast), then a, b, their ranges and the output range."""
    m = b.model
    x, y, out = m.tensor(op.inputs[0]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    for t in (x, y):
        if t.is_const:
            b.tensor_const(t, False)
    node.inputs += [b.hex_id(x.index), b.hex_id(y.index)]
    for t in (x, y, out):
        lo, hi = b.min_max_consts(t)
        node.inputs += [(lo.node_id, 0), (hi.node_id, 0)]
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


__all__ = ["build_activation", "build_arithmetic", "build_concat", "build_hard_swish",
           "build_min_max", "build_pool", "build_quantize", "off_depth_concat_note"]
