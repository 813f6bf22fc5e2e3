"""The HVX Supernodes' fixed-point requantization written into d32 memory
(``kernels.supernode_requant.requantize_into_d32``) against the formula of its module doc,
evaluated here in numpy: s = wrap32(sum + folded), t = wrap32(s << shamt),
code = clamp((t * recip + 2**30) >> 31, 0, 255) (``gvconv2dbbb_v60_asm``'s vmpye/vmpyo:SSR)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.ops.kernels.supernode_requant import requantize_into_d32


def _wrap(v: np.ndarray) -> np.ndarray:
    return ((v.astype(np.int64) + 2**31) % 2**32) - 2**31


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), b=st.integers(1, 2), oh=st.integers(0, 3),
       ow=st.integers(1, 6), cout=st.integers(1, 70), shamt=st.integers(0, 31),
       minmax_all=st.booleans(), after_shift=st.booleans())
def test_codes_padding_and_extremes_follow_the_formula(seed, b, oh, ow, cout, shamt,
                                                        minmax_all, after_shift):
    rng = np.random.default_rng(seed)
    ex = (-ow) & 3
    channels = (cout + 31) & ~31
    main = rng.integers(-2**31, 2**31, (b, oh, ow, cout)).astype(np.int32)
    extra = rng.integers(-2**31, 2**31, (b, oh, ex, cout)).astype(np.int32)
    # past int32 too: the kernel wraps folded to 32 bits once, the formula wraps the sum
    folded = rng.integers(-2**40, 2**40, channels)
    recip = rng.integers(0, 2**31, channels)
    mem = np.full((b, oh + 8, channels // 32, 4 + ow + ex, 32), 77, np.uint8)
    lo, hi = requantize_into_d32(np.concatenate([main, extra], axis=2), ow, folded, recip,
                                 shamt, minmax_all, after_shift, mem)
    sums = np.zeros((b, oh, ow + ex, channels), np.int64)
    sums[:, :, :ow, :cout] = main
    sums[:, :, ow:, :cout] = extra
    s = _wrap(sums + folded)
    t = _wrap(s << shamt)
    codes = np.clip((t * recip + 2**30) >> 31, 0, 255).astype(np.uint8)
    got = mem.transpose(0, 1, 3, 2, 4).reshape(b, oh + 8, 4 + ow + ex, channels)
    np.testing.assert_array_equal(got[:, 4:4 + oh, 4:], codes)
    assert (got[:, :4] == 77).all() and (got[:, 4 + oh:] == 77).all()
    assert (got[:, :, :4] == 77).all()
    e = (t if after_shift else s)[:, :, :None if minmax_all else ow].reshape(-1, channels)
    if e.size:
        np.testing.assert_array_equal(lo, e.min(0))
        np.testing.assert_array_equal(hi, e.max(0))


@pytest.mark.parametrize(("total", "shamt", "recip", "code"), [
    (100, 0, 2**31 - 1, 100),        # x (2**31 - 1) / 2**31, rounded: 99.99999995 -> 100
    (3, 1, 2**30, 3),                # (3 << 1) / 2 = 3
    (2**30, 1, 1, 0),                # 2**30 << 1 = 2**31 wraps to -2**31: negative, code 0
    (-5, 0, 2**31 - 1, 0),           # clamped below
    (1000, 0, 2**31 - 1, 255),       # clamped above
    (1, 0, 2**30, 1),                # 0.5 rounds up (+2**30 before >> 31)
])
def test_hand_computed_codes(total, shamt, recip, code):
    main = np.array([total], np.int32).reshape(1, 1, 1, 1)
    mem = np.zeros((1, 9, 1, 8, 32), np.uint8)
    sums = np.concatenate([main, np.zeros((1, 1, 3, 1), np.int32)], axis=2)
    requantize_into_d32(sums, 1, np.zeros(32, np.int64), np.full(32, recip, np.int64), shamt,
                        False, False, mem)
    assert mem[0, 4, 0, 4, 0] == code


def test_a_nan_gain_takes_the_largest_multiplier_and_the_exponent_shift():
    """An infinite filter range makes the gain NaN (inf x 0 or inf - inf in the levels):
    ``fill_info_minmax_basics`` takes ``(final_scaling <= 1.0f) ? 0 : flt_getexp(..)``, false
    for a NaN, so shamt = 255 - 126 = 129 (``vasl`` shifts by 129 & 31 = 1), and
    ``roundf_u32`` is convert_sf2uw, whose NaN is 0xFFFFFFFF, clamped to 0x7FFFFFFF: under
    qemu-hexagon such cases give code 255 (12 of 300 Supernode_8x8p32to8_d32 cases, seed 1,
    docs/oracle-hvx.md)."""
    from hexscope.engine.ops.conv import dwise_scaling

    assert dwise_scaling.roundf_u32(float("nan")) == 0xFFFFFFFF
    assert dwise_scaling.roundf_u32_array(np.array([np.nan], np.float32)).tolist() == \
        [0xFFFFFFFF]
    rng = dwise_scaling.initial_range(float("-inf"), float("inf"))
    sc = dwise_scaling.minmax_basics(rng, 0.0, 1.0, np.float32(np.nan), None, 32)
    assert sc.shamt == 129 and (sc.recip == 0x7FFFFFFF).all()
