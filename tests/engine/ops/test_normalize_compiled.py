"""The compiled loops of QuantizedSoftmax_8, L2Normalize_8 and QuantizedMean_8
(engine/ops/kernels/normalize_loops.py) give the numpy form's bytes: random codes and ranges,
the edge steps where the C's float32 overflows (inf and NaN sums), zero norms and
saturating requantizations. The numpy form is the one the nnlib oracle's golden cases were
checked against (test_ops26a_golden.py replays them through the compiled path)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hexscope.engine.ops.kernels.normalize_loops import loops
from hexscope.engine.ops.normalize.l2norm import l2_codes, l2_codes_numpy
from hexscope.engine.ops.normalize.softmax import softmax_codes, softmax_codes_numpy
from hexscope.engine.ops.reduce.mean import quantized_multiplier, requantize_sums

pytestmark = pytest.mark.skipif(loops() is None,
                                reason="the compiled kernels do not load on this machine")

_codes = hnp.arrays(np.uint8, hnp.array_shapes(min_dims=4, max_dims=4, max_side=9))
#: steps on both sides of the no-max-pass threshold 0.63529, and ones where exp overflows
_steps = st.one_of(st.floats(0.0, 2.0, width=32), st.sampled_from(
    [0.63529, 0.6352899, 5.0, 90.0, 1e6, float("inf"), float("nan")]))


@settings(max_examples=150, deadline=None)
@given(codes=_codes, step=_steps)
def test_softmax_compiled_equals_numpy(codes, step):
    s = np.float32(step)
    np.testing.assert_array_equal(softmax_codes(codes, s), softmax_codes_numpy(codes, s))


@settings(max_examples=150, deadline=None)
@given(codes=_codes, zero=st.integers(0, 255), axis=st.integers(0, 3))
def test_l2_compiled_equals_numpy(codes, zero, axis):
    np.testing.assert_array_equal(l2_codes(codes, zero, axis), l2_codes_numpy(codes, zero, axis))


def test_l2_of_a_zero_slice_is_code_128():
    codes = np.full((1, 1, 2, 3), 7, np.uint8)
    np.testing.assert_array_equal(l2_codes(codes, 7, 3), np.full((1, 1, 2, 3), 128))


def _requant_numpy(*args):
    os.environ["HEXSCOPE_KERNELS"] = "numpy"
    try:
        return requantize_sums(*args)
    finally:
        del os.environ["HEXSCOPE_KERNELS"]


@settings(max_examples=150, deadline=None)
@given(sums=hnp.arrays(np.int64, st.integers(1, 40), elements=st.integers(-2**33, 2**33)),
       divisor=st.integers(1, 5000), zi=st.integers(0, 255), zo=st.integers(0, 255),
       m=st.floats(1e-6, 0.99999))
def test_mean_requantization_compiled_equals_numpy(sums, divisor, zi, zo, m):
    mult, shift = quantized_multiplier(m)
    args = (sums, divisor, zi, mult, shift, zo)
    np.testing.assert_array_equal(requantize_sums(*args), _requant_numpy(*args))


def test_mean_requantization_by_hand():
    # m = 0.5: mult 2**30, shift 0; round(2 * 5 * 2**30 / 2**32) = round(2.5) -> 3 (the
    # vmpyo rounding: ((5 * 2**14) >> 14) + 1 >> 1), plus the output zero 10
    mult, shift = quantized_multiplier(0.5)
    assert (mult, shift) == (2**30, 0)
    got = requantize_sums(np.array([5, 0, 600]), 1, 0, mult, shift, 10)
    np.testing.assert_array_equal(got, [13, 10, 255])


@settings(max_examples=200, deadline=None)
@given(rows=st.integers(1, 4), quads=st.integers(1, 80), data=st.data(),
       betamul=st.integers(-32768, 32767), rsh=st.integers(0, 31), accshift=st.integers(2, 16),
       seed=st.integers(0, 2**31))
def test_softmax_hvx_compiled_equals_numpy(rows, quads, data, betamul, rsh, accshift, seed):
    """Every lane, padding lanes past ``real`` included, for any scaling the op can derive
    and beyond (negative and zero gains, every shift: rs outside 1..16 takes lanes 2, 3 of
    each four through the other multiply)."""
    from hexscope.engine.ops.kernels.softmax_hvx import softmax_hvx, softmax_hvx_numpy

    lanes = 4 * quads
    real = data.draw(st.integers(1, lanes))
    rng = np.random.default_rng(seed)
    spread = data.draw(st.sampled_from([0, 1, 3, 40, 255]))
    codes = (rng.integers(0, spread + 1, (rows, lanes)) + rng.integers(0, 256 - spread)
             ).astype(np.uint8)
    np.testing.assert_array_equal(softmax_hvx(codes, real, betamul, rsh, accshift),
                                  softmax_hvx_numpy(codes, real, betamul, rsh, accshift))


def test_the_device_softmax_after_the_warm_up_compiles_nothing_for_read_only_codes():
    # MobileNetV2's softmax reads a kept (read-only) tensor: its first run after install
    # compiled a second form of the row loop (the warm-up passed writeable codes)
    from hexscope.engine.ops.kernels.softmax_hvx import softmax_hvx
    from hexscope.engine.ops.kernels.warm import WARMERS

    WARMERS["hexscope.engine.ops.kernels.normalize_defs"]()
    kernel = loops().softmax_hvx_rows
    before = len(kernel.signatures)
    codes = np.arange(64, dtype=np.uint8).reshape(1, 1, 2, 32)
    frozen = codes.copy()
    frozen.flags.writeable = False
    for c in (codes, frozen):
        softmax_hvx(c, 32, 900, 3, 2)
    assert len(kernel.signatures) == before
