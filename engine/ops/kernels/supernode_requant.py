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


def _build_d32() -> Callable[..., Any]:
    from numba import njit

    @njit(cache=True, nogil=True, boundscheck=False)
    def requant_d32(sums, ow, folded, recip, shamt, minmax_all, after_shift, mem, lo, hi
                    ):  # pragma: no cover
        # the sums whole (no copy of the data columns and of the padding columns apart, as
        # the block-by-block version needed to vectorise: 14x14 and 7x7 layers). Each pixel
        # is requantized over all its channels in one contiguous loop in int32 lanes (only
        # the product is int64; the extremes in the same loop) into a row of codes, which
        # is then copied out one d32 block at a time (its memory row in order): 30-45 %
        # faster than requantizing block by block into the d32 memory (bench/README.md)
        b, oh, width, cout = sums.shape
        ex = width - ow
        channels = folded.shape[0]
        f = np.empty(channels, np.int32)
        for k in range(channels):
            f[k] = np.int32(folded[k])          # the vector add wraps: only folded mod 2**32
        lo32 = np.full(channels, 2**31 - 1, np.int32)
        hi32 = np.full(channels, -(2**31), np.int32)
        codes = np.empty(channels, np.uint8)
        # the lanes past cout (zero weights) hold one code each
        for k in range(cout, channels):
            s = f[k]
            t = np.int32(np.int64(s) << shamt)
            v = (np.int64(t) * recip[k] + 1073741824) >> 31
            codes[k] = 0 if v < 0 else (255 if v > 255 else v)
            if b * oh * (ow + ex if minmax_all else ow) > 0:
                ee = t if after_shift else s
                lo32[k] = ee
                hi32[k] = ee
        blocks = channels >> 5
        row = np.empty((ow + ex, channels), np.uint8)      # a row's codes, pixel-major
        row_w = row.reshape(-1).view(np.uint64)
        mem_w = mem.reshape(-1).view(np.uint64)
        words_row = channels >> 3
        mem_rows, mem_w_tot = mem.shape[1], mem.shape[3]
        for col in range(ow + ex):
            row[col, cout:] = codes[cout:]
        sh = np.uint32(shamt)      # a 32-bit shift and typed constants: 2x faster loop
        for n in range(b):
            for r in range(oh):
                for col in range(ow + ex):
                    src = sums[n, r, col]
                    codes = row[col]
                    if minmax_all or col < ow:
                        for k in range(cout):
                            s = np.int32(src[k] + f[k])
                            t = np.int32(np.uint32(s) << sh)
                            v = (np.int64(t) * recip[k] + np.int64(1073741824)) >> np.int64(31)
                            codes[k] = np.uint8(min(max(v, np.int64(0)), np.int64(255)))
                            ee = t if after_shift else s
                            lo32[k] = min(lo32[k], ee)
                            hi32[k] = max(hi32[k], ee)
                    else:
                        for k in range(cout):
                            s = np.int32(src[k] + f[k])
                            t = np.int32(np.uint32(s) << sh)
                            v = (np.int64(t) * recip[k] + np.int64(1073741824)) >> np.int64(31)
                            codes[k] = np.uint8(min(max(v, np.int64(0)), np.int64(255)))
                # then block by block: each block's row of the d32 memory is written in
                # order, as 8-byte words at unsigned offsets (bytewise, LLVM left the 32-byte
                # moves scalar: gemm_requant_defs)
                for d in range(blocks):
                    at = np.uint64((((n * mem_rows + r + 4) * blocks + d) * mem_w_tot + 4) * 4)
                    for col in range(ow + ex):
                        to = at + np.uint64(col * 4)
                        frm = np.uint64(col * words_row + d * 4)
                        for kk in range(4):
                            mem_w[to + kk] = row_w[frm + kk]
        for k in range(channels):
            lo[k] = lo32[k]
            hi[k] = hi32[k]
    return requant_d32


_kernel = compiled.compile_once(_build)
_kernel_d32 = compiled.compile_once(_build_d32)


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


def d32_kernel() -> Callable[..., Any] | None:
    """The compiled pass of :func:`requantize_into_d32` (its arguments as that function
    passes them), or None where the compiled kernels are off; for callers that keep it."""
    return _kernel_d32()


def requantize_into_d32(sums: np.ndarray, ow: int, folded: np.ndarray, recip: np.ndarray,
                        shamt: int, minmax_all: bool, after_shift: bool, mem: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The module doc's requantization written straight into a d32 memory (the Supernodes'
    output: 4 rows above, 4 columns left), one pass, no intermediate codes.

    ``sums`` int32 (B, OH, W, Cout): the sums of the ``ow`` data columns and of the columns
    the asm computes past them (the width padding); ``folded`` and ``recip`` one value per
    channel of the padded depth (the channels past Cout sum 0: a filter of zero weights);
    ``mem`` uint8 (B, OH + 8, D / 32, >= W + 4, 32), written at rows 4.., columns 4..,
    every lane. Returns each lane's min and max of s (of t with ``after_shift``) over the
    data columns, or over every computed column with ``minmax_all``."""
    channels = folded.size
    kern = _kernel_d32()
    if kern is not None:
        lo, hi = np.empty(channels, np.int64), np.empty(channels, np.int64)
        kern(np.ascontiguousarray(sums, np.int32), int(ow),
             np.ascontiguousarray(folded, np.int64),
             np.ascontiguousarray(recip, np.int64), int(shamt), bool(minmax_all),
             bool(after_shift), mem, lo, hi)
        return lo, hi
    b, oh, width, cout = sums.shape
    full = np.zeros((b, oh, width, channels), np.int32)
    full[..., :cout] = sums
    counted = np.ascontiguousarray(full if minmax_all else full[:, :, :ow])
    _, ext = supernode_requantize(counted.reshape(-1, channels), folded, recip, shamt,
                                  counted.size // channels)
    codes, _ = supernode_requantize(full.reshape(-1, channels), folded, recip, shamt, 0)
    mem[:, 4:4 + oh, :, 4:4 + width, :] = codes.reshape(
        b, oh, width, channels // 32, 32).transpose(0, 1, 3, 2, 4)
    return (ext.t_lo, ext.t_hi) if after_shift else (ext.s_lo, ext.s_hi)


__all__ = ["Extremes", "requantize_into_d32", "scale", "supernode_requantize", "wrap32"]
