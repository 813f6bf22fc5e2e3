"""QuantizedSoftmax_8_ref and L2Normalize_8 (nnlib op_softmax.c / op_l2normalize_8_ref.c):
hand-computed vectors and properties. The softmax vectors here are the float32 ``_ref``'s
(``qsoftmax_execute_ref``); the device's QuantizedSoftmax_8 (fixed point) is tested in
test_softmax_flat.py. The oracle's golden cases are replayed in test_ops26a_golden.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.normalize.l2norm import l2_normalize_8
from hexscope.engine.ops.normalize.softmax import expf_approx, quantized_softmax_8_ref
from hexscope.engine.tensor import Tensor


def _q(codes, shape=None):
    a = np.asarray(codes, np.uint8)
    return Tensor.from_array(a.reshape(shape or (1, 1, 1, -1)), DType.QUINT8)


def _w(v):
    return Tensor.scalar(np.float32(v))


def _softmax(codes, lo, hi, *beta, shape=None):
    y, mn, mx = quantized_softmax_8_ref(KernelContext(1, "QuantizedSoftmax_8_ref"),
                                        _q(codes, shape), _w(lo), _w(hi), *[_w(b) for b in beta])
    return np.asarray(y), float(mn.reshape(-1)[0]), float(mx.reshape(-1)[0])


def test_expf_approx_is_good_to_10_bits_and_exact_at_zero():
    x = np.linspace(-80, 80, 2001, dtype=np.float32)
    got = expf_approx(x).astype(np.float64)
    assert expf_approx(np.zeros(1, np.float32))[0] == 1.0
    np.testing.assert_allclose(got, np.exp(x.astype(np.float64)), rtol=2 ** -10)


def test_softmax_by_hand():
    # range [0, 255], beta 1: step 1 >= 0.63529, so the max pass runs: e(-1) = 0.3679,
    # e(0) = 1; the sum 1.3679; 255 * [0.2689, 0.7311] = [68.6, 186.4] -> [69, 186]
    y, mn, mx = _softmax([254, 255], 0, 255)
    assert y.reshape(-1).tolist() == [69, 186] and (mn, mx) == (0.0, 1.0)
    # a small step (beta 0.1: 0.1 < 0.63529) skips the max pass; the result is the same
    y, _, _ = _softmax([0, 10], 0, 255, 0.1)
    assert y.reshape(-1).tolist() == [69, 186]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=50),
       st.sampled_from([0.05, 0.5, 1.0, 4.0]))
def test_softmax_rows_sum_to_255_within_rounding(codes, beta):
    y, _, _ = _softmax(codes, -8, 8, beta)
    assert abs(int(y.astype(int).sum()) - 255) <= len(codes) / 2 + 1
    order = np.argsort(codes, kind="stable")
    assert (np.diff(y.reshape(-1)[order].astype(int)) >= 0).all()   # same ordering


def test_softmax_runs_per_depth_vector():
    y, _, _ = _softmax([254, 255, 255, 254], 0, 255, shape=(1, 1, 2, 2))
    assert y.reshape(-1).tolist() == [69, 186, 186, 69]


def _l2(codes, lo, hi, axis=None, shape=None):
    extra = [Tensor.scalar(np.int32(axis), DType.INT32)] if axis is not None else []
    y, mn, mx = l2_normalize_8(KernelContext(1, "L2Normalize_8"), _q(codes, shape), _w(lo),
                               _w(hi), *extra)
    return y, float(mn.reshape(-1)[0]), float(mx.reshape(-1)[0])


def test_l2_normalize_by_hand():
    # range [-1, 1]: zero code quantize_uint8(0) = round(127.5) = 128; codes 131, 132 are
    # v = 3, 4: norm 5, 0.6 and 0.8 -> (1.6 * 127.5, 1.8 * 127.5) = (204, 229.5) -> 204, 230
    y, mn, mx = _l2([131, 132], -1, 1)
    assert y.array.reshape(-1).tolist() == [204, 230] and (mn, mx) == (-1.0, 1.0)
    assert y.device_dtype is DType.UINT8          # NN_TYPE_UINT8, as the C tags it
    # an all-zero slice: norm 0, every output 0.0 -> code 128
    assert _l2([128, 128], -1, 1)[0].array.reshape(-1).tolist() == [128, 128]


def test_l2_normalize_along_each_axis_and_from_the_end():
    codes = np.array([131, 132, 132, 131], np.uint8)
    along_w = _l2(codes, -1, 1, axis=2, shape=(1, 1, 2, 2))[0].array.reshape(-1).tolist()
    assert along_w == [204, 230, 230, 204]
    assert _l2(codes, -1, 1, axis=-2, shape=(1, 1, 2, 2))[0].array.reshape(-1).tolist() == along_w


@pytest.mark.parametrize("axis", [4, -5, 100])
def test_l2_normalize_rejects_an_axis_out_of_range(axis):
    with pytest.raises(KernelError, match=f"value {axis} is out of range"):
        _l2([1, 2], -1, 1, axis=axis)
