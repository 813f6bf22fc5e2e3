"""Prepare's expansion of QuantizedTransposeConv2d_8x8p32to8 (nnlib prepare.c
create_transpose_conv_nodes → expand_transpose_conv_nodes.c, transpose_conv_procweights.c
process_transpose_conv_filter), then the Supernode fusion of the chain it makes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Session
from hexscope.engine.errors import GraphError
from hexscope.engine.ops.shape.depthspace import depth_to_space_array
from hexscope.engine.prepare import prepare
from hexscope.engine.prepare.transpose_conv import rework_filter
from support.transpose_conv_graph import TC, transpose_conv_graph

UNIT = (0.0, 255.0)          # step 1, zero code 0: codes are the real values


def _run(g, x):
    s = Session(g)
    return s, s.execute([x])[0].array


def _scatter(x: np.ndarray, w: np.ndarray, stride, pads, out_hw) -> np.ndarray:
    """TFLite's reference TransposeConv on integers: every input pixel adds its product with
    the filter [N, fh, fw, D] at (iy sh + ky - top, ix sw + kx - left)."""
    b, h, wd, _ = x.shape
    n, fh, fw, _ = w.shape
    sh, sw = stride
    full = np.zeros((b, (h - 1) * sh + fh, (wd - 1) * sw + fw, n), np.int64)
    for ky in range(fh):
        for kx in range(fw):
            tap = np.einsum("bhwc,nc->bhwn", x.astype(np.int64), w[:, ky, kx].astype(np.int64))
            full[:, ky:ky + (h - 1) * sh + 1:sh, kx:kx + (wd - 1) * sw + 1:sw] += tap
    return full[:, pads[0]:pads[0] + out_hw[0], pads[2]:pads[2] + out_hw[1]]


def test_hand_vector_stride_2_puts_one_scaled_filter_per_input_pixel():
    # x [[1,2],[3,4]], w [[1,2],[3,4]], stride 2: block (i, j) of the 4x4 output is x[i,j] w
    x = np.array([1, 2, 3, 4], np.uint8).reshape(1, 2, 2, 1)
    w = np.array([1, 2, 3, 4], np.uint8).reshape(1, 2, 2, 1)
    g = transpose_conv_graph((1, 2, 2, 1), w, (2, 2), (0, 0, 0, 0), (4, 4), x_range=UNIT,
                             w_range=UNIT, out_range=UNIT)
    _, y = _run(g, x)
    assert y[0, :, :, 0].tolist() == [[1, 2, 2, 4], [3, 4, 6, 8], [3, 6, 4, 8],
                                      [9, 12, 12, 16]]


def test_hand_vector_stride_1_is_the_full_convolution_cropped_by_the_paddings():
    x = np.array([1, 2, 3, 4], np.uint8).reshape(1, 2, 2, 1)
    w = np.array([1, 2, 3, 4], np.uint8).reshape(1, 2, 2, 1)
    g = transpose_conv_graph((1, 2, 2, 1), w, (1, 1), (0, 0, 0, 0), (3, 3), x_range=UNIT,
                             w_range=UNIT, out_range=UNIT)
    _, y = _run(g, x)
    assert y[0, :, :, 0].tolist() == [[1, 4, 4], [6, 20, 16], [9, 24, 16]]
    g = transpose_conv_graph((1, 2, 2, 1), w, (1, 1), (1, 1, 1, 1), (1, 1), x_range=UNIT,
                             w_range=UNIT, out_range=UNIT)
    assert _run(g, x)[1].ravel().tolist() == [20]


def test_the_prepared_graph_is_the_librarys_chain_fused_into_a_supernode():
    w = np.full((3, 3, 3, 2), 200, np.uint8)
    g = transpose_conv_graph((1, 4, 4, 2), w, (2, 2), (1, 1, 1, 1), (8, 8))
    p = prepare(g)
    ops = [p.nodes[i].op for i in p.plan]
    # the Supernode then becomes the input Supernode (input depth 2), d32 out; the
    # DepthToSpace_8 with its 5th crop value becomes DepthToSpace_8_d32 (d32 in and out)
    assert ops == ["INPUT", "QuantizedPad_8", "InputSupernode_8x8p32to8_outd32",
                   "DepthToSpace_8_d32", "Convert_from_d32", "OUTPUT"]
    pad, sn, d2s, back = (p.nodes[i] for i in p.plan[1:5])
    assert d2s.node_id == TC and d2s.outputs == g.node(TC).outputs
    assert d2s.inputs[0] == (sn.node_id, 0) and back.inputs == ((TC, 0),)
    # r = s = 2 taps per sub-filter: 1 row / column of padding each side; stride 1, VALID
    assert p.nodes[pad.inputs[3][0]].const.array.ravel().tolist() == [0, 0, 1, 1, 1, 1, 0, 0]
    wts = p.nodes[sn.inputs[1][0]].const
    assert wts.shape == (2, 2, 2, 4 * 32)          # N = 3 padded to 32 (stride width 2)
    assert p.nodes[sn.inputs[6][0]].const.shape == (1, 1, 1, 1)
    assert sn.padding.name == "VALID"
    # crop: top and left paddings, bottom/right (4 - 1 + 2) * 2 - 1 - 8 = 1, depth N = 3
    assert p.nodes[d2s.inputs[4][0]].const.array.ravel().tolist() == [1, 1, 1, 1, 3]
    # one rewrite for the node: the expansion, then the d32 conversion of its DepthToSpace
    reason = p.rewrite_of(TC).reason
    assert "expand_transpose_conv_nodes" in reason and "QuantizedConv2d_8x8to32" in reason
    assert "; then DepthToSpace_8 becomes DepthToSpace_8_d32" in reason
    assert f"its input the d32 output of 0x{sn.node_id:x}" in reason
    assert {0x15, 0x16, 0x17, 0x18} <= {r.node_id for r in p.rewrites if r.kind == "removed"}
    # the library never hands out an internal id twice: not the fused convolution's
    assert back.node_id not in {r.node_id for r in p.rewrites if r.kind == "fused"}


def test_as_authored_the_depth_crop_is_a_slice_with_the_same_values():
    # no d32 conversion as authored: the flat DepthToSpace_8 refuses a 5th crop value, so
    # a QuantizedSlice_8 keeps the first N channels; the values are the d32 run's. Ranges
    # with zero on a code (128): the d32 input Supernode moves an output range that is not
    # (setup_initial_output_range) and its zero codes come from get_qu8_level_size_zero in
    # float32 ([-1, 1] gives 127), where the as-authored chain's differ
    rng = np.random.default_rng(5)
    w = rng.integers(0, 256, (3, 3, 3, 2), dtype=np.uint8)
    on_code = (-1.0, 127 / 128)
    g = transpose_conv_graph((1, 4, 4, 2), w, (2, 2), (1, 1, 1, 1), (8, 8), x_range=on_code,
                             w_range=on_code, out_range=(-8.0, 8 * 127 / 128))
    p = prepare(g, fusions=False)
    ops = [p.nodes[i].op for i in p.plan]
    assert ops[-3:] == ["DepthToSpace_8", "QuantizedSlice_8", "OUTPUT"]
    d2s = p.nodes[p.plan[-3]]
    assert p.nodes[d2s.inputs[4][0]].const.array.ravel().tolist() == [1, 1, 1, 1]
    assert p.nodes[p.nodes[TC].inputs[2][0]].const.array.ravel().tolist() == [3]
    x = rng.integers(0, 256, (1, 4, 4, 2), dtype=np.uint8)
    flat = Session(g, fusions=False).execute([x])[0].array
    d32 = _run(g, x)[1]
    assert flat.shape == d32.shape == (1, 8, 8, 3)
    np.testing.assert_array_equal(flat, d32)


def test_as_authored_the_chain_stays_unfused():
    w = np.full((2, 3, 3, 1), 9, np.uint8)
    p = prepare(transpose_conv_graph((1, 3, 3, 1), w, (2, 1), (0, 0, 0, 0), (6, 5)),
                fusions=False)
    ops = [p.nodes[i].op for i in p.plan]
    assert ops == ["INPUT", "QuantizedPad_8", "QuantizedConv2d_8x8to32",
                   "QuantizedBiasAdd_32p32to32", "Requantize_32to8", "DepthToSpace_8", "OUTPUT"]


def test_the_reworked_filter_is_the_space_to_batch_of_the_rotated_filter():
    # stride 2x2, a 3x3 filter padded to 4x4 with the zero code 7: sub-filter (i, j) holds
    # taps (2a + i, 2b + j), rotated; output channel (i 2 + j) N + n
    w = np.arange(1, 10, dtype=np.uint8).reshape(1, 3, 3, 1)
    f = rework_filter(w, 2, 2, 7, False)
    assert f.shape == (2, 2, 1, 4)
    assert f[:, :, 0, 0].tolist() == [[9, 7], [3, 1]]        # taps (0,0) (0,2) (2,0) (2,2)
    assert f[:, :, 0, 1].tolist() == [[7, 8], [7, 2]]        # taps (0,1) (2,1), padding
    assert f[:, :, 0, 2].tolist() == [[7, 7], [6, 4]]        # taps (1,0) (1,2), padding
    assert f[:, :, 0, 3].tolist() == [[7, 7], [7, 5]]        # tap (1,1), the rest padding


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([(1, 1), (2, 2), (1, 2), (2, 1), (3, 2),
                                                     (2, 3), (3, 3), (1, 3)]))
def test_the_sums_are_the_exact_integer_transposed_convolution(seed, stride):
    rng = np.random.default_rng(seed)
    h, w_, d, n = (int(v) for v in rng.integers(1, 5, 4))
    fh, fw = (int(v) for v in rng.integers(1, 5, 2))
    sh, sw = stride
    full_h, full_w = (h - 1) * sh + fh, (w_ - 1) * sw + fw
    top, left = int(rng.integers(0, min(fh, sh + 1))), int(rng.integers(0, min(fw, sw + 1)))
    oh, ow = full_h - top - int(rng.integers(0, 2)), full_w - left - int(rng.integers(0, 2))
    oh, ow = max(oh, 1), max(ow, 1)
    pads = (top, full_h - top - oh, left, full_w - left - ow)
    if min(pads) < 0 or (stride == (1, 1) and (max(pads[:2]) >= fh or max(pads[2:]) >= fw)):
        return          # the device fails those (see the test below)
    x = rng.integers(0, 256, (1, h, w_, d), dtype=np.uint8)
    wts = rng.integers(0, 256, (n, fh, fw, d), dtype=np.uint8)
    # zero codes 64 (data) and 128 (filter), exact in both ranges
    g = transpose_conv_graph((1, h, w_, d), wts, stride, pads, (oh, ow),
                             x_range=(-64.0, 191.0), w_range=(-128.0, 127.0))
    p = prepare(g, fusions=False)
    conv = next(i for i in p.plan if p.nodes[i].op == "QuantizedConv2d_8x8to32")
    sums = _conv_sums(g, x, p, conv)
    want = _scatter(x.astype(np.int64) - 64, wts.astype(np.int64) - 128, stride, pads, (oh, ow))
    if sh * sw > 1:
        k = sums.shape[3]
        crop = tuple(int(v) for v in
                     p.nodes[p.nodes[next(i for i in p.plan if p.nodes[i].op ==
                                          "DepthToSpace_8")].inputs[4][0]].const.array.ravel())
        sums = depth_to_space_array(sums, sh, sw, crop)[..., :n]
        assert k % (sh * sw) == 0
    np.testing.assert_array_equal(sums, want)


def _conv_sums(g, x, p, conv):
    s = Session(g, fusions=False)
    s.execute([x])
    return s.output(conv).array.astype(np.int64)


def test_a_filter_that_is_not_const_fails_prepare_naming_the_node():
    w = np.full((1, 2, 2, 1), 3, np.uint8)
    g = transpose_conv_graph((1, 2, 2, 1), w, (2, 2), (0, 0, 0, 0), (4, 4))
    node = g.node(TC)
    g.replace_node(node.with_(inputs=(node.inputs[0], (0x10, 0), *node.inputs[2:])))
    with pytest.raises(GraphError, match="0x40.*input 1 .filter. must be a Const"):
        prepare(g)


def test_at_stride_1_a_padding_past_the_filter_fails_in_the_pad_as_on_the_device():
    # r - 1 - bottom = -1: the library's uint32 padding wraps, and QuantizedPad_8 refuses it
    w = np.full((1, 1, 1, 1), 3, np.uint8)
    g = transpose_conv_graph((1, 2, 2, 1), w, (1, 1), (0, 1, 0, 0), (1, 2))
    with pytest.raises(Exception, match="pad bad tensor"):
        _run(g, np.ones((1, 2, 2, 1), np.uint8))


def test_groups_are_not_expanded_and_the_node_refuses_to_run_with_a_note():
    w = np.full((2, 2, 2, 1), 3, np.uint8)
    g = transpose_conv_graph((1, 2, 2, 2), w, (2, 2), (0, 0, 0, 0), (4, 4))
    g.append_const_node(0x1E, np.array([2], np.int32).reshape(1, 1, 1, 1))
    g.append_const_node(0x1D, np.ones(2, np.float32).reshape(1, 1, 1, 2))
    node = g.node(TC)
    g.replace_node(node.with_(inputs=(*node.inputs, (0x1D, 0), (0x1E, 0))))
    p = prepare(g)
    assert p.nodes[TC].op == "QuantizedTransposeConv2d_8x8p32to8"
    # expand_transpose_conv_nodes.c: groups == input depth == output depth (2 here, the
    # weights' batches) is its depthwise path, split in sub-kernels for the 2x2 stride
    note = next(n for n in p.notes if n.startswith("0x40"))
    assert "in 2 groups (input 14) is not expanded" in note
    assert "(expand_transpose_conv_nodes.c, expand_transpose_conv_nodes) takes its " \
           "depthwise case" in note and "split in sub-kernels" in note
    with pytest.raises(Exception, match="not simulated.*2 groups"):
        _run(g, np.ones((1, 2, 2, 2), np.uint8))


def test_a_grouped_transpose_conv_names_the_split_path():
    # 2 groups on an input depth of 6 (output depth 2): neither depthwise case, so the
    # library splits the padded input per group and concatenates (cases 3-4)
    w = np.full((2, 2, 2, 3), 3, np.uint8)
    g = transpose_conv_graph((1, 2, 2, 6), w, (1, 1), (0, 0, 0, 0), (3, 3))
    g.append_const_node(0x1E, np.array([2], np.int32).reshape(1, 1, 1, 1))
    g.append_const_node(0x1D, np.ones(2, np.float32).reshape(1, 1, 1, 2))
    node = g.node(TC)
    g.replace_node(node.with_(inputs=(*node.inputs, (0x1D, 0), (0x1E, 0))))
    note = next(n for n in prepare(g).notes if n.startswith("0x40"))
    assert "its grouped case: the padded input split in 2 on depth" in note
    assert "QuantizedConcat_8" in note and "DepthToSpace" not in note


def test_a_channel_multiplier_transpose_conv_names_its_depthwise_path():
    # input depth 4 == 2 groups == 2 x output depth 2, filter 2x2 at stride 1:
    # (2 * 2) / 1 < 7 and 2 / 1 >= 2, the library's channel-multiplier depthwise (cases 7-8)
    w = np.full((2, 2, 2, 2), 3, np.uint8)
    g = transpose_conv_graph((1, 2, 2, 4), w, (1, 1), (0, 0, 0, 0), (3, 3))
    g.append_const_node(0x1E, np.array([2], np.int32).reshape(1, 1, 1, 1))
    g.append_const_node(0x1D, np.ones(2, np.float32).reshape(1, 1, 1, 2))
    node = g.node(TC)
    g.replace_node(node.with_(inputs=(*node.inputs, (0x1D, 0), (0x1E, 0))))
    note = next(n for n in prepare(g).notes if n.startswith("0x40"))
    assert "its channel-multiplier depthwise case" in note


def test_channel_scales_go_to_the_supernode_once_per_sub_filter():
    w = np.full((2, 2, 2, 1), 3, np.uint8)
    g = transpose_conv_graph((1, 2, 2, 1), w, (2, 1), (0, 0, 0, 0), (4, 3),
                             scales=np.array([0.5, 1.0], np.float32))
    p = prepare(g, fusions=False)
    sn = next(p.nodes[i] for i in p.plan if p.nodes[i].op == "Supernode_8x8p32to8")
    # flat Supernode: prepare folds the scales into the weights and leaves a scalar 1.0
    assert float(p.nodes[sn.inputs[12][0]].const.array.reshape(-1)[0]) == 1.0
    # stride width 1: no padding of N; K = 2 x 1 x 2 channels
    assert p.nodes[sn.inputs[1][0]].const.shape == (1, 2, 1, 4)
