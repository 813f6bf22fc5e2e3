"""The requantization step of nnlib's depthwise Supernode (``dwconv2dbbb_*`` in
hexagon/asm_src, whose arithmetic the C model ``dwconv2dbbb_MxN_cn`` of
hexagon/asm_ref/dwconv2dbbb_c.c writes out), compiled with numba where it loads and in numpy
otherwise; one pass over the sums.

For each output (channel c of the last axis):
t = int32(s + biasbuf[c]) (wrapping), t = int32(t << shamt) (wrapping),
v = (t * recip[c] + 2**30) >> 31 (int64, arithmetic shift), code = clamp(v, 0, 255);
it also returns min and max of int32(v) over every output, which the range retry reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hexscope.engine.ops.kernels import compiled


def _build() -> Callable[..., Any]:
    from numba import njit

    @njit(cache=True, nogil=True, boundscheck=False)
    def requant(sums, bias, recip, shamt, out):  # pragma: no cover - compiled
        n, c = sums.shape
        lo = np.int64(2**31 - 1)
        hi = np.int64(-(2**31))
        for i in range(n):
            for k in range(c):
                t = (np.int64(sums[i, k]) + np.int64(bias[k])) & 0xFFFFFFFF
                t = (t << shamt) & 0xFFFFFFFF
                if t >= 2147483648:
                    t -= 4294967296
                v = (t * np.int64(recip[k]) + 1073741824) >> 31
                w = v & 0xFFFFFFFF                  # the C's (int) of the 64-bit value
                if w >= 2147483648:
                    w -= 4294967296
                lo = min(lo, w)
                hi = max(hi, w)
                out[i, k] = 0 if v < 0 else (255 if v > 255 else v)
        return lo, hi
    return requant


_kernel = compiled.compile_once(_build)


def dwise_requantize(sums: np.ndarray, biasbuf: np.ndarray, recip: np.ndarray, shamt: int
                     ) -> tuple[np.ndarray, int, int]:
    """(uint8 codes shaped as ``sums``, min, max) of the requantization in the module doc.

    ``sums`` is int32 with channels last; ``biasbuf`` and ``recip`` hold one value per
    channel (int32 and uint32 below 2**31); ``shamt`` is 0..31."""
    c = sums.shape[-1]
    flat = np.ascontiguousarray(sums).reshape(-1, c)
    out = np.empty(flat.shape, np.uint8)
    if flat.size == 0:
        return out.reshape(sums.shape), 0, 0
    bias = np.ascontiguousarray(biasbuf, np.int64)
    rec = np.ascontiguousarray(recip, np.int64)
    kern = _kernel()
    if kern is not None:
        lo, hi = kern(flat, bias, rec, int(shamt), out)
        return out.reshape(sums.shape), int(lo), int(hi)
    t = (flat.astype(np.int64) + bias) & 0xFFFFFFFF
    t = (t << shamt) & 0xFFFFFFFF
    t = np.where(t >= 2**31, t - 2**32, t)
    v = (t * rec + 2**30) >> 31
    w = v & 0xFFFFFFFF
    w = np.where(w >= 2**31, w - 2**32, w)
    out[...] = np.clip(v, 0, 255)
    return out.reshape(sums.shape), int(w.min()), int(w.max())


__all__ = ["dwise_requantize"]
