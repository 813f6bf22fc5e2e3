"""Quantize, AutoQuantize (quantized-ops spec §17, §19) and Dequantize (§18)."""

from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.quant.quantize import auto_quantize, dequantize, dequantize_ref, quantize
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

f32 = np.float32


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def ctx(lines: list | None = None) -> KernelContext:
    sink = (lambda level, text: lines.append((level, text))) if lines is not None else None
    return KernelContext(0x40, "Quantize", debug_level=2, log_sink=sink)


def run_quantize(x, lo, hi):
    y, mn, mx = quantize(ctx(), Tensor.from_array(np.asarray(x, f32)), Tensor.scalar(lo),
                         Tensor.scalar(hi))
    return y.array, f32(mn.array.item()), f32(mx.array.item())


def ref_hvx_code(x: float, mn: float, mx: float) -> int:
    """§17.2 written out per element with Python integers (an independent reading)."""
    r = float(f32(f32(f32(mx) - f32(mn)) * f32(1.003921569)))
    rb, mb, xb = _bits(r), _bits(mn), _bits(x)
    ce = ((rb >> 23) & 255) + 4
    sh_min = ce - ((mb >> 23) & 255)
    mo = 0 if not 0 <= sh_min < 24 else ((mb & 0x7FFFFF) | 1 << 23) >> sh_min
    rm = ((rb & 0x7FFFFF) | 1 << 23) >> 4
    sc = (2 ** 32 - 1) // rm
    mo += rm >> 9
    sh = min(ce - ((xb >> 23) & 255), 31)
    assert sh >= 0, "the reference covers in-range inputs only"
    v = ((xb & 0x7FFFFF) | 1 << 23) >> sh
    if xb >> 31:
        v = -v
    w = ((v + mo) * sc) >> 16
    return min(max(w, 0), 65535) >> 8


# Quantize (§17.2) -----------------------------------------------------------------------------
@pytest.mark.parametrize("rng,expected", [
    ((-1.0, 1.0), (-1.0, 1.0078740)), ((-0.3, 5.7), (-0.30619833, 5.7)),
    ((-10.0, 0.1), (-10.0, 0.11904716)), ((-1.3, 10.6), (-1.3074890, 10.6)),
    ((-2.5, 2.5), (-2.5, 2.5196853)),
])
def test_quantize_reports_r2_range_of_spec_table(rng, expected):
    # quantized-ops spec §1.10 worked examples (R2 = R1 there)
    _, mn, mx = run_quantize([0.0], *rng)
    assert mn == pytest.approx(expected[0], rel=1e-6)
    assert mx == pytest.approx(expected[1], rel=1e-6)


def test_quantize_zero_maps_to_zero_code_and_ends_saturate():
    # §17.2: range (-1, 1.0078740) has zero code 127; values outside saturate to 0 / 255
    y, mn, mx = run_quantize([0.0, -0.0, -1.0, 1.0078740, -50.0, 50.0], -1.0, 1.0)
    assert list(y.ravel()) == [127, 127, 0, 255, 0, 255]


def test_quantize_hand_vector_truncated_constants():
    # §17.2 by hand for range [0, 255] (mn = 0, so no R2): R = f32(255 * 1.003921569) = 256.0
    # (biased exp 135), CE = 139, rm = 2^23 >> 4 = 2^19, sc = floor((2^32-1)/2^19) = 8191,
    # mo = 0 + (2^19 >> 9) = 1024. x = 1.0: m = 2^23, sh = 139 - 127 = 12, v = 2048,
    # w = (2048 + 1024) * 8191 >> 16 = 383, code 383 >> 8 = 1. x = 2.0: v = 4096,
    # w = 5120 * 8191 >> 16 = 639 -> 2. x = 254.0: v = 254*2048 = 520192,
    # w = 521216*8191 >> 16 = 65144 -> 254.
    y, mn, mx = run_quantize([1.0, 2.0, 254.0, 0.0], 0.0, 255.0)
    assert list(y.ravel()) == [1, 2, 254, 0]
    assert (mn, mx) == (0.0, 255.0)


def test_quantize_min_above_zero_adds_its_magnitude():
    # §17.2 quirk: min = 1 is not clamped; codes become (x + 1) * 255/range
    y, mn, mx = run_quantize([0.0, 1.0], 1.0, 3.0)
    assert mn == 1.0 and mx == 3.0
    assert list(y.ravel()) == [ref_hvx_code(0.0, 1.0, 3.0), ref_hvx_code(1.0, 1.0, 3.0)]
    assert y.ravel()[0] > 100          # 0.0 would be below the range if min were honoured


@pytest.mark.parametrize("lo,hi", [(np.nan, 1.0), (-1.0, np.inf), (-np.inf, 1.0)])
def test_quantize_rejects_non_finite_range(lo, hi):
    with pytest.raises(KernelError, match="inf or NaN"):
        run_quantize([0.0], lo, hi)


def test_quantize_degenerate_range_widens_by_1e18():
    _, mn, mx = run_quantize([0.0], 0.0, 0.0)
    assert mn == 0.0 and mx == f32(1e-18)


@settings(max_examples=40, deadline=None)
@given(lo=st.floats(-1000, -0.125, width=32), hi=st.floats(0.125, 1000, width=32),
       data=st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=40))
def test_quantize_matches_integer_reference(lo, hi, data):
    # in-range and mildly out-of-range values against the per-element reference
    x = np.asarray(data, f32) * f32(1.5 * max(-lo, hi))
    y, mn, mx = run_quantize(x, lo, hi)
    expected = [ref_hvx_code(float(v), float(mn), float(mx)) for v in x]
    assert list(y.ravel()) == expected
    # nearly round-to-nearest: never more than one code off (spec note, §17.2)
    exact = np.clip(np.floor((x.astype(np.float64) - mn) * 255 / (mx - mn) + 0.5), 0, 255)
    assert np.max(np.abs(y.ravel().astype(int) - exact)) <= 1


# AutoQuantize (§19) ---------------------------------------------------------------------------
def test_autoquantize_nonnegative_data_reports_negative_zero_min():
    y, mn, mx = auto_quantize(ctx(), Tensor.from_array(np.array([0.0, 2.0, 4.0], f32)))
    assert mn.array.item() == 0.0 and np.signbit(mn.array.item())
    assert mx.array.item() == 4.0
    assert list(y.array.ravel()) == [0, ref_hvx_code(2.0, -0.0, 4.0), 255]


def test_autoquantize_all_zero_data():
    # §19: range (-0.0, 1e-18), all codes 0
    y, mn, mx = auto_quantize(ctx(), Tensor.from_array(np.zeros((1, 2, 2, 3), f32)))
    assert np.signbit(mn.array.item()) and mx.array.item() == f32(1e-18)
    assert not y.array.any() and y.shape == (1, 2, 2, 3)


@pytest.mark.parametrize("bad", [np.nan, -np.nan, np.inf, -np.inf])
def test_autoquantize_rejects_nan_and_inf(bad):
    with pytest.raises(KernelError, match="inf or NaN"):
        auto_quantize(ctx(), Tensor.from_array(np.array([1.0, bad, -2.0], f32)))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-100, 100, width=32), min_size=1, max_size=30))
def test_autoquantize_equals_quantize_over_data_range(data):
    x = np.asarray(data, f32)
    y, mn, mx = auto_quantize(ctx(), Tensor.from_array(x))
    lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
    assert float(mx.array.item()) >= hi and float(mn.array.item()) <= lo
    expected = [ref_hvx_code(float(v), float(mn.array.item()), float(mx.array.item()))
                for v in x]
    assert list(y.array.ravel()) == expected


def test_quantize_and_autoquantize_in_a_graph():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x11, np.array([-1.0], f32))
    g.append_const_node(0x12, np.array([1.0], f32))
    g.append_node(0x13, "Quantize", inputs=[(0x10, 0), (0x11, 0), (0x12, 0)], outputs=3)
    g.append_node(0x14, "Dequantize", inputs=[(0x13, 0), (0x13, 1), (0x13, 2)], outputs=1)
    g.append_node(0x15, "OUTPUT", inputs=[(0x14, 0)])
    s = Session(g)
    x = np.array([[-1.0, -0.5, 0.0, 0.25, 1.0]], f32)
    (out,) = s.execute([x])
    step = (1.0078740 + 1.0) / 255
    assert np.allclose(out.array.ravel(), x.ravel(), atol=step)
    assert out.array.ravel()[2] == 0.0


# Dequantize (§18) -----------------------------------------------------------------------------
def run_deq(q, lo, hi, lines=None, kernel=dequantize):
    (y,) = kernel(ctx(lines), Tensor.from_array(np.asarray(q, np.uint8)), Tensor.scalar(lo),
                  Tensor.scalar(hi))
    return np.asarray(y, f32).ravel()


def ref_dequant(q: int, lo: float, hi: float) -> float:
    """§18 with exact rationals: round |q - z| * step to 24 significant bits, ties up."""
    width = max(f32(1e-18), f32(f32(hi) - f32(lo)))
    step = f32(width / f32(255))
    z = min(255, max(0, int(np.trunc(f32(f32(-f32(lo)) / step) + f32(np.copysign(0.5, -lo))))))
    d = q - z
    if d == 0:
        return 0.0
    exact = abs(d) * Fraction(float(step))
    e = exact.numerator.bit_length() - exact.denominator.bit_length()
    scale = Fraction(2) ** (23 - e)
    while exact * scale >= 2 ** 24:
        scale /= 2
    while exact * scale < 2 ** 23:
        scale *= 2
    m = int(exact * scale + Fraction(1, 2))      # half up
    value = float(Fraction(m) / scale)
    return -value if d < 0 else value


def test_dequantize_zero_code_gives_positive_zero_and_ends():
    y = run_deq([0, 127, 255], -1.0, 1.0078740)
    assert y[1] == 0.0 and not np.signbit(y[1])
    assert y[0] == pytest.approx(-1.0, rel=1e-6) and y[2] == pytest.approx(1.007874, rel=1e-6)


def test_dequantize_rounds_ties_up_not_to_even():
    # quantized-ops §18: the product 3 * 0x800003 = 0x1800009 needs one bit dropped; the tie
    # goes up (0xC00005) where a float multiply keeps the even 0xC00004.
    step = f32(1 + 3 * 2.0 ** -23)
    hi = f32(step * f32(255))
    assert f32(hi / f32(255)) == step          # the range really has this step
    y = run_deq([3], 0.0, float(hi))
    assert _bits(float(y[0])) & 0x7FFFFF == 0xC00005 & 0x7FFFFF     # significand 0xC00005
    assert y[0] != f32(3) * step
    assert y[0] == ref_dequant(3, 0.0, float(hi))


def test_dequantize_ref_is_the_same_routine():
    q = np.arange(256)
    assert np.array_equal(run_deq(q, -0.7, 3.1), run_deq(q, -0.7, 3.1, kernel=dequantize_ref))


def test_dequantize_nonproper_ranges_clamp_the_zero_code():
    # §18: min > 0 gives z = 0 (output ignores min); max < 0 gives z = 255
    y = run_deq([0, 255], 1.0, 2.0)
    assert y[0] == 0.0 and y[1] == pytest.approx(1.0, rel=1e-6)
    y = run_deq([0, 255], -2.0, -1.0)
    assert y[1] == 0.0 and y[0] == pytest.approx(-1.0, rel=1e-6)


def test_dequantize_runs_a_range_whose_width_overflows_float32():
    """op_quantize.c dequantize_execute: flt_div_255 of an infinite width is NaN, which passes
    the "stepsize < 0 || stepsize >= 2^121" test and goes to hvx_do_dequantize; the zero
    code is saturate_u8(roundf_i32(NaN)) = 0, so code 0 is +0.0 and the others are read off
    the bits of Hexagon's NaN 0xFFFFFFFF: scale 0xFFFFFF, base_exp 255 + 8. By hand: q=1 is
    0xFFFFFF normalised by 8 (exponent field 255, mantissa 0x7FFFFF: 0x7FFFFFFF); q=2 by 7,
    whose exponent 256 carries into the 16-bit sign field (0x807FFFFF)."""
    y = run_deq([0, 1, 2], -3e38, 3e38)
    assert [int(v) for v in y.view(np.uint32)] == [0, 0x7FFFFFFF, 0x807FFFFF]


def test_dequantize_tiny_width_is_floored_at_1e18():
    # §18: step = div255(max(1e-18, max - min)), so the "step < 2^-126 -> zeros" branch is
    # unreachable from a range; a 1e-37 range dequantizes with the 1e-18 width.
    y = run_deq([0, 255], 0.0, 1e-37)
    assert y[0] == 0.0 and y[1] == pytest.approx(1e-18, rel=1e-6)


def test_dequantize_nan_width_is_floored_too():
    # fmaxf(1e-18, NaN) = 1e-18; min = 0 keeps the zero code at 0
    y = run_deq([255], 0.0, float("nan"))
    assert y[0] == pytest.approx(1e-18, rel=1e-6)


@settings(max_examples=40, deadline=None)
@given(lo=st.floats(-1e6, 0, width=32), width=st.floats(0.0009765625, 1048576.0, width=32),
       q=st.lists(st.integers(0, 255), min_size=1, max_size=20))
def test_dequantize_matches_exact_half_up_reference(lo, width, q):
    hi = float(f32(f32(lo) + f32(width)))
    y = run_deq(q, lo, hi)
    assert [float(v) for v in y] == [ref_dequant(c, lo, hi) for c in q]


def test_dequantize_quantize_round_trip_is_within_half_a_step():
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 5, 500).astype(f32)
    y, mn, mx = run_quantize(x, -3.0, 5.0)
    back = run_deq(y, float(mn), float(mx))
    step = (float(mx) - float(mn)) / 255
    assert np.max(np.abs(back - x)) <= step * 1.01
