"""F(2,3) along the rows (engine/ops/kernels/winograd.py): bit-identical int32 sums.

The convolution's sums are exact integers, wrapped to int32 (quantized-ops spec §1.3, §2).
These tests compare the Winograd path with the spec's tap-by-tap loop (tests/support/
ref_conv.py), with the direct blocked GEMM, at sums far beyond float32's 2**24, and check
the chunk rule that keeps the float32 arithmetic exact.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.conv2d import output_window, quantized_conv2d_8x8to32
from hexscope.engine.ops.kernels import gemm, igemm, winograd
from hexscope.engine.tensor import Tensor
from support.ref_conv import ref_conv, ref_zero

_PADS = [Padding.SAME, Padding.VALID, Padding.SAME_CAFFE, Padding.NA]


def winograd_rows(x, w, zx, zf, sw, pad):
    """The Winograd path alone, for a filter offset by its own zero code ``zf``."""
    _, h, wd, _ = x.shape
    fh, fw, c, n = w.shape
    rows, cols = output_window(h, fh, 1, pad), output_window(wd, fw, sw, pad)
    rhs = gemm.Rhs.from_codes(w.reshape(fh * fw * c, n), zf)
    wrhs = winograd.WinogradRhs.from_codes(w, zf)
    padded = rows.before or cols.before or rows.after or cols.after
    out = winograd.winograd_conv(x, rows, cols, zx if padded else 0, wrhs,
                                  rhs.offsets(gemm.CENTER - zx, 0))
    return out.reshape(x.shape[0], rows.out, cols.out, n)


@pytest.fixture(autouse=True)
def float_gemm(monkeypatch):
    """F(2,3) serves the float32 path only: where the integer kernel runs, the convolution
    goes direct (test_the_integer_kernel_replaces_winograd)."""
    monkeypatch.setenv("HEXSCOPE_GEMM", "float")


@pytest.fixture
def block(monkeypatch):
    def set_block(n: int) -> None:
        monkeypatch.setattr(gemm, "BLOCK_BYTES", n)
    return set_block


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), pad=st.sampled_from(_PADS), block_bytes=st.sampled_from([1, 300, 1 << 21]))
def test_winograd_equals_the_reference_loop(data, pad, block_bytes, block) -> None:
    """Any batch, odd and even output heights (2 up), filter widths 1..4, width strides 1..3,
    every padding mode, blocks of one row pair up to the whole image."""
    b, h, wd, c, n = (data.draw(st.integers(lo, hi))
                      for lo, hi in ((1, 2), (3, 10), (1, 9), (1, 6), (1, 5)))
    fw, sw = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    zx, zf = data.draw(st.integers(0, 255)), data.draw(st.integers(0, 255))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(0, 256, (b, h, wd, c), dtype=np.uint8)
    w = rng.integers(0, 256, (3, fw, c, n), dtype=np.uint8)
    if not winograd.applies(output_window(h, 3, 1, pad)) or \
            output_window(wd, fw, sw, pad).out == 0:
        return
    block(block_bytes)
    assert np.array_equal(winograd_rows(x, w, zx, zf, sw, pad),
                          ref_conv(x, w, zx, zf, 1, sw, pad))


@pytest.mark.parametrize(("x_code", "w_code", "zx", "zf"),
                         [(255, 255, 0, 0), (0, 0, 255, 255), (255, 0, 0, 255), (0, 255, 255, 0)])
def test_extreme_codes_need_many_chunks_and_stay_exact(x_code, w_code, zx, zf) -> None:
    """Every code at one end and the zero codes at the other: |x - zx| = |w - zf| = 255, sums
    of 3 * 3 * 200 * 255 * 255 (beyond 2**24 and 2**23 by far), odd output height."""
    x = np.full((1, 7, 6, 200), x_code, np.uint8)
    w = np.full((3, 3, 200, 4), w_code, np.uint8)
    wrhs = winograd.WinogradRhs.from_codes(w, zf)
    assert len(wrhs.bounds) > 3                          # several chunks
    got = winograd_rows(x, w, zx, zf, 1, Padding.SAME)
    expect = ref_conv(x, w, zx, zf, 1, 1, Padding.SAME)
    assert np.abs(expect.astype(np.int64)).max() > 2**24
    assert np.array_equal(got, expect)


def _fits(w: np.ndarray, zero: int, k0: int, k1: int) -> bool:
    """The module's five conditions for taps k0..k1 - 1, in float64 from the codes."""
    g = w.reshape(3, -1, w.shape[3]).astype(np.float64)[:, k0:k1] - zero
    big = [np.abs(g[0]), np.abs(g[2])]                                  # G0, G3: integers
    g1, g2 = np.abs(g[0] + g[1] + g[2]) / 2, np.abs(g[0] - g[1] + g[2]) / 2
    direct = np.abs(g).sum(axis=0)
    return (all(255 * a.sum(axis=0).max() <= 2**24 for a in big)
            and 256 * g1.sum(axis=0).max() <= 2**23          # |u1| = |d1 + d2| <= 256
            and 255 * g2.sum(axis=0).max() <= 2**23
            and 128 * direct.sum(axis=0).max() <= 2**24)


@pytest.mark.parametrize("seed", range(4))
def test_chunks_keep_every_sum_exact_and_are_maximal(seed) -> None:
    """Each chunk meets the module's bounds (every partial sum of m_i, and s, e, y0, y1),
    and one more tap would break one: no GEMM is split more than the bounds need."""
    rng = np.random.default_rng(seed)
    zero = int(rng.integers(0, 256))
    w = rng.integers(0, 256, (3, 3, 250, 7), dtype=np.uint8)
    wrhs = winograd.WinogradRhs.from_codes(w, zero)
    edges = wrhs.bounds
    assert edges[0] == 0 and edges[-1] == wrhs.k and list(edges) == sorted(set(edges))
    assert len(edges) > 2
    for k0, k1 in zip(edges, edges[1:], strict=False):
        assert _fits(w, zero, k0, k1)
        if k1 < wrhs.k:
            assert not _fits(w, zero, k0, k1 + 1)


def test_the_combination_is_exact_where_the_old_single_bound_needed_chunks() -> None:
    """Random codes against a centred zero: one chunk where 255 * sum(|G0| + |G1| + |G2|)
    <= 2**23 would have needed several, and the sums still equal the spec loop."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 256, (1, 9, 7, 96), dtype=np.uint8)
    w = rng.integers(0, 256, (3, 3, 96, 5), dtype=np.uint8)
    wrhs = winograd.WinogradRhs.from_codes(w, 128)
    loose = sum(np.abs(m.astype(np.float64)).sum(axis=0) for m in wrhs.mats[:3]).max()
    assert 255 * loose > 2**23 and wrhs.bounds == (0, wrhs.k)
    assert np.array_equal(winograd_rows(x, w, 100, 128, 1, Padding.SAME),
                          ref_conv(x, w, 100, 128, 1, 1, Padding.SAME))


@pytest.mark.parametrize("seed", range(6))
def test_u1_reaches_minus_256_and_stays_exact(seed) -> None:
    """u1 = d1 + d2 is -256 where rows 1 and 2 read code 0 (d = -128), one more than the
    differences u0, u2, u3 can reach. Filter codes 255 against zero code 0 make
    G1 = 382.5 in every tap, so G1's bound sets the chunks; a few codes 1 make some u1 odd,
    so m1 is a multiple of 1/2 near 2**23 where float32 only holds integers. With the bound
    255 * sum|G1| <= 2**23 (chunks of 86 taps) these sums came out one or two codes off."""
    rng = np.random.default_rng(seed)
    c = 258
    x = np.zeros((1, 4, 1, c), np.uint8)
    taps = rng.choice(c, int(rng.integers(1, 20)), replace=False)
    x[0, int(rng.integers(1, 3)), 0, taps] = rng.integers(1, 4, taps.size)
    w = np.full((3, 1, c, 4), 255, np.uint8)
    got = winograd_rows(x, w, 0, 0, 1, Padding.VALID)
    assert np.array_equal(got, ref_conv(x, w, 0, 0, 1, 1, Padding.VALID))


@pytest.mark.parametrize("c", [343, 701])
def test_sums_at_the_edge_of_the_bounds_stay_exact(c) -> None:
    """Built so that every bound is nearly reached: d = (127, 127, -128) on the three input
    rows, g = (127, 126, -128) on the filter rows, in every one of C channels. Then y0 =
    48515 * C (the direct bound, 128 * 381 per tap, makes chunks of 344), m0 = 32385 per
    tap and m1 = -62.5: summed first, m0 + m1 would pass 2**23 with a half and round, so
    the combination order and the direct bound both matter (C = 343: one chunk; 701: three)."""
    x = np.zeros((1, 4, 1, c), np.uint8)
    x[0, :2] = 255                                   # d = 127
    x[0, 3] = 90
    w = np.zeros((3, 1, c, 1), np.uint8)
    w[0], w[1], w[2] = 255, 254, 0                   # g = w - 128
    wrhs = winograd.WinogradRhs.from_codes(w, 128)
    assert wrhs.bounds[1] == 344 or wrhs.bounds == (0, c)
    got = winograd_rows(x, w, 128, 128, 1, Padding.VALID)
    expect = ref_conv(x, w, 128, 128, 1, 1, Padding.VALID)
    assert expect[0, 0, 0, 0] == 48515 * c
    assert np.array_equal(got, expect)


def test_transformed_filter_is_f23_of_the_rows() -> None:
    """G0 = g0, G1 = (g0 + g1 + g2) / 2, G2 = (g0 - g1 + g2) / 2, G3 = g2, offset by zero."""
    w = np.arange(3 * 2 * 2 * 1, dtype=np.uint8).reshape(3, 2, 2, 1) * 20
    wrhs = winograd.WinogradRhs.from_codes(w, 100)
    g = w.reshape(3, 4, 1).astype(float) - 100
    assert np.array_equal(wrhs.mats[0], g[0])
    assert np.array_equal(wrhs.mats[1], (g[0] + g[1] + g[2]) / 2)
    assert np.array_equal(wrhs.mats[2], (g[0] - g[1] + g[2]) / 2)
    assert np.array_equal(wrhs.mats[3], g[2])
    with pytest.raises(ValueError, match="3-row"):
        winograd.WinogradRhs.from_codes(np.zeros((2, 2, 2, 1), np.uint8), 0)


def _run_conv(x, w, x_rng, f_rng, stride):
    ctx = KernelContext(0x10, "QuantizedConv2d_8x8to32", padding=Padding.SAME)
    y, _, _ = quantized_conv2d_8x8to32(
        ctx, Tensor.from_array(x), Tensor.from_array(w), Tensor.scalar(x_rng[0]),
        Tensor.scalar(x_rng[1]), Tensor.scalar(f_rng[0]), Tensor.scalar(f_rng[1]),
        Tensor.shape_only((1, stride[0], stride[1], 1)))
    return y.array


@pytest.mark.parametrize(("fh", "stride", "f_rng", "used"), [
    (3, (1, 1), (-1.0, 1.0078740), True),
    (3, (1, 2), (-1.0, 1.0078740), True),
    (3, (2, 1), (-1.0, 1.0078740), False),           # row stride 2
    (5, (1, 1), (-1.0, 1.0078740), False),           # 5 rows
    (3, (1, 1), (-3.0, -1.0), False),                # zero code 383: not a code, row sums
])
def test_the_kernel_takes_winograd_exactly_when_it_applies(monkeypatch, fh, stride, f_rng,
                                                           used) -> None:
    calls = []
    real = winograd.winograd_conv

    def spy(*args):
        calls.append(args[1])
        return real(*args)

    monkeypatch.setattr(winograd, "winograd_conv", spy)
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, (1, 9, 8, 5), dtype=np.uint8)
    w = rng.integers(0, 256, (fh, 3, 5, 4), dtype=np.uint8)
    x_rng = (-1.0, 3.0)
    y = _run_conv(x, w, x_rng, f_rng, stride)
    assert bool(calls) == used
    assert np.array_equal(y, ref_conv(x, w, ref_zero(*x_rng), ref_zero(*f_rng), *stride,
                                      Padding.SAME))


def test_the_integer_kernel_replaces_winograd(monkeypatch) -> None:
    """With the integer kernel, a 3-row stride-1 layer runs direct and stays exact."""
    monkeypatch.delenv("HEXSCOPE_GEMM")
    if not igemm.available():
        pytest.skip("the integer GEMM kernel does not run on this machine")
    calls = []
    monkeypatch.setattr(winograd, "winograd_conv", lambda *args: calls.append(args))
    rng = np.random.default_rng(8)
    x = rng.integers(0, 256, (1, 9, 8, 5), dtype=np.uint8)
    w = rng.integers(0, 256, (3, 3, 5, 4), dtype=np.uint8)
    y = _run_conv(x, w, (-1.0, 3.0), (-1.0, 1.0078740), (1, 1))
    assert not calls
    assert np.array_equal(y, ref_conv(x, w, ref_zero(-1.0, 3.0), ref_zero(-1.0, 1.0078740),
                                      1, 1, Padding.SAME))


def test_a_winograd_layer_never_makes_the_direct_float32_filter() -> None:
    """Memory: the direct filter's float32 copy (4 bytes per weight) is made on first use,
    and a layer that runs by F(2,3) only uses its column sums; a 5x5 layer makes it."""
    rng = np.random.default_rng(9)
    x = rng.integers(0, 256, (1, 9, 8, 5), dtype=np.uint8)
    for fh, made in ((3, False), (5, True)):
        ctx = KernelContext(0x10, "QuantizedConv2d_8x8to32", padding=Padding.SAME)
        w = rng.integers(0, 256, (fh, 3, 5, 4), dtype=np.uint8)
        quantized_conv2d_8x8to32(
            ctx, Tensor.from_array(x), Tensor.from_array(w).readonly(), Tensor.scalar(-1.0),
            Tensor.scalar(3.0), Tensor.scalar(-1.0), Tensor.scalar(1.0078740),
            Tensor.shape_only((1, 1, 1, 1)))
        rhs = ctx.state["rhs"].value
        assert ("mat" in rhs.__dict__) is made


def test_an_rhs_does_not_follow_later_writes_to_its_source() -> None:
    codes = np.full((4, 2), 200, np.uint8)
    rhs = gemm.Rhs.from_codes(codes, 128)
    codes[:] = 0
    assert np.array_equal(rhs.mat, np.full((4, 2), 72, np.float32))
    assert rhs.colsum.tolist() == [288, 288]


def test_no_input_channels_gives_zero_sums() -> None:
    """Cin = 0: no taps, so every sum is 0 (§2); the F(2,3) path has no chunk to run and
    must still write its output (it once returned whatever the allocation held)."""
    junk = np.full(64 * 64 * 16, 0x0BADBEEF, np.int32)
    del junk                                       # leave recognisable bytes on the heap
    x = np.zeros((1, 64, 64, 0), np.uint8)
    w = np.zeros((3, 3, 0, 16), np.uint8)
    got = winograd_rows(x, w, 100, 128, 1, Padding.SAME)
    assert got.shape == (1, 64, 64, 16) and not got.any()
    ctx = KernelContext(node_id=1, op="QuantizedConv2d_8x8to32", padding=Padding.SAME)
    y, _, _ = quantized_conv2d_8x8to32(
        ctx, Tensor.from_array(x), Tensor.from_array(w), *(Tensor.scalar(v) for v in
                                                            (-1.0, 1.0, -1.0, 1.0)),
        Tensor.shape_only((1, 1, 1, 1)))
    assert np.array_equal(y.array, ref_conv(x, w, 128, 128, 1, 1, Padding.SAME))
