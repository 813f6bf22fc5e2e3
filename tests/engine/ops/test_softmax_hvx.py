"""QuantizedSoftmax_8_d32's HVX arithmetic (engine/ops/kernels/softmax_hvx.py) and the
Hexagon shifts its C path runs (engine/ops/kernels/hexagon_int.py): hand-computed steps,
the approximations' error bounds as nnlib states them (op_softmax_d32.c:693 ``pow2_v65_poly``,
hvx_mathops.h ``hvx_recip16_inline``), and a negative beta, where the C is undefined and
the Hexagon build gives a result (checked byte for byte under QEMU by test_oracle_hvx)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.errors import KernelError
from hexscope.engine.ops.d32.softmax import scaling_parms, softmax_fixed
from hexscope.engine.ops.kernels.hexagon_int import asl, asr, lsl, vasr_w, wrap32
from hexscope.engine.ops.kernels.softmax_hvx import (
    by_distance,
    distances,
    pow2_poly,
    recip16,
    softmax_hvx,
)


def test_register_shifts_by_hand():
    assert asr(1 << 20, -4) == 1 << 24              # a negative count shifts left
    assert asr(-8, 1) == -4 and asl(-8, -1) == -4   # arithmetic the other way
    assert lsl(-8, -1) == 0x7FFFFFFC                # logical right for lsl
    assert asr(256, 127) == 512                     # count = sxt7(127) = -1
    assert asl(3, 33) == 0 and asr(-5, 40) == -1    # past the width: nothing / the sign
    assert vasr_w(256, 63) == 512                   # HVX: sxt6(63) = -1
    assert vasr_w(256, 33) == 0                     # sxt6(33) = -31: 256 << 31 leaves 0
    assert wrap32(2**31) == -(2**31) and wrap32(-(2**31) - 1) == 2**31 - 1


def test_pow2_poly_by_hand_and_its_stated_error():
    # frac 0: vx = 0xFFFF, segment 3: 7230 -> (7230 * 65535 + 0x4014 << 15) >> 16 = 15431
    # -> (15431 * 65535 + 0x8773 << 15) >> 16 = 32768, saturated to 32767;
    # frac 0xFFFF: vx = 0, segment 0: the last constant 0x8001 << 15 >> 16 = 16384 (0.5)
    np.testing.assert_array_equal(pow2_poly(np.array([0, 0xFFFF])), [32767, 16384])
    f = np.arange(0x10000)
    p = pow2_poly(f)
    # nnlib's comment on pow2_v65_poly: "Peak Error: 6.9827e-05"
    assert np.abs(p / 32768 - 2.0 ** (-f / 65536)).max() == pytest.approx(6.9827e-05, rel=1e-4)
    assert (np.diff(p) <= 0).all()


def test_recip16_within_one_code_of_the_rounded_reciprocal():
    # hvx_recip16_inline(d, 10) on v65+: "result is +/-1 count of best answer"
    d = np.arange(0x4000, 0x8000)
    err = recip16(d) - np.round(2.0**29 / d)
    assert np.abs(err).max() == 1
    assert recip16(np.array([0x4000]))[0] == 32767          # 2**29 / 2**14 saturates


def test_equal_codes_by_hand():
    # lanes 0, 1 (code 5): diff 0, pow2 32767, pow32 = 32767 << 14, kept 32767; the sum
    # 1073709056 has 1 redundant sign bit: top half 32767, recip16 16384, * 255/256 with
    # rounding: 16320; rs = accshift + 3 - 1 = 4: ((32767 * 16320) >> 4) >> 12 = 8159,
    # (8159 + 32) >> 6 = 127. Lanes 2, 3 are depth padding above the real maximum: the
    # saturating subtraction gives diff 0, so the same 127
    assert recip16(np.array([32767]))[0] == 16384
    y = softmax_hvx(np.array([[5, 5, 9, 9]]), 2, *scaling_parms(0.0, 1.0, 1.0, 2))
    np.testing.assert_array_equal(y, [[127, 127, 127, 127]])


def test_a_negative_beta_by_hand_on_both_paths():
    # s = -1 / (255 ln 2): betamul -23730, r = 14, accshift 2 (test_softmax_d32)
    parms = scaling_parms(0.0, 1.0, -1.0, 2)
    assert parms == (-23730, 14, 2)
    x = np.array([[255, 0, 0, 0]])
    # C, code 0: xs = (255 * 256 * -23730) >> 14 = -94550: exponent -2, shift 0,
    # pow2(18261 / 2**15) = 22268, m = 22268 << 16; 2m wraps to -1376256000, so the kept
    # value saturates at -32768. The sum 1996210176 (cl0 1): norm 30459, recip 17557,
    # shift 23: (32767 * 17557 + 2**22) >> 23 = 69 and a negative y -> 0
    np.testing.assert_array_equal(softmax_fixed(x[:, :2], *parms), [[69, 0]])
    # HVX: betamul is an unsigned halfword (41806): 65280 * 41806 wraps to -1565871616,
    # >> 14 = -95574: exponent -2, a vasr by -2 shifts left: (pow2 << 14) << 2, whose
    # 16-bit form saturates at 32767 like the top lane's: both lanes, and the padding
    # lanes (code 0) with them, get the same 68
    np.testing.assert_array_equal(softmax_hvx(x, 2, *parms), [[68, 68, 68, 68]])


def test_a_sum_wrapping_to_zero_fails_the_c_path():
    # 2**18 equal lanes of 32767 << 14 sum to 32767 * 2**32: 0 in 32 bits, where nnlib's
    # C would divide by zero (the parameters are forced: a real depth this large has a
    # larger accshift)
    with pytest.raises(KernelError, match="divides by zero"):
        softmax_fixed(np.zeros((1, 2**18), np.uint8), 0, 31, 2)


@settings(max_examples=30, deadline=None)
@given(d=st.integers(1, 200), beta=st.sampled_from([0.0, 0.05, 1.0, 2.0, 10.0]),
       seed=st.integers(0, 2**32 - 1))
def test_within_one_code_of_the_c_path_for_a_positive_beta(d, beta, seed):
    # nnlib: the C is "close" to the HVX (op_softmax_d32.c:363); measured: at most 1 code
    x = np.random.default_rng(seed).integers(0, 256, (3, d))
    parms = scaling_parms(-6.0, 6.0, beta, d)
    lanes = -(-d // 4) * 4
    hvx = softmax_hvx(np.pad(x, ((0, 0), (0, lanes - d))), d, *parms)[:, :d]
    assert np.abs(hvx.astype(int) - softmax_fixed(x, *parms).astype(int)).max() <= 1


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 4), lanes=st.integers(1, 600), seed=st.integers(0, 2**32 - 1))
def test_per_row_tables_equal_per_lane_evaluation(rows, lanes, seed):
    # by_distance evaluates per row and distance (rows of 256+ lanes) or per lane: the same
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 256, (rows, lanes), dtype=np.uint8)
    dist = distances(codes, max(1, lanes - 3))
    values = rng.integers(-(2**15), 2**15, 256)
    scale = rng.integers(1, 3000, (rows, 1))
    got = by_distance(dist, values, lambda v: (v * scale) >> 3)
    np.testing.assert_array_equal(got, (values[dist] * scale) >> 3)
