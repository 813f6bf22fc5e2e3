"""Issue 26's shape and resize ops by hand and by property (nnlib's C sources named per test;
the oracle's golden vectors are replayed in test_shape_oracle.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError, NodeError
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor


def u8(values, shape=None) -> Tensor:
    a = np.asarray(values, np.uint8)
    return Tensor.from_array(a.reshape(shape) if shape else a, DType.QUINT8)


def i32(values) -> Tensor:
    return Tensor.from_array(np.asarray(values, np.int32))


def f(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def run(op: str, *inputs: Tensor, padding: Padding = Padding.NA, n_out: int = 3,
        decl: tuple[int, int, int, int] | None = None, refs=None):
    defs = tuple(OutputDef(decl, 1) if decl and k == 0 else OutputDef(()) for k in range(n_out))
    ctx = KernelContext(node_id=0x20, op=op, padding=padding, output_defs=defs,
                        input_refs=refs or tuple((0x100 + k, 0) for k in range(len(inputs))))
    outs = REGISTRY.get(op).kernel(ctx, *inputs)
    return [np.asarray(o.array if isinstance(o, Tensor) else o) for o in outs], ctx


RANGE = (f(-1.0), f(1.0))


# -- QuantizedPad_8 (op_pad.c pad_q_execute) ------------------------------------------------
def test_pad_backfills_the_last_dimensions_with_the_quantized_zero():
    # [[1, 2]] is one row: depth 1 before, 2 after; 0.0 in [-1, 1] is code 128 (127.5 rounded)
    (y, mn, mx), _ = run("QuantizedPad_8", u8([5, 6], (1, 1, 2, 1)), *RANGE, i32([[1, 2]]))
    assert y.shape == (1, 1, 2, 4)
    assert y.reshape(-1).tolist() == [128, 5, 128, 128, 128, 6, 128, 128]
    assert mn.reshape(-1)[0] == -1.0 and mx.reshape(-1)[0] == 1.0


@pytest.mark.parametrize("value, code", [(-1.0, 0), (1.0, 255), (float("inf"), 255),
                                          (-float("inf"), 0), (1.0078, 255)])
def test_pad_value_codes(value, code):
    (y, _, _), _ = run("QuantizedPad_8", u8([9]), *RANGE, i32([[0, 1]]), f(value))
    assert y.reshape(-1).tolist() == [9, code]


def test_pad_value_far_outside_the_range_fails():
    with pytest.raises(KernelError, match="Pad value outside the range"):
        run("QuantizedPad_8", u8([9]), *RANGE, i32([[0, 1]]), f(1.1))
    with pytest.raises(KernelError, match=r"Pad value \(1.007800\) is outside"):
        run("QuantizedPad_8", u8([9]), *RANGE, i32([[0, 1]]), f(1.0078), i32([1]))


def test_pad_errors_are_nnlibs():
    with pytest.raises(KernelError, match="bad pad tensor"):
        run("QuantizedPad_8", u8([9]), *RANGE, i32([1, 2, 3]))
    with pytest.raises(KernelError, match="pad bad tensor"):
        run("QuantizedPad_8", u8([9]), *RANGE, i32([[0, -1]]))
    with pytest.raises(KernelError, match="out too small"):
        run("QuantizedPad_8", u8([9] * 200), *RANGE, i32([[0, 100]]), decl=(1, 1, 1, 200))


# -- MirrorPad_8 (op_mirrorpad.c) -------------------------------------------------------------
PADS = i32([[0, 0], [0, 0], [0, 0], [2, 2]])


@pytest.mark.parametrize("padding, want", [(Padding.MIRROR_REFLECT, [3, 2, 1, 2, 3, 2, 1]),
                                           (Padding.MIRROR_SYMMETRIC, [2, 1, 1, 2, 3, 3, 2])])
def test_mirror_pad_modes(padding, want):
    (y, _, _), _ = run("MirrorPad_8", u8([1, 2, 3]), PADS, *RANGE, padding=padding)
    assert y.reshape(-1).tolist() == want


def test_mirror_pad_rejects_a_pad_as_large_as_the_dimension_and_other_paddings():
    with pytest.raises(KernelError, match=r"depth too small \(3>=3\)"):
        run("MirrorPad_8", u8([1, 2, 3]), i32([[0, 0]] * 3 + [[3, 0]]), *RANGE,
            padding=Padding.MIRROR_SYMMETRIC)
    with pytest.raises(KernelError, match="bad mirror pad type"):
        run("MirrorPad_8", u8([1, 2, 3]), PADS, *RANGE, padding=Padding.SAME)
    with pytest.raises(KernelError, match="bad pad shape"):
        run("MirrorPad_8", u8([1, 2, 3]), i32([[0, 0]]), *RANGE,
            padding=Padding.MIRROR_REFLECT)


# -- Reshape, Transpose_8 ------------------------------------------------------------------
def test_reshape_infers_the_negative_dimension_and_keeps_bytes_and_type():
    x = Tensor.from_array(np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4))
    (y,), _ = run("Reshape", x, i32([2, -1, 3]), n_out=1)
    assert y.shape == (1, 2, 2, 3) and y.dtype == np.float32
    assert y.reshape(-1).tolist() == list(range(12))
    with pytest.raises(KernelError, match="too many unknown"):
        run("Reshape", x, i32([-1, -1]), n_out=1)
    with pytest.raises(KernelError, match="size mismatch"):
        run("Reshape", x, i32([5]), n_out=1)
    with pytest.raises(KernelError, match="can't determine unknown dim"):
        run("Reshape", x, i32([5, -1]), n_out=1)


def test_transpose_permutes_the_last_dimensions():
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    (y, _, _), _ = run("Transpose_8", u8(x), i32([2, 0, 1]), *RANGE)
    np.testing.assert_array_equal(y, x.transpose(0, 3, 1, 2))
    with pytest.raises(KernelError, match="bad transpose control"):
        run("Transpose_8", u8(x), i32([0, 0]), *RANGE)


# -- QuantizedSplit_8, QuantizedSlice_8, QuantizedStridedSlice_8 -----------------------------
def test_split_axis_negative_uneven_and_same_wire_convention():
    x = np.arange(12, dtype=np.uint8).reshape(1, 1, 2, 6)
    (a, b, c, _, _), _ = run("QuantizedSplit_8", i32([-1]), u8(x), *RANGE, n_out=5)
    assert a.reshape(-1).tolist() == [0, 1, 6, 7] and c.reshape(-1).tolist() == [4, 5, 10, 11]
    with pytest.raises(KernelError, match="uneven split: 2 / 3"):
        run("QuantizedSplit_8", i32([2]), u8(x), *RANGE, n_out=5)
    with pytest.raises(KernelError, match="out of range"):
        run("QuantizedSplit_8", i32([4]), u8(x), *RANGE, n_out=5)
    # inputs 0 and 1 wired to the same output: a depth split, whatever the data says
    refs = ((0x10, 0), (0x10, 0), (0x11, 0), (0x12, 0))
    (a, _, _, _, _), _ = run("QuantizedSplit_8", u8(x), u8(x), *RANGE, n_out=5, refs=refs)
    assert a.reshape(-1).tolist() == [0, 1, 6, 7]


def test_slice_minus_one_runs_to_the_end_and_a_negative_start_fails():
    x = np.arange(10, dtype=np.uint8)
    (y, _, _), _ = run("QuantizedSlice_8", u8(x), i32([3]), i32([-1]), *RANGE)
    assert y.reshape(-1).tolist() == list(range(3, 10))
    with pytest.raises(KernelError, match="bad d_size"):
        run("QuantizedSlice_8", u8(x), i32([3]), i32([0]), *RANGE)
    with pytest.raises(KernelError, match="read before the input"):
        run("QuantizedSlice_8", u8(x), i32([-2]), i32([3]), *RANGE)


def test_slice_reproduces_nnlibs_batch_stride():
    """op_slice.c: batch b lands at b * h_out_stride * w_size (h_size meant); 2 batches of
    h 1 x w 2 x d 1 go to bytes 0-1 and 4-5 of a 4-byte output: bytes 2-3 never written."""
    x = np.arange(2 * 3 * 4 * 3, dtype=np.uint8).reshape(2, 3, 4, 3)
    (y, _, _), ctx = run("QuantizedSlice_8", u8(x), i32([0, 1, 0, 0]), i32([2, 1, 2, 1]),
                         *RANGE)
    fill = ctx.padding_fill
    assert y.reshape(-1).tolist() == [x[0, 1, 0, 0], x[0, 1, 1, 0], fill, fill]
    assert any("b_out_stride" in w for w in ctx.warnings)


def test_strided_slice_masks_are_fixed_to_dimensions():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.uint8).reshape(2, 3, 4, 5)
    # start/stop/step for (W, D); begin mask bit 2 (width) starts W at 0; shrink bit 3 (depth)
    (y, _, _), _ = run("QuantizedStridedSlice_8", u8(x), i32([2, 1]), i32([4, 3]), i32([1, 1]),
                       i32([4]), i32([0]), i32([8]), *RANGE)
    np.testing.assert_array_equal(y, x[:, :, 0:4, 1].reshape(1, 2, 3, 4))
    (y, _, _), _ = run("QuantizedStridedSlice_8", u8(x), i32([-1]), i32([-6]), i32([-2]),
                       i32([0]), i32([0]), i32([0]), *RANGE)
    np.testing.assert_array_equal(y, x[..., 4::-2])
    with pytest.raises(KernelError, match="no output"):
        run("QuantizedStridedSlice_8", u8(x), i32([3]), i32([1]), i32([1]), i32([0]), i32([0]),
            i32([0]), *RANGE)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_strided_slice_equals_numpy_slicing_without_masks(data):
    shape = tuple(data.draw(st.integers(1, 5)) for _ in range(4))
    x = np.arange(int(np.prod(shape)), dtype=np.int64).astype(np.uint8).reshape(shape)
    starts = [data.draw(st.integers(0, n - 1)) for n in shape]
    steps = [data.draw(st.sampled_from([1, 2, 3])) for _ in shape]
    stops = [data.draw(st.integers(a + 1, n)) for a, n in zip(starts, shape, strict=True)]
    (y, _, _), _ = run("QuantizedStridedSlice_8", u8(x), i32(starts), i32(stops), i32(steps),
                       i32([0]), i32([0]), i32([0]), *RANGE)
    want = x[tuple(slice(a, b, s) for a, b, s in zip(starts, stops, steps, strict=True))]
    np.testing.assert_array_equal(y, want)


# -- QuantizedPack_8 ----------------------------------------------------------------------
def test_pack_counts_the_dimension_in_the_first_inputs_rank_and_merges_ranges():
    a, b = u8([10, 20], (1, 1, 1, 2)), u8([30, 40], (1, 1, 1, 2))
    # apparent rank 1 -> at least 3: dim 0 is dimension 0 + 3 - 3 = batches
    (y, mn, mx), _ = run("QuantizedPack_8", i32([0]), a, b, f(-1), f(-1), f(1), f(1))
    assert y.shape == (2, 1, 1, 2) and y.reshape(-1).tolist() == [10, 20, 30, 40]
    # ranges [0, 1] and [0, 2]: the first is rescaled by half (gain 16384)
    (y, mn, mx), _ = run("QuantizedPack_8", i32([-1]), a, b, f(0), f(0), f(1), f(2))
    assert float(mx.reshape(-1)[0]) == 2.0 and y.shape == (1, 1, 2, 2)
    assert y.reshape(-1).tolist() == [5, 30, 10, 40]
    with pytest.raises(KernelError, match="bad pack dim"):
        run("QuantizedPack_8", i32([4]), a, b, f(0), f(0), f(1), f(1))


# -- SpaceToDepth_8, DepthToSpace_8 ------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.integers(1, 4))
def test_depth_to_space_undoes_space_to_depth(bh, bw, oh, ow, d):
    x = np.random.default_rng(bh * 7 + bw).integers(0, 256, (2, oh * bh, ow * bw, d),
                                                    dtype=np.uint8)
    (s, _, _), _ = run("SpaceToDepth_8", u8(x), i32([bh, bw]), *RANGE)
    assert s.shape == (2, oh, ow, bh * bw * d)
    (back, _, _), _ = run("DepthToSpace_8", u8(s), i32([bh, bw]), *RANGE)
    np.testing.assert_array_equal(back, x)


def test_depth_to_space_crops_and_checks():
    x = np.arange(8, dtype=np.uint8).reshape(1, 1, 2, 4)     # -> 2 x 4 x 1
    (y, _, _), _ = run("DepthToSpace_8", u8(x), i32([2]), *RANGE, i32([0, 1, 1, 0]))
    assert y.reshape(-1).tolist() == [1, 4, 5]
    with pytest.raises(KernelError, match="cropping leaves no output"):
        run("DepthToSpace_8", u8(x), i32([2]), *RANGE, i32([2, 0, 0, 0]))
    with pytest.raises(KernelError, match="depth must be multiple"):
        run("DepthToSpace_8", u8(x), i32([3]), *RANGE)


# -- ResizeNearestNeighbor_8 (op_resizenear.c) -------------------------------------------
def test_resize_nearest_truncates_or_rounds_with_align_corners():
    x = u8([10, 20, 30], (1, 1, 3, 1))
    (y, _, _), _ = run("ResizeNearestNeighbor_8", x, i32([1, 5]), *RANGE)
    assert y.reshape(-1).tolist() == [10, 10, 20, 20, 30]     # trunc(i * 0.6)
    # align_corners: scale (3-1)/(5-1) = 0.5 needs both new sizes > 1 (height is 1 here),
    # so the scale stays 0.6 but positions round: 0, 0.6, 1.2, 1.8, 2.4 -> 0, 1, 1, 2, 2
    (y, _, _), _ = run("ResizeNearestNeighbor_8", x, i32([1, 5]), *RANGE, i32([1]))
    assert y.reshape(-1).tolist() == [10, 20, 20, 30, 30]
    (y, _, _), _ = run("ResizeNearestNeighbor_8", u8([10, 20, 30, 40, 50, 60], (1, 2, 3, 1)),
                       i32([2, 5]), *RANGE, i32([1]))
    assert y.reshape(2, 5)[0].tolist() == [10, 20, 20, 30, 30]    # round(i * 0.5), half up


def test_resize_bilinear_blends_in_float32_and_rounds_half_up():
    x = u8([0, 100, 255, 1], (1, 2, 2, 1))
    (y, _, _), _ = run("QuantizedResizeBilinear_8", x, i32([2, 4]), *RANGE)
    # columns at 0, 0.5, 1, 1.5 (the last two capped at column 1); rows 0 and 1
    assert y.reshape(2, 4).tolist() == [[0, 50, 100, 100], [255, 128, 1, 1]]
    (y, _, _), _ = run("QuantizedResizeBilinear_8", x, i32([2, 2]), *RANGE)   # same size: copy
    assert y.reshape(-1).tolist() == [0, 100, 255, 1]
    with pytest.raises(KernelError, match="divide by zero"):
        run("QuantizedResizeBilinear_8", x, i32([1, 3]), *RANGE, i32([1]))


# -- QuantizedPad_8_d32 (op_pad_d32.c) -------------------------------------------------------
def test_pad_d32_logical_values_and_what_it_leaves_in_the_padding():
    x = Tensor.from_array(np.array([[7, 8], [9, 10]], np.uint8).reshape(1, 2, 2, 1),
                          DType.QUINT8).to_d32(fill=0x33)
    ctx = KernelContext(node_id=1, op="QuantizedPad_8_d32")
    y, mn, mx = REGISTRY.get("QuantizedPad_8_d32").kernel(
        ctx, x, f(0.0), f(255.0), i32([[1, 0], [0, 2], [0, 0]]), f(5.0))
    assert tuple(y.padding) == (4, 4, 4, 0, 0, 31)      # width 2 + 2 = 4: 4 + 4 + 0
    assert y.array.reshape(3, 4).tolist() == [[5, 5, 5, 5], [7, 8, 5, 5], [9, 10, 5, 5]]
    mem = y.padded_array()                               # logical + padding, (b, h, w, d)
    assert mem[0, 3, 4, 0] == ctx.padding_fill          # the row above: never written
    assert mem[0, 5, 4, 1] == 0x33                      # depth lanes copied from the input
    assert (mem[0, 4, 4:8, :] == 5).all()                # pad rows and columns: all 32 lanes
    assert (mem[0, 5:7, 6:8, :] == 5).all()
    with pytest.raises(KernelError, match="can't pad in depth"):
        REGISTRY.get("QuantizedPad_8_d32").kernel(ctx, x, f(0.0), f(1.0), i32([[0, 1]]))


def test_mirror_pad_d32_moves_whole_lanes_and_keeps_nnlibs_bottom_pointer():
    x = np.arange(2 * 3 * 2 * 1, dtype=np.uint8).reshape(2, 3, 2, 1) + 1
    t = Tensor.from_array(x, DType.QUINT8).to_d32(fill=0x44)
    ctx = KernelContext(node_id=1, op="MirrorPad_8_d32", padding=Padding.MIRROR_SYMMETRIC)
    pads = i32([[0, 0], [1, 1], [1, 0], [0, 0]])
    y, _, _ = REGISTRY.get("MirrorPad_8_d32").kernel(ctx, t, pads, f(0.0), f(1.0))
    got = y.array
    # batch 0 is the symmetric image; rows and columns of whole lanes (lane 1 is input padding)
    want = np.pad(x[0, :, :, 0], ((1, 1), (1, 0)), mode="symmetric")
    np.testing.assert_array_equal(got[0, :, :, 0], want)
    assert (y.padded_array()[0, 4:9, 4:7, 1] == 0x44).all()
    # batch 1's bottom row is written one row further down in batch 0's memory (nnlib's
    # outp_post_h is not reset per batch): its own bottom row keeps the fill byte
    assert (got[1, -1, :, 0] == ctx.padding_fill).all()
    want1 = np.pad(x[1, :, :, 0], ((1, 1), (1, 0)), mode="symmetric")
    np.testing.assert_array_equal(got[1, :-1, :, 0], want1[:-1])
    with pytest.raises(KernelError, match="Can't pad batches"):
        REGISTRY.get("MirrorPad_8_d32").kernel(ctx, t, i32([[1, 0], [0, 0], [0, 0], [0, 0]]),
                                                f(0.0), f(1.0))


# -- through a session: errors name the node ------------------------------------------------
def test_an_uneven_split_stops_the_run_naming_the_node():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x1, np.array([3], np.int32))
    g.append_const_node(0x2, np.array([0.0], np.float32))
    g.append_const_node(0x3, np.array([1.0], np.float32))
    g.append_node(0x20, "QuantizedSplit_8", inputs=[(0x1, 0), (0x10, 0), (0x2, 0), (0x3, 0)],
                  outputs=4)
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    with pytest.raises(NodeError) as info:
        Session(g, fusions=False).execute([np.arange(5, dtype=np.uint8)])
    assert info.value.node_id == 0x20 and "uneven split: 5 / 2" in info.value.reason
    # prepared, the depth split runs as QuantizedSplit_8_d32, which words it its own way
    with pytest.raises(NodeError) as info:
        Session(g).execute([np.arange(5, dtype=np.uint8)])
    assert info.value.node_id == 0x20 and "can't divide 5 by 2" in info.value.reason


# -- properties: the moves equal numpy's ----------------------------------------------------
_SHAPES = st.tuples(*[st.integers(1, 4)] * 4)


@settings(max_examples=40, deadline=None)
@given(_SHAPES, st.lists(st.integers(0, 3), min_size=8, max_size=8), st.integers(0, 255))
def test_pad_equals_np_pad(shape, pads, value):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).astype(np.uint8).reshape(shape)
    (y, _, _), _ = run("QuantizedPad_8", u8(x), f(0.0), f(255.0),
                       i32(np.array(pads).reshape(4, 2)), f(float(value)))
    np.testing.assert_array_equal(y, np.pad(x, np.array(pads).reshape(4, 2),
                                            constant_values=value))


@settings(max_examples=40, deadline=None)
@given(_SHAPES, st.permutations([0, 1, 2, 3]), st.integers(1, 4))
def test_transpose_equals_np_transpose_of_the_last_dimensions(shape, perm, n):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).astype(np.uint8).reshape(shape)
    p = [v for v in perm if v < n]
    (y, _, _), _ = run("Transpose_8", u8(x), i32(p), *RANGE)
    np.testing.assert_array_equal(y, np.transpose(x, list(range(4 - n)) + [4 - n + k for k in p]))


@settings(max_examples=40, deadline=None)
@given(_SHAPES, st.integers(-4, 3), st.integers(1, 3))
def test_split_equals_np_split(shape, axis, n):
    shape = list(shape)
    shape[axis % 4] *= n
    x = np.arange(int(np.prod(shape)), dtype=np.int64).astype(np.uint8).reshape(shape)
    outs, _ = run("QuantizedSplit_8", i32([axis]), u8(x), *RANGE, n_out=n + 2)
    for got, want in zip(outs[:n], np.split(x, n, axis=axis % 4), strict=True):
        np.testing.assert_array_equal(got, want)
