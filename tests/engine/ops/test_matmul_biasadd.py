"""QuantizedMatMul_8x8to32 (quantized-ops spec §3) and QuantizedBiasAdd_8p8to32 (§4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.matmul import (
    quantized_biasadd_8p8to32,
    quantized_matmul_8x8to32,
    quantized_matmul_8x8to32_ref,
)
from hexscope.engine.tensor import Tensor

f32 = np.float32

# every test runs with the compiled kernels and with the numpy paths (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("kernels")


def _f(v: float) -> Tensor:
    return Tensor.scalar(v)


def matmul(a, b, a_rng=(0.0, 255.0), b_rng=(-1.0, 1.0), ref=False, ctx=None):
    ctx = ctx or KernelContext(0x20, "QuantizedMatMul_8x8to32")
    kernel = quantized_matmul_8x8to32_ref if ref else quantized_matmul_8x8to32
    y, mn, mx = kernel(ctx, Tensor.from_array(np.asarray(a, np.uint8)),
                       Tensor.from_array(np.asarray(b, np.uint8)), _f(a_rng[0]), _f(a_rng[1]),
                       _f(b_rng[0]), _f(b_rng[1]))
    return y, float(mn.array.item()), float(mx.array.item()), ctx


def biasadd(x, bias, x_rng, b_rng, ctx=None):
    ctx = ctx or KernelContext(0x30, "QuantizedBiasAdd_8p8to32")
    y, mn, mx = quantized_biasadd_8p8to32(
        ctx, Tensor.from_array(np.asarray(x, np.uint8)),
        Tensor.from_array(np.asarray(bias, np.uint8)),
        _f(x_rng[0]), _f(x_rng[1]), _f(b_rng[0]), _f(b_rng[1]))
    return y, float(mn.array.item()), float(mx.array.item()), ctx


def ref_za(mn: float, mx: float, clamp_hi: bool = True) -> int:
    """quantize_uint8 (ZA, §1.4): roundf of f32((0 - mn) * f32(255 / r)), clamped."""
    r = max(f32(1e-18), f32(f32(mx) - f32(mn)))
    z = float(f32(f32(-f32(mn)) * f32(f32(255.0) / r)))
    code = int(math.floor(z + 0.5)) if z >= 0 else -int(math.floor(-z + 0.5))
    return max(0, min(255, code) if clamp_hi else code)


# MatMul --------------------------------------------------------------------------------------

@pytest.mark.parametrize("ref", [False, True])
def test_matmul_with_no_output_columns_gives_an_empty_output(ref):
    """B = [1,1,K,0]: §3 rejects only B's batches or height != 1, so the product is [1,1,M,0]
    (the K chunks were once sized from no columns and failed)."""
    y, mn, mx, _ = matmul(np.ones((1, 1, 3, 4)), np.ones((1, 1, 4, 0)), ref=ref)
    assert y.shape == (1, 1, 3, 0) and (mn, mx) == (-mx, mx)


def test_matmul_hand_vector_and_trailing_codes():
    """§3: K = B.width = 3, N = 2; A has 7 codes, so M = 2 and the 7th is ignored.

    Range [0, 255] gives za = 0; [-1, 1] gives zb = 128 (127.5 rounds away from zero).
    """
    a = np.array([1, 2, 3, 4, 5, 6, 99], np.uint8).reshape(1, 1, 1, 7)
    b = (np.array([[1, 0], [0, 2], [-1, 1]]) + 128).astype(np.uint8).reshape(1, 1, 3, 2)
    y, mn, mx, _ = matmul(a, b)
    assert y.shape == (1, 1, 2, 2)
    assert y.array[0, 0].tolist() == [[1 - 3, 4 + 3], [4 - 6, 10 + 6]]
    step = f32(f32(1.0) * f32(f32(2.0) / f32(255.0)))
    assert (mn, mx) == (-float(f32(2.0**31 * step)), float(f32(2.0**31 * step)))


def test_matmul_zero_codes_saturate():
    """ZA saturates (§1.4): A range [0.5, 3] has zero point -51, clamped to 0."""
    a = np.array([[10]], np.uint8).reshape(1, 1, 1, 1)
    b = np.array([[129]], np.uint8).reshape(1, 1, 1, 1)
    y, *_ = matmul(a, b, a_rng=(0.5, 3.0))
    assert y.array.item() == 10                                # (10 - 0) * (129 - 128)


def test_matmul_adversarial_wrap(gemm_backend):
    """Largest sums: A = B = 255 with za = zb = 0, K = 40000 > 2**31 / 65025 (wraps, §1.3)."""
    k = 40000
    a = np.full((1, 1, 3, k), 255, np.uint8)
    b = np.full((1, 1, k, 2), 255, np.uint8)
    y, *_ = matmul(a, b, a_rng=(0.0, 1.0), b_rng=(0.0, 1.0))
    exact = k * 65025
    assert exact > 2**31
    assert (y.array == (exact + 2**31) % 2**32 - 2**31).all()
    y, *_ = matmul(np.zeros_like(a), b, a_rng=(-1.0, 0.0), b_rng=(0.0, 1.0))   # za = 255
    assert (y.array == (-exact + 2**31) % 2**32 - 2**31).all()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.integers(1, 6), k=st.integers(1, 40), n=st.integers(1, 6),
       extra=st.integers(0, 3), seed=st.integers(0, 2**32 - 1),
       a_rng=st.sampled_from([(0.0, 1.0), (-1.0, 1.0078740), (-0.3, 5.7), (0.5, 3.0),
                              (-3.0, -1.0)]),
       b_rng=st.sampled_from([(-1.0, 1.0), (-10.0, 0.11904716), (2.0, 4.0)]),
       ref=st.booleans())
def test_matmul_matches_loop(m, k, n, extra, seed, a_rng, b_rng, ref, gemm_backend):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, m * k + min(extra, k - 1), dtype=np.uint8)
    b = rng.integers(0, 256, (k, n), dtype=np.uint8)
    y, *_ = matmul(a.reshape(1, 1, 1, -1), b.reshape(1, 1, k, n), a_rng, b_rng, ref=ref)
    za, zb = ref_za(*a_rng), ref_za(*b_rng)
    expect = np.zeros((m, n), np.int64)
    for i in range(m):
        for j in range(n):
            expect[i, j] = sum((int(a[i * k + t]) - za) * (int(b[t, j]) - zb) for t in range(k))
    assert y.shape == (1, 1, m, n)
    assert np.array_equal(y.array[0, 0], expect)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.sampled_from([1, 2]), k=st.sampled_from([16, 32, 48]), n=st.integers(1, 40),
       seed=st.integers(0, 2**32 - 1),
       ranges=st.lists(st.tuples(st.sampled_from([(0.0, 1.0), (-1.0, 1.0078740), (-3.0, -1.0)]),
                                 st.sampled_from([(-1.0, 1.0), (2.0, 4.0), (-10.0, 0.1)])),
                       min_size=2, max_size=3))
def test_plain_matmul_run_after_run_follows_the_zero_codes(m, k, n, seed, ranges, gemm_backend):
    """One node run again and again (the GEMM it keeps from its first run) with the A and B
    ranges moving: each run gives the loop's sums for that run's zero codes."""
    rng = np.random.default_rng(seed)
    b = rng.integers(0, 256, (k, n), dtype=np.uint8)
    ctx = KernelContext(0x20, "QuantizedMatMul_8x8to32")
    for a_rng, b_rng in ranges:
        a = rng.integers(0, 256, m * k, dtype=np.uint8)
        y, *_ = matmul(a.reshape(1, 1, 1, -1), b.reshape(1, 1, k, n), a_rng, b_rng, ctx=ctx)
        za, zb = ref_za(*a_rng), ref_za(*b_rng)
        expect = (a.reshape(m, k).astype(np.int64) - za) @ (b.astype(np.int64) - zb)
        assert np.array_equal(y.array[0, 0], expect) and not ctx.warnings


@pytest.mark.parametrize("shape,msg", [((1, 2, 3, 2), "height 1"), ((2, 1, 3, 2), "batches 1"),
                                       ((1, 1, 0, 2), "width 0")])
def test_matmul_rejects(shape, msg):
    with pytest.raises(KernelError, match=msg):
        matmul(np.zeros((1, 1, 1, 6), np.uint8), np.zeros(shape, np.uint8))


def test_plain_matmul_keeps_prepare_time_b_ref_follows():
    """§3: the plain op's vector kernel (M = 1) multiplies the B packed at prepare."""
    ctx, ctx_ref = KernelContext(1, "QuantizedMatMul_8x8to32"), KernelContext(2, "x_ref")
    a = np.array([[1, 2, 3]], np.uint8).reshape(1, 1, 1, 3)
    b1 = np.full((1, 1, 3, 1), 129, np.uint8)
    b2 = np.full((1, 1, 3, 1), 130, np.uint8)
    assert matmul(a, b1, ctx=ctx)[0].array.item() == 6
    y, *_ = matmul(a, b2, ctx=ctx)
    assert y.array.item() == 6 and ctx.warnings
    assert matmul(a, b1, ref=True, ctx=ctx_ref)[0].array.item() == 6
    assert matmul(a, b2, ref=True, ctx=ctx_ref)[0].array.item() == 12 and not ctx_ref.warnings


def test_plain_matmul_reference_fallback_follows_b():
    """M = 2 and K = 3 (not a multiple of 16): the device falls back to the C loop (§3)."""
    ctx = KernelContext(1, "QuantizedMatMul_8x8to32")
    a = np.array([1, 2, 3, 1, 1, 1], np.uint8).reshape(1, 1, 1, 6)
    matmul(a, np.full((1, 1, 3, 1), 129, np.uint8), ctx=ctx)
    y, *_ = matmul(a, np.full((1, 1, 3, 1), 130, np.uint8), ctx=ctx)
    assert y.array.ravel().tolist() == [12, 6] and not ctx.warnings


# BiasAdd ---------------------------------------------------------------------------------------

# x range [-4, 3.96875]: step 2**-5, zx = 128; bias range [-1, 0.9921875]: step 2**-7, zb = 128.
# M = 4, out_max = 4 * 2**17 = 524288, lo = 2**-12, gx = 128, gb = 32: every product is exact.
XR, BR = (-4.0, 3.96875), (-1.0, 0.9921875)


def test_biasadd_hand_vector_and_truncation_quirk():
    """§4: out = trunc((x-128)*128 + (b-128)*32 + 0.5); negatives come out one high."""
    x = np.array([130, 127, 128, 0], np.uint8).reshape(4, 1, 1, 1)
    bias = np.array([129], np.uint8).reshape(1, 1, 1, 1)
    y, mn, mx, _ = biasadd(x, bias, XR, BR)
    # 256+32 = 288; -128+32 = -96 -> -95.5 -> -95; 0+32 = 32; -16384+32 -> -16351.5 -> -16351
    assert y.array.ravel().tolist() == [288, -95, 32, -16351]
    assert (mn, mx) == (-524288.0, 524288.0)
    x = np.full((1, 1, 1, 2), 128, np.uint8)
    y, *_ = biasadd(x, np.array([127, 126], np.uint8).reshape(1, 1, 1, 2), XR, BR)
    assert y.array.ravel().tolist() == [-31, -63]        # exact sums -32, -64 shift up by one


def test_biasadd_bias_by_depth_and_shape():
    x = np.full((2, 3, 4, 3), 128, np.uint8)
    bias = np.array([129, 130, 131], np.uint8).reshape(1, 1, 1, 3)
    y, *_ = biasadd(x, bias, XR, BR)
    assert y.shape == (2, 3, 4, 3)
    assert (y.array == np.array([32, 64, 96])).all()


def test_biasadd_range_from_largest_magnitude():
    """M = fmax(fmax(|xmin|, xmax), fmax(|bmin|, bmax)); here the bias min (-9) wins."""
    _, mn, mx, _ = biasadd(np.zeros((1, 1, 1, 1), np.uint8), np.zeros((1, 1, 1, 1), np.uint8),
                           (-1.0, 2.0), (-9.0, 0.5))
    assert mx == 9.0 * 131072 and mn == -mx


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 6),
       x_rng=st.sampled_from([(0.0, 6.0), (-1.0, 1.0078740), (-0.3, 5.7), (0.5, 3.0)]),
       b_rng=st.sampled_from([(-0.5, 0.5), (-10.0, 0.11904716), (2.0, 4.0), (-3.0, -1.0)]))
def test_biasadd_matches_float32_loop(seed, d, x_rng, b_rng):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (1, 2, 3, d), dtype=np.uint8)
    bias = rng.integers(0, 256, (1, 1, 1, d), dtype=np.uint8)
    y, mn, mx, _ = biasadd(x, bias, x_rng, b_rng)
    xmn, xmx, bmn, bmx = (f32(v) for v in (*x_rng, *b_rng))
    big = max(max(abs(xmn), xmx), max(abs(bmn), bmx))
    omax = f32(big * f32(131072))
    lo = f32(f32(omax - f32(-omax)) / f32(4294967296.0))
    gx = f32(f32(f32(xmx - xmn) / f32(255)) / lo)
    gb = f32(f32(f32(bmx - bmn) / f32(255)) / lo)
    zx, zb = ref_za(*x_rng), ref_za(*b_rng, clamp_hi=False)
    for idx in np.ndindex(x.shape):
        s = f32(f32(f32(int(x[idx]) - zx) * gx) + f32(f32(int(bias[0, 0, 0, idx[3]]) - zb) * gb))
        assert y.array[idx] == math.trunc(float(f32(s + f32(0.5))))
    assert (mn, mx) == (-float(omax), float(omax))


@pytest.mark.parametrize("shape,msg", [((1, 1, 2, 3), "shape"), ((2, 1, 1, 3), "shape"),
                                       ((1, 2, 1, 3), "shape"), ((1, 1, 1, 4), "depth 4")])
def test_biasadd_rejects(shape, msg):
    with pytest.raises(KernelError, match=msg):
        biasadd(np.zeros((1, 1, 1, 3), np.uint8), np.zeros(shape, np.uint8), XR, BR)


def test_biasadd_zero_ranges_warn_and_saturate():
    """M = 0: gains are NaN/inf; the float -> int conversion is unconfirmed on hardware (§4,
    §23 item 4). Project convention (QEMU's Hexagon model of convert_sf2w, engine/hexmath):
    saturate, NaN -> -1. Here 0 * NaN + NaN gives a NaN sum, so the code is -1."""
    y, mn, mx, ctx = biasadd(np.full((1, 1, 1, 1), 5, np.uint8),
                             np.zeros((1, 1, 1, 1), np.uint8), (0.0, 0.0), (0.0, 0.0))
    assert (mn, mx) == (0.0, 0.0)
    assert ctx.warnings
    assert y.array.item() == -1


def test_plain_matmul_still_warns_of_a_changed_b_after_a_frozen_one_was_seen():
    """A read-only B found equal is not compared again while it is the same tensor; another
    tensor with other codes still gets the §3 warning, and a writable one is compared."""
    ctx = KernelContext(1, "QuantizedMatMul_8x8to32")
    a = Tensor.from_array(np.array([1, 2, 3], np.uint8).reshape(1, 1, 1, 3))
    b1 = Tensor.from_array(np.full((1, 1, 3, 1), 129, np.uint8)).readonly()
    ranges = (_f(0.0), _f(255.0), _f(-1.0), _f(1.0))
    for _ in range(2):
        y, *_ = quantized_matmul_8x8to32(ctx, a, b1, *ranges)
        assert y.array.item() == 6 and not ctx.warnings
    assert ctx.state["b_seen"].key is b1
    b2 = Tensor.from_array(np.full((1, 1, 3, 1), 130, np.uint8))
    y, *_ = quantized_matmul_8x8to32(ctx, a, b2, *ranges)
    assert y.array.item() == 6 and ctx.warnings
    writable = Tensor.from_array(np.full((1, 1, 3, 1), 129, np.uint8))
    ctx.warnings.clear()
    quantized_matmul_8x8to32(ctx, a, writable, *ranges)
    writable.raw[:] = 131
    quantized_matmul_8x8to32(ctx, a, writable, *ranges)
    assert ctx.warnings
