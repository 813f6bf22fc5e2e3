"""The float convolution of the references (issue 12): zero padding, any stride, float32.

The float analyses spend most of their time here, so the products are laid out for BLAS:

- a 1x1 filter at stride 1 is one GEMM over the whole image;
- 3x3, 5x5, 1x7 and 7x1 filters at stride 1 on enough tiles take Winograd's minimal
  filtering (``float_winograd``: 1.75 to 4 times fewer products; where the caller asks for
  a precise result, 3x3 filters only, by a form that rounds no more than the direct one);
- from 400 output pixels, and for every 1 x N filter, the patches of a block of output rows
  are copied out (one strided view, one copy) and multiplied in one GEMM with K = FH * FW *
  Cin (``_im2col``): the taps' GEMMs below, with K = Cin, ran at half of BLAS's speed on
  layers with few channels;
- smaller outputs take one GEMM per filter tap, taps in row-major order (i, j), each
  accumulated into the result in that order (every output element adds the same products
  in the same order as the plain form, checked bit for bit in the tests):
  - at stride 1 the taps of a "wide" image are contiguous: with the padded image flattened
    to rows of ``wp`` pixels, tap (i, j) of output pixel r * wp + c reads pixel r * wp + c +
    i * wp + j, so each tap is one GEMM over a contiguous slice (the ``wp - out`` columns at
    each row end are computed and dropped). Used when they are at most a tenth more work,
    or the rows are short;
  - anything else (strides, batches) takes each tap as a strided 4-D view, one GEMM per
    output row inside numpy's matmul;
  - the result is made by blocks of output rows, so a block and one tap's products stay in
    cache while the taps are added.

Both forms sum in float32 with a relative error near 1e-7 of the result, far below an
output LSB (1/255 of the range); the tests hold them to a float64 sum.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.ops.kernels import float_winograd
from hexscope.engine.ops.kernels.gemm import Window

#: Most extra work (dropped columns) the wide layout may cost before the strided form wins
#: (measured on the InceptionV3-shaped graph: 3x3 on 35 columns gains, 5x5 on 35 loses).
_WIDE_WASTE = 0.1

#: Below this many output columns the strided form's one GEMM per output row is so short
#: that the wide layout wins even with more dropped columns (3x3 on 8x8: 6.1 against 9.2 ms).
_SHORT_ROWS = 16

#: Bytes of result per block of output rows (a tap's products take as much again).
_BLOCK_BYTES = 1 << 18

#: From this many output pixels (and for 1 x N filters) the patches are copied out and
#: multiplied in one GEMM with K = FH * FW * Cin: the taps' GEMMs, with K = Cin, ran at
#: half of BLAS's speed on layers with few channels (InceptionV3's 147 x 147 x 32: 50
#: against 85 GFLOPS). Below it the output is a few rows, the copy does not pay, and a
#: GEMM with few rows and a long K was slower than the taps (17 x 17 x 192: 60 against
#: 90 GFLOPS).
_IM2COL_PIXELS = 400

#: From this many products per output (K = FH * FW * Cin) the im2col form wins on small
#: outputs too: the taps' GEMMs then have few rows each (InceptionV3's 3x3 stride 2 on
#: 35 x 35 x 288: 8.7 against 6.4 ms; on 8 x 8 x 448: 2.8 against 2.2 ms; but
#: 17 x 17 x 192 at stride 2, K = 1728: 0.67 against 0.77 ms).
_IM2COL_K = 2048

#: Bytes of patches per block of output rows of the im2col form (stays in L2 for the GEMM).
_PATCH_BYTES = 1 << 20


def float_conv2d(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window,
                 precise: bool = False) -> np.ndarray:
    """Convolution of ``xs`` [B, H, W, Cin] by ``w`` [FH, FW, Cin, Cout] (float32), taps
    outside the image adding nothing; [B, rows.out, cols.out, Cout], C-contiguous.

    ``precise``: round no more than the direct form (the Winograd forms with larger
    coefficients are left out; see ``float_winograd``)."""
    fh, fw, cin, cout = w.shape
    b = xs.shape[0]
    if rows.out == 0 or cols.out == 0 or b == 0 or fh * fw == 0:
        return np.zeros((b, rows.out, cols.out, cout), np.float32)
    if b == 1 and rows.s == 1 and cols.s == 1 and fh == fw == 1 \
            and not (rows.before or cols.before) and (rows.out, cols.out) == xs.shape[1:3]:
        flat = np.ascontiguousarray(xs).reshape(-1, cin)
        return (flat @ w.reshape(cin, cout)).reshape(1, rows.out, cols.out, cout)
    if float_winograd.applies(w.shape, rows, cols, precise):
        y = float_winograd.winograd_conv2d(xs, w, rows, cols, precise)
        if y is not None:
            return y
    if rows.out * cols.out >= _IM2COL_PIXELS or fh == 1 or fh * fw * cin >= _IM2COL_K:
        return _im2col(xs, w, rows, cols)
    if b == 1 and rows.s == 1 and cols.s == 1 and (
            fw == 1 or cols.out < _SHORT_ROWS
            or _padded(cols, fw) <= (1 + _WIDE_WASTE) * cols.out):
        return _wide(xs, w, rows, cols)
    return _strided(xs, w, rows, cols)


def _padded(win: Window, f: int) -> int:
    """The padded length at stride 1: the input, its padding before and what the last
    window needs after it."""
    return win.n + win.before + max(0, win.out - 1 + f - win.n - win.before)


def _rows_per_block(row_elements: int) -> int:
    """Output rows per block, so a block of the result and one tap's products stay in cache
    (the taps' memory traffic, not their multiply-adds, was the cost of small-K layers)."""
    return max(1, _BLOCK_BYTES // (4 * max(1, row_elements)))


def _wide(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window) -> np.ndarray:
    fh, fw, cin, cout = w.shape
    _, h, wd, _ = xs.shape
    hp, wp = _padded(rows, fh), _padded(cols, fw)
    # one spare row: the last tap's slice runs up to fw - 1 pixels past the padded image
    xp = np.zeros((hp + 1, wp, cin), np.float32)
    xp[rows.before:rows.before + h, cols.before:cols.before + wd] = xs[0]
    flat = xp.reshape(-1, cin)
    y = np.empty((rows.out * wp, cout), np.float32)
    step = _rows_per_block(wp * cout) * wp
    tap = np.empty((min(step, len(y)), cout), np.float32)
    for lo in range(0, len(y), step):
        block = y[lo:lo + step]
        part = tap[:len(block)]
        for i in range(fh):
            for j in range(fw):
                start = lo + i * wp + j
                if i == j == 0:
                    np.matmul(flat[start:start + len(block)], w[i, j], out=block)
                else:
                    np.matmul(flat[start:start + len(block)], w[i, j], out=part)
                    block += part
    y3 = y.reshape(1, rows.out, wp, cout)
    return y3 if wp == cols.out else np.ascontiguousarray(y3[:, :, :cols.out])


def _im2col(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window) -> np.ndarray:
    fh, fw, cin, cout = w.shape
    b, h, wd, _ = xs.shape
    hp = max(rows.before + h, (rows.out - 1) * rows.s + fh)
    wp = max(cols.before + wd, (cols.out - 1) * cols.s + fw)
    xp = np.zeros((hp, wp, cin), np.float32)
    y = np.empty((b, rows.out, cols.out, cout), np.float32)
    wm = w.reshape(fh * fw * cin, cout)
    ow = cols.out
    step = max(1, _PATCH_BYTES // (4 * ow * fh * fw * cin))
    buf = np.empty((min(step, rows.out), ow, fh, fw, cin), np.float32)
    sy, sx, sc = xp.strides
    for bi in range(b):
        xp[rows.before:rows.before + h, cols.before:cols.before + wd] = xs[bi]
        for y0 in range(0, rows.out, step):
            n = min(step, rows.out - y0)
            # the patches of output rows y0 .. y0 + n - 1: one strided view, one copy
            src = np.lib.stride_tricks.as_strided(
                xp[y0 * rows.s:], (n, ow, fh, fw, cin), (rows.s * sy, cols.s * sx, sy, sx, sc),
                writeable=False)
            buf[:n] = src
            np.matmul(buf[:n].reshape(n * ow, -1), wm,
                      out=y[bi, y0:y0 + n].reshape(n * ow, cout))
    return y


def _strided(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window) -> np.ndarray:
    fh, fw, _, cout = w.shape
    b, h, wd, _ = xs.shape
    pad_h = max(0, (rows.out - 1) * rows.s + fh - h - rows.before)
    pad_w = max(0, (cols.out - 1) * cols.s + fw - wd - cols.before)
    xp = np.pad(xs, ((0, 0), (rows.before, pad_h), (cols.before, pad_w), (0, 0))) \
        if rows.before or pad_h or cols.before or pad_w else xs
    y = np.zeros((b, rows.out, cols.out, cout), np.float32)
    step = _rows_per_block(b * cols.out * cout)
    tap = np.empty((b, min(step, rows.out), cols.out, cout), np.float32)
    for lo in range(0, rows.out, step):
        block = y[:, lo:lo + step]
        part = tap[:, :block.shape[1]]
        for i in range(fh):
            for j in range(fw):
                r0 = i + lo * rows.s
                patch = xp[:, r0:r0 + rows.s * block.shape[1]:rows.s,
                           j:j + cols.s * cols.out:cols.s, :][:, :, :cols.out]
                if i == j == 0:
                    np.matmul(patch, w[i, j], out=block)
                else:
                    np.matmul(patch, w[i, j], out=part)
                    block += part
    return y


__all__ = ["float_conv2d"]
