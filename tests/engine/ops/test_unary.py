"""QuantizedNeg_8, QuantizedSqrt_8, QuantizedTanh_8, QuantizedSigmoid_8 (nnlib op_neg.c,
op_sqrt.c, op_tanh_d32.c): hand-computed vectors and properties. The oracle's golden cases are
replayed in test_ops26a_golden.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.elementwise.tanh import (
    TANH_MAX,
    quantized_sigmoid_8,
    quantized_tanh_8,
    scaling,
)
from hexscope.engine.ops.elementwise.unary import (
    SQRT_TABLE,
    quantized_neg_8,
    quantized_neg_8_d32,
    quantized_sqrt_8,
)
from hexscope.engine.tensor import Tensor


def _call(kernel, codes, lo, hi):
    ctx = KernelContext(0x30, "op")
    x = Tensor.from_array(np.asarray(codes, np.uint8).reshape(1, 1, 1, -1), DType.QUINT8)
    y, mn, mx = kernel(ctx, x, Tensor.scalar(np.float32(lo)), Tensor.scalar(np.float32(hi)))
    return np.asarray(y).reshape(-1).tolist(), float(np.asarray(mn).reshape(-1)[0]), \
        float(np.asarray(mx).reshape(-1)[0])


def test_neg_is_the_complement_in_the_mirrored_range():
    # op_neg.c: OPER_1SCOMP and (min, max) -> (-max, -min)
    assert _call(quantized_neg_8, [0, 1, 127, 255], -1.0, 3.0) == ([255, 254, 128, 0], -3.0, 1.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=40),
       st.floats(-100, 0, width=32), st.floats(0.5, 100, width=32))
def test_neg_negates_the_real_values(codes, lo, hi):
    y, mn, mx = _call(quantized_neg_8, codes, lo, hi)
    step_in = (np.float64(hi) - lo) / 255
    before = lo + np.array(codes) * step_in
    after = mn + np.array(y) * ((np.float64(mx) - mn) / 255)
    np.testing.assert_allclose(after, -before, atol=1e-4 * (hi - lo))


def test_sqrt_table_by_hand_and_range():
    # round(sqrt(255 q)): q=1 -> 15.97 -> 16; q=2 -> 22.58 -> 23; q=64 -> 127.75 -> 128
    assert SQRT_TABLE[[0, 1, 2, 64, 255]].tolist() == [0, 16, 23, 128, 255]
    y, mn, mx = _call(quantized_sqrt_8, [0, 1, 2, 64, 255], 0.0, 4.0)
    assert (y, mn, mx) == ([0, 16, 23, 128, 255], 0.0, 2.0)


def test_sqrt_rejects_a_negative_min_but_not_minus_zero():
    with pytest.raises(KernelError, match="does not support negative numbers"):
        _call(quantized_sqrt_8, [1], -0.5, 1.0)
    assert _call(quantized_sqrt_8, [4], -0.0, 1.0)[0] == [32]


def test_tanh_by_hand():
    # range [-4, 4]: zero code round(127.5) = 128; gain 8/255 * 10240 = 321.3 -> shift 6,
    # k = round(321.3 * 64) = 20560. Code 127: d = -1, x = (20560 + 32) >> 6 = 321 (segment
    # 0, residue 321): ((-7994*321 + 16384) >> 15) + 26172 = 26094, ((26094*321*4 + 16384)
    # >> 15) + 0 = 1022; negated ~1022 = -1023; (-1023 + 32512 + 1) >> 1 = 15745;
    # (15745 + 64) >> 7 = 123. Code 128 is the zero: (32513 >> 1 + 64) >> 7 = 127. Code
    # 255: x saturates at 32767 (segment 15, residue 2047) -> 32404 -> 254.
    assert scaling(-4.0, 4.0, False) == (128, 20560, 6)
    y, mn, mx = _call(quantized_tanh_8, [0, 127, 128, 255], -4.0, 4.0)
    assert y == [0, 123, 127, 254]
    assert (mn, mx) == (-1.0, float(TANH_MAX)) and float(TANH_MAX) == float(np.float32(128 / 127))


def test_sigmoid_by_hand():
    # range [-10, 10]: half the gain: k = 25700, shift 6. Code 128 is the zero: (255*128 + 1)
    # >> 1 = 16320 -> (16320 + 64) >> 7 = 128. Code 127: x = (25700 + 32) >> 6 = 402;
    # ((-8026*402 + 16384) >> 15) + 26275 = 26177; ((26177*402*4 + 16384) >> 15) = 1285;
    # ~1285 = -1286; (-1286 + 32641) >> 1 = 15677; (15677 + 64) >> 7 = 122.
    assert scaling(-10.0, 10.0, True) == (128, 25700, 6)
    y, mn, mx = _call(quantized_sigmoid_8, [0, 127, 128, 255], -10.0, 10.0)
    assert y == [0, 122, 128, 255] and (mn, mx) == (0.0, 1.0)


@settings(max_examples=40, deadline=None)
@given(st.floats(-20, 0, width=32), st.floats(0.125, 20, width=32))
def test_tanh_and_sigmoid_are_monotonic_and_close_to_the_true_function(lo, hi):
    # the device takes its rounded zero code as exactly 0: up to half an input step off,
    # plus the segment fit and the output rounding
    codes = np.arange(256)
    step = (np.float64(hi) - lo) / 255
    v = lo + codes * step
    for kernel, want, slope in ((quantized_tanh_8, (np.tanh(v) + 1) * 127, 127),
                                (quantized_sigmoid_8, 255 / (1 + np.exp(-v)), 255 / 4)):
        y = np.array(_call(kernel, codes, lo, hi)[0])
        assert (np.diff(y) >= 0).all()
        assert np.abs(y - want).max() <= 1.5 + slope * step / 2


def test_neg_d32_keeps_the_input_padding():
    # op_add_d32.c neg_d32_execute: every padding amount of the input, 255 - x, range flipped
    pad = D32Padding(1, 2, 4, 3, 3, 26)
    x = Tensor.from_array(np.array([0, 1, 200], np.uint8).reshape(1, 1, 1, 3),
                          DType.QUINT8).to_d32(pad)
    y, mn, mx = quantized_neg_8_d32(KernelContext(1, "QuantizedNeg_8_d32"), x,
                                    Tensor.scalar(np.float32(-1)), Tensor.scalar(np.float32(2)))
    assert tuple(y.padding) == tuple(pad)
    assert y.array.reshape(-1).tolist() == [255, 254, 55]
    assert (float(mn.reshape(-1)[0]), float(mx.reshape(-1)[0])) == (-2.0, 1.0)
