"""The float convolution of the references (issue 12): zero padding, any stride, float32.

A sum of one GEMM per filter tap, taps in row-major order (i, j), each accumulated into the
result in that order. The float analyses spend most of their time here, so the taps are laid
out for BLAS without changing a single sum (every output element adds the same products in
the same order; checked bit for bit against the plain form in the tests):

- a 1x1 filter at stride 1 is one GEMM over the whole image;
- at stride 1 the taps of a "wide" image are contiguous: with the padded image flattened to
  rows of ``wp`` pixels, tap (i, j) of output pixel r * wp + c reads pixel r * wp + c +
  i * wp + j, so each tap is one GEMM over a contiguous slice (the ``wp - out`` columns at
  each row end are computed and dropped). Used when they are at most a tenth more work;
- a 1 x N filter is run as N x 1 on the transposed image (no wasted columns then);
- anything else (strides, batches) takes each tap as a strided 4-D view, one GEMM per
  output row inside numpy's matmul.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.ops._gemm import Window

#: Most extra work (dropped columns) the wide layout may cost before the strided form wins
#: (measured on the InceptionV3-shaped graph: 3x3 on 35 columns gains, 5x5 on 35 loses).
_WIDE_WASTE = 0.1


def float_conv2d(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window) -> np.ndarray:
    """Convolution of ``xs`` [B, H, W, Cin] by ``w`` [FH, FW, Cin, Cout] (float32), taps
    outside the image adding nothing; [B, rows.out, cols.out, Cout], C-contiguous."""
    fh, fw, cin, cout = w.shape
    b = xs.shape[0]
    if rows.out == 0 or cols.out == 0 or b == 0 or fh * fw == 0:
        return np.zeros((b, rows.out, cols.out, cout), np.float32)
    if b == 1 and rows.s == 1 and cols.s == 1:
        if fh == fw == 1 and not (rows.before or cols.before) \
                and (rows.out, cols.out) == xs.shape[1:3]:
            flat = np.ascontiguousarray(xs).reshape(-1, cin)
            return (flat @ w.reshape(cin, cout)).reshape(1, rows.out, cols.out, cout)
        if fh == 1 and fw > 1:
            y = _wide(xs.transpose(0, 2, 1, 3), w.transpose(1, 0, 2, 3), cols, rows)
            return np.ascontiguousarray(y.transpose(0, 2, 1, 3))
        if fw == 1 or _padded(cols, fw) <= (1 + _WIDE_WASTE) * cols.out:
            return _wide(xs, w, rows, cols)
    return _strided(xs, w, rows, cols)


def _padded(win: Window, f: int) -> int:
    """The padded length at stride 1: the input, its padding before and what the last
    window needs after it."""
    return win.n + win.before + max(0, win.out - 1 + f - win.n - win.before)


def _wide(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window) -> np.ndarray:
    fh, fw, cin, cout = w.shape
    _, h, wd, _ = xs.shape
    hp, wp = _padded(rows, fh), _padded(cols, fw)
    # one spare row: the last tap's slice runs up to fw - 1 pixels past the padded image
    xp = np.zeros((hp + 1, wp, cin), np.float32)
    xp[rows.before:rows.before + h, cols.before:cols.before + wd] = xs[0]
    flat = xp.reshape(-1, cin)
    m = rows.out * wp
    y = np.empty((m, cout), np.float32)
    tap = np.empty((m, cout), np.float32) if fh * fw > 1 else y
    for i in range(fh):
        for j in range(fw):
            start = i * wp + j
            np.matmul(flat[start:start + m], w[i, j], out=tap if (i, j) != (0, 0) else y)
            if (i, j) != (0, 0):
                y += tap
    y3 = y.reshape(1, rows.out, wp, cout)
    return y3 if wp == cols.out else np.ascontiguousarray(y3[:, :, :cols.out])


def _strided(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window) -> np.ndarray:
    fh, fw, _, _ = w.shape
    _, h, wd, _ = xs.shape
    pad_h = max(0, (rows.out - 1) * rows.s + fh - h - rows.before)
    pad_w = max(0, (cols.out - 1) * cols.s + fw - wd - cols.before)
    xp = np.pad(xs, ((0, 0), (rows.before, pad_h), (cols.before, pad_w), (0, 0))) \
        if rows.before or pad_h or cols.before or pad_w else xs
    y: np.ndarray | None = None
    for i in range(fh):
        for j in range(fw):
            patch = xp[:, i:i + rows.s * rows.out:rows.s, j:j + cols.s * cols.out:cols.s, :]
            tap = patch[:, :rows.out, :cols.out, :] @ w[i, j]
            if y is None:
                y = tap
            else:
                y += tap
    return y if y is not None else np.zeros((xs.shape[0], rows.out, cols.out, w.shape[3]),
                                            np.float32)


__all__ = ["float_conv2d"]
