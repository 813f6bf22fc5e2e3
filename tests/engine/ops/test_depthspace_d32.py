"""DepthToSpace_8_d32 (op_depthspace_d32.c, setup_x2s_plan and the width-interleave loops):
logical values equal DepthToSpace_8's, nnlib's output padding, and what the whole-vector
stores leave in it (hand-computed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.d32.depthspace import depth_to_space_8_d32
from hexscope.engine.ops.shape.depthspace import depth_to_space_array
from hexscope.engine.tensor import Tensor

FILL = 0x33
IN_PAD = 7


def _i32(*v: int) -> Tensor:
    return Tensor.from_array(np.array(v, np.int32).reshape(1, 1, 1, -1), DType.INT32)


NARROW = D32Padding(0, 0, 0, 3, 0, 0)          # one pixel wide rows: width units 1..3 padding


def _d2s(x, block, crop=None, pad=NARROW, defs=None):
    t = Tensor.from_array(np.asarray(x, np.uint8), DType.QUINT8).to_d32(pad, fill=IN_PAD)
    ctx = KernelContext(5, "DepthToSpace_8_d32", padding_fill=FILL,
                        output_defs=defs or (OutputDef(()),) * 3)
    extra = [_i32(*crop)] if crop is not None else []
    y, mn, mx = depth_to_space_8_d32(ctx, t, _i32(*block), Tensor.scalar(np.float32(-1)),
                                     Tensor.scalar(np.float32(2)), *extra)
    return y, ctx


X128 = np.arange(128, dtype=np.uint8).reshape(1, 1, 1, 128)


def test_d2s_d32_by_hand_width_padding_holds_the_next_columns():
    y, _ = _d2s(X128, [2])
    assert y.shape == (1, 2, 2, 32) and y.padding == D32Padding(4, 4, 4, 2, 0, 0)
    row0, row1 = y.memory[0, 4, 0], y.memory[0, 5, 0]            # (width units, 32)
    np.testing.assert_array_equal(row0[4], range(0, 32))
    np.testing.assert_array_equal(row0[5], range(32, 64))
    np.testing.assert_array_equal(row1[4], range(64, 96))
    # units 6, 7: full-resolution columns 2, 3 = the input's width padding (its pixel 1)
    assert (row0[6:8] == IN_PAD).all() and (row1[6:8] == IN_PAD).all()
    assert (row0[:4] == FILL).all()                                 # width-before: unwritten
    assert (y.memory[0, :4] == FILL).all() and (y.memory[0, 6:] == FILL).all()


def test_d2s_d32_crops_keep_the_cropped_values_in_the_padding():
    y, _ = _d2s(X128, [2], crop=[0, 0, 0, 1])                    # width 2 -> 1
    assert y.shape == (1, 2, 1, 32) and y.padding.w_after == 3
    np.testing.assert_array_equal(y.memory[0, 4, 0, 5], range(32, 64))   # cropped column
    y, _ = _d2s(X128, [2], crop=[0, 0, 0, 0, 20])                # depth 32 -> 20
    assert y.shape == (1, 2, 2, 20) and y.padding.d_after == 12
    np.testing.assert_array_equal(y.memory[0, 4, 0, 4], range(0, 32))    # lanes 20..31 kept
    np.testing.assert_array_equal(y.array[0, 0, 0], range(20))


def test_d2s_d32_last_vector_aligned_from_stale_data():
    # width 2 x bw 2 cropped [1, 2]: one output column; the input has 3 width units before
    # (wpad_mod4 3, discard_w 7): setup_x2s_plan sets wunit_v_at_end -1, and the one stored
    # vector is vlalign(lo(result), hi(result), 32): unit 4 = full-resolution column 1, units
    # 5..7 = the interleave of the input's width-before units 0 and 1 (padding), not
    # columns 2..4 (nnlib's HVX code under QEMU, docs/oracle-hvx.md)
    x = np.arange(128, dtype=np.uint8).reshape(1, 1, 2, 64)
    y, _ = _d2s(x, [1, 2], crop=[0, 0, 1, 2], pad=D32Padding(0, 0, 3, 3, 0, 0))
    assert y.shape == (1, 1, 1, 32)
    np.testing.assert_array_equal(y.memory[0, 1, 0, 4], range(32, 64))
    assert (y.memory[0, 1, 0, 5:8] == IN_PAD).all()


def test_d2s_d32_block_width_8_writes_the_output_width_only():
    # width_interleave_8_loop copies output width x 32 bytes out of its buffer
    x = np.arange(256, dtype=np.uint8).reshape(1, 1, 1, 256)
    y, _ = _d2s(x, [1, 8], crop=[0, 0, 0, 5])
    assert y.shape == (1, 1, 3, 32) and y.padding.w_after == 1
    np.testing.assert_array_equal(y.memory[0, 1, 0, 6], range(64, 96))
    assert (y.memory[0, 1, 0, 7] == FILL).all()


def test_d2s_d32_sixteen_deep_output_and_height_one_padding():
    x = np.arange(64, dtype=np.uint8).reshape(1, 1, 1, 64)
    y, _ = _d2s(x, [2])
    assert y.shape == (1, 2, 2, 16) and y.padding.d_after == 16
    # width_interleave_2_to16_loop shuffles the input vector with itself in 16-byte units:
    # lanes 16..31 repeat lanes 0..15 (nnlib's HVX code under QEMU, docs/oracle-hvx.md)
    np.testing.assert_array_equal(y.memory[0, 4, 0, 5], [*range(16, 32), *range(16, 32)])
    y, _ = _d2s(X128, [1, 4])                                      # height stays 1
    assert y.shape == (1, 1, 4, 32) and y.padding[:2] == (1, 1)


@settings(max_examples=50, deadline=None)
@given(b=st.integers(1, 2), h=st.integers(1, 3), w=st.integers(1, 4),
       bs=st.sampled_from([(1, 1), (2, 2), (1, 3), (3, 2), (2, 4), (1, 8)]),
       nd=st.integers(1, 2), crop=st.tuples(*[st.integers(0, 1)] * 4), cut=st.integers(0, 31),
       seed=st.integers(0, 2**32 - 1))
def test_d2s_d32_logical_values_equal_the_flat_op(b, h, w, bs, nd, crop, cut, seed):
    bh, bw = bs
    od = 32 * nd
    x = np.random.default_rng(seed).integers(0, 256, (b, h, w, od * bh * bw), np.uint8)
    if h * bh - crop[0] - crop[1] < 1 or w * bw - crop[2] - crop[3] < 1:
        return
    y, _ = _d2s(x, [bh, bw], crop=[*crop, od - cut], pad=None)
    want = depth_to_space_array(x, bh, bw, crop)[..., :od - cut]
    np.testing.assert_array_equal(y.array, want)


@pytest.mark.parametrize(("shape", "block", "crop", "message"), [
    ((1, 1, 1, 96), [5], None, "does not divide input depth"),
    ((1, 1, 1, 96), [1, 2], None, "output depth 48 not valid"),
    ((1, 1, 1, 32 * 5), [1, 5], None, "blocksize <= 4 or blocksize = 8"),
    ((1, 1, 1, 128), [2], [0, 0, 0, 0, 40], "can't crop output depth 32 to 40"),
    ((1, 1, 1, 128), [2], [0, 2, 0, 0], "cropping leaves no output"),
    ((1, 1, 1, 128), [2], [0, -1, 0, 0], r"bad crop element\[1\]"),
    ((1, 1, 1, 128), [2], [0, 0, 0], "Bad crop-descriptor tensor"),
    ((1, 1, 1, 128), [0], None, "bad blocksize tensor"),
])
def test_d2s_d32_errors(shape, block, crop, message):
    with pytest.raises(KernelError, match=message):
        _d2s(np.zeros(shape, np.uint8), block, crop, pad=None)


def test_d2s_d32_output_too_small():
    with pytest.raises(KernelError, match="failed to prepare output"):
        _d2s(np.zeros((1, 4, 4, 128), np.uint8), [2], pad=None,
             defs=(OutputDef((1, 1, 1, 32)),) * 3)
