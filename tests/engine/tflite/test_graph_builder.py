"""The delegate's GraphBuilder restated (engine/io/tflite/graph_builder.py; facts from
tensorflow/lite/delegates/hexagon/builders/op_builder.cc and op_builder.h)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from hexscope.engine.io.tflite.graph_builder import GraphBuilder, dims4, min_max
from hexscope.engine.io.tflite.model import Quantization, TfModel, TfTensor


@given(scale=st.floats(1e-6, 10.0), zp=st.integers(-128, 127))
def test_min_max_spans_255_steps_of_the_scale_around_zero(scale, zp):
    # op_builder.h ComputeMinAndMaxQuantValues: scale * (qmin - zp), scale * (qmax - zp)
    t = TfTensor(0, "t", (1,), "int8", Quantization((scale,), (zp,)))
    lo, hi = min_max(t)
    assert lo.dtype == np.float32 and hi.dtype == np.float32
    assert lo <= 0 <= hi
    assert abs(float(hi - lo) / 255 - scale) <= 1e-6 * scale


def test_min_max_hand_computed():
    t = TfTensor(0, "t", (1,), "uint8", Quantization((0.5,), (10,)))
    assert min_max(t) == (np.float32(-5.0), np.float32(122.5))
    b = TfTensor(0, "b", (4,), "int32", Quantization((0.25,), (0,)))
    assert min_max(b) == (np.float32(-(2.0**29)), np.float32(2.0**29))   # float32(2^31 - 1)


def test_dims4_pads_on_the_left():
    # op_builder.h GetDims
    assert dims4((10, 16)) == (1, 1, 10, 16) and dims4((2, 3, 4, 5)) == (2, 3, 4, 5)


def test_const_cache_ids_and_order():
    # op_builder.cc AddConstNodeWithData: one node per (shape, bytes); ids count every
    # builder from 1; GraphBuilder::Build appends the non-consts after every const
    model = TfModel("m", (), (), (), ())
    b = GraphBuilder(model)
    inp = b.add_node("INPUT")
    one = b.scalar(1.0)
    op = b.add_node("Nop")
    op.inputs.append((one.node_id, 0))
    again = b.scalar(1.0)
    other = b.const(np.array([1.0], np.float32), (1, 1, 1, 1), shape_only=False)
    assert again is one and other is one and (inp.node_id, one.node_id, op.node_id) == (1, 2, 3)
    assert b.const(np.array([1.0, 1.0], np.float32), (1, 1, 2, 1)) is not one
    graph = b.to_graph()
    assert [n.op for n in graph] == ["Const", "Const", "INPUT", "Nop"]


def test_a_stride_and_a_scalar_int_zero_of_its_shape_are_one_const_with_the_bytes():
    # a stride-1 window's shape Const carries the delegate's dummy int 0 (op_builder.cc
    # AddConstNodeWithData(shape, &dummy, sizeof(dummy))), so RESIZE_BILINEAR's align_corners
    # 0 of shape (1,1,1,1) is the same node; made shape-only first, the resize read no data
    # ("reads the data of shape-only const", MediaPipe's selfie segmentation)
    b = GraphBuilder(TfModel("m", (), (), (), ()))
    stride = b.const(np.zeros(1, np.int32), (1, 1, 1, 1), "stride", shape_only=True)
    align = b.const(np.array([0], np.int32), (1, 1, 1, 1), "align_corners")
    assert align is stride and stride.const is not None and stride.const_shape is None
    (node,) = list(b.to_graph())
    assert node.const.shape == (1, 1, 1, 1) and node.const.array.reshape(-1).tolist() == [0]
    # made with its bytes first, the stride reuses them as before
    b = GraphBuilder(TfModel("m", (), (), (), ()))
    align = b.const(np.array([0], np.int32), (1, 1, 1, 1), "align_corners")
    assert b.const(np.zeros(1, np.int32), (1, 1, 1, 1), "stride", shape_only=True) is align


def _relu_model(out_scale: float, out_zp: int) -> TfModel:
    from hexscope.engine.io.tflite.model import TfOperator

    x = TfTensor(0, "conv", (1, 4, 4, 2), "int8", Quantization((0.07,), (-1,)))
    y = TfTensor(1, "relu", (1, 4, 4, 2), "int8", Quantization((out_scale,), (out_zp,)))
    return TfModel("relu.tflite", (x, y), (TfOperator(0, "RELU", 2, (0,), (1,)),), (0,), (1,))


def test_a_relu_whose_output_range_is_not_its_inputs_is_warned():
    """activation_builder.cc gives QuantizedRelu_8 the input's range and no requantize; op_relu.c
    copies it to the outputs; the next builders read the codes with the RELU tensor's range.
    Input [-8.89, 8.96] (0.07, zp -1); output [0, 3.04] (0.0119, zp -128): the minima 8.89 /
    0.0119 = 746 steps apart."""
    from hexscope.engine.io.tflite.importer import build_graph, choose_partition
    from hexscope.engine.io.tflite.support import delegation

    model = _relu_model(0.01191925, -128)
    b = build_graph(model, choose_partition(model, delegation(model)))
    (note,) = [n for n in b.notes if "RELU" in n]
    assert "operator 0 RELU (v2)" in note and "activation_builder.cc" in note
    assert "[0, 3.03941]" in note and "746 steps apart" in note
    # the same range as the input (what a fused or range-keeping quantizer gives): no note
    same = _relu_model(0.07, -1)
    assert not [n for n in build_graph(same, choose_partition(same, delegation(same))).notes
                if "RELU" in n]
