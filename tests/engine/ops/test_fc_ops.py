"""Issue 25's ops on hand-computed vectors and properties: QuantizedBiasAdd_32p32to32,
Requantize_32to8, Requantize_8to8, SuperFC_8x8p32to8, QuantizedMul_8x8to32, SpaceToBatchND_8,
BatchToSpaceND_8 (nnlib's C files named in each op's doc), and the delegate-only
Quantized_CastInt8ToUInt8, Quantized_CastUInt8ToInt8 and QuantizedHardSwish_8 (not in nnlib
2.x: defined from the TFLite delegate's builders)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor


def w(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def t(values, dtype: DType, shape=None) -> Tensor:
    a = np.asarray(values, {DType.QUINT8: np.uint8, DType.QINT8: np.int8}.get(dtype, np.int32))
    return Tensor.from_array(a.reshape(shape or (1, 1, 1, -1)), dtype)


def run(op: str, *inputs: Tensor) -> list[np.ndarray]:
    outs = REGISTRY.get(op).kernel(KernelContext(0x20, op), *inputs)
    return [np.asarray(o.array if isinstance(o, Tensor) else o) for o in outs]


def flat(a: np.ndarray) -> list:
    return a.reshape(-1).tolist()


# QuantizedBiasAdd_32p32to32 (op_biasadd.c biasadd_32p32to32_execute) ------------------------

def test_biasadd32_rescales_the_bias_to_the_input_step_and_wraps():
    # bias step / x step = 4 / 2 = 2: bias codes [3, 4] become [6, 8]
    y, mn, mx = run("QuantizedBiasAdd_32p32to32", t([10, -20], DType.QINT32),
                    t([3, 4], DType.QINT32), w(-1), w(1), w(-2), w(2))
    assert flat(y) == [16, -12] and float(mn.ravel()[0]) == -1 and float(mx.ravel()[0]) == 1
    # the add wraps in 32 bits (vaddw)
    y, _, _ = run("QuantizedBiasAdd_32p32to32", t([2**31 - 1], DType.QINT32),
                  t([1], DType.QINT32), w(-1), w(1), w(-1), w(1))
    assert flat(y) == [-2**31]
    # rescaling rounds half to even (fast_roundf): ratio 0.5 -> 1.5 -> 2, 2.5 -> 2
    y, _, _ = run("QuantizedBiasAdd_32p32to32", t([0, 0], DType.QINT32),
                  t([3, 5], DType.QINT32), w(-2), w(2), w(-1), w(1))
    assert flat(y) == [2, 2]


def test_biasadd32_refuses_a_bias_of_another_depth():
    with pytest.raises(KernelError, match="depth mismatch"):
        run("QuantizedBiasAdd_32p32to32", t([1, 2], DType.QINT32), t([1], DType.QINT32),
            w(-1), w(1), w(-1), w(1))


# Requantize_32to8 (op_requantize.c do_requantize_execute) -----------------------------------

def test_requantize_32to8_into_a_given_range():
    # step 2**-31: code 2**30 is 0.5 -> code 127.5 of [0, 1], rounded up; -0.5 clamps to 0
    y, mn, mx = run("Requantize_32to8", t([2**30, -2**30, 0], DType.QINT32),
                    w(-1), w(1), w(0), w(1))
    assert flat(y) == [128, 0, 0]
    assert (float(mn.ravel()[0]), float(mx.ravel()[0])) == (0.0, 1.0)


def test_requantize_32to8_nudges_the_range_to_hold_zero():
    _, mn, mx = run("Requantize_32to8", t([0], DType.QINT32), w(-1), w(1), w(0.5), w(2))
    assert float(mn.ravel()[0]) == 0.0 and float(mx.ravel()[0]) == 2.0


# Requantize_8to8 (op_requantize.c do_requantize_8to8_execute, quantize.c) -------------------

def test_requantize_8to8_gain_two_doubles_and_saturates():
    # gain 255 / 127.5 = 2: frac 0.5 -> gi 16384, shift 15 - 2 = 13: (x*16384 + 4096) >> 13
    y, mn, mx = run("Requantize_8to8", t([0, 1, 100, 200], DType.QUINT8), w(0), w(255),
                    w(0), w(127.5))
    assert flat(y) == [0, 2, 200, 255]
    assert (float(mn.ravel()[0]), float(mx.ravel()[0])) == (0.0, 127.5)


def test_requantize_8to8_gain_half_rounds_up_at_the_half():
    # gi = 16384: (2*d*16384 + 32768) >> 16 = (d + 1) >> 1
    y, _, _ = run("Requantize_8to8", t([0, 1, 2, 3, 4], DType.QUINT8), w(0), w(255),
                  w(0), w(510))
    assert flat(y) == [0, 1, 1, 2, 2]


def test_requantize_8to8_negative_gain_uses_minus_one_on_odd_lanes():
    # input range [1, 0]: gain -1 -> gi -32768; in_offset 255; the odd halfword lanes take
    # the upper half of gi | gi << 16, which is -1
    y, _, _ = run("Requantize_8to8", t([255, 255, 0, 0], DType.QUINT8), w(1), w(0),
                  w(0), w(1))
    assert flat(y) == [0, 0, 255, 0]


def test_requantize_8to8_refuses_inexact_and_too_small_output_ranges():
    with pytest.raises(KernelError, match="integer zero code"):
        run("Requantize_8to8", t([1], DType.QUINT8), w(0), w(1), w(-1), w(3))
    with pytest.raises(KernelError, match="too small"):
        run("Requantize_8to8", t([1], DType.QUINT8), w(0), w(255), w(0), w(0.001))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=40), st.floats(0.1, 100))
def test_requantize_8to8_to_its_own_range_is_the_identity(codes, hi):
    lo_hi = np.float32(hi)
    y, _, _ = run("Requantize_8to8", t(codes, DType.QUINT8), w(0), w(lo_hi), w(0), w(lo_hi))
    assert flat(y) == codes


# SuperFC_8x8p32to8 (op_superfc_d32.c superfc_execute_ref) -----------------------------------

def _superfc(out_lo: float, out_hi: float) -> list:
    return run("SuperFC_8x8p32to8", t([1, 2], DType.QUINT8),
               t([3, 4], DType.QUINT8, (1, 1, 2, 1)), w(0), w(255), w(0), w(255),
               t([0], DType.QINT32), w(-1), w(1), w(out_lo), w(out_hi))


def test_superfc_fixed_range_gives_the_dot_product():
    y, mn, mx = _superfc(0, 255)        # 1*3 + 2*4 = 11 in steps of 1
    assert flat(y) == [11] and y.shape == (1, 1, 1, 1)
    assert (float(mn.ravel()[0]), float(mx.ravel()[0])) == (0.0, 255.0)


def test_superfc_auto_range_is_the_sums_range_and_a_gain_above_one_saturates():
    # [min(0, 11), max(0, 11)] = [0, 11]; the output step 11/255 is finer than the sums'
    # step 1, so the 31-bit gain fast_roundf(23.2 * 2**31) saturates to 2**31 - 1 (a gain
    # of 1): the code stays 11, as nnlib's C computes it (not 255)
    y, mn, mx = _superfc(-np.inf, np.inf)
    assert flat(y) == [11]
    assert (float(mn.ravel()[0]), float(mx.ravel()[0])) == (0.0, 11.0)


def test_superfc_refuses_weights_that_do_not_divide_the_input():
    with pytest.raises(KernelError, match="does not match input shape"):
        run("SuperFC_8x8p32to8", t([1, 2, 3], DType.QUINT8),
            t([3, 4], DType.QUINT8, (1, 1, 2, 1)), w(0), w(255), w(0), w(255),
            t([0], DType.QINT32), w(-1), w(1), w(0), w(255))


# QuantizedMul_8x8to32 (op_addsubmul_8to32.c mul_832_execute) --------------------------------

def test_mul_8x8to32_is_the_centred_product_times_128():
    # za = zb = 0 on [0, 255]; the range M = 1 * 1 * 2**24
    y, mn, mx = run("QuantizedMul_8x8to32", t([0, 3, 255], DType.QUINT8),
                    t([255], DType.QUINT8), w(0), w(255), w(0), w(255))
    assert flat(y) == [0, 3 * 255 * 128, 255 * 255 * 128]
    assert (float(mn.ravel()[0]), float(mx.ravel()[0])) == (-2.0**24, 2.0**24)


def test_mul_8x8to32_refuses_incompatible_shapes():
    with pytest.raises(KernelError, match="incompatible shapes"):
        run("QuantizedMul_8x8to32", t([1, 2], DType.QUINT8), t([1, 2, 3], DType.QUINT8),
            w(0), w(255), w(0), w(255))


# SpaceToBatchND_8 / BatchToSpaceND_8 (op_batchspace.c) --------------------------------------

def _i32(values, shape) -> Tensor:
    return Tensor.from_array(np.asarray(values, np.int32).reshape(shape), DType.INT32)


def test_space_to_batch_splits_a_2x2_image_into_4_batches():
    y, _, _ = run("SpaceToBatchND_8", t([1, 2, 3, 4], DType.QUINT8, (1, 2, 2, 1)),
                  _i32([2, 2], (1, 1, 1, 2)), _i32([0, 0, 0, 0], (1, 1, 2, 2)), w(0), w(255))
    assert y.shape == (4, 1, 1, 1) and flat(y) == [1, 2, 3, 4]


def test_space_to_batch_pads_with_the_zero_code():
    # range [-1, 1]: the zero code is 128; one row padded on top, block height 2
    y, _, _ = run("SpaceToBatchND_8", t([7], DType.QUINT8, (1, 1, 1, 1)),
                  _i32([2], (1, 1, 1, 1)), _i32([1, 0], (1, 1, 1, 2)), w(-1), w(1))
    assert y.shape == (2, 1, 1, 1) and flat(y) == [128, 7]


def test_batch_to_space_crops():
    y, _, _ = run("BatchToSpaceND_8", t([128, 7], DType.QUINT8, (2, 1, 1, 1)),
                  _i32([2], (1, 1, 1, 1)), _i32([1, 0], (1, 1, 1, 2)), w(-1), w(1))
    assert y.shape == (1, 1, 1, 1) and flat(y) == [7]


def test_space_batch_refuse_what_the_device_refuses():
    x = t(range(6), DType.QUINT8, (1, 3, 2, 1))
    with pytest.raises(KernelError, match="height not evenly divisible"):
        run("SpaceToBatchND_8", x, _i32([2, 1], (1, 1, 1, 2)), _i32([0] * 4, (1, 1, 2, 2)),
            w(0), w(1))
    with pytest.raises(KernelError, match="bad pad shape"):
        run("SpaceToBatchND_8", x, _i32([1, 1], (1, 1, 1, 2)), _i32([0, 0], (1, 1, 1, 2)),
            w(0), w(1))
    with pytest.raises(KernelError, match="batches not evenly divisible"):
        run("BatchToSpaceND_8", x, _i32([2, 1], (1, 1, 1, 2)), _i32([0] * 4, (1, 1, 2, 2)),
            w(0), w(1))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.integers(0, 2), st.integers(0, 2), st.integers(1, 5), st.data())
def test_batch_to_space_undoes_space_to_batch(b, sh, sw, d, top, left, hh, data):
    h = sh * hh - top                     # padded height a multiple of the block
    w_ = sw * data.draw(st.integers(1, 3)) - left
    if h < 1 or w_ < 1:
        return
    codes = np.arange(b * h * w_ * d).astype(np.uint8).reshape(b, h, w_, d)
    block, pad = _i32([sh, sw], (1, 1, 1, 2)), _i32([top, 0, left, 0], (1, 1, 2, 2))
    s, _, _ = run("SpaceToBatchND_8", t(codes, DType.QUINT8, codes.shape), block, pad,
                  w(0), w(255))
    back, _, _ = run("BatchToSpaceND_8", t(s, DType.QUINT8, s.shape), block, pad, w(0), w(255))
    assert np.array_equal(back, codes)


# The delegate-only ops (not in nnlib 2.x) ----------------------------------------------------

def test_casts_flip_the_sign_bit_and_keep_the_range():
    y, mn, mx = run("Quantized_CastInt8ToUInt8", t([-128, -1, 0, 127], DType.QINT8), w(-2),
                    w(3))
    assert flat(y) == [0, 127, 128, 255] and y.dtype == np.uint8
    assert (float(mn.ravel()[0]), float(mx.ravel()[0])) == (-2.0, 3.0)
    back, _, _ = run("Quantized_CastUInt8ToInt8", t(flat(y), DType.QUINT8), w(-2), w(3))
    assert flat(back) == [-128, -1, 0, 127] and back.dtype == np.int8


@settings(max_examples=40, deadline=None)
@given(codes=st.lists(st.integers(-128, 127), min_size=1, max_size=300),
       shape=st.sampled_from([(1, 1, 1, -1), (1, -1, 1, 1)]))
def test_casts_add_128_wrapping_and_round_trip(codes, shape):
    """Every code c of either type becomes (c + 128) mod 256 read in the other type."""
    y, _, _ = run("Quantized_CastInt8ToUInt8", t(codes, DType.QINT8, shape), w(-1), w(1))
    assert flat(y) == [c + 128 for c in codes] and y.shape == np.reshape(codes, shape).shape
    u = [c + 128 for c in codes]
    back, _, _ = run("Quantized_CastUInt8ToInt8", t(u, DType.QUINT8, shape), w(-1), w(1))
    assert flat(back) == codes and back.dtype == np.int8


def test_casts_are_declared_as_delegate_ops_not_in_nnlib():
    for name in ("Quantized_CastInt8ToUInt8", "Quantized_CastUInt8ToInt8",
                 "QuantizedHardSwish_8"):
        spec = REGISTRY.get(name)
        assert spec.user and "not in nnlib 2.x" in spec.source and "not in nnlib 2.x" in spec.doc


def test_hardswish_on_hand_computed_codes():
    # x range [-10, 245]: step 1, zero code 10, so code c is c - 10; out range [-1, 254]:
    # step 1, code = hs + 1. hs(-10) = 0, hs(-3) = 0, hs(-2) = -1/3, hs(1) = 2/3,
    # hs(2) = 5/3, hs(3) = 3, hs(100) = 100
    y, mn, mx = run("QuantizedHardSwish_8", t([0, 7, 8, 11, 12, 13, 110], DType.QUINT8),
                    w(-10), w(245), w(-1), w(254))
    assert flat(y) == [1, 1, 1, 2, 3, 4, 101]
    assert (float(mn.ravel()[0]), float(mx.ravel()[0])) == (-1.0, 254.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-2**31, 2**31 - 1), min_size=1, max_size=12), st.data())
def test_biasadd32_with_a_zero_bias_is_the_identity(codes, data):
    bias = [0] * len(codes)
    lo = data.draw(st.floats(-100, -0.015625, width=32))
    y, mn, mx = run("QuantizedBiasAdd_32p32to32", t(codes, DType.QINT32),
                    t(bias, DType.QINT32), w(lo), w(-lo), w(-1), w(1))
    assert flat(y) == codes and float(mn.ravel()[0]) == np.float32(lo)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=12), st.integers(0, 255),
       st.floats(-10, -0.125, width=32), st.floats(0.125, 10, width=32))
def test_mul_8x8to32_is_commutative_with_its_ranges(codes, b, lo, hi):
    one = run("QuantizedMul_8x8to32", t(codes, DType.QUINT8), t([b], DType.QUINT8),
              w(lo), w(hi), w(0), w(255))
    two = run("QuantizedMul_8x8to32", t([b], DType.QUINT8), t(codes, DType.QUINT8),
              w(0), w(255), w(lo), w(hi))
    assert all(np.array_equal(p, q) for p, q in zip(one, two, strict=True))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(513, 3000),
       st.floats(-3.0, 40000.0, width=32), st.integers(0, 255), st.integers(0, 255))
def test_requantize_8to8_table_is_the_lane_arithmetic(seed, n, gain, in_off, out_off):
    # the lookup Requantize_8to8 runs gives, lane by lane, what the 16-bit lane arithmetic
    # gives, odd lanes included (a negative gain makes them differ: gi_odd = -1)
    from hexscope.engine.ops.quant.requantize_fixed import (
        requantize_u8_by_table,
        requantize_u8_lanes,
    )

    codes = np.random.default_rng(seed).integers(0, 256, n).astype(np.uint8)
    g = np.float32(gain)
    assert np.array_equal(requantize_u8_by_table(codes, g, in_off, out_off),
                          requantize_u8_lanes(codes, g, in_off, out_off))
