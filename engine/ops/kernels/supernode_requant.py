"""The requantization of nnlib's HVX Supernodes (``gvconv2dbbb_v60_asm``, the
``inconv2dbbb*_v60_asm`` family in hexagon/asm_src), compiled with numba where it loads and in
numpy otherwise; one pass over the sums.

For each sum s of channel c (the last axis): s = int32(sum + folded[c]) (wrapping, as the
vector adds), t = int32(s << shamt) (``vasl``, wrapping), v = (t * recip[c] + 2**30) >> 31
(``vmpye`` + ``vmpyo:<<1:rnd:sat:shift``: exactly this, the product of two int32 fitting in
64 bits), code = clamp(v, 0, 255) (``vpack:sat`` twice). It also returns, per channel, the
minimum and maximum of s and of t over the first ``rows_minmax`` rows: the 32-bit-bias op
takes its range from s (``gvconv2dbbb``: min/max before the shift), the input Supernode's
from t (``inconv2dbbb``: after it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from hexscope.engine.ops.kernels import compiled


class Extremes(NamedTuple):
    """Per channel (int64): min and max of s, and of t (see the module doc)."""

    s_lo: np.ndarray
    s_hi: np.ndarray
    t_lo: np.ndarray
    t_hi: np.ndarray


def _build() -> Callable[..., Any]:
    from numba import njit

    @njit(cache=True, nogil=True, boundscheck=False)
    def requant(sums, folded, recip, shamt, rows_minmax, out, ext):  # pragma: no cover
        n, c = sums.shape
        for k in range(c):
            ext[0, k] = 2**31 - 1
            ext[1, k] = -(2**31)
            ext[2, k] = 2**31 - 1
            ext[3, k] = -(2**31)
        for i in range(n):
            for k in range(c):
                s = (np.int64(sums[i, k]) + folded[k]) & 0xFFFFFFFF
                t = (s << shamt) & 0xFFFFFFFF
                if s >= 2147483648:
                    s -= 4294967296
                if t >= 2147483648:
                    t -= 4294967296
                v = (t * recip[k] + 1073741824) >> 31
                out[i, k] = 0 if v < 0 else (255 if v > 255 else v)
                if i < rows_minmax:
                    ext[0, k] = min(ext[0, k], s)
                    ext[1, k] = max(ext[1, k], s)
                    ext[2, k] = min(ext[2, k], t)
                    ext[3, k] = max(ext[3, k], t)
    return requant


_kernel = compiled.compile_once(_build)


def wrap32(v: np.ndarray) -> np.ndarray:
    """int64 values taken modulo 2**32 as int32 (still int64)."""
    v = np.asarray(v, np.int64) & 0xFFFFFFFF
    return np.where(v >= 2**31, v - 2**32, v)


def scale(t: np.ndarray, recip: np.ndarray) -> np.ndarray:
    """v = (t * recip + 2**30) >> 31, int64 (t already shifted)."""
    return (np.asarray(t, np.int64) * np.asarray(recip, np.int64) + 2**30) >> 31


def supernode_requantize(sums: np.ndarray, folded: np.ndarray, recip: np.ndarray, shamt: int,
                         rows_minmax: int) -> tuple[np.ndarray, Extremes]:
    """(uint8 codes shaped as ``sums``, per-channel extremes) of the module doc.

    ``sums`` is int32 (rows, channels); ``folded`` and ``recip`` hold one value per channel;
    ``shamt`` is 0..31; the extremes cover rows ``:rows_minmax`` (all channels)."""
    flat = np.ascontiguousarray(sums).reshape(-1, sums.shape[-1])
    c = flat.shape[1]
    out = np.empty(flat.shape, np.uint8)
    bias = np.ascontiguousarray(folded, np.int64)
    rec = np.ascontiguousarray(recip, np.int64)
    rows_minmax = min(rows_minmax, flat.shape[0])
    kern = _kernel()
    if kern is not None:
        ext = np.empty((4, c), np.int64)
        kern(flat, bias, rec, int(shamt), rows_minmax, out, ext)
        return out.reshape(sums.shape), Extremes(*ext)
    s = wrap32(flat.astype(np.int64) + bias)
    t = wrap32(s << shamt)
    out[...] = np.clip(scale(t, rec), 0, 255)
    top = slice(0, rows_minmax)
    big, small = np.int64(2**31 - 1), np.int64(-(2**31))
    if rows_minmax == 0:
        full = np.full(c, big), np.full(c, small)
        return out.reshape(sums.shape), Extremes(full[0], full[1], full[0], full[1])
    return out.reshape(sums.shape), Extremes(s[top].min(0), s[top].max(0), t[top].min(0),
                                             t[top].max(0))


__all__ = ["Extremes", "scale", "supernode_requantize", "wrap32"]
