"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED as the delegate builds them
(``builders/conv_2d_builder.cc``, ``conv_2d_helpers.cc``, ``matmul_builder.cc``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.io.tflite.device_limits import device_refusal
from hexscope.engine.io.tflite.graph_builder import (
    SCALAR,
    BuiltNode,
    GraphBuilder,
    TensorId,
    dims4,
    min_max,
)
from hexscope.engine.io.tflite.model import TfOperator
from hexscope.engine.io.tflite.support import ACT_NONE, ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1
from hexscope.engine.nodes import Padding

SIGN_FLIP = 0x80                       # int8 weights read as uint8 (k8BitSignFlipConstant)
MIN_RELATIVE_SCALE = np.float32(0.0009766)   # kHexagonMinRelativeScale
SPLIT_CHANNELS = 32                    # kDwConv5x5Filt2x2StrideChannelCount


def padding_of(op: TfOperator) -> Padding:
    return Padding.SAME if int(op.options.get("Padding", 0)) == 0 else Padding.VALID  # type: ignore[call-overload]


def flip(data: np.ndarray) -> np.ndarray:
    return (data.view(np.uint8) ^ np.uint8(SIGN_FLIP)).astype(np.uint8)


class _Conv:
    def __init__(self, b: GraphBuilder, op: TfOperator) -> None:
        self.b, self.op, self.m = b, op, b.model
        self.data, self.weights, self.bias = (self.m.tensor(t) for t in op.inputs[:3])
        self.out = self.m.tensor(op.outputs[0])
        self.depthwise = op.code == "DEPTHWISE_CONV_2D"
        self.name = self.out.name
        o = op.options
        self.stride = int(o.get("StrideH", 1)), int(o.get("StrideW", 1))  # type: ignore[call-overload]
        self.dilation = int(o.get("DilationHFactor", 1)), int(o.get("DilationWFactor", 1))  # type: ignore[call-overload]
        self.act = int(o.get("FusedActivationFunction", 0))  # type: ignore[call-overload]
        self.per_channel = self.weights.quant is not None and self.weights.quant.per_channel
        self.split = 0
        self.scales_nodes: list[int] = []
        self.weight_nodes: list[int] = []
        self.bias_nodes: list[int] = []
        self.scales_node: int | None = None

    def weights_nodes(self, in_depth: int) -> tuple[int, int]:
        w = self.weights.data
        assert w is not None
        n, h, wd, c = dims4(self.weights.shape)
        if not self.depthwise:
            hwcn = np.transpose(w.reshape(n, h, wd, c), (1, 2, 3, 0))
            data = flip(hwcn) if self.weights.dtype == "int8" else hwcn.astype(np.uint8)
            node = self.b.const(data, (h, wd, c, n), self.weights.name)
        else:
            mult = c // in_depth
            shape = (h, wd, in_depth, mult)
            self._check_split(h, wd, in_depth, mult)
            data = flip(w) if self.weights.dtype == "int8" else w.astype(np.uint8)
            node = self.b.const(data, shape, self.weights.name)
            if self.split:
                parts = data.reshape(shape)
                for s in range(self.split):
                    piece = parts[:, :, s * SPLIT_CHANNELS:(s + 1) * SPLIT_CHANNELS, :]
                    self.weight_nodes.append(self.b.const(
                        piece, (h, wd, SPLIT_CHANNELS, mult),
                        f"{self.weights.name}[{s}]").node_id)
        self.b.tensors[self.weights.index] = (node.node_id, 0)
        if self.per_channel:
            lo, hi = self._per_channel_weights()
        else:
            lo, hi = min_max(self.weights)
        return (self.b.scalar(lo, f"{self.weights.name}:min").node_id,
                self.b.scalar(hi, f"{self.weights.name}:max").node_id)

    def _check_split(self, h: int, w: int, in_depth: int, mult: int) -> None:
        # CheckShouldSplitDwConv: 5x5, stride >= 2, per-channel int8, depth 64, 96, ...
        if (self.weights.dtype == "int8" and (h, w) == (5, 5) and min(self.stride) >= 2
                and in_depth > SPLIT_CHANNELS and in_depth % SPLIT_CHANNELS == 0
                and self.per_channel and mult == 1):
            self.split = in_depth * mult // SPLIT_CHANNELS

    def _per_channel_weights(self) -> tuple[np.float32, np.float32]:
        assert self.weights.quant is not None
        scales = np.array(self.weights.quant.scale, np.float32)
        top = scales.max()
        if top == 0:
            raise ValueError(f"{self.weights.describe()}: every channel scale is zero")
        normal = np.maximum(scales / top, MIN_RELATIVE_SCALE).astype(np.float32)
        self.scales_node = self.b.const(normal, (1, 1, 1, normal.size),
                                        f"{self.weights.name}:channel_scales").node_id
        for s in range(self.split):
            self.scales_nodes.append(self.b.const(
                normal[s * SPLIT_CHANNELS:(s + 1) * SPLIT_CHANNELS], (1, 1, 1, SPLIT_CHANNELS),
                f"{self.weights.name}:channel_scales[{s}]").node_id)
        return np.float32(-128) * top, np.float32(127) * top

    def bias_nodes_(self) -> tuple[int, int]:
        if self.scales_node is None:
            node = self.b.tensor_const(self.bias, False)
            self.b.tensors[self.bias.index] = (node.node_id, 0)
            lo, hi = min_max(self.bias)
        else:
            lo, hi = self._per_channel_bias()
        return (self.b.scalar(lo, f"{self.bias.name}:min").node_id,
                self.b.scalar(hi, f"{self.bias.name}:max").node_id)

    def _per_channel_bias(self) -> tuple[np.float32, np.float32]:
        # ProcessPerChannelQuantizedBias: dequantize with the channel scales, then requantize
        # to +-8 * max |bias| over int32
        assert self.bias.data is not None and self.weights.quant and self.data.quant
        scales = np.array(self.weights.quant.scale, np.float32)
        if self.bias.data.size != scales.size:
            raise ValueError(f"{self.bias.describe()}: {self.bias.data.size} values for "
                             f"{scales.size} channel scales")
        deq = (self.bias.data.astype(np.float32) * np.float32(self.data.quant.scale[0])
               * scales).astype(np.float32)
        top = np.float32(np.abs(deq).max(initial=0.0)) * np.float32(8)
        ratio = deq / top if top else np.zeros_like(deq)
        values = np.round(np.float64(2**31) * ratio.astype(np.float64))
        values = np.clip(values, -(2**31), 2**31 - 1).astype(np.int32)
        node = self.b.const(values, (1, 1, 1, values.size), self.bias.name)
        self.b.tensors[self.bias.index] = (node.node_id, 0)
        for s in range(self.split):
            self.bias_nodes.append(self.b.const(
                values[s * SPLIT_CHANNELS:(s + 1) * SPLIT_CHANNELS], (1, 1, 1, SPLIT_CHANNELS),
                f"{self.bias.name}[{s}]").node_id)
        return -top, top


def build_conv(b: GraphBuilder, op: TfOperator, main: BuiltNode) -> None:
    """``Conv2dOpBuilder::PopulateSubGraph``; ``main`` is the operator's own node."""
    c = _Conv(b, op)
    in_shape = dims4(c.data.shape)
    dmin, dmax = (n.node_id for n in b.min_max_consts(c.data))
    wmin, wmax = c.weights_nodes(in_shape[3])
    stride = b.const(np.zeros(1, np.int32), (1, *c.stride, 1), f"{c.name}:stride",
                     shape_only=True).node_id
    out_lo, out_hi = min_max(c.out)
    conv_lo, conv_hi = {ACT_RELU6: (0.0, 6.0), ACT_RELU_N1_TO_1: (-1.0, 1.0),
                        ACT_RELU: (0.0, float(out_hi))}.get(c.act, (float(out_lo), float(out_hi)))
    cmin = b.scalar(conv_lo, f"{c.name}:conv_min").node_id
    cmax = b.scalar(conv_hi, f"{c.name}:conv_max").node_id
    bmin, bmax = c.bias_nodes_()
    mult = int(op.options.get("DepthMultiplier", 1))  # type: ignore[call-overload]
    if c.depthwise and mult > 1 and in_shape[3] == 1:
        main.op = "Supernode_8x8p32to8"   # a depthwise conv of one input channel is a conv
    common = [(dmin, 0), (dmax, 0), (wmin, 0), (wmax, 0), (stride, 0)]
    tail = [(bmin, 0), (bmax, 0), (cmin, 0), (cmax, 0)]
    scales = [(c.scales_node, 0)] if c.scales_node is not None else []
    if c.depthwise and main.op == "DepthwiseSupernode_8x8p32to8":
        # built as the delegate builds it, and said at import: the DSP has no kernel for it
        why = device_refusal(b.model, op)
        if why:
            b.notes.append(f"{op.describe()}: the DSP cannot run it: {why}")
            b.device_refused[op.index] = why
    if c.depthwise and c.dilation != (1, 1):
        result = _dilated(b, c, main, common, tail, scales, (dmin, dmax, cmin, cmax))
    elif c.split:
        result = _split(b, c, main, (dmin, dmax, wmin, wmax, stride, bmin, bmax, cmin, cmax))
    else:
        main.padding = padding_of(op)
        main.inputs += [b.hex_id(c.data.index), b.hex_id(c.weights.index), *common,
                        b.hex_id(c.bias.index), *tail, *scales]
        result = main.add_q8_outputs(c.out.shape)
    # Requantize when the activation's bounds differ from the tensor's by more than 1e-2
    if c.act != ACT_NONE and (abs(np.float32(conv_lo) - out_lo) > 0.01
                              or abs(np.float32(conv_hi) - out_hi) > 0.01):
        lo_c, hi_c = b.min_max_consts(c.out)
        req = b.add_node("Requantize_8to8", op.index)
        req.inputs += [result[0], result[1], result[2], (lo_c.node_id, 0), (hi_c.node_id, 0)]
        result = req.add_q8_outputs(c.out.shape)
    b.register(c.out.index, result[0])


def _dilated(b: GraphBuilder, c: _Conv, s2b, common, tail, scales,  # type: ignore[no-untyped-def]
             ranges: tuple[int, int, int, int]) -> tuple[TensorId, TensorId, TensorId]:
    """``BuildDilatedDwConv``: SpaceToBatchND_8, the depthwise conv VALID, BatchToSpaceND_8."""
    dmin, dmax, cmin, cmax = ranges
    n, h, w, d = dims4(c.data.shape)
    _, kh, kw, _ = dims4(c.weights.shape)
    dh, dw = c.dilation
    base = [0, 0, 0, 0]
    if padding_of(c.op) is Padding.SAME:
        eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1
        base = [(eh - 1) // 2, eh - 1 - (eh - 1) // 2, (ew - 1) // 2, ew - 1 - (ew - 1) // 2]
    extra_h = (dh - (h + base[0] + base[1]) % dh) % dh
    extra_w = (dw - (w + base[2] + base[3]) % dw) % dw
    pads = np.array([base[0], base[1] + extra_h, base[2], base[3] + extra_w], np.int32)
    crops = np.array([0, extra_h, 0, extra_w], np.int32)
    factors = b.const(np.array([dh, dw], np.int32), (1, 1, 1, 2), f"{c.name}:dilation").node_id
    pad_c = b.const(pads, (1, 1, 2, 2), f"{c.name}:paddings").node_id
    crop_c = b.const(crops, (1, 1, 2, 2), f"{c.name}:crops").node_id
    s2b.op = "SpaceToBatchND_8"
    s2b.label = f"{c.name} (SpaceToBatchND_8)"
    s2b.inputs += [b.hex_id(c.data.index), (factors, 0), (pad_c, 0), (dmin, 0), (dmax, 0)]
    s2b_shape = (n * dh * dw, (pads[0] + h + pads[1]) // dh, (pads[2] + w + pads[3]) // dw, d)
    s2b_out = s2b.add_output(s2b_shape, 1)
    s2b.add_output(SCALAR, 4)
    s2b.add_output(SCALAR, 4)
    on, oh, ow, od = dims4(c.out.shape)
    conv = b.add_node("DepthwiseSupernode_8x8p32to8", c.op.index, f"{c.name} (dilated conv)")
    conv.padding = Padding.VALID
    conv.inputs += [s2b_out, b.hex_id(c.weights.index), *common, b.hex_id(c.bias.index), *tail,
                    *scales]
    conv_out = conv.add_output((on * dh * dw, oh, ow, od), 1)
    conv.add_output(SCALAR, 4)
    conv.add_output(SCALAR, 4)
    b2s = b.add_node("BatchToSpaceND_8", c.op.index)
    b2s.inputs += [conv_out, (factors, 0), (crop_c, 0), (cmin, 0), (cmax, 0)]
    return b2s.add_q8_outputs(c.out.shape)


def _split(b: GraphBuilder, c: _Conv, split, ids: tuple[int, ...]  # type: ignore[no-untyped-def]
           ) -> tuple[TensorId, TensorId, TensorId]:
    """``BuildSplittedDwConv``: QuantizedSplit_8 into 32-channel slices, one depthwise conv
    each, QuantizedConcat_8 back (the 5x5 stride-2 per-channel accuracy workaround)."""
    dmin, dmax, wmin, wmax, stride, bmin, bmax, cmin, cmax = ids
    n, h, w, _ = dims4(c.data.shape)
    on, oh, ow, _ = dims4(c.out.shape)
    axis = b.const(np.array([3], np.int32), SCALAR, f"{c.name}:split_axis").node_id
    split.op = "QuantizedSplit_8"
    split.label = f"{c.name} (QuantizedSplit_8)"
    split.inputs += [(axis, 0), b.hex_id(c.data.index), (dmin, 0), (dmax, 0)]
    parts = [split.add_output((n, h, w, SPLIT_CHANNELS), 1) for _ in range(c.split)]
    smin, smax = split.add_output(SCALAR, 4), split.add_output(SCALAR, 4)
    outs, mins, maxs = [], [], []
    for i in range(c.split):
        conv = b.add_node("DepthwiseSupernode_8x8p32to8", c.op.index, f"{c.name} (slice {i})")
        conv.padding = padding_of(c.op)
        conv.inputs += [parts[i], (c.weight_nodes[i], 0), smin, smax, (wmin, 0), (wmax, 0),
                        (stride, 0), (c.bias_nodes[i], 0), (bmin, 0), (bmax, 0), (cmin, 0),
                        (cmax, 0), (c.scales_nodes[i], 0)]
        outs.append(conv.add_output((on, oh, ow, SPLIT_CHANNELS), 1))
        mins.append(conv.add_output(SCALAR, 4))
        maxs.append(conv.add_output(SCALAR, 4))
    concat = b.add_node("QuantizedConcat_8", c.op.index)
    # the delegate appends the conv's output range: 3N+3 inputs, which nnlib's concat_check
    # refuses (op_concat.c: "inputs must be 3*n+1"); kept as built, so validation says so
    concat.inputs += [(axis, 0), *outs, *mins, *maxs, (cmin, 0), (cmax, 0)]
    b.notes.append(f"{c.op.describe()}: the delegate's 5x5 stride-2 split (BuildSplittedDwConv) "
                   f"gives QuantizedConcat_8 {len(concat.inputs)} inputs (the conv's output "
                   "range last); nnlib's concat_check takes 3N+1 and refuses it, so the graph "
                   "does not validate (nor prepare on a device with this nnlib)")
    return concat.add_q8_outputs(c.out.shape)


def build_fully_connected(b: GraphBuilder, op: TfOperator, matmul: BuiltNode) -> None:
    """``MatMulWithConstWeightsOpBuilder``: QuantizedMatMul_8x8to32 (weights NHWC -> NHCW,
    int8 XOR 0x80), QuantizedBiasAdd_32p32to32, Requantize_32to8."""
    m = b.model
    data, weights = m.tensor(op.inputs[0]), m.tensor(op.inputs[1])
    out = m.tensor(op.outputs[0])
    if weights.data is None:
        raise ValueError(f"{op.describe()}: non-constant weights (MatMulOpBuilder with "
                         "Transpose_8) are not built yet")
    matmul.label = f"{out.name} (QuantizedMatMul)"
    if weights.quant is not None and weights.quant.per_channel:
        b.notes.append(f"{op.describe()}: per-channel weights ({len(weights.quant.scale)} "
                       "scales); the delegate's FULLY_CONNECTED uses the first scale for all "
                       "(matmul_builder.cc), so its output differs from TFLite's")
    n, h, w, d = dims4(weights.shape)
    nhcw = np.transpose(weights.data.reshape(n, h, w, d), (0, 1, 3, 2))
    wdata = flip(nhcw) if weights.dtype == "int8" else nhcw.astype(np.uint8)
    wnode = b.const(wdata, (n, h, d, w), weights.name)
    b.tensors[weights.index] = (wnode.node_id, 0)
    wmin, wmax = b.min_max_consts(weights)
    dmin, dmax = b.min_max_consts(data)
    matmul.inputs += [b.hex_id(data.index), (wnode.node_id, 0), (dmin.node_id, 0),
                      (dmax.node_id, 0), (wmin.node_id, 0), (wmax.node_id, 0)]
    shape = dims4(out.shape)
    acc = (matmul.add_output(shape, 4), matmul.add_output(SCALAR, 4),
           matmul.add_output(SCALAR, 4))
    bias_index = op.inputs[2] if len(op.inputs) > 2 else -1
    if bias_index != -1:
        bias = m.tensor(bias_index)
        bmin, bmax = b.min_max_consts(bias)
        add = b.add_node("QuantizedBiasAdd_32p32to32", op.index, f"{out.name} (BiasAdd)")
        add.inputs += [acc[0], b.hex_id(bias_index), acc[1], acc[2], (bmin.node_id, 0),
                       (bmax.node_id, 0)]
        acc = (add.add_output(shape, 4), add.add_output(SCALAR, 4), add.add_output(SCALAR, 4))
    omin, omax = b.min_max_consts(out)
    req = b.add_node("Requantize_32to8", op.index)
    req.inputs += [*acc, (omin.node_id, 0), (omax.node_id, 0)]
    result = req.add_q8_outputs(out.shape)
    b.register(out.index, result[0])


def build_transpose_conv(b: GraphBuilder, op: TfOperator, node: BuiltNode) -> None:
    """``TransposeConv2dOpBuilder``: data, weights as TFLite stores them (OHWI, XOR 0x80 for
    int8), the ranges, explicit paddings (1,1,2,2) from TFLite's ComputePaddingHeightWidth on
    the output size, the stride, a zero bias with a zero range, the output range and the
    per-channel scales."""
    m = b.model
    data, weights, out = m.tensor(op.inputs[2]), m.tensor(op.inputs[1]), m.tensor(op.outputs[0])
    if weights.data is None:
        raise ValueError("the weights are not constant")
    node.inputs.append(b.hex_id(data.index))
    dmin, dmax = b.min_max_consts(data)
    shape = dims4(weights.shape)
    wdata = flip(weights.data) if weights.dtype == "int8" else weights.data.astype(np.uint8)
    wnode = b.const(wdata, shape, weights.name)
    b.tensors.setdefault(weights.index, (wnode.node_id, 0))
    node.inputs.append((wnode.node_id, 0))
    scales = None
    if weights.quant is not None and weights.quant.per_channel:
        values = np.array(weights.quant.scale, np.float32)
        top = values.max()
        if top == 0:
            raise ValueError(f"{weights.describe()}: every channel scale is zero")
        normal = np.maximum(values / top, MIN_RELATIVE_SCALE).astype(np.float32)
        scales = b.const(normal, (1, 1, 1, normal.size), f"{weights.name}:channel_scales")
        lo, hi = np.float32(-128) * top, np.float32(127) * top
    else:
        lo, hi = min_max(weights)
    wmin, wmax = b.scalar(lo, f"{weights.name}:min"), b.scalar(hi, f"{weights.name}:max")
    node.inputs += [(dmin.node_id, 0), (dmax.node_id, 0), (wmin.node_id, 0), (wmax.node_id, 0)]
    _, oh, ow, od = dims4(out.shape)
    sh, sw = int(op.options.get("StrideH", 1)), int(op.options.get("StrideW", 1))  # type: ignore[call-overload]
    same = padding_of(op) is Padding.SAME
    pads = [_padding(oh, shape[1], sh, same), _padding(ow, shape[2], sw, same)]
    pad_c = b.const(np.array([pads[0], pads[0], pads[1], pads[1]], np.int32), (1, 1, 2, 2),
                    f"{out.name}:paddings")
    stride = b.const(np.zeros(1, np.int32), (1, sh, sw, 1), f"{out.name}:stride",
                     shape_only=True)
    bias = b.const(np.zeros(od, np.int32), (1, 1, 1, od), f"{out.name}:bias")
    zero = b.scalar(0.0, "0.0")
    omin, omax = b.min_max_consts(out)
    node.inputs += [(pad_c.node_id, 0), (stride.node_id, 0), (bias.node_id, 0),
                    (zero.node_id, 0), (zero.node_id, 0), (omin.node_id, 0), (omax.node_id, 0)]
    if scales is not None:
        node.inputs.append((scales.node_id, 0))
    b.register(out.index, node.add_q8_outputs(out.shape)[0])


def _padding(size: int, kernel: int, stride: int, same: bool) -> int:
    # TFLite's ComputePaddingHeightWidth (kernels/padding.h) with the output as its input
    out = (size + stride - 1) // stride if same else (size + stride - kernel) // stride
    return max((out - 1) * stride + kernel - size, 0) // 2


__all__ = ["build_conv", "build_fully_connected", "build_transpose_conv", "flip"]
