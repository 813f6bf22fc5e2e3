"""QuantizeDownAndShrinkRange_32to8 (quantized-ops spec §7)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.quant.requantize import (
    quantize_down_and_shrink_range_32to8,
    requantize_i32_to_u8,
)
from hexscope.engine.quant import adjust_range
from hexscope.engine.tensor import Tensor

f32 = np.float32

# every test runs with the compiled kernels and with the numpy paths (tests/conftest.py)
pytestmark = __import__("pytest").mark.usefixtures("kernels")


def _run(codes: np.ndarray, lo: float, hi: float,
         ctx: KernelContext | None = None) -> tuple[np.ndarray, float, float]:
    ctx = ctx or KernelContext(node_id=0x30, op="QuantizeDownAndShrinkRange_32to8")
    x = Tensor.from_array(np.asarray(codes, np.int32).reshape(1, 1, 1, -1), DType.QINT32)
    y, mn, mx = quantize_down_and_shrink_range_32to8(ctx, x, Tensor.scalar(lo), Tensor.scalar(hi))
    return np.asarray(y).ravel(), mn.item(), mx.item()


def _rndi(x: float) -> int:
    s = f32(f32(x) + f32(math.copysign(0.5, float(x))))
    return int(s)


def _ref(codes: list[int], lo: float, hi: float) -> tuple[list[int], float, float]:
    """§7 written out per element with Python integers (Paths A, B and C)."""
    level = f32(f32(f32(hi) - f32(lo)) * f32(2.0 ** -32))
    m0 = f32(level * f32(min(0, min(codes))))
    big_m0 = f32(level * f32(max(0, max(codes))))
    mn, mx = (f32(v) for v in adjust_range(m0, big_m0))
    if mn == mx:
        return [0] * len(codes), float(mn), float(mx)     # all zero (§7, unconfirmed)
    osc = f32(f32(255.0) / f32(mx - mn))
    gain = f32(level * osc)
    off = f32(f32(0.5) - f32(mn * osc))
    out = []
    if gain >= 1:
        out = [min(255, max(0, int(f32(f32(f32(c) * gain) + off)))) for c in codes]
        return out, float(mn), float(mx)
    gi = _rndi(f32(gain * f32(2.0 ** 31)))
    if len(codes) >= 128 and gi >= 1024:
        oi = _rndi(f32(mn / level))
        return ([min(255, max(0, ((c - oi) * gi + 2 ** 30) >> 31)) for c in codes],
                float(mn), float(mx))
    zo = int(off)
    return ([min(255, max(0, ((c * gi + 2 ** 30) >> 31) + zo)) for c in codes],
            float(mn), float(mx))


def test_shrinks_to_the_data_and_uses_path_b_for_small_tensors() -> None:
    # §7: range +-1 -> step 2^-31; codes span [-2^29, 2^30] -> range [-0.25, 0.5]; R1 keeps it
    # (255/0.75 = 340 and 0.25*340 = 85 exactly). gain code 340 < 1024 -> Path B, zo = 85.
    y, mn, mx = _run(np.array([0, 2 ** 30, -(2 ** 29)]), -1.0, 1.0)
    assert (mn, mx) == (-0.25, 0.5)
    assert y.tolist() == [85, 255, 0]


def test_path_c_when_the_gain_reaches_one() -> None:
    # step 2^-7 (range +-2^24); codes 0..255 -> range [0, 255/128], gain exactly 1: Path C,
    # y = trunc(x + 0.5) = x.
    y, mn, mx = _run(np.array([0, 100, 255]), -(2.0 ** 24), 2.0 ** 24)
    assert (mn, mx) == (0.0, 255 / 128)
    assert y.tolist() == [0, 100, 255]


def test_paths_a_and_b_differ_and_the_element_count_selects_them() -> None:
    rng = np.random.default_rng(5)
    codes = rng.integers(-300, 700, 128)
    level = f32(f32(2.0) * f32(2.0 ** -32))
    mn, mx = (f32(v) for v in adjust_range(f32(level * f32(codes.min())),
                                           f32(level * f32(codes.max()))))
    path_a = requantize_i32_to_u8(codes, level, mn, mx, aligned=True)
    path_b = requantize_i32_to_u8(codes, level, mn, mx, aligned=False)
    assert (path_a != path_b).any()                       # §7: they disagree by one code ...
    assert np.abs(path_a.astype(int) - path_b.astype(int)).max() == 1
    assert np.array_equal(_run(codes, -1.0, 1.0)[0], path_a)   # ... 128 elements: Path A
    short = codes[:127]                                           # 127 elements: Path B
    short_b = requantize_i32_to_u8(short, level, mn, mx, aligned=False)
    assert np.array_equal(_run(short, -1.0, 1.0)[0], short_b)
    assert not np.array_equal(short_b, path_a[:127])


def test_integer_path_differs_from_float_rounding_by_at_most_one() -> None:
    codes = np.random.default_rng(9).integers(-40000, 90000, 4096)
    y, mn, mx = _run(codes, -50.0, 50.0)
    level = (f32(100.0) * f32(2.0 ** -32)).astype(np.float64)
    exact = np.clip(np.floor((codes * level - mn) * 255 / (mx - mn) + 0.5), 0, 255)
    diff = np.abs(exact - y)
    assert diff.max() <= 1 and diff.mean() < 0.05


def test_all_zero_input_gives_zero_codes_a_zero_range_and_a_warning() -> None:
    # §7 (unconfirmed): range [0, 0]; NaN scales; Hexagon's NaN -> -1 conversion gives 0.
    ctx = KernelContext(node_id=0x31, op="QuantizeDownAndShrinkRange_32to8")
    for n in (3, 300):
        y, mn, mx = _run(np.zeros(n), -1.0, 1.0, ctx)
        assert (mn, mx) == (0.0, 0.0) and not y.any()
    assert len(ctx.warnings) == 2 and "[0, 0]" in ctx.warnings[0]


def test_one_sided_data_still_include_zero() -> None:
    y, mn, mx = _run(np.array([1000, 2000, 4000] * 50), -1.0, 1.0)
    assert mn == 0.0 and mx > 0 and y.min() > 0
    y, mn, mx = _run(np.array([-1000, -4000]), -1.0, 1.0)
    assert mx == 0.0 and mn < 0 and y.tolist()[1] == 0


@settings(max_examples=40, deadline=None)
@given(codes=st.lists(st.integers(-(2 ** 31), 2 ** 31 - 1), min_size=1, max_size=300),
       span=st.floats(2.0 ** -10, 1e4, width=32),
       scale=st.sampled_from([1, 2 ** 8, 2 ** 16, 2 ** 24]))
def test_matches_a_per_element_reference(codes: list[int], span: float, scale: int) -> None:
    codes = [c // scale for c in codes]            # vary the code span (and so the path)
    y, mn, mx = _run(np.array(codes), -span, span)
    ref, rmn, rmx = _ref(codes, -span, span)
    assert (mn, mx) == (rmn, rmx)
    assert y.tolist() == ref


def test_tiny_gain_uses_path_b_even_for_large_aligned_tensors() -> None:
    # §7: gi < 1024 (a code span near 2^31) selects Path B; Path A would differ here.
    codes = np.random.default_rng(2).integers(-(2 ** 30), 2 ** 31 - 1, 256)
    y, mn, mx = _run(codes, -1.0, 1.0)
    level = f32(f32(2.0) * f32(2.0 ** -32))
    gi = _rndi(f32(f32(level * f32(f32(255.0) / f32(f32(mx) - f32(mn)))) * f32(2.0 ** 31)))
    assert gi < 1024
    assert y.tolist() == _ref(codes.tolist(), -1.0, 1.0)[0]
    oi = _rndi(f32(f32(mn) / level))
    path_a = [min(255, max(0, ((c - oi) * gi + 2 ** 30) >> 31)) for c in codes.tolist()]
    assert path_a != y.tolist()
