"""QuantizedNeg_8, QuantizedSqrt_8, QuantizedTanh_8, QuantizedSigmoid_8 (nnlib op_neg.c,
op_sqrt.c, op_tanh.c): hand-computed vectors and properties. The oracle's golden cases are
replayed in test_ops26a_golden.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.elementwise.unary import (
    SQRT_TABLE,
    TANH_MAX,
    quantized_neg_8,
    quantized_sigmoid_8,
    quantized_sqrt_8,
    quantized_tanh_8,
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
    # range [-4, 4]: step 8/255; code 0 is -4: tanh(-4) = -0.99933 -> (1 - 0.99933) * 127
    # = 0.085 -> 0; code 255 is +4 -> 1.99933 * 127 = 253.9 -> 254; the range is fixed.
    y, mn, mx = _call(quantized_tanh_8, [0, 255], -4.0, 4.0)
    assert y == [0, 254]
    assert (mn, mx) == (-1.0, float(TANH_MAX)) and float(TANH_MAX) == float(np.float32(128 / 127))


def test_sigmoid_by_hand():
    # range [-10, 10]: the middle code 127.5 is not a code; codes 127 / 128 are -0.039 /
    # +0.039: sigmoid 0.4902 / 0.5098 -> * 255 = 125.0 / 130.0
    y, mn, mx = _call(quantized_sigmoid_8, [0, 127, 128, 255], -10.0, 10.0)
    assert y == [0, 125, 130, 255] and (mn, mx) == (0.0, 1.0)


@settings(max_examples=40, deadline=None)
@given(st.floats(-20, 0, width=32), st.floats(0.125, 20, width=32))
def test_tanh_and_sigmoid_are_monotonic_and_within_half_a_code(lo, hi):
    codes = np.arange(256)
    v = lo + codes * ((np.float64(hi) - lo) / 255)
    for kernel, want in ((quantized_tanh_8, (np.tanh(v) + 1) * 127),
                         (quantized_sigmoid_8, 255 / (1 + np.exp(-v)))):
        y = np.array(_call(kernel, codes, lo, hi)[0])
        assert (np.diff(y) >= 0).all()
        assert np.abs(y - want).max() <= 0.5 + 1e-3
