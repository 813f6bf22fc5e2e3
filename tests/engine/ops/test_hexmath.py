"""The shared scalar primitives of engine/hexmath.py (quantized-ops spec §0, §1.4, §18)
and the one float -> int convention every op family now uses (§23 item 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.hexmath import (
    level_size_zero,
    level_size_zero_floored,
    quantize_uint8,
    rndi,
    rndi1,
)
from hexscope.engine.ops.kernels.d32_engine import Oper, addsub_scaling, mul_scaling

f32 = np.float32
NAN = float("nan")


def _ref_rndi(x: float) -> int:
    """§0 rndi written out: s = f32(x + copysign(0.5, x)), truncated; saturating, NaN -> -1
    (the project's convention: Hexagon's convert_sf2w as QEMU models it, §23 item 4)."""
    s = float(f32(f32(x) + f32(math.copysign(0.5, float(x)))))
    if s != s:
        return -1
    return max(-2**31, min(2**31 - 1, int(s))) if math.isfinite(s) else (
        2**31 - 1 if s > 0 else -2**31)


@pytest.mark.parametrize("x", [0.49999997, -0.49999997, 2.5, -2.5, 8388609.0, 3e9, -3e9,
                               float("inf"), float("-inf"), NAN])
def test_rndi_hand_values_and_convention(x) -> None:
    # §0: rndi(0.49999997) = 1 (the float add rounds up); out of range saturates; NaN -> -1.
    assert rndi1(x) == _ref_rndi(x) == int(rndi(np.array([x], f32))[0])


def test_rndi_nan_is_minus_one() -> None:
    assert rndi1(NAN) == -1 and rndi(np.array([NAN], f32)).tolist() == [-1]


@settings(max_examples=40, deadline=None)
@given(mn=st.floats(-100, 0, width=32), width=st.floats(0.125, 200, width=32))
def test_zb_matches_the_spec_formula(mn, width) -> None:
    # §1.4 ZB: s = div255(mx - mn); z = sat_u8(rndi(f32(-mn / s))). For a positive width the
    # Dequantize variant (width floored at 1e-18, §18) gives the same (z, s).
    mx = float(f32(f32(mn) + f32(width)))
    s = f32(f32(f32(mx) - f32(mn)) / f32(255.0))
    z = min(255, max(0, _ref_rndi(f32(f32(-f32(mn)) / s))))
    assert level_size_zero(mn, mx) == (z, s)
    assert level_size_zero_floored(mn, mx) == (z, s)


def test_zb_variants_differ_only_on_degenerate_widths() -> None:
    # min == max: ZB has step 0 (no floor); Dequantize floors the width at 1e-18 (§18).
    z, s = level_size_zero(5.0, 5.0)
    zf, sf = level_size_zero_floored(5.0, 5.0)
    assert s == 0.0 and sf == f32(f32(1e-18) / f32(255.0))
    assert z == zf == 0                 # -5 / 0 = -inf and -5 / 3.9e-21 both saturate to 0
    # NaN width: ZB keeps a NaN step (zero point NaN -> -1 -> 0); fmaxf drops the NaN (§18),
    # so Dequantize's step is the floor and -(-1) / 3.9e-21 saturates to 255.
    z, s = level_size_zero(-1.0, NAN)
    zf, sf = level_size_zero_floored(-1.0, NAN)
    assert np.isnan(s) and z == 0
    assert sf == f32(f32(1e-18) / f32(255.0)) and zf == 255


def test_za_rounds_in_float64_and_floors_the_width() -> None:
    # §1.4 ZA: r = max(1e-18, 0) for min == max == 0 -> code of 0 is 0; (-1, 1): 127.5 -> 128.
    assert quantize_uint8(0.0, 0.0, 0.0) == 0
    assert quantize_uint8(0.0, -1.0, 1.0) == 128
    assert quantize_uint8(0.0, NAN, 1.0) == 0          # NaN -> -1 -> saturated to 0


def test_d32_engine_uses_the_same_convention() -> None:
    # §13.5 / §13.6 with a NaN input step (a NaN input range): the rndi of a NaN scale gives
    # -1 (it gave 0 before the d32 engine shared hexmath's conversion).
    s = mul_scaling(0, NAN, 0, 1.0, 0.0, 1.0)
    assert s.post_scale == -1
    # Sub takes the exponent from fmaxf(As, Bs), so a NaN Bs still scales: B = rndi(NaN) = -1.
    sub = addsub_scaling(0, 1.0, 0, NAN, -255.0, 255.0, Oper.SUB, False)
    assert (sub.a_scale, sub.b_scale, sub.rsh) == (8192, -1, 6)


@pytest.mark.parametrize("x", [np.inf, -np.inf])
def test_div255_of_an_infinite_width_is_hexagons_nan(x):
    """quantize.h flt_div_255: Q6_R_sfmpyacc_RR(-c2*x, x, c1) adds two infinities of
    opposite signs for an infinite x, so the result is NaN (Hexagon's all-ones NaN), not
    the inf that x / 255 gives."""
    from hexscope.engine.hexmath import div255

    assert int(np.asarray(div255(x)).view(np.uint32)) == 0xFFFFFFFF
    assert div255(np.float32(3e38)) == np.float32(np.float32(3e38) / np.float32(255))


def test_adjust_range_keeps_an_infinite_min():
    """quantize.h quantize_adjust_range(-inf, x): the zero point -min * 255/inf is NaN, and
    the C's test (zf > 2^-14 && zf < 1 - 2^-14) is false for NaN, so the range is kept."""
    from hexscope.engine.quant import adjust_range

    assert adjust_range(-np.inf, 1.5) == (-np.inf, 1.5)
    assert adjust_range(-1.0, np.inf) == (-1.0, np.inf)
    assert adjust_range(-1.0, 3.0) != (-1.0, 3.0)        # a finite range is still nudged
