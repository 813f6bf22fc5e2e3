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
    from numba import njit

    @njit(cache=True, nogil=True, boundscheck=False)
    def centred_filter(w, zf):  # pragma: no cover - compiled
        fh, fw, c, m = w.shape
        wz = np.empty((fh, fw, c * m), np.int32)
        for fy in range(fh):
            for fx in range(fw):
                for ci in range(c):
                    for mi in range(m):
                        wz[fy, fx, ci * m + mi] = np.int32(w[fy, fx, ci, mi]) - np.int32(zf)
        return wz

    @njit(cache=True, nogil=True, boundscheck=False)
    def row_sums(x, wz, m, zx, sh, sw, top, left, b, oy, ow, acc):  # pragma: no cover
        # One output row, tap by tap, each tap a pass over the row's pixels with the
        # channels innermost: contiguous int32 lanes that LLVM vectorises (a loop per pixel
        # over the taps ran a few channels at a time, 0.35 ns a product).
        _, h, wd, c = x.shape
        fh, fw, cm = wz.shape
        zx32 = np.int32(zx)
        ucm = np.uint64(cm)
        y0 = oy * sh - top
        acc[:] = 0
        for fy in range(max(0, -y0), min(fh, h - y0)):
            xrow = x[b, y0 + fy].reshape(-1)
            for fx in range(fw):
                wt = wz[fy, fx]
                # the pixels whose tap fx lies inside the image
                lo = max(0, (left - fx + sw - 1) // sw)
                hi = min(ow, (wd - 1 + left - fx) // sw + 1)
                for ox in range(lo, hi):
                    # unsigned offsets: no negative-index wrap, so LLVM vectorises
                    xo = np.uint64((ox * sw - left + fx) * c)
                    ao = np.uint64(ox) * ucm
                    if m == 1:
                        for ci in range(np.uint64(c)):
                            acc[ao + ci] += (np.int32(xrow[xo + ci]) - zx32) * wt[ci]
                    else:
                        for ci in range(c):
                            a = np.int32(xrow[xo + np.uint64(ci)]) - zx32
                            for mi in range(m):
                                acc[ao + np.uint64(ci * m + mi)] += a * wt[ci * m + mi]

    @njit(cache=True, nogil=True, boundscheck=False)
    def narrow(x, w, zx, zf, sh, sw, top, left, out):  # pragma: no cover - compiled
        nb = x.shape[0]
        oh, ow, cm = out.shape[1], out.shape[2], out.shape[3]
        wz = centred_filter(w, zf)
        acc = np.empty(ow * cm, np.int32)
        for b in range(nb):
            for oy in range(oh):
                row_sums(x, wz, w.shape[3], zx, sh, sw, top, left, b, oy, ow, acc)
                out[b, oy] = acc.reshape(ow, cm)

    @njit(cache=True, nogil=True, boundscheck=False)
    def narrow_requant(x, w, zx, zf, sh, sw, top, left, bias, recip, shamt,
                       out):  # pragma: no cover - compiled
        # narrow's sums requantized row by row as dwise_requant's kernel does (the same
        # steps), so the int32 sums are never written out; returns that kernel's (lo, hi)
        nb = x.shape[0]
        oh, ow, cm = out.shape[1], out.shape[2], out.shape[3]
        wz = centred_filter(w, zf)
        acc = np.empty(ow * cm, np.int32)
        lo = np.int64(2**31 - 1)
        hi = np.int64(-(2**31))
        for b in range(nb):
            for oy in range(oh):
                row_sums(x, wz, w.shape[3], zx, sh, sw, top, left, b, oy, ow, acc)
                orow = out[b, oy]
                for ox in range(ow):
                    for k in range(cm):
                        t = (np.int64(acc[ox * cm + k]) + np.int64(bias[k])) & 0xFFFFFFFF
                        t = (t << shamt) & 0xFFFFFFFF
                        if t >= 2147483648:
                            t -= 4294967296
                        v = (t * np.int64(recip[k]) + 1073741824) >> 31
                        u = v & 0xFFFFFFFF
                        if u >= 2147483648:
                            u -= 4294967296
                        lo = min(lo, u)
                        hi = max(hi, u)
                        orow[ox, k] = 0 if v < 0 else (255 if v > 255 else v)
        return lo, hi

    @njit(cache=True, nogil=True, boundscheck=False)
    def sums(x, w, zx, zf, sh, sw, top, left, out):  # pragma: no cover - compiled
        # uint64 arithmetic wraps by definition; its low 32 bits are the int32 result
        nb, h, wd, c = x.shape
        fh, fw, _, m = w.shape
        oh, ow = out.shape[1], out.shape[2]
        acc = np.empty(c * m, np.uint64)
        uzx, uzf = np.uint64(zx), np.uint64(zf)
        for b in range(nb):
            for oy in range(oh):
                y0 = oy * sh - top
                for ox in range(ow):
                    x0 = ox * sw - left
                    acc[:] = 0
                    for fy in range(max(0, -y0), min(fh, h - y0)):
                        for fx in range(max(0, -x0), min(fw, wd - x0)):
                            for ci in range(c):
                                a = np.uint64(x[b, y0 + fy, x0 + fx, ci]) - uzx
                                for mi in range(m):
                                    acc[ci * m + mi] += a * (np.uint64(w[fy, fx, ci, mi]) - uzf)
                    for k in range(c * m):
                        v = np.int64(acc[k] & np.uint64(0xFFFFFFFF))
                        out[b, oy, ox, k] = v - 4294967296 if v >= 2147483648 else v
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
