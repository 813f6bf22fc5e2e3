"""Depthwise convolution sums (int32, wrapping), compiled with numba where it loads and in
numpy otherwise: one loop over the filter taps, each a vectorised pass over every pixel.

sums[b, oy, ox, c * M + m] = sum over the taps inside the image of
(x[b, oy*sh - top + fy, ox*sw - left + fx, c] - zx) * (w[fy, fx, c, m] - zf), each product
and the sum wrapped to int32 as the device's int32 arithmetic wraps (quantized-ops spec §1.3).
The zero codes may lie outside 0..255 (``quantize_int`` ranges); taps outside the image are
skipped, not read as a pad code, so any zero code is exact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hexscope.engine.ops.kernels import compiled


def _numba_kernel() -> Callable[..., Any] | None:
    """The compiled loop (general), or None where numba is missing or turned off."""
    kernels = _numba_kernels()
    return None if kernels is None else kernels[0]


def _build() -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    from hexscope.engine.ops.kernels.depthwise_defs import narrow, narrow_requant, sums

    return sums, narrow, narrow_requant


#: (general, narrow, narrow_requant): the narrow loop sums in int32 without wrapping, for
#: zero codes in 0..255 and at most 33,025 taps (each product is under 2**16, so no sum
#: wraps); narrow_requant also requantizes them (:func:`depthwise_requantized`)
_numba_kernels = compiled.compile_once(_build)


def _narrow(x: np.ndarray, w: np.ndarray, zx: int, zf: int) -> bool:
    return 0 <= zx <= 255 and 0 <= zf <= 255 and w.shape[0] * w.shape[1] <= 33025


def numba_kernels() -> tuple | None:
    """The compiled kernels of this module (None where they are off), for a caller that
    keeps them and hands them to :func:`depthwise_requantized` (a node's kept set-up)."""
    return _numba_kernels()


def depthwise_requantized(x: np.ndarray, w: np.ndarray, zx: int, zf: int, sh: int, sw: int,
                          top: int, left: int, oh: int, ow: int, biasbuf: np.ndarray,
                          recip: np.ndarray, shamt: int, kernels: tuple | None = None
                          ) -> tuple[np.ndarray, int, int] | None:
    """``dwise_requantize(depthwise_sums(...), biasbuf, recip, shamt)`` in one compiled pass
    (the int32 sums stay in a row buffer), or None where that pass does not apply (numba
    off, zero codes outside 0..255, too many taps, an empty output): the caller then takes
    the two steps. ``kernels``: :func:`numba_kernels` as the caller found them (default:
    looked up now)."""
    if kernels is None:
        kernels = _numba_kernels()
    nb, c, m = x.shape[0], x.shape[3], w.shape[3]
    if kernels is None or not _narrow(x, w, zx, zf) or not nb * oh * ow * c * m:
        return None
    out = np.empty((nb, oh, ow, c * m), np.uint8)
    lo, hi = kernels[2](np.ascontiguousarray(x), np.ascontiguousarray(w), zx, zf, sh, sw,
                        top, left, np.ascontiguousarray(biasbuf, np.int64),
                        np.ascontiguousarray(recip, np.int64), int(shamt), out)
    return out, int(lo), int(hi)


def depthwise_sums(x: np.ndarray, w: np.ndarray, zx: int, zf: int, sh: int, sw: int,
                   top: int, left: int, oh: int, ow: int) -> np.ndarray:
    """int32 (B, OH, OW, C*M) sums of NHWC uint8 ``x`` and [FH, FW, C, M] uint8 ``w`` (see the
    module doc); ``top``/``left`` the padding before, ``oh``/``ow`` the output size."""
    nb, c = x.shape[0], x.shape[3]
    m = w.shape[3]
    out = np.empty((nb, oh, ow, c * m), np.int32)     # every path writes every sum
    if out.size == 0:
        return out
    kernels = _numba_kernels()
    if kernels is not None:
        kernel = kernels[1 if _narrow(x, w, zx, zf) else 0]
        kernel(np.ascontiguousarray(x), np.ascontiguousarray(w), zx, zf, sh, sw, top, left, out)
        return out
    return _numpy_sums(x, w, zx, zf, sh, sw, top, left, out)


def _numpy_sums(x: np.ndarray, w: np.ndarray, zx: int, zf: int, sh: int, sw: int, top: int,
                left: int, out: np.ndarray) -> np.ndarray:
    """The same sums in int64, mod 2**32: one vectorised pass per tap. A tap's products over
    the pixels it cannot reach are masked to 0 (padding is skipped)."""
    nb, h, wd, c = x.shape
    fh, fw, _, m = w.shape
    oh, ow = out.shape[1], out.shape[2]
    acc = np.zeros((nb, oh, ow, c, m), np.int64)
    a_all = x.astype(np.int64) - zx
    rows, cols = np.arange(oh) * sh - top, np.arange(ow) * sw - left
    for fy in range(fh):
        ys = rows + fy
        yok = (ys >= 0) & (ys < h)
        for fx in range(fw):
            xs = cols + fx
            xok = (xs >= 0) & (xs < wd)
            if not yok.any() or not xok.any():
                continue
            a = a_all[:, np.clip(ys, 0, h - 1)][:, :, np.clip(xs, 0, wd - 1)]
            a = a * (yok[None, :, None, None] & xok[None, None, :, None])
            # products wrapped before they are added: int64 never overflows this way
            acc += ((a[..., None] * (w[fy, fx].astype(np.int64) - zf)) + 2**31) % 2**32 - 2**31
            acc = (acc + 2**31) % 2**32 - 2**31
    out[...] = acc.reshape(nb, oh, ow, c * m).astype(np.int32)
    return out
