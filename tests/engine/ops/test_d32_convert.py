"""Convert_to_d32 / Convert_from_d32 (graph spec §4.16-§4.17), AutoQuantize_d32 (quantized-ops
§20) and QuantizeForTest_d32 (§21)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.d32.convert import (
    auto_quantize_d32,
    auto_quantize_d32_ref,
    convert_from_d32,
    convert_to_d32,
    quantize_for_test_d32,
)
from hexscope.engine.ops.quant.quantize import auto_quantize
from hexscope.engine.quant import adjust_range_for_zero
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

f32 = np.float32
FILL = 0x5A


def make_ctx(lines=None, outputs=(), n_out=None):
    sink = (lambda level, text: lines.append((level, text))) if lines is not None else None
    defs = tuple(outputs) or tuple(OutputDef((), 0) for _ in range(n_out or 0))
    return KernelContext(0x50, "op", output_defs=defs, padding_fill=FILL, debug_level=3,
                         log_sink=sink)


def i32(v: int) -> Tensor:
    return Tensor.scalar(v, DType.INT32)


def garbage_d32(arr: np.ndarray, pad: D32Padding, seed: int = 0) -> Tensor:
    """A d32 tensor whose padding holds random bytes."""
    t = Tensor.from_array(arr.astype(np.uint8)).to_d32(pad)
    raw = t.buffer.copy()
    mask = t.padding_mask().reshape(-1)
    raw[mask] = np.random.default_rng(seed).integers(0, 256, int(mask.sum()), dtype=np.uint8)
    return Tensor(t.shape, DType.QUINT8, raw, Layout.D32, pad)


def reference_to_d32(arr: np.ndarray, pad: D32Padding) -> np.ndarray:
    """Independent packing with explicit loops over §1.6.3 addresses."""
    b_, h_, w_, d_ = arr.shape
    ht, wt, dt = pad[0] + h_ + pad[1], pad[2] + w_ + pad[3], pad[4] + d_ + pad[5]
    buf = np.full(b_ * ht * wt * dt, FILL, np.uint8)
    for b in range(b_):
        for h in range(h_):
            for w in range(w_):
                for d in range(d_):
                    dp = d + pad[4]
                    off = (b * ht * wt * dt + (h + pad[0]) * wt * dt + (w + pad[2]) * 32
                           + (dp // 32) * wt * 32 + dp % 32)
                    buf[off] = arr[b, h, w, d]
    return buf


# Convert_to_d32 (§4.17) -----------------------------------------------------------------------
def test_convert_to_d32_default_padding_spec_example():
    # §4.17: W = 7, D = 112 with defaults -> hb = ha = 4, wb = 4, wa = 1, da = 16
    x = np.arange(2 * 7 * 112).reshape(1, 2, 7, 112).astype(np.uint8)
    (y,) = convert_to_d32(make_ctx(), Tensor.from_array(x))
    assert y.layout is Layout.D32 and y.padding == D32Padding(4, 4, 4, 1, 0, 16)
    assert np.array_equal(y.array, x)
    assert np.all(y.memory[y.padding_mask()] == FILL)        # undefined padding shows the fill
    assert np.array_equal(y.buffer, reference_to_d32(x, y.padding))


def test_convert_to_d32_right_padding_minus_four_rule():
    # §4.17 example: left 4, W = 3, min right 6 -> 13 -> 16, wa = 9 > 7 -> 5
    x = np.ones((1, 1, 3, 5), np.uint8)
    (y,) = convert_to_d32(make_ctx(), Tensor.from_array(x), i32(0), i32(4), i32(6), i32(2))
    assert y.padding == D32Padding(2, 2, 4, 5, 0, 27)


def test_convert_to_d32_out_of_range_options_fall_back_and_log():
    lines: list = []
    x = np.zeros((1, 1, 2, 3), np.uint8)
    (y,) = convert_to_d32(make_ctx(lines), Tensor.from_array(x), i32(0), i32(9), i32(-1),
                          i32(9))
    assert y.padding[:4] == (4, 4, 4, 2)
    assert (2, "convert_d32: value 9 out of range (0..7) for width padding(left); "
               "using default of 4") in lines
    assert (2, "convert_d32: value 9 out of range (0..8) for height padding; "
               "using default of 4") in lines


def test_convert_to_d32_forces_depth_before_to_zero():
    lines: list = []
    x = np.zeros((1, 1, 1, 3), np.uint8)
    (y,) = convert_to_d32(make_ctx(lines), Tensor.from_array(x), i32(5))
    assert y.padding.d_before == 0 and y.padding.d_after == 29
    assert (0, "depth_pad_before = 5: ignored") in lines


def test_convert_to_d32_fails_when_declared_output_too_small():
    # §4.17: default padding fits the §1.4 widening exactly; h_pad = 8 does not
    x = np.zeros((1, 2, 7, 112), np.uint8)
    ctx = make_ctx(outputs=[OutputDef((1, 2, 7, 112), 1)])
    convert_to_d32(ctx, Tensor.from_array(x))
    with pytest.raises(KernelError, match="out prepare fail"):
        convert_to_d32(ctx, Tensor.from_array(x), i32(0), i32(4), i32(0), i32(8))


# Convert_from_d32 (§4.16) ---------------------------------------------------------------------
def test_convert_from_d32_reads_only_valid_data():
    x = np.random.default_rng(1).integers(0, 256, (2, 3, 5, 40)).astype(np.uint8)
    t = garbage_d32(x, D32Padding(1, 2, 3, 0, 0, 24))
    (y,) = convert_from_d32(make_ctx(), t)
    assert y.layout is Layout.FLAT and np.array_equal(y.array, x)


def test_convert_from_d32_rejects_depth_before_padding():
    t = garbage_d32(np.zeros((1, 1, 4, 3), np.uint8), D32Padding(0, 0, 0, 0, 2, 27))
    with pytest.raises(KernelError, match="depth_before !=0"):
        convert_from_d32(make_ctx(), t)


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 4), st.integers(1, 9),
                       st.integers(1, 70)),
       opts=st.tuples(st.integers(0, 7), st.integers(0, 7), st.integers(0, 8)),
       seed=st.integers(0, 2 ** 16))
def test_convert_round_trip_matches_loop_reference(shape, opts, seed):
    x = np.random.default_rng(seed).integers(0, 256, shape).astype(np.uint8)
    (y,) = convert_to_d32(make_ctx(), Tensor.from_array(x), i32(0), *map(i32, opts))
    assert np.array_equal(y.buffer, reference_to_d32(x, y.padding))
    assert y.geometry.w_total % 4 == 0 and y.padding.w_after <= 7
    dirty = garbage_d32(x, y.padding, seed)
    (back,) = convert_from_d32(make_ctx(), dirty)
    assert np.array_equal(back.array, x)


def test_convert_pair_in_a_graph():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x11, "Convert_to_d32", inputs=[(0x10, 0)], outputs=1)
    g.append_node(0x12, "Convert_from_d32", inputs=[(0x11, 0)], outputs=1)
    g.append_node(0x13, "OUTPUT", inputs=[(0x12, 0)])
    x = np.arange(3 * 5 * 33).reshape(1, 3, 5, 33).astype(np.uint8)
    (out,) = Session(g).execute([x])
    assert np.array_equal(out.array, x)


# AutoQuantize_d32 (§20) -----------------------------------------------------------------------
def test_autoquantize_d32_codes_equal_autoquantize():
    x = np.random.default_rng(2).normal(0, 3, (1, 3, 6, 45)).astype(f32)
    y, mn, mx = auto_quantize_d32(make_ctx(), Tensor.from_array(x))
    flat, fmn, fmx = auto_quantize(make_ctx(), Tensor.from_array(x))
    assert np.array_equal(y.array, flat.array)
    assert (mn.array.item(), mx.array.item()) == (fmn.array.item(), fmx.array.item())
    assert y.padding == D32Padding(4, 4, 4, 2, 0, 19)
    assert np.all(y.memory[y.padding_mask()] == FILL)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-1e4, 1e4, width=32), min_size=1, max_size=50))
def test_autoquantize_d32_wrapping_product_equals_saturating(data):
    # §20: the modulo-2^32 vector routine gives the same codes as the saturating one
    x = np.asarray(data, f32).reshape(1, 1, 1, -1)
    y, _, _ = auto_quantize_d32(make_ctx(), Tensor.from_array(x))
    flat, _, _ = auto_quantize(make_ctx(), Tensor.from_array(x))
    assert np.array_equal(y.array, flat.array)


def test_autoquantize_d32_ignores_depth_before_and_logs():
    lines: list = []
    x = np.ones((1, 1, 2, 3), f32)
    y, _, _ = auto_quantize_d32(make_ctx(lines), Tensor.from_array(x), i32(3), i32(99))
    assert y.padding.d_before == 0 and y.padding.w_before == 4
    assert (1, "d_pad_before=3 request for  autoquantize_d32 ignored; used 0") in lines
    assert any(lv == 0 and "autoquant_d32: value 99 out of range" in t for lv, t in lines)


def test_autoquantize_d32_rejects_nan():
    with pytest.raises(KernelError, match="inf or NaN"):
        auto_quantize_d32(make_ctx(), Tensor.from_array(np.array([[[[1.0, np.nan]]]], f32)))


def test_autoquantize_d32_capacity_is_not_widened():
    # graph spec §1.4: only ops with the D32_OUTPUT flag get the widening; this one has none
    x = np.ones((1, 2, 7, 112), f32)
    with pytest.raises(KernelError, match="failure preparing output"):
        auto_quantize_d32(make_ctx(outputs=[OutputDef((1, 2, 7, 112), 1)]),
                          Tensor.from_array(x))
    big = OutputDef((1, 10, 12, 128), 1)
    y, _, _ = auto_quantize_d32(make_ctx(outputs=[big]), Tensor.from_array(x))
    assert y.shape == (1, 2, 7, 112)


# QuantizeForTest_d32 (§21) --------------------------------------------------------------------
def fortest_reference(x: np.ndarray) -> tuple[np.ndarray, float, float]:
    """§21 written out plainly (NaN skipped, 0 included, width >= 0.001, R2, round)."""
    vals = x[~np.isnan(x)]
    mn = f32(min(0.0, float(vals.min()))) if vals.size else f32(0)
    mx = f32(max(max(0.0, float(vals.max())) if vals.size else 0.0, float(f32(mn + f32(0.001)))))
    if mn < 0:
        mn, mx = (f32(v) for v in adjust_range_for_zero(mn, mx))
    k = f32(f32(255) / f32(mx - mn))
    codes = []
    for v in x.ravel():
        s = f32(f32(v - mn) * k)
        r = f32(s + f32(np.copysign(0.5, s)))
        codes.append(0 if np.isnan(r) else min(255, max(0, int(np.trunc(r)))))
    return np.array(codes, np.uint8).reshape(x.shape), float(mn), float(mx)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-50, 50, width=32), min_size=1, max_size=60))
def test_quantize_for_test_matches_reference(data):
    x = np.asarray(data, f32).reshape(1, 1, 1, -1)
    y, mn, mx, fl = quantize_for_test_d32(make_ctx(n_out=4), Tensor.from_array(x))
    codes, rmn, rmx = fortest_reference(x)
    assert np.array_equal(y.array, codes)
    assert (mn.array.item(), mx.array.item()) == (rmn, rmx)
    step = f32(f32(f32(rmx) - f32(rmn)) / f32(255))
    expected = (codes.astype(f32) * step).astype(f32) + f32(rmn)
    assert np.array_equal(np.asarray(fl, f32), expected.astype(f32))


def test_quantize_for_test_minimum_width_and_nan_skipped():
    # §21: all-zero data give (0, 0.001); NaN is skipped silently
    y, mn, mx = quantize_for_test_d32(make_ctx(), Tensor.from_array(np.zeros((1, 1, 2, 2), f32)))
    assert (mn.array.item(), mx.array.item()) == (0.0, f32(0.001)) and not y.array.any()
    x = np.array([[[[np.nan, 2.0, 1.0]]]], f32)
    y, mn, mx = quantize_for_test_d32(make_ctx(), Tensor.from_array(x))
    assert (mn.array.item(), mx.array.item()) == (0.0, 2.0)
    assert list(y.array.ravel()[1:]) == [255, 128]


def test_quantize_for_test_honours_depth_before_padding():
    x = np.linspace(-1, 1, 40, dtype=f32).reshape(1, 1, 1, 40)
    y, *_ = quantize_for_test_d32(make_ctx(n_out=4), Tensor.from_array(x), i32(4))
    assert y.padding == D32Padding(4, 4, 4, 3, 4, 20)
    codes, _, _ = fortest_reference(x)
    assert np.array_equal(y.array, codes)


def test_quantize_for_test_chunk_quirk_without_float_output():
    # §21 quirk: p = 4, depth 30 -> chunk 0 holds 28 channels; channels 28, 29 are read from
    # source channels 32, 33, i.e. from the next pixel (2, 3); the last pixel reads past the
    # end (taken as 0.0 here).
    x = np.arange(60, dtype=f32).reshape(1, 1, 2, 30)
    lines: list = []
    y, mn, mx = quantize_for_test_d32(make_ctx(lines), Tensor.from_array(x), i32(4))
    right, *_ = quantize_for_test_d32(make_ctx(n_out=4), Tensor.from_array(x), i32(4))
    assert np.array_equal(y.array[..., :28], right.array[..., :28])
    codes, _, _ = fortest_reference(x)        # same range: the data are the same
    assert list(y.array[0, 0, 0, 28:]) == list(codes.ravel()[32:34])   # values 32, 33
    assert list(y.array[0, 0, 1, 28:]) == [0, 0]                       # past the end: 0.0
    assert any(lv == 0 and "shifted by 4" in t for lv, t in lines)


def test_quantize_for_test_alias_and_ref_twin():
    assert REGISTRY.get("QuantizeForTestd32").name == "QuantizeForTest_d32"
    x = np.random.default_rng(4).uniform(-2, 7, (1, 2, 3, 5)).astype(f32)
    a = quantize_for_test_d32(make_ctx(), Tensor.from_array(x))
    b = auto_quantize_d32_ref(make_ctx(), Tensor.from_array(x))
    assert all(u.same_as(v) for u, v in zip(a, b, strict=True))


def test_quantize_for_test_four_outputs_in_a_graph():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x11, "QuantizeForTestd32", inputs=[(0x10, 0)], outputs=4)
    g.append_node(0x12, "Close_d32", inputs=[(0x11, 0), (0x11, 1), (0x11, 2), (0x11, 3)])
    g.append_node(0x13, "OUTPUT", inputs=[(0x11, 3)])
    x = np.random.default_rng(5).normal(size=(1, 2, 3, 33)).astype(f32)
    (out,) = Session(g).execute([x])
    assert out.shape == x.shape and np.max(np.abs(out.array - x)) < (x.max() - x.min()) / 255
