"""QuantizedMinimum_8 and QuantizedMaximum_8 (nnlib op_minimum_maximum.c): hand-computed
vectors and properties. The oracle's golden cases are replayed in test_ops26a_golden.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.elementwise.minmax import (
    quantized_maximum_8,
    quantized_minimum_8,
    requantize_codes,
)
from hexscope.engine.tensor import Tensor


def _q(codes, shape=None):
    a = np.asarray(codes, np.uint8)
    return Tensor.from_array(a.reshape(shape or (1, 1, 1, -1)), DType.QUINT8)


def _w(v):
    return Tensor.scalar(np.float32(v))


def _call(kernel, a, b, ra, rb, *given, sa=None, sb=None):
    ctx = KernelContext(1, "minmax")
    y, mn, mx = kernel(ctx, _q(a, sa), _q(b, sb), _w(ra[0]), _w(ra[1]), _w(rb[0]), _w(rb[1]),
                       *[_w(v) for v in given])
    return np.asarray(y), float(mn.reshape(-1)[0]), float(mx.reshape(-1)[0]), ctx


def test_requantize_by_hand():
    # [0, 2] onto [0, 4]: gain round(4096 * 0.5) = 2048; 255 -> (255 * 2048 + 2048) >> 12 = 128
    assert requantize_codes(np.array([0, 1, 255]), (0.0, 2.0), (0.0, 4.0)).tolist() == [0, 1, 128]


def test_maximum_on_the_union_range_by_hand():
    # a in [0, 2] is requantized onto [0, 4] (b's range, the union): [0, 128]; b stays
    y, mn, mx, _ = _call(quantized_maximum_8, [0, 255], [10, 100], (0, 2), (0, 4))
    assert y.reshape(-1).tolist() == [10, 128] and (mn, mx) == (0.0, 4.0)
    y, *_ = _call(quantized_minimum_8, [0, 255], [10, 100], (0, 2), (0, 4))
    assert y.reshape(-1).tolist() == [0, 100]


def test_broadcast_and_given_range():
    y, mn, mx, _ = _call(quantized_maximum_8, [1, 2, 3], [2], (0, 1), (0, 1), sa=(1, 1, 3, 1),
                         sb=(1, 1, 1, 1))
    assert y.reshape(-1).tolist() == [2, 2, 3] and y.shape == (1, 1, 3, 1)
    # only out_min given: [out_min, max(a_max, b_max)]
    _, mn, mx, _ = _call(quantized_minimum_8, [1], [2], (0, 1), (-1, 3), -2.0)
    assert (mn, mx) == (-2.0, 3.0)


def test_errors_as_nnlib():
    with pytest.raises(KernelError, match="output min >= output max"):
        _call(quantized_maximum_8, [1], [2], (1, 1), (1, 1))
    with pytest.raises(KernelError, match=r"incompatible shapes \(1x1x1x2\) \(1x1x1x3\)"):
        _call(quantized_minimum_8, [1, 2], [1, 2, 3], (0, 1), (0, 1))


def test_a_scalar_of_code_0_is_warned():
    *_, ctx = _call(quantized_maximum_8, [0], [5, 6], (0, 1), (0, 1))
    assert any("reads its scratch" in w for w in ctx.warnings)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=30), st.data())
def test_same_range_is_the_plain_elementwise_extreme(a, data):
    b = data.draw(st.lists(st.integers(0, 255), min_size=len(a), max_size=len(a)))
    hi, *_ = _call(quantized_maximum_8, a, b, (-1, 2), (-1, 2))
    lo, *_ = _call(quantized_minimum_8, a, b, (-1, 2), (-1, 2))
    assert hi.reshape(-1).tolist() == np.maximum(a, b).tolist()
    assert lo.reshape(-1).tolist() == np.minimum(a, b).tolist()
