"""The float convolution of the references (issue 12): every layout against a float64 sum,
and the tap layouts bit for bit against the plain form (they change no sum)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.nodes import Padding
from hexscope.engine.ops.conv.conv2d import output_window
from hexscope.engine.ops.kernels import float_conv, float_winograd
from hexscope.engine.ops.kernels.float_conv import float_conv2d

CASES = [
    # (B, H, W, Cin), (FH, FW, Cout), stride, padding
    ((1, 9, 11, 5), (1, 1, 7), 1, Padding.VALID),      # one GEMM
    ((1, 9, 11, 5), (1, 1, 7), 1, Padding.SAME),
    ((1, 35, 35, 6), (3, 3, 4), 1, Padding.SAME),      # wide: 37 columns for 35
    ((1, 35, 35, 6), (3, 3, 4), 1, Padding.VALID),
    ((1, 17, 17, 8), (1, 7, 3), 1, Padding.SAME),      # 1x7: transposed, as 7x1
    ((1, 17, 17, 8), (7, 1, 3), 1, Padding.SAME),      # 7x1: wide, no waste
    ((1, 8, 8, 4), (1, 3, 5), 1, Padding.SAME_CAFFE),
    ((1, 8, 8, 6), (3, 3, 4), 1, Padding.SAME),        # short rows: wide despite 10 for 8
    ((1, 12, 20, 3), (5, 5, 2), 1, Padding.SAME),      # 5x5 on 20: too wasteful, strided
    ((1, 13, 13, 3), (3, 3, 4), 2, Padding.VALID),     # stride 2: strided
    ((2, 6, 6, 3), (3, 3, 2), 1, Padding.SAME),        # a batch: strided
    ((1, 7, 6, 3), (2, 3, 2), 1, Padding.NA),
    ((1, 2, 2, 3), (3, 3, 2), 1, Padding.VALID),       # no output
    ((1, 4, 4, 3), (0, 1, 2), 1, Padding.VALID),       # no taps
    ((1, 40, 150, 32), (3, 3, 64), 1, Padding.VALID),  # several blocks of output rows
    ((1, 81, 121, 8), (3, 3, 64), 2, Padding.SAME),    # the same, strided
    ((2, 23, 25, 5), (3, 3, 6), 1, Padding.SAME),      # im2col (>= 400 pixels), a batch
    ((1, 31, 29, 4), (5, 3, 3), 2, Padding.SAME),      # im2col, strided
    ((1, 21, 30, 7), (1, 1, 5), 2, Padding.VALID),     # a 1x1 filter at stride 2
]


def _plain(xs: np.ndarray, w: np.ndarray, rows, cols) -> np.ndarray:
    """The reference's first form: one GEMM per tap on a strided view of the zero-padded
    image, the taps accumulated in row-major order."""
    fh, fw, _, cout = w.shape
    b, h, wd, _ = xs.shape
    pad_h = max(0, (rows.out - 1) * rows.s + fh - h - rows.before)
    pad_w = max(0, (cols.out - 1) * cols.s + fw - wd - cols.before)
    xp = np.pad(xs, ((0, 0), (rows.before, pad_h), (cols.before, pad_w), (0, 0)))
    y = np.zeros((b, rows.out, cols.out, cout), np.float32)
    for i in range(fh):
        for j in range(fw):
            patch = xp[:, i:i + rows.s * rows.out:rows.s, j:j + cols.s * cols.out:cols.s, :]
            tap = patch[:, :rows.out, :cols.out, :] @ w[i, j]
            y = tap if (i, j) == (0, 0) else y + tap
    return y


def _direct(xs: np.ndarray, w: np.ndarray, stride: int, rows, cols) -> np.ndarray:
    """Each output element as a float64 sum over the taps inside the image."""
    b, h, wd, _ = xs.shape
    fh, fw, _, cout = w.shape
    y = np.zeros((b, rows.out, cols.out, cout))
    for r in range(rows.out):
        for c in range(cols.out):
            for i in range(fh):
                for j in range(fw):
                    hi, wj = r * stride + i - rows.before, c * stride + j - cols.before
                    if 0 <= hi < h and 0 <= wj < wd:
                        y[:, r, c] += xs[:, hi, wj].astype(np.float64) @ w[i, j]
    return y


@pytest.mark.parametrize("shape, filt, stride, padding", CASES)
def test_float_conv_is_the_float64_sum_over_the_taps_inside_the_image(rng, shape, filt,
                                                                    stride, padding):
    fh, fw, cout = filt
    xs = rng.normal(size=shape).astype(np.float32)
    w = rng.normal(size=(fh, fw, shape[3], cout)).astype(np.float32)
    rows = output_window(shape[1], fh, stride, padding)
    cols = output_window(shape[2], fw, stride, padding)
    y = float_conv2d(xs, w, rows, cols)
    assert y.shape == (shape[0], rows.out, cols.out, cout) and y.flags.c_contiguous
    assert y.dtype == np.float32
    want = _direct(xs, w, stride, rows, cols)
    if float_winograd.applies(w.shape, rows, cols):
        # a Winograd tile mixes its pixels: the rounding follows the output's magnitude
        assert np.max(np.abs(y - want)) <= 3e-5 * max(1.0, float(np.max(np.abs(want))))
        return
    # a float32 sum of K unit-normal products: its rounding grows about as K * 2**-24 * |y|
    k = fh * fw * shape[3]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6 * max(1, k))


@pytest.mark.parametrize("shape, filt, stride, padding", CASES)
def test_the_tap_layouts_add_the_same_products_in_the_same_order(rng, shape, filt, stride,
                                                                 padding, monkeypatch):
    # below the im2col threshold (here: never) every output goes through the tap layouts,
    # bit for bit the plain form: one strided GEMM per tap, taps accumulated in order
    monkeypatch.setattr(float_conv, "_IM2COL_PIXELS", 10**9)
    monkeypatch.setattr(float_conv, "_IM2COL_K", 10**9)
    monkeypatch.setattr(float_winograd, "applies", lambda *_: False)
    fh, fw, cout = filt
    if fh == 1 and fw > 1:
        pytest.skip("a 1 x N filter always takes im2col")
    xs = rng.normal(size=shape).astype(np.float32)
    w = rng.normal(size=(fh, fw, shape[3], cout)).astype(np.float32)
    rows = output_window(shape[1], fh, stride, padding)
    cols = output_window(shape[2], fw, stride, padding)
    got, want = float_conv2d(xs, w, rows, cols), _plain(xs, w, rows, cols)
    # The taps are added in the same order, but within one tap's GEMM the BLAS may take
    # another micro-kernel for a block's tail rows than for the whole (OpenBLAS with
    # OPENBLAS_CORETYPE=Haswell on an AMD EPYC rounds the last 4 columns of each block of
    # output rows differently), so: equal within the rounding of a K-term float32 sum.
    k = fh * fw * shape[3]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * max(1, k))
