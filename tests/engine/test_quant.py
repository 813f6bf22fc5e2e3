"""Quantization helpers: quantized-ops spec §1 (conventions, zero codes, R1/R2 adjustments)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.hexmath import level_size_zero, quantize_uint8, rndi
from hexscope.engine.quant import (
    QuantRange,
    adjust_range,
    adjust_range_for_zero,
    dequantize_u8,
    quantize_u8,
)

f32 = np.float32


@pytest.mark.parametrize("given_range, adjusted", [
    # quantized-ops spec §1.10, worked examples (R1 = R2 there)
    ((-1, 1), (-1, 1.0078740)), ((-0.3, 5.7), (-0.30619833, 5.7)),
    ((-10, 0.1), (-10, 0.11904716)), ((-1.3, 10.6), (-1.3074890, 10.6)),
    ((-2.5, 2.5), (-2.5, 2.5196853)),
])
def test_adjust_range_worked_examples(given_range, adjusted):
    for fn in (adjust_range, adjust_range_for_zero):
        mn, mx = fn(*given_range)
        assert f32(mn) == pytest.approx(adjusted[0], rel=1e-6)
        assert f32(mx) == pytest.approx(adjusted[1], rel=1e-6)


def test_adjust_range_includes_zero():
    # R1 step 1: mn = min(0, in_min), mx = max(0, in_max)
    assert adjust_range(0.5, 2.0) == (0.0, 2.0)
    assert adjust_range(-3.0, -1.0) == (-3.0, 0.0)


@settings(max_examples=200, deadline=None)
@given(st.floats(-1000, -1e-3), st.floats(1e-3, 1000))
def test_adjusted_ranges_make_zero_exact(lo, hi):
    mn, mx = adjust_range(lo, hi)
    assert mn <= lo + 1e-6 * abs(lo) and mx >= hi - 1e-6 * abs(hi)   # only widens
    assert QuantRange(mn, mx).zero_exact


def test_roundf_i32_quirk():
    # quantized-ops spec §0: rndi(0.49999997) = 1 because the float add rounds up
    assert rndi(f32(0.49999997)) == 1
    assert rndi(f32(-2.5)) == -3 and rndi(f32(2.5)) == 3


def test_zero_codes_agree_on_proper_ranges():
    # quantized-ops spec §1.4: ZA and ZB give the same code for a proper range
    mn, mx = adjust_range(-1.3, 10.6)
    zb = level_size_zero(mn, mx)[0]
    assert quantize_uint8(0.0, mn, mx) == zb == QuantRange(mn, mx).zero_code
    # hand-computed: z = 1.307489 * 255 / 11.907489 = 28.0
    assert zb == 28


def test_quantize_dequantize_round_trip_within_half_step():
    rng = np.random.default_rng(0)
    mn, mx = adjust_range(-2.0, 6.0)
    x = rng.uniform(mn, mx, 1000).astype(f32)
    q = quantize_u8(x, mn, mx)
    back = dequantize_u8(q, mn, mx)
    step = (mx - mn) / 255
    assert np.max(np.abs(back - x)) <= step / 2 + 1e-6
    assert quantize_u8([mn - 5, mx + 5], mn, mx).tolist() == [0, 255]  # saturates


def test_quant_range_stepsize_and_zero_flag():
    r = QuantRange(-1.0, 1.0078740)
    assert r.stepsize == pytest.approx(2.007874 / 255, rel=1e-6)
    assert r.zero_exact and r.zero_code == 127
    assert not QuantRange(-1.0, 1.0).zero_exact        # §1.1: symmetric range is not proper
    assert not QuantRange(0.5, 1.0).zero_exact         # 0 is outside


@pytest.mark.parametrize(("mn", "mx"), [(-np.inf, np.inf), (-np.inf, 1.0), (-1.0, np.inf)])
def test_an_infinite_range_has_no_exact_zero_and_warns_nothing(mn, mx):
    """An infinite end has no finite step (§1.4), so 0.0 has no exact code; asking must not
    print numpy's RuntimeWarning (the views ask for every output they show)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert QuantRange(mn, mx).zero_exact is False
