"""Close_d32 (graph spec §4.10)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import CheckFailed, KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.debug.close_d32 import block_sum, close_d32
from hexscope.engine.tensor import Tensor

f32 = np.float32


def d32(codes: np.ndarray, seed: int = 0) -> Tensor:
    """A d32 tensor with garbage in its padding."""
    t = Tensor.from_array(np.asarray(codes, np.uint8)).to_d32(D32Padding(2, 1, 4, 3, 0, 0)
                                                              if codes.shape[3] % 32 == 0
                                                              else None)
    raw = t.buffer.copy()
    mask = t.padding_mask().reshape(-1)
    raw[mask] = np.random.default_rng(seed).integers(0, 256, int(mask.sum()), dtype=np.uint8)
    return Tensor(t.shape, DType.QUINT8, raw, Layout.D32, t.padding)


def run(codes, ref, lo, hi, *opts, padding=Padding.SAME, lines=None, seed=0):
    lines = [] if lines is None else lines
    ctx = KernelContext(0x70, "Close_d32", padding=padding, debug_level=2,
                        log_sink=lambda level, text: lines.append((level, text)))
    args = [Tensor.scalar(v) for v in opts]
    close_d32(ctx, d32(np.asarray(codes, np.uint8), seed), Tensor.scalar(lo), Tensor.scalar(hi),
              Tensor.from_array(np.asarray(ref, f32)), *args)
    return lines


def grid(values, shape=(1, 2, 5, 10)):
    return np.asarray(values).reshape(shape)


def test_excess_error_example_of_the_spec():
    # §4.10: with r = 13.4, t = 13 has excess 0 and t = 14 has excess 0.2 (range 0..255,
    # qscale 1). 100 points, one t = 14: passes a 0.25 limit, fails a 0.1 limit. Padding
    # VALID: the 0..255 range is far wider than the data, which the range rule would reject.
    ref = np.full(100, 13.4, f32)
    codes = np.full(100, 13, np.uint8)
    codes[57] = 14
    lines = run(grid(codes), grid(ref), 0.0, 255.0, 0.25, padding=Padding.VALID)
    assert (2, "close_d32 node 0x70 OK") in lines
    with pytest.raises(CheckFailed) as err:
        run(grid(codes), grid(ref), 0.0, 255.0, 0.1, padding=Padding.VALID)
    msg = str(err.value)
    assert "largest excess error 0.200" in msg and "(b,h,w,d)=(0,1,0,7)" in msg


def test_default_fraction_limit_is_five_percent():
    # r = 13.45, t = 14: excess 0.55 - 0.45 = 0.1 (< 0.2 default); 5 of 100 pass, 6 fail
    ref = np.full(100, 13.45, f32)
    codes = np.full(100, 13, np.uint8)
    codes[:5] = 14
    run(grid(codes), grid(ref), 0.0, 255.0, padding=Padding.VALID)
    codes[5] = 14
    with pytest.raises(CheckFailed, match="6 of 100 points"):
        run(grid(codes), grid(ref), 0.0, 255.0, padding=Padding.VALID)


def test_default_excess_limit_is_point_two():
    ref = np.full(100, 13.25, f32)          # t = 14: excess 0.75 - 0.25 = 0.5
    codes = np.full(100, 13, np.uint8)
    codes[3] = 14
    with pytest.raises(CheckFailed, match=r"0\.500 \(limit 0\.200\)"):
        run(grid(codes), grid(ref), 0.0, 255.0)


def test_worst_point_is_the_first_on_ties_and_is_listed():
    ref = np.full(100, 10.0, f32)
    codes = np.full(100, 10, np.uint8)
    codes[[20, 70]] = 13
    lines: list = []
    with pytest.raises(CheckFailed, match=r"index 20 \(b,h,w,d\)=\(0,0,2,0\)"):
        run(grid(codes), grid(ref), 0.0, 255.0, lines=lines)
    listed = [t for lv, t in lines if t.startswith(("20[", "70["))]
    assert listed[0].endswith(" <====") and not listed[1].endswith(" <====")
    assert (0, "test failed") not in lines          # the executor reports the failure


def test_listing_stops_after_100_and_keeps_the_worst():
    ref = np.full(300, 5.0, f32)
    codes = np.full(300, 6, np.uint8)               # 300 points with excess 1
    codes[250] = 9                                   # the worst, late
    lines: list = []
    with pytest.raises(CheckFailed):
        run(grid(codes, (1, 3, 10, 10)), grid(ref, (1, 3, 10, 10)), 0.0, 255.0, lines=lines)
    texts = [t for _, t in lines]
    assert "[Stopped after 100 errors]" in texts
    rows = [t for t in texts if re.match(r"\d+\[", t)]
    assert len(rows) == 101 and rows[-1].startswith("250[0,2,5,0])\t9\t") and "<====" in rows[-1]


def test_negative_limit_forces_stats_at_level_zero():
    ref = np.linspace(-1, 3, 100, dtype=f32)
    codes = np.round((ref + 1) * 255 / 4).astype(np.uint8)
    lines = run(grid(codes), grid(ref), -1.0, 3.0, -0.2)
    stats = [lv for lv, t in lines if t.startswith(("Ref data range", "Out of 100 points"))]
    assert stats == [0, 0]
    lines = run(grid(codes), grid(ref), -1.0, 3.0, 0.2)
    assert [lv for lv, t in lines if t.startswith("Out of")] == [2]


def test_stats_line_mean_and_population_sd():
    ref = np.linspace(-1, 3, 100, dtype=f32)
    codes = np.clip(np.round((ref + 1) * 255 / 4) + (np.arange(100) % 3 == 0), 0, 255)
    lines = run(grid(codes.astype(np.uint8)), grid(ref), -1.0, 3.0, -5.0, 1.0)
    r = (ref.astype(np.float64) + 1) * (255 / 4)
    delta = codes - r
    line = next(t for _, t in lines if t.startswith("Out of"))
    mean, rms = (float(v) for v in re.findall(r"err = (-?[\d.]+)", line)[:2])
    assert mean == pytest.approx(delta.mean(), abs=2e-3)
    assert rms == pytest.approx(delta.std(), abs=2e-3)        # sd about the mean, not rms
    assert any(t.startswith("correlation of") for _, t in lines)


def test_range_rule_and_padding_valid_disables_it():
    # DUT range (-1, 10) vs reference data in [-0.5, 1]: over = (11 - 1.5)/1.5 > 4
    ref = np.linspace(-0.5, 1.0, 100, dtype=f32)
    codes = np.round((ref + 1) * 255 / 11).astype(np.uint8)
    lines: list = []
    with pytest.raises(CheckFailed, match="DUT range is 633 % larger"):
        run(grid(codes), grid(ref), -1.0, 10.0, lines=lines)
    assert (0, "Computed range is too large for the reference data") in lines
    run(grid(codes), grid(ref), -1.0, 10.0, padding=Padding.VALID)


def test_non_integer_zero_point_is_only_logged():
    ref = np.zeros(100, f32)
    codes = np.full(100, 127, np.uint8)            # range +-1: zero at 127.5
    lines = run(grid(codes), grid(ref), -1.0, 1.0, 0.6, 1.0)
    assert any(lv == 0 and "has zero at 127.50000000" in t for lv, t in lines)


def test_shape_mismatch_is_an_error():
    with pytest.raises(KernelError, match="shape 1:2:5:10 does not match reference 1:1:1:100"):
        run(grid(np.zeros(100)), np.zeros((1, 1, 1, 100), f32), 0.0, 1.0)


@pytest.mark.parametrize("lo,hi", [(0.5, 1.0), (-2.0, -1.0), (np.nan, 1.0), (-1.0, np.inf),
                                   (0.0, 1e-7)])
def test_invalid_range_is_an_error(lo, hi):
    with pytest.raises(KernelError, match="invalid input range"):
        run(grid(np.zeros(100)), grid(np.zeros(100)), lo, hi)


def test_padding_garbage_does_not_change_the_result():
    rng = np.random.default_rng(8)
    ref = rng.uniform(-1, 3, 100).astype(f32)
    codes = np.round((ref + 1) * 255 / 4).astype(np.uint8)
    codes[::17] += 2
    texts = []
    for seed in (1, 2):
        lines: list = []
        with pytest.raises(CheckFailed) as err:
            run(grid(codes), grid(ref), -1.0, 3.0, lines=lines, seed=seed)
        texts.append((str(err.value), lines))
    assert texts[0] == texts[1]


def errstats_sum(values) -> np.float32:
    """errstats.c literally: add to A; every 100 points A -> B; B -> C at 10000; finally
    A -> B -> C."""
    a = b = c = f32(0)
    na = nb = 0
    for v in values:
        a = f32(a + f32(v))
        na += 1
        if na >= 100:
            b, nb, a, na = f32(b + a), nb + na, f32(0), 0
            if nb >= 10000:
                c, b, nb = f32(c + b), f32(0), 0
    b = f32(b + a)
    return f32(c + b)


def test_block_sum_follows_errstats_grouping():
    v = np.random.default_rng(9).uniform(-3, 3, 25_321).astype(f32)
    assert block_sum(v) == errstats_sum(v)
    assert block_sum(v) != np.add.accumulate(v, dtype=f32)[-1]   # the grouping matters


def reference_check(codes, ref, lo, hi, limit=0.2, frac=0.05):
    """The pass decision from §4.10, written per point in float32."""
    q = f32(f32(255) / f32(f32(hi) - f32(lo)))
    worst, pos, n_exc = f32(0), -1, 0
    for i, (t, x) in enumerate(zip(codes.ravel(), ref.ravel(), strict=True)):
        r = f32(f32(x - f32(lo)) * q)
        rr = f32(math.copysign(math.floor(abs(float(r)) + 0.5), float(r)))
        e = f32(abs(f32(f32(t) - r)) - abs(f32(rr - r)))
        if e > 0:
            n_exc += 1
            if e > worst:
                worst, pos = e, i
    return worst <= f32(limit) and n_exc <= f32(f32(frac) * f32(codes.size)), worst, pos


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), noise=st.sampled_from([0, 1, 2]),
       limit=st.sampled_from([0.2, 0.5, 1.0]))
def test_pass_decision_matches_reference(seed, noise, limit):
    rng = np.random.default_rng(seed)
    ref = rng.uniform(-1, 3, (1, 2, 3, 33)).astype(f32)
    codes = np.round((ref.astype(np.float64) + 1) * 255 / 4)
    codes = np.clip(codes + rng.integers(-noise, noise + 1, codes.shape), 0, 255)
    codes = codes.astype(np.uint8)
    ok, worst, pos = reference_check(codes, ref, -1.0, 3.0, limit)
    try:
        run(codes, ref, -1.0, 3.0, limit)
        passed = True
    except CheckFailed as exc:
        passed = False
        if pos >= 0:
            assert f"largest excess error {worst:.3f}" in str(exc)
            assert f"at index {pos} " in str(exc)
    assert passed == ok
