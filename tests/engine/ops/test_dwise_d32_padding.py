"""What DepthwiseSupernode_8x8p32to8_d32 writes into its output's padding, as nnlib's
depthwise asm does (op_dwise_snode_8bit.c ``dwise_supernode_recalculate_strategy`` and the
dwconv2dbbb_* kernels; checked under qemu-hexagon, docs/oracle-hvx.md)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor

DW = "DepthwiseSupernode_8x8p32to8_d32"
FLAT = "DepthwiseSupernode_8x8p32to8"
# a fixed output range (no search): step 0.5, zero code 64
OUT = (-32.0, 95.5)


def f(v: float) -> Tensor:
    return Tensor.from_array(np.array([v], np.float32))


def _inputs(x: Tensor, filt: tuple[int, int], stride: int, c: int, seed: int = 3,
            fr: tuple[float, float] = (-128.0, 127.0)):
    rng = np.random.default_rng(seed)
    wts = Tensor.from_array(rng.integers(0, 256, (*filt, c, 1), dtype=np.uint8), DType.QUINT8)
    bias = Tensor.from_array(rng.integers(-30, 30, (1, 1, 1, c)).astype(np.int32),
                             DType.QINT32)
    # x step 1 (zero code 0), filter step 1 (zero code 128): product step 1
    return (x, wts, f(0.0), f(255.0), f(fr[0]), f(fr[1]),
            Tensor.shape_only((1, stride, stride, 1)), bias, f(-2.0**30), f(2.0**30),
            f(OUT[0]), f(OUT[1]))


def _x(shape, pad: D32Padding, seed: int = 4) -> Tensor:
    rng = np.random.default_rng(seed)
    flat = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8)
    return flat.to_d32(pad, fill=int(rng.integers(0, 256)))


def _run(op: str, inputs, padding: Padding):
    return REGISTRY.get(op).kernel(KernelContext(1, op, padding=padding), *inputs)


def _mem(y: Tensor) -> np.ndarray:
    return np.asarray(y.raw).reshape(D32Geometry(y.shape, y.padding).memory_shape)


def test_a_last_group_of_4_columns_repeats_its_first_column_into_the_padding():
    # filter 2x5 (not 3x3: computed from the data's first column, 4 columns at a time),
    # VALID, width 9 -> 5 columns; output padding 4 left, 3 right: the group of columns 4..7
    # writes column 4 into the 3 right padding columns
    x = _x((1, 3, 9, 32), D32Padding(4, 4, 4, 7, 0, 0))
    y, _, _ = _run(DW, _inputs(x, (2, 5), 1, 32), Padding.VALID)
    assert tuple(y.padding)[2:4] == (4, 3)
    mem = _mem(y)
    rows = slice(4, 4 + y.shape[1])
    for col in (9, 10, 11):
        assert np.array_equal(mem[0, rows, 0, col], mem[0, rows, 0, 8])
    assert not np.array_equal(mem[0, rows, 0, 8], mem[0, rows, 0, 7])


def test_columns_past_the_right_padding_land_in_the_next_rows_left_padding():
    # filter 3x5, SAME, width 5: output left pad (4 - 2) / 1 = 2, right (-(5 + 2)) & 3 = 1;
    # columns 5..7 of the group 4..7: one in the right padding, two in the next row's
    # left padding (the last row's in the first bottom padding row)
    x = _x((1, 3, 5, 32), D32Padding(4, 4, 4, 7, 0, 0))
    y, _, _ = _run(DW, _inputs(x, (3, 5), 1, 32), Padding.SAME)
    assert tuple(y.padding)[:4] == (4, 4, 2, 1)
    mem = _mem(y)
    for r in range(4, 7):
        last = mem[0, r, 0, 2 + 4]
        assert np.array_equal(mem[0, r, 0, 7], last)
        assert np.array_equal(mem[0, r + 1, 0, 0], last)
        assert np.array_equal(mem[0, r + 1, 0, 1], last)
    assert np.all(mem[0, 8, 0, 2:] == KernelContext(1, DW).padding_fill)


def test_the_3x3_kernels_compute_the_padding_columns_over_the_input_zero_code():
    # 3x3, VALID, stride 1: the whole padded width from its left edge, taps past the data
    # reading the input zero code (0 here): the flat op on the input widened by zeros
    x = _x((1, 4, 6, 32), D32Padding(4, 4, 4, 6, 0, 0))
    inputs = _inputs(x, (3, 3), 1, 32, fr=(-0.2, 0.2))
    y, _, _ = _run(DW, inputs, Padding.VALID)
    pad = y.padding
    assert (pad.w_before, y.shape[1], y.shape[2], pad.w_after) == (4, 2, 4, 0)
    wide = np.zeros((1, 4, 4 + 6, 32), np.uint8)
    wide[:, :, 4:10] = x.array
    want, _, _ = _run(FLAT, (Tensor.from_array(wide, DType.QUINT8), *inputs[1:]),
                      Padding.VALID)
    codes = _mem(y)[0, 4:6, 0]
    assert np.array_equal(codes, want.array[0])
    assert len(np.unique(codes[:, :4])) > 20       # the padding columns: not saturated


def test_depth_padding_lanes_hold_the_code_of_a_zero_sum_and_zero_bias():
    # 8 channels, 24 lanes of depth padding: weights padded with the filter's zero code
    # and a 0 bias: a sum of 0 plus round(-out_min / product step) = 32, requantized with
    # gain 2 (shamt 2, recip 2**30): ((32 << 2) * 2**30 + 2**30) >> 31 = 64, the output's
    # zero code, whatever the input's lanes hold
    for filt in ((3, 3), (2, 5)):
        x = _x((1, 3, 7, 8), D32Padding(4, 4, 4, 5, 0, 24))
        y, _, _ = _run(DW, _inputs(x, filt, 1, 8), Padding.SAME)
        mem = _mem(y)
        data_cols = slice(y.padding.w_before, y.padding.w_before + y.shape[2])
        assert np.all(mem[0, 4:7, 0, data_cols, 8:] == 64)
