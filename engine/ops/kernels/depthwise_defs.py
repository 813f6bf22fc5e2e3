"""The compiled loops of :mod:`depthwise` (numba, imported on first use).

Module level, not built in a closure: numba keys its on-disk cache of a function that calls
other closures by a per-process id of theirs, so ``narrow`` and ``narrow_requant`` were
compiled again in every process (2.5 s of each app start's kernel preload, and one more
cache entry each time).
"""

from __future__ import annotations

import numpy as np
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
