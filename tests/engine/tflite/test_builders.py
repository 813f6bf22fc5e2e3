"""The imported graph's structure against the delegate's builders (each test cites the file of
tensorflow/lite/delegates/hexagon/builders/ it checks). These tests need no op to run."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.model import read_model
from hexscope.engine.nodes import Padding
from support.tflite_graphs import const_of, one, ops, scalar, shape_of


def _range(t):
    s, z = np.float32(t.quant.scale[0]), np.float32(t.quant.zero_point[0])
    lo, hi = {"int8": (-128, 127), "uint8": (0, 255), "int32": (-(2**31), 2**31 - 1)}[t.dtype]
    return float(s * (np.float32(lo) - z)), float(s * (np.float32(hi) - z))


def test_op_builder_input_output_casts_consts_first_and_ids(model_path):
    # op_builder.cc AddInputTensors / AddOutputTensors / AddConstNodeWithData, op_builder.h Build
    g = import_tflite(model_path("pools"))
    nodes = list(g)
    first_op = next(i for i, n in enumerate(nodes) if not n.is_const)
    assert all(not n.is_const for n in nodes[first_op:]), "consts are appended first"
    assert sorted(n.node_id for n in g) == list(range(1, len(g) + 1))
    inp = one(g, "INPUT")
    assert inp.node_id == 1 and [o.max_sizes for o in inp.outputs] == [(1, 8, 8, 4)]
    cast_in, cast_out = one(g, "Quantized_CastInt8ToUInt8"), one(g, "Quantized_CastUInt8ToInt8")
    assert cast_in.inputs[0] == (1, 0) and len(cast_in.inputs) == 3
    out = one(g, "OUTPUT")
    assert out.inputs == ((cast_out.node_id, 0),) and out.node_id == max(n.node_id for n in g)
    # the min/max of a range shared by several ops is one Const (the fingerprint cache)
    values = [(shape_of(g, (n.node_id, 0)), n.const.array.tobytes()) for n in g if n.is_const
              and n.const.has_data]
    assert len(values) == len(set(values))


def test_arithmetic_builder_add_inputs_and_requantize(model_path):
    # arithmetic_builder.cc: a, b, a_min, a_max, b_min, b_max, out_min, out_max; Requantize_8to8
    path = model_path("add")
    m = read_model(path)
    add_op = next(o for o in m.operators if o.code == "ADD")
    g = import_tflite(path)
    add = one(g, "QuantizedAdd_8p8to8")
    assert len(add.inputs) == 8
    a, b = (m.tensor(t) for t in add_op.inputs)
    out = m.tensor(add_op.outputs[0])
    got = [scalar(g, r) for r in add.inputs[2:]]
    assert got == pytest.approx([*_range(a), *_range(b), *_range(out)], rel=0, abs=0)
    req = one(g, "Requantize_8to8")
    assert req.inputs[:3] == ((add.node_id, 0), (add.node_id, 1), (add.node_id, 2))
    assert req.inputs[3:] == add.inputs[6:8]
    assert req.label == out.name
    assert g.meta["tflite"]["op_index"][f"0x{add.node_id:x}"] == add_op.index


def test_arithmetic_builder_mul_is_8x8to32_then_requantize_32to8(model_path):
    # arithmetic_builder.cc: OP_QuantizedMul_8x8to32, int32 output, Requantize_32to8
    g = import_tflite(model_path("mul"))
    mul = one(g, "QuantizedMul_8x8to32")
    assert len(mul.inputs) == 6 and mul.outputs[0].elementsize == 4
    assert one(g, "Requantize_32to8").inputs[0] == (mul.node_id, 0)


def test_conv_2d_builder_supernode_inputs_weights_and_per_channel(model_path):
    # conv_2d_builder.cc BuildStandardConv, conv_2d_helpers.cc InitializeWeightsNodes,
    # ProcessPerChannelQuantizedWeights / ProcessPerChannelQuantizedBias
    path = model_path("conv_relu6")
    m = read_model(path)
    (op,) = m.operators
    data, w, bias = (m.tensor(t) for t in op.inputs)
    g = import_tflite(path)
    sn = one(g, "Supernode_8x8p32to8")
    assert len(sn.inputs) == 13 and sn.padding is Padding.SAME
    hwcn = np.transpose(w.data, (1, 2, 3, 0)).view(np.uint8) ^ 0x80
    np.testing.assert_array_equal(const_of(g, sn.inputs[1]), hwcn)
    assert shape_of(g, sn.inputs[6]) == (1, 2, 2, 1) and not g.node(sn.inputs[6][0]).const.has_data
    scales = np.array(w.quant.scale, np.float32)
    top = scales.max()
    assert scalar(g, sn.inputs[4]) == float(np.float32(-128) * top)
    assert scalar(g, sn.inputs[5]) == float(np.float32(127) * top)
    np.testing.assert_array_equal(const_of(g, sn.inputs[12]).ravel(),
                                  np.maximum(scales / top, np.float32(0.0009766)))
    deq = bias.data.astype(np.float32) * np.float32(data.quant.scale[0]) * scales
    bmax = np.float32(np.abs(deq).max()) * np.float32(8)
    assert scalar(g, sn.inputs[9]) == float(bmax) and scalar(g, sn.inputs[8]) == float(-bmax)
    np.testing.assert_array_equal(const_of(g, sn.inputs[7]).ravel(),
                                  np.round(2.0**31 * (deq / bmax).astype(np.float64)))
    # a fused Relu6 feeds the conv the bounds 0..6, then a Requantize to the tensor's range
    assert (scalar(g, sn.inputs[10]), scalar(g, sn.inputs[11])) == (0.0, 6.0)
    req = one(g, "Requantize_8to8")
    assert req.inputs[0] == (sn.node_id, 0)
    assert (scalar(g, req.inputs[3]), scalar(g, req.inputs[4])) == _range(m.tensor(op.outputs[0]))


def test_conv_2d_builder_relu_without_requantize_when_bounds_agree(model_path):
    # conv_2d_builder.cc: no Requantize when the activation's bounds are within 1e-2
    g = import_tflite(model_path("conv_valid_relu"))
    sn = one(g, "Supernode_8x8p32to8")
    assert sn.padding is Padding.VALID and not ops(g, "Requantize_8to8")
    assert scalar(g, sn.inputs[10]) == 0.0


def test_conv_2d_builder_depthwise_weights_keep_their_order(model_path):
    # conv_2d_helpers.cc: depthwise weights [fh, fw, din, dmul], data unchanged but XOR 0x80
    path = model_path("depthwise")
    w = read_model(path).tensor(read_model(path).operators[0].inputs[1])
    g = import_tflite(path)
    dw = one(g, "DepthwiseSupernode_8x8p32to8")
    got = const_of(g, dw.inputs[1])
    assert got.shape == (3, 3, 8, 1)
    np.testing.assert_array_equal(got.ravel(), w.data.view(np.uint8).ravel() ^ 0x80)


def test_conv_2d_builder_dilated_depthwise_through_space_to_batch(model_path):
    # conv_2d_builder.cc BuildDilatedDwConv, ComputeSpaceToBatchParams: input 10x10, 3x3
    # dilated by 2, SAME: base pads 2,2,2,2; 14 % 2 = 0 so no extra pad, no crop
    g = import_tflite(model_path("depthwise_dilated"))
    s2b, conv, b2s = (one(g, k) for k in ("SpaceToBatchND_8", "DepthwiseSupernode_8x8p32to8",
                                          "BatchToSpaceND_8"))
    assert const_of(g, s2b.inputs[1]).ravel().tolist() == [2, 2]
    assert const_of(g, s2b.inputs[2]).ravel().tolist() == [2, 2, 2, 2]
    assert s2b.outputs[0].max_sizes == (4, 7, 7, 8)
    assert conv.inputs[0] == (s2b.node_id, 0) and conv.padding is Padding.VALID
    assert conv.outputs[0].max_sizes == (4, 10, 10, 8)
    assert b2s.inputs[0] == (conv.node_id, 0)
    assert const_of(g, b2s.inputs[2]).ravel().tolist() == [0, 0, 0, 0]
    assert b2s.inputs[3:] == conv.inputs[10:12]


def test_conv_2d_builder_5x5_stride2_per_channel_split_in_32_channels(model_path):
    # conv_2d_helpers.cc CheckShouldSplitDwConv, conv_2d_builder.cc BuildSplittedDwConv
    path = model_path("depthwise_5x5_s2")
    m = read_model(path)
    w = m.tensor(m.operators[0].inputs[1])
    g = import_tflite(path)
    split, concat = one(g, "QuantizedSplit_8"), one(g, "QuantizedConcat_8")
    convs = ops(g, "DepthwiseSupernode_8x8p32to8")
    assert len(convs) == 2 and len(split.outputs) == 4
    assert const_of(g, split.inputs[0]).ravel().tolist() == [3]
    flipped = w.data.view(np.uint8).reshape(5, 5, 64, 1) ^ 0x80
    for i, conv in enumerate(convs):
        assert conv.inputs[0] == (split.node_id, i) and len(conv.inputs) == 13
        np.testing.assert_array_equal(const_of(g, conv.inputs[1]),
                                      flipped[:, :, 32 * i:32 * (i + 1), :])
        assert shape_of(g, conv.inputs[12]) == (1, 1, 1, 32)
    assert concat.inputs[1:3] == ((convs[0].node_id, 0), (convs[1].node_id, 0))
    assert len(concat.inputs) == 1 + 2 * 3 + 2


def test_matmul_builder_fc_weights_xor_bias_add_and_requantize(model_path):
    # matmul_builder.cc MatMulWithConstWeightsOpBuilder: NHWC -> NHCW, int8 XOR 0x80
    path = model_path("fully_connected")
    m = read_model(path)
    (op,) = m.operators
    w, bias = m.tensor(op.inputs[1]), m.tensor(op.inputs[2])
    g = import_tflite(path)
    mm = one(g, "QuantizedMatMul_8x8to32")
    got = const_of(g, mm.inputs[1])
    assert got.shape == (1, 1, 16, 10)
    np.testing.assert_array_equal(got[0, 0], w.data.T.view(np.uint8) ^ 0x80)
    badd = one(g, "QuantizedBiasAdd_32p32to32")
    assert badd.inputs[0] == (mm.node_id, 0)
    np.testing.assert_array_equal(const_of(g, badd.inputs[1]).ravel(), bias.data)
    assert (scalar(g, badd.inputs[4]), scalar(g, badd.inputs[5])) == _range(bias)
    assert one(g, "Requantize_32to8").inputs[0] == (badd.node_id, 0)


def test_pool_2d_builder_windows_strides_and_avg_requantize(model_path):
    # pool_2d_builder.cc: window/stride consts (1,h,w,1); AvgPool then Requantize_8to8
    g = import_tflite(model_path("pools"))
    mp, ap = one(g, "QuantizedMaxPool_8"), one(g, "QuantizedAvgPool_8")
    assert shape_of(g, mp.inputs[3]) == (1, 2, 2, 1) and shape_of(g, mp.inputs[4]) == (1, 2, 2, 1)
    assert mp.padding is Padding.VALID and ap.padding is Padding.SAME
    assert ap.inputs[0] == (mp.node_id, 0)
    assert shape_of(g, ap.inputs[4]) == (1, 1, 1, 1)
    assert one(g, "Requantize_8to8").inputs[0] == (ap.node_id, 0)


def test_concat_builder_axis_inputs_ranges(model_path):
    # concat_builder.cc: axis (4-D), the inputs, their minima, their maxima
    g = import_tflite(model_path("concat"))
    cc = one(g, "QuantizedConcat_8")
    assert const_of(g, cc.inputs[0]).ravel().tolist() == [3]
    assert len(cc.inputs) == 7
    assert all(g.node(r[0]).op != "Const" for r in cc.inputs[1:3])


def test_reshape_and_softmax_builders(model_path):
    # reshape_builder.cc: data + int32 shape Const (1,1,1,n), one output;
    # softmax_builder.cc: data, min, max, beta
    g = import_tflite(model_path("reshape_softmax"))
    rs, sm = one(g, "Reshape"), one(g, "QuantizedSoftmax_8")
    assert const_of(g, rs.inputs[1]).ravel().tolist() == [1, 32]
    assert len(rs.outputs) == 1 and rs.outputs[0].max_sizes == (1, 1, 1, 32)
    assert sm.inputs[0] == (rs.node_id, 0) and scalar(g, sm.inputs[3]) == 1.0
    assert len(sm.inputs) == 4


def test_pad_and_mean_builders(model_path):
    # pad_builder.cc: data, min, max, paddings (the tensor's own Const);
    # reduce_builder.cc: data, min, max, axes, out min, out max; then Requantize_8to8
    path = model_path("resize_pad_mean")
    m = read_model(path)
    pad_op, mean_op = m.operators[1], m.operators[2]
    g = import_tflite(path)
    pad, mean = one(g, "QuantizedPad_8"), one(g, "QuantizedMean_8")
    np.testing.assert_array_equal(const_of(g, pad.inputs[3]).reshape(4, 2),
                                  m.tensor(pad_op.inputs[1]).data)
    assert mean.inputs[0] == (pad.node_id, 0) and len(mean.inputs) == 6
    np.testing.assert_array_equal(const_of(g, mean.inputs[3]).ravel(),
                                  m.tensor(mean_op.inputs[1]).data)
    req = one(g, "Requantize_8to8")
    assert req.inputs[:3] == ((mean.node_id, 0), (mean.node_id, 1), (mean.node_id, 2))
    assert req.inputs[3:] == mean.inputs[4:6]
    assert mean.outputs[1].elementsize == 1      # as the delegate declares them


def test_resize_builders(model_path):
    # resize_bilinear_builder.cc: data, size (1,1,1,2), min, max, align_corners;
    # resize_nearest_neighbor_builder.cc: data, size, min, max, align_corners, half_pixel
    g = import_tflite(model_path("resize"))
    bl, nn = one(g, "QuantizedResizeBilinear_8"), one(g, "ResizeNearestNeighbor_8")
    assert const_of(g, bl.inputs[1]).ravel().tolist() == [8, 8]
    assert shape_of(g, bl.inputs[1]) == (1, 1, 1, 2) and len(bl.inputs) == 5
    assert const_of(g, bl.inputs[4]).ravel().tolist() == [0]
    assert nn.inputs[0] == (bl.node_id, 0) and len(nn.inputs) == 6
    assert const_of(g, nn.inputs[1]).ravel().tolist() == [12, 12]
    assert [const_of(g, r).ravel().tolist() for r in nn.inputs[4:]] == [[0], [0]]


def test_hardswish_and_min_max_builders(model_path):
    # hardswish_builder.cc: data, min, max, out min, out max;
    # min_max_builder.cc: a, b, a min/max, b min/max, out min/max
    g = import_tflite(model_path("hard_swish"))
    hs = one(g, "QuantizedHardSwish_8")
    assert len(hs.inputs) == 5 and g.node(hs.inputs[0][0]).op == "Supernode_8x8p32to8"
    g = import_tflite(model_path("min_max"))
    mx = one(g, "QuantizedMaximum_8")
    assert len(mx.inputs) == 8 and not ops(g, "Requantize_8to8")


def test_split_space_to_depth_transpose_builders(model_path):
    # split_builder.cc: axis (4-D), data, min, max; outputs, then one min and one max;
    # space_to_depth_builder.cc: data, block size, min, max; transpose_builder.cc: data,
    # permutation, min, max. DEPTH_TO_SPACE v2 is refused (utils.cc: v1 only); TFLite's
    # greedy partitioning (graph_info.cc) still gathers TRANSPOSE, on the other branch, into
    # the first partition, and leaves CONCATENATION alone after the CPU's DEPTH_TO_SPACE
    path = model_path("layout")
    g = import_tflite(path)
    assert g.meta["tflite"]["partition"] == [0, 1, 3]
    split, s2d, tr = (one(g, k) for k in ("QuantizedSplit_8", "SpaceToDepth_8", "Transpose_8"))
    assert const_of(g, split.inputs[0]).ravel().tolist() == [3]
    assert len(split.outputs) == 4 and split.outputs[0].max_sizes == (1, 4, 4, 4)
    assert s2d.inputs[0] == (split.node_id, 0) and tr.inputs[0] == (split.node_id, 1)
    assert const_of(g, s2d.inputs[1]).ravel().tolist() == [2]
    assert const_of(g, tr.inputs[1]).ravel().tolist() == [0, 2, 1, 3] and len(tr.inputs) == 4
    # both branches leave the partition: OUTPUT has the space-to-depth and transpose results
    assert len(one(g, "OUTPUT").inputs) == 2


def test_mirror_pad_slice_l2norm_quantize_pack_builders(model_path):
    # mirror_pad_builder.cc: paddings (1,1,4,2) with the leading dimensions' zeros, the mode
    # as the node's padding; slice_builder.cc: begins and sizes (1,1,1,rank);
    # l2_normalization_builder.cc: data, min, max; quantize_builder.cc: QUANTIZE as
    # Requantize_8to8 with the input's and the output's range; pack_builder.cc: axis in 4-D,
    # inputs, minima, maxima, always a Requantize_8to8
    path = model_path("pad_slice_pack")
    m = read_model(path)
    g = import_tflite(path)
    mp = one(g, "MirrorPad_8")
    assert mp.padding is Padding.MIRROR_REFLECT
    assert const_of(g, mp.inputs[1]).ravel().tolist() == [0, 0, 1, 1, 1, 1, 0, 0]
    sl = one(g, "QuantizedSlice_8")
    assert const_of(g, sl.inputs[1]).ravel().tolist() == [0, 1, 0, 0]
    assert const_of(g, sl.inputs[2]).ravel().tolist() == [1, 4, 5, 4]
    l2 = one(g, "L2Normalize_8")
    assert l2.inputs[0] == (sl.node_id, 0) and len(l2.inputs) == 3
    quantize_op = next(o for o in m.operators if o.code == "QUANTIZE")
    q = next(n for n in ops(g, "Requantize_8to8")
             if g.meta["tflite"]["op_index"][f"0x{n.node_id:x}"] == quantize_op.index)
    assert q.inputs[0] == (l2.node_id, 0) and len(q.inputs) == 5
    assert (scalar(g, q.inputs[3]), scalar(g, q.inputs[4])) == \
        _range(m.tensor(quantize_op.outputs[0]))
    pack = one(g, "QuantizedPack_8")
    assert const_of(g, pack.inputs[0]).ravel().tolist() == [3] and len(pack.inputs) == 7
    assert any(r.inputs[0] == (pack.node_id, 0) for r in ops(g, "Requantize_8to8"))


def test_arg_max_builder_axis_and_int32_output(model_path):
    # arg_min_max_builder.cc: data, axis (made positive, not shifted to 4-D), min, max; one
    # output of the output type's size; no cast at OUTPUT for int32
    g = import_tflite(model_path("argmax"))
    am = one(g, "ArgMax_8toInt32")
    assert const_of(g, am.inputs[1]).ravel().tolist() == [3]
    assert len(am.inputs) == 4 and len(am.outputs) == 1 and am.outputs[0].elementsize == 4
    assert one(g, "OUTPUT").inputs == ((am.node_id, 0),)


def test_transpose_conv_builder(model_path):
    # transpose_conv_2d_builder.cc: data, weights (OHWI as stored, XOR 0x80), data and weight
    # ranges, paddings (1,1,2,2) from ComputePaddingHeightWidth on the output (8x8, 3x3,
    # stride 2, SAME: ((4 - 1) * 2 + 3 - 8) // 2 = 0), stride, zero bias with one zero
    # range Const, output range, channel scales
    path = model_path("transpose_conv")
    m = read_model(path)
    w = m.tensor(m.operators[0].inputs[1])
    g = import_tflite(path)
    tc = one(g, "QuantizedTransposeConv2d_8x8p32to8")
    assert len(tc.inputs) == 14
    np.testing.assert_array_equal(const_of(g, tc.inputs[1]), w.data.view(np.uint8) ^ 0x80)
    assert const_of(g, tc.inputs[6]).ravel().tolist() == [0, 0, 0, 0]
    assert shape_of(g, tc.inputs[7]) == (1, 2, 2, 1)
    assert const_of(g, tc.inputs[8]).ravel().tolist() == [0] * 6
    assert tc.inputs[9] == tc.inputs[10] and scalar(g, tc.inputs[9]) == 0.0
    assert shape_of(g, tc.inputs[13]) == (1, 1, 1, 6)
