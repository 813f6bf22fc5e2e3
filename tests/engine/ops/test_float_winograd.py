"""Winograd's F(4x4, 3x3) and F(2x2, 5x5) for the float references (issue 12): the exact
transforms, the compiled kernels against them, and the convolution against a float64 sum."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.nodes import Padding
from hexscope.engine.ops.conv.conv2d import output_window
from hexscope.engine.ops.kernels import float_conv, float_winograd
from hexscope.engine.ops.kernels.float_conv import float_conv2d
from hexscope.engine.ops.kernels.float_winograd import applies, transforms, winograd_conv2d

pytest.importorskip("numba")


def _correlate(d: np.ndarray, g: np.ndarray, m: int) -> np.ndarray:
    return np.array([sum(g[k] * d[i + k] for k in range(len(g))) for i in range(m)])


@pytest.mark.parametrize("m, r", [(4, 3), (2, 5), (2, 7), (2, 3), (3, 3)])
def test_transforms_compute_the_correlation_exactly(m, r):
    # in rational arithmetic on integers the identity y = A^T [(G g) * (B^T d)] is exact
    at, g_mat, bt = transforms(m, r)
    rng = np.random.default_rng(m * 10 + r)
    for _ in range(20):
        d = [Fraction(int(v)) for v in rng.integers(-50, 50, m + r - 1)]
        g = [Fraction(int(v)) for v in rng.integers(-50, 50, r)]
        gg = [sum(Fraction(g_mat[k, j]).limit_denominator(1000) * g[j] for j in range(r))
              for k in range(m + r - 1)]
        bd = [sum(Fraction(bt[k, j]).limit_denominator(100) * d[j] for j in range(m + r - 1))
              for k in range(m + r - 1)]
        y = [sum(Fraction(at[i, k]) * gg[k] * bd[k] for k in range(m + r - 1))
             for i in range(m)]
        assert y == [sum(g[k] * d[i + k] for k in range(r)) for i in range(m)]


def test_the_two_forms_share_the_input_transform_written_in_the_kernels():
    # the integer matrices spelt out in _winograd_defs' docstring
    bt = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
          [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
    assert np.array_equal(transforms(4, 3)[2], bt)
    assert np.array_equal(transforms(2, 5)[2], bt)
    assert np.array_equal(transforms(4, 3)[0], [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0],
                                               [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]])
    assert np.array_equal(transforms(2, 5)[0], [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 1]])


@pytest.mark.parametrize("m, n", [(4, 6), (2, 6), (2, 4)])
def test_the_compiled_transforms_are_the_matrices(m, n):
    from hexscope.engine.ops.kernels import winograd_defs as k

    input_tiles, output_tiles = (k.input_tiles, k.output_tiles) if n == 6 else \
        (k.input_tiles4, k.output_tiles4)
    rng = np.random.default_rng(m)
    at, _, bt = transforms(m, n + 1 - m)
    c, tx_n, ty_n = 19, 3, 2
    xp = rng.normal(size=(ty_n * m + n - m, tx_n * m + n - m, c)).astype(np.float32)
    v = np.empty((n * n, ty_n * tx_n, c), np.float32)
    assert input_tiles(xp, m, 0, ty_n, tx_n, v, np.empty((n, n, c), np.float32))
    for ty in range(ty_n):
        for tx in range(tx_n):
            d = xp[ty * m:ty * m + n, tx * m:tx * m + n].astype(np.float64)   # (n, n, c)
            want = np.einsum("ai,ijc,bj->abc", bt, d, bt).reshape(n * n, c)
            np.testing.assert_allclose(v[:, ty * tx_n + tx], want, rtol=1e-5, atol=1e-4)
    prod = rng.normal(size=(n * n, ty_n * tx_n, c)).astype(np.float32)
    h, w = ty_n * m - 1, tx_n * m - 1            # partial tiles at the bottom and right
    y = np.full((h, w, c), np.nan, np.float32)
    assert output_tiles(prod, m, 0, ty_n, tx_n, y, np.empty((m, n, c), np.float32))
    for ty in range(ty_n):
        for tx in range(tx_n):
            p = prod[:, ty * tx_n + tx].reshape(n, n, c).astype(np.float64)
            want = np.einsum("ai,ijc,bj->abc", at, p, at)
            got = y[ty * m:ty * m + m, tx * m:tx * m + m]
            np.testing.assert_allclose(got, want[:got.shape[0], :got.shape[1]],
                                       rtol=1e-5, atol=1e-4)


def test_the_line_kernels_are_f2_7_along_either_axis():
    from hexscope.engine.ops.kernels import winograd_defs as k

    rng = np.random.default_rng(7)
    at, _, bt = transforms(2, 7)
    np.testing.assert_array_equal(bt[[0, 3, 5]], [[-1, 0, 5.25, 0, -5.25, 0, 1, 0],
                                                  [0, 0.5, 0.25, -2.5, -1.25, 2, 1, 0],
                                                  [0, 2, 4, -2.5, -5, 0.5, 1, 0]])
    c, outer, per_row = 21, 3, 4
    for along_h in (False, True):
        shape = (outer * 2 + 6, per_row, c) if along_h else (outer, per_row * 2 + 6, c)
        xp = rng.normal(size=shape).astype(np.float32)
        v = np.empty((8, outer * per_row, c), np.float32)
        assert k.line_input_tiles(xp, along_h, 0, outer, per_row, v)
        prod = rng.normal(size=(8, outer * per_row, c)).astype(np.float32)
        out_shape = (outer * 2 - 1, per_row, c) if along_h else (outer, per_row * 2 - 1, c)
        y = np.full(out_shape, np.nan, np.float32)
        assert k.line_output_tiles(prod, along_h, 0, outer, per_row, y)
        for r in range(outer):
            for p in range(per_row):
                t = r * per_row + p
                d = xp[2 * r:2 * r + 8, p] if along_h else xp[r, 2 * p:2 * p + 8]
                np.testing.assert_allclose(v[:, t], bt @ d.astype(np.float64),
                                           rtol=1e-5, atol=1e-4)
                want = at @ prod[:, t].astype(np.float64)
                got = y[2 * r:2 * r + 2, p] if along_h else y[r, 2 * p:2 * p + 2]
                np.testing.assert_allclose(got, want[:len(got)], rtol=1e-5, atol=1e-4)


def _direct64(xs: np.ndarray, w: np.ndarray, rows, cols) -> np.ndarray:
    fh, fw, _, _ = w.shape
    b, h, wd, _ = xs.shape
    xp = np.zeros((b, rows.out + fh - 1, cols.out + fw - 1, xs.shape[3]))
    hh = min(h, xp.shape[1] - rows.before)
    ww = min(wd, xp.shape[2] - cols.before)
    xp[:, rows.before:rows.before + hh, cols.before:cols.before + ww] = xs[:, :hh, :ww]
    y = 0.0
    for i in range(fh):
        for j in range(fw):
            y = y + xp[:, i:i + rows.out, j:j + cols.out] @ w[i, j].astype(np.float64)
    return y


def _close(y: np.ndarray, want: np.ndarray) -> None:
    # float32 transforms: within a few 1e-6 of the output's magnitude (an LSB is 1/255)
    scale = max(1.0, float(np.max(np.abs(want))))
    assert np.max(np.abs(y - want)) <= 3e-5 * scale


CASES = [
    # (B, H, W, Cin), r, Cout, padding
    ((1, 73, 73, 24), 3, 32, Padding.VALID),      # InceptionV3's 73x73: 18 x 18 tiles
    ((1, 35, 35, 20), 3, 24, Padding.SAME),       # a partial last tile
    ((1, 35, 35, 16), 5, 16, Padding.SAME),       # F(2x2, 5x5)
    ((2, 30, 41, 17), 3, 19, Padding.SAME_CAFFE),  # a batch, odd channels
    ((1, 60, 33, 16), 3, 16, Padding.NA),
    ((1, 17, 17, 24), (1, 7), 16, Padding.SAME),   # F(2, 7) along W: a partial last tile
    ((1, 17, 17, 24), (7, 1), 16, Padding.SAME),   # along H
    ((2, 24, 19, 16), (7, 1), 20, Padding.VALID),
    ((1, 13, 30, 16), (1, 7), 17, Padding.SAME_CAFFE),
]


@pytest.mark.parametrize("shape, r, cout, padding", CASES)
def test_winograd_is_the_float64_sum_and_used_by_float_conv(rng, shape, r, cout, padding):
    fh, fw = r if isinstance(r, tuple) else (r, r)
    xs = rng.normal(size=shape).astype(np.float32)
    w = rng.normal(size=(fh, fw, shape[3], cout)).astype(np.float32)
    rows = output_window(shape[1], fh, 1, padding)
    cols = output_window(shape[2], fw, 1, padding)
    assert applies(w.shape, rows, cols)
    y = float_conv2d(xs, w, rows, cols)
    assert y.shape == (shape[0], rows.out, cols.out, cout) and y.flags.c_contiguous
    assert y.dtype == np.float32
    _close(y, _direct64(xs, w, rows, cols))
    assert np.array_equal(y, winograd_conv2d(xs, w, rows, cols))


@pytest.mark.parametrize("shape, cout, padding", [((1, 35, 35, 24), 20, Padding.SAME),
                                                  ((2, 30, 41, 17), 19, Padding.VALID)])
def test_the_precise_form_is_the_float64_sum(rng, shape, cout, padding):
    xs = rng.normal(size=shape).astype(np.float32)
    w = rng.normal(size=(3, 3, shape[3], cout)).astype(np.float32)
    rows = output_window(shape[1], 3, 1, padding)
    cols = output_window(shape[2], 3, 1, padding)
    assert applies(w.shape, rows, cols, precise=True)
    y = float_conv2d(xs, w, rows, cols, precise=True)
    _close(y, _direct64(xs, w, rows, cols))
    assert np.array_equal(y, winograd_conv2d(xs, w, rows, cols, precise=True))


def test_the_precise_form_rounds_no_more_than_the_direct_one():
    # dequantized codes, as the isolated analysis feeds a QuantizedConv2d_8x8to32: its
    # 32-bit output's LSB is the data step times the filter step, and the fast form's
    # rounding came near it (module docstring)
    rng = np.random.default_rng(5)
    sx, sw = 6.0 / 255, 0.8 / 255
    xs = (sx * (rng.integers(0, 256, (1, 73, 73, 80)) - 0)).astype(np.float32)
    w = (sw * (rng.integers(0, 256, (3, 3, 80, 96)) - 131)).astype(np.float32)
    rows = cols = output_window(73, 3, 1, Padding.VALID)
    want = _direct64(xs, w, rows, cols)
    lsb = sx * sw

    def error(y: np.ndarray) -> float:
        return float(np.max(np.abs(y - want))) / lsb

    direct = error(float_conv._im2col(xs, w, rows, cols))
    precise = error(float_conv2d(xs, w, rows, cols, precise=True))
    fast = error(float_conv2d(xs, w, rows, cols))
    assert precise <= direct < fast


def test_precise_takes_3x3_only_and_the_isolated_conv_asks_for_it(monkeypatch, rng):
    from hexscope.engine.dtypes import DType
    from hexscope.engine.ops.context import KernelContext
    from hexscope.engine.ops.conv import conv2d as conv
    from hexscope.engine.tensor import Tensor

    win = output_window(35, 3, 1, Padding.SAME)
    assert applies((3, 3, 64, 64), win, win, precise=True)
    assert not applies((5, 5, 64, 64), win, win, precise=True)
    assert not applies((1, 7, 64, 64), win, win, precise=True)
    asked = []
    real_conv = conv.float_conv2d
    monkeypatch.setattr(conv, "float_conv2d",
                        lambda *a: asked.append(a[-1]) or real_conv(*a))
    ctx = KernelContext(node_id=1, op="QuantizedConv2d_8x8to32", padding=Padding.SAME)

    def scalar(v: float) -> Tensor:
        return Tensor.from_array(np.full((1, 1, 1, 1), v, np.float32), DType.FLOAT32)

    codes = Tensor.from_array(rng.integers(0, 256, (1, 9, 9, 4), dtype=np.uint8), DType.QUINT8)
    floats = Tensor.from_array(rng.normal(size=(1, 9, 9, 4)).astype(np.float32), DType.FLOAT32)
    filt = Tensor.from_array(rng.integers(0, 256, (3, 3, 4, 2), dtype=np.uint8), DType.QUINT8)
    stride = Tensor.from_array(np.zeros((1, 1, 1, 1), np.int32), DType.INT32)
    for x in (codes, floats):
        conv.conv2d_reference(ctx, x, filt, scalar(-1), scalar(1), scalar(-1), scalar(1),
                              stride)
    assert asked == [True, False]


@settings(max_examples=25, deadline=None)
@given(h=st.integers(1, 30), wd=st.integers(1, 30), cin=st.integers(1, 9),
       cout=st.integers(1, 9), f=st.sampled_from([(3, 3), (5, 5), (1, 7), (7, 1)]),
       padding=st.sampled_from([Padding.VALID, Padding.SAME, Padding.SAME_CAFFE]),
       seed=st.integers(0, 2**16))
def test_winograd_on_any_shape_and_padding(h, wd, cin, cout, f, padding, seed):
    rng = np.random.default_rng(seed)
    rows = output_window(h, f[0], 1, padding)
    cols = output_window(wd, f[1], 1, padding)
    if rows.out <= 0 or cols.out <= 0:
        return
    xs = rng.normal(size=(1, h, wd, cin)).astype(np.float32)
    w = rng.normal(size=(*f, cin, cout)).astype(np.float32)
    y = winograd_conv2d(xs, w, rows, cols)
    assert y is not None
    _close(y, _direct64(xs, w, rows, cols))


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("f", [(3, 3), (1, 7), (7, 1)])
def test_a_value_that_is_not_finite_takes_the_direct_form(rng, bad, f):
    # a tile mixes its pixels: an inf would make NaN around it where the direct form keeps
    # inf at the outputs that read it
    xs = rng.normal(size=(1, 35, 35, 16)).astype(np.float32)
    xs[0, 10, 12, 3] = bad
    w = rng.normal(size=(*f, 16, 16)).astype(np.float32)
    rows = output_window(35, f[0], 1, Padding.SAME)
    cols = output_window(35, f[1], 1, Padding.SAME)
    assert applies(w.shape, rows, cols)
    assert winograd_conv2d(xs, w, rows, cols) is None
    direct = float_conv._im2col(xs, w, rows, cols)
    assert np.array_equal(float_conv2d(xs, w, rows, cols), direct, equal_nan=True)
    assert np.isfinite(direct[0, 0]).all()      # far from the bad pixel: finite values


def test_overflow_inside_the_transform_takes_the_direct_form(rng):
    # finite inputs near float32's top: the transform's sums overflow where the direct
    # products may not
    xs = np.full((1, 35, 35, 16), 3e37, np.float32)
    w = np.full((3, 3, 16, 16), 1e-30, np.float32)
    rows = cols = output_window(35, 3, 1, Padding.SAME)
    assert winograd_conv2d(xs, w, rows, cols) is None
    assert np.isfinite(float_conv2d(xs, w, rows, cols)).all()


def test_where_it_applies(monkeypatch):
    win = output_window(35, 3, 1, Padding.SAME)
    assert applies((3, 3, 64, 64), win, win)
    assert not applies((3, 3, 8, 64), win, win)              # few channels: direct
    small = output_window(8, 3, 1, Padding.SAME)             # 2 x 2 tiles
    assert not applies((3, 3, 448, 384), small, small)
    assert not applies((3, 3, 64, 64), output_window(35, 3, 2, Padding.SAME),
                       output_window(35, 3, 2, Padding.SAME))
    assert applies((1, 7, 64, 64), win, win) and applies((7, 1, 64, 64), win, win)
    assert not applies((7, 7, 64, 64), win, win) and not applies((1, 5, 64, 64), win, win)
    monkeypatch.setenv("HEXSCOPE_KERNELS", "numpy")
    assert not applies((3, 3, 64, 64), win, win)


def test_blocks_of_one_tile_row_give_the_same_convolution(rng, monkeypatch):
    xs = rng.normal(size=(1, 37, 29, 16)).astype(np.float32)
    w = rng.normal(size=(3, 3, 16, 24)).astype(np.float32)
    rows = output_window(37, 3, 1, Padding.SAME)
    cols = output_window(29, 3, 1, Padding.SAME)
    whole = winograd_conv2d(xs, w, rows, cols)
    monkeypatch.setattr(float_winograd, "_BLOCK_BYTES", 1)   # one tile row a block
    _close(winograd_conv2d(xs, w, rows, cols), whole.astype(np.float64))
