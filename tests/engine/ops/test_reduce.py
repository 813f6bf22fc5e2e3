"""ArgMax_8toInt32, ArgMin_8 and QuantizedMean_8 (nnlib op_argmax.c, op_argmin.c,
op_reducing_mean.c): hand-computed vectors and properties. The oracle's golden cases are
replayed in test_ops26a_golden.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.reduce.argminmax import argmax_8toint32, argmin_8
from hexscope.engine.ops.reduce.mean import quantized_mean_8, quantized_multiplier
from hexscope.engine.tensor import Tensor


def _q(codes, shape=None):
    a = np.asarray(codes, np.uint8)
    return Tensor.from_array(a.reshape(shape or (1, 1, 1, -1)), DType.QUINT8)


def _w(v):
    return Tensor.scalar(np.float32(v))


def _i(*values):
    return Tensor.from_array(np.array(values, np.int32).reshape(1, 1, 1, -1), DType.INT32)


def _arg(kernel, codes, axis, shape=None):
    (y,) = kernel(KernelContext(1, "arg"), _q(codes, shape), _i(axis), _w(0), _w(1))
    return np.asarray(y)


def test_argmax_and_argmin_take_the_first_index_of_ties():
    assert _arg(argmax_8toint32, [3, 9, 9, 1], 3).reshape(-1).tolist() == [1]
    assert _arg(argmin_8, [3, 1, 9, 1], 3).reshape(-1).tolist() == [1]


def test_argmax_along_an_outer_axis_and_from_the_end():
    codes = [1, 8, 7, 2, 5, 9]                 # (1, 1, 2, 3): rows [1 8 7], [2 5 9]
    y = _arg(argmax_8toint32, codes, 2, shape=(1, 1, 2, 3))
    assert y.shape == (1, 1, 1, 3) and y.dtype == np.int32
    assert y.reshape(-1).tolist() == [1, 0, 1]
    assert _arg(argmax_8toint32, codes, -2, shape=(1, 1, 2, 3)).reshape(-1).tolist() == [1, 0, 1]
    assert _arg(argmin_8, codes, -1, shape=(1, 1, 2, 3)).reshape(-1).tolist() == [0, 0]


@pytest.mark.parametrize("kernel, name", [(argmax_8toint32, "ArgMax_8toInt32"),
                                          (argmin_8, "ArgMin_8")])
@pytest.mark.parametrize("axis", [4, -5])
def test_an_axis_out_of_range_fails_as_nnlib_does(kernel, name, axis):
    with pytest.raises(KernelError, match=f"{name}: axis is out of range"):
        _arg(kernel, [1, 2], axis)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.uint8, hnp.array_shapes(min_dims=4, max_dims=4, max_side=5)),
       st.integers(-4, 3))
def test_argmin_is_argmax_of_the_inverted_codes(codes, axis):
    got = _arg(argmin_8, codes, axis, shape=codes.shape)
    assert np.array_equal(got, _arg(argmax_8toint32, 255 - codes, axis, shape=codes.shape))


def _mean(codes, axes, shape, rng=(0.0, 255.0), out=(), declared=None):
    ctx = KernelContext(1, "QuantizedMean_8",
                        output_defs=(OutputDef(declared, 1),) if declared else ())
    y, mn, mx = quantized_mean_8(ctx, _q(codes, shape), _w(rng[0]), _w(rng[1]), _i(*axes),
                                 *[_w(v) for v in out])
    return y, mn.scalar_value(), mx.scalar_value()


def test_quantized_multiplier_by_hand():
    assert quantized_multiplier(0.25) == (1 << 30, 1)      # 0.5 * 2**-1
    assert quantized_multiplier(0.75) == (3 << 29, 0)
    assert quantized_multiplier(0.0) == (0, 0)               # outside (0, 1): the C keeps 0


def test_mean_by_hand_with_the_double_rounding():
    # range [0, 255]: zero code 0, steps 1; n = 4: m = 0.25 = 2**30 / 2**31 >> 1.
    # [1, 2, 3, 4]: sum 10 -> round(10 / 2) = 5 -> rounding shift by 1: (5 + 1) >> 1 = 3.
    # [1, 1, 1, 2]: sum 5 -> 3 -> 2 (the mean 1.25 rounds twice, up both times)
    y, mn, mx = _mean([1, 2, 3, 4, 1, 1, 1, 2], [3], (1, 1, 2, 4))
    assert y.array.reshape(-1).tolist() == [3, 2] and y.shape == (1, 1, 2, 1)
    assert (mn, mx) == (0.0, 255.0) and y.device_dtype is DType.UINT8


def test_mean_keeps_the_declared_shape_and_checks_its_size():
    y, _, _ = _mean([10, 20, 30, 40], [1, 2], (1, 2, 2, 1), declared=(1, 1, 1, 1))
    assert y.shape == (1, 1, 1, 1) and y.array.reshape(-1).tolist() == [25]
    with pytest.raises(KernelError, match="Output tensor is of size 2, but expected output "
                                          "tensor of size 1"):
        _mean([10, 20, 30, 40], [1, 2], (1, 2, 2, 1), declared=(1, 1, 1, 2))


def test_mean_counts_a_repeated_axis_twice():
    # the C multiplies the divisor by each listed axis' size: [3, 3] divides the sum by 4
    y, _, _ = _mean([100, 100], [3, 3], (1, 1, 1, 2))
    assert y.array.reshape(-1).tolist() == [50]


def test_mean_axes_errors():
    with pytest.raises(KernelError, match="Number of elements in axes tensor is 5"):
        _mean([1], [0, 1, 2, 3, 3], (1, 1, 1, 1))
    with pytest.raises(KernelError, match="value 4 is out of range"):
        _mean([1], [4], (1, 1, 1, 1))


def test_mean_into_a_given_output_range():
    # input [-1, 1] (zero code 128 after R2: 128 * 2/255 is not 1, so the range is nudged),
    # output [0, 1] given: the means of codes near the top land near the top
    y, mn, mx = _mean([255, 255], [3], (1, 1, 1, 2), rng=(-1.0, 1.0), out=(0.0, 1.0))
    assert (mn, mx) == (0.0, 1.0) and y.array.reshape(-1).tolist() == [255]


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.uint8, (2, 3, 4, 5)), st.sets(st.integers(0, 3), min_size=1),
       st.sampled_from([(0.0, 6.0), (-3.0, 3.0), (-10.0, 0.5)]))
def test_mean_is_within_a_code_of_the_float_mean(codes, axes, rng):
    y, mn, mx = _mean(codes, sorted(axes), codes.shape, rng=rng)
    step = (mx - mn) / 255
    real = mn + codes.astype(np.float64) * step
    want = (real.mean(axis=tuple(sorted(axes)), keepdims=True) - mn) / step
    assert np.abs(y.array.astype(np.float64) - want).max() <= 1.0 + 1e-6


def _mean_numpy(ctx, *inputs):
    import os

    os.environ["HEXSCOPE_KERNELS"] = "numpy"
    try:
        return quantized_mean_8(ctx, *inputs)
    finally:
        del os.environ["HEXSCOPE_KERNELS"]


def _same_outputs(ctx, inputs):
    got, want = quantized_mean_8(ctx, *inputs), _mean_numpy(ctx, *inputs)
    for g, w in zip(got, want, strict=True):
        assert (g.shape, g.dtype, g.device_dtype, g.raw.tobytes()) == \
            (w.shape, w.dtype, w.device_dtype, w.raw.tobytes())


@settings(max_examples=60, deadline=None)
@given(codes=hnp.arrays(np.uint8, hnp.array_shapes(min_dims=4, max_dims=4, max_side=9)),
       axes=st.sampled_from([[1, 2], [2, 1], [1, 2, 2], [-3, -2]]),
       rng=st.sampled_from([(0.0, 6.0), (-3.0, 3.0), (-10.0, 0.5), (0.0, 0.0)]))
def test_mean_over_height_and_width_compiled_equals_numpy(codes, axes, rng):
    """The compiled sums of a global average pool give the numpy path's bytes (a repeated
    axis changes only the divisor; a zero range makes the multiplier 0)."""
    _same_outputs(KernelContext(1, "QuantizedMean_8"),
                  (_q(codes, codes.shape), _w(rng[0]), _w(rng[1]), _i(*axes)))


def test_mean_sums_past_int32_compiled_equal_numpy():
    """2897 x 2897 pixels of 255: the sums pass 2**31 (the compiled pass widens to int64)."""
    codes = np.full((1, 2897, 2897, 1), 255, np.uint8)
    _same_outputs(KernelContext(1, "QuantizedMean_8"),
                  (_q(codes, codes.shape), _w(0.0), _w(255.0), _i(1, 2)))
