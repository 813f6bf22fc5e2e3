"""QuantizedResizeBilinear_8_d32 (op_resizebilinear_d32.c): the fixed-point general path,
the exact-2x path and the same-size copy, hand-computed; the padding it writes; and how far
it is from the flat op's float32 (measured: at most 1 code)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.d32.resize_bilinear import h_taps, quantized_resize_bilinear_8_d32, v_taps
from hexscope.engine.ops.resize.bilinear import quantized_resize_bilinear_8
from hexscope.engine.tensor import Tensor

FILL = 0x33
IN_PAD = 7


def _i32(*v: int) -> Tensor:
    return Tensor.from_array(np.array(v, np.int32).reshape(1, 1, 1, -1), DType.INT32)


def _ctx() -> KernelContext:
    return KernelContext(3, "QuantizedResizeBilinear_8_d32", padding_fill=FILL,
                         output_defs=(OutputDef(()),) * 3)


def _resize(x, new, align=0, pad=None, ctx=None):
    t = Tensor.from_array(np.asarray(x, np.uint8), DType.QUINT8).to_d32(pad, fill=IN_PAD)
    y, _, _ = quantized_resize_bilinear_8_d32(ctx or _ctx(), t, _i32(*new),
                                             Tensor.scalar(np.float32(0)),
                                             Tensor.scalar(np.float32(1)), _i32(align))
    return y


def test_general_path_by_hand():
    # columns: step 2**31, fractions 0, 16384 (0.5), then clamped: h = 0, 6400, 12800 -> codes
    # (h + 64) >> 7 = 0, 50, 100, 100
    y = _resize(np.array([0, 100]).reshape(1, 1, 2, 1), (1, 4))
    np.testing.assert_array_equal(y.array.reshape(-1), [0, 50, 100, 100])
    cols, frac = h_taps(2, 4, False)
    np.testing.assert_array_equal(cols, [0, 0, 1, 1])
    np.testing.assert_array_equal(frac, [0, 16384, 0, 0])


def test_general_path_seven_bit_row_weight_is_a_code_below_the_float():
    # rows: step round(2**33 / 3) = 2863311531; row 1 weight (2**24 + step) >> 25 = 85:
    # 255 * 85 = 21675 -> (21675 + 64) >> 7 = 169, where the flat op's float gives 170
    rows, beta = v_taps(2, 3, False)
    np.testing.assert_array_equal(rows, [0, 0, 1])
    np.testing.assert_array_equal(beta, [0, 85, 0])
    x = np.array([0, 255]).reshape(1, 2, 1, 1)
    y = _resize(x, (3, 1))
    np.testing.assert_array_equal(y.array.reshape(-1), [0, 169, 255])
    flat, _, _ = quantized_resize_bilinear_8(
        _ctx(), Tensor.from_array(x.astype(np.uint8), DType.QUINT8), _i32(3, 1),
        Tensor.scalar(np.float32(0)), Tensor.scalar(np.float32(1)))
    np.testing.assert_array_equal(np.asarray(flat).reshape(-1), [0, 170, 255])


def test_x2_path_by_hand_with_its_averages():
    x = np.array([[0, 101], [200, 51]]).reshape(1, 2, 2, 1)
    y = _resize(x, (4, 4))
    np.testing.assert_array_equal(y.array[0, :, :, 0], [[0, 50, 101, 101],
                                                        [100, 88, 76, 76],
                                                        [200, 125, 51, 51],
                                                        [200, 125, 51, 51]])


def test_x2_path_with_a_gutter_writes_the_width_before_padding():
    x = np.array([[0, 101]]).reshape(1, 1, 2, 1)
    y = _resize(x, (2, 4), pad=D32Padding(0, 0, 2, 0, 0, 31))
    assert y.padding == D32Padding(0, 0, 4, 0, 0, 31)
    # input row with its 2 padding pixels: 7, 7, 0, 101 -> 7, 7, 7, 3, 0, 50, 101, 101
    np.testing.assert_array_equal(y.memory[0, 0, 0, :, 0], [7, 7, 7, 3, 0, 50, 101, 101])
    assert (y.memory[0, 0, 0, :, 1:] == IN_PAD).all()     # depth padding lanes, averaged


def test_general_path_padding_repeats_the_last_column_and_leaves_the_rest():
    y = _resize(np.array([10, 20, 30]).reshape(1, 1, 3, 1), (1, 5))
    assert y.padding == D32Padding(4, 4, 4, 3, 0, 31)
    row = y.memory[0, 4, 0, :, 0]
    assert (row[:4] == FILL).all()
    assert (row[9:12] == row[8]).all() and row[8] == 30
    assert (y.memory[0, :4] == FILL).all()


def test_same_size_copies_the_input_bytes_and_padding():
    pad = D32Padding(1, 2, 3, 3, 0, 30)
    x = np.arange(12).reshape(1, 3, 2, 2)
    t = Tensor.from_array(x.astype(np.uint8), DType.QUINT8).to_d32(pad, fill=IN_PAD)
    y = _resize(x, (3, 2), pad=pad)
    assert y.padding == pad and np.array_equal(y.buffer, t.buffer)


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 2), h=st.integers(1, 6), w=st.integers(1, 6), d=st.integers(1, 40),
       nh=st.integers(2, 13), nw=st.integers(2, 13), align=st.integers(0, 1),
       x2=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_within_one_code_of_the_flat_op(b, h, w, d, nh, nw, align, x2, seed):
    if x2:
        nh, nw = 2 * h, 2 * w
    x = np.random.default_rng(seed).integers(0, 256, (b, h, w, d), np.uint8)
    y = _resize(x, (nh, nw), align)
    try:
        flat, _, _ = quantized_resize_bilinear_8(
            _ctx(), Tensor.from_array(x, DType.QUINT8), _i32(nh, nw),
            Tensor.scalar(np.float32(0)), Tensor.scalar(np.float32(1)), _i32(align))
    except KernelError:
        assume(False)       # the flat op's align_corners 4x path refuses depth > 2
    assert np.abs(y.array.astype(int) - np.asarray(flat).astype(int)).max() <= 1


@pytest.mark.parametrize(("new", "message"), [((0, 3), "didn't get scaling plan"),
                                              ((-1, 3), "failure preparing output")])
def test_errors(new, message):
    with pytest.raises(KernelError, match=message):
        _resize(np.zeros((1, 2, 2, 1)), new)


def test_x2_odd_rows_truncate_in_the_main_loop_and_round_in_the_last_vector():
    # resizebilinear_d32_h.S: width 5 -> one 4-column vector in the main loop (vavg, which
    # truncates) and the last column in the tail vector (vavg:rnd). Rows 0 and 1 differ by 1
    # everywhere, so each odd row shows which average was taken (nnlib's HVX code under
    # QEMU, docs/oracle-hvx.md).
    x = np.array([[10, 20, 30, 40, 50], [11, 21, 31, 41, 51]]).reshape(1, 2, 5, 1)
    y = _resize(x, (4, 10), pad=D32Padding(0, 0, 4, 3, 0, 31))
    row1 = y.array[0, 1, :, 0]
    # columns 0..7 from input columns 0..3: (a + b) >> 1 of 10/11, 15/16 ... -> trunc
    np.testing.assert_array_equal(row1[:8], [10, 15, 20, 25, 30, 35, 40, 45])
    # columns 8, 9 from input column 4 (the tail): (50 + 51 + 1) >> 1 = 51
    np.testing.assert_array_equal(row1[8:], [51, 51])
    # an odd width's last vector store writes one padding column (the input's padding) twice
    assert (y.memory[0, 0, 0, 4 + 10:4 + 12] == IN_PAD).all()
