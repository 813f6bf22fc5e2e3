"""d32 layout changes of uint8 tensors in one compiled pass (numba): the logical NHWC
data into a padded [B, H_tot, D_tot/32, W_tot, 32] buffer and back.

numpy does each with a strided copy per 32-deep slice plus a fill of the whole buffer,
each with its own pass (~160 us for 112x112x96, seven memcpy's worth); here it is one pass
that writes every byte once. A MobileNetV2 run changes layout four times per convolution
(bench/README.md, tflite_bench.py). numpy stays the fallback (:meth:`Tensor.to_d32`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hexscope.engine.ops.kernels import compiled


def _build() -> tuple[Callable[..., Any], Callable[..., Any]]:
    from numba import njit

    # Flat 1-D buffers and explicit offsets: the inner loops are then plain runs of bytes,
    # which LLVM turns into memset/memcpy.
    @njit(cache=True, nogil=True, boundscheck=False)
    def pack(src, dims, mem, geometry, fill):  # pragma: no cover - compiled
        b_n, h, w, d = dims
        h_tot, n_slices, w_tot, hb, wb, db = geometry
        row = n_slices * w_tot * 32
        for k in range(mem.size):
            mem[k] = fill
        for b in range(b_n):
            for y in range(h):
                base = (b * h_tot + y + hb) * row
                for s in range(n_slices):
                    lo = max(0, 32 * s - db)            # logical depths in this slice
                    hi = min(d, 32 * s + 32 - db)
                    n = hi - lo
                    if n <= 0:
                        continue
                    dst = base + s * w_tot * 32 + wb * 32 + lo + db - 32 * s
                    at = ((b * h + y) * w) * d + lo
                    for x in range(w):
                        # unsigned offsets: numba then skips its negative-index wrap and
                        # LLVM vectorises the copy (8x faster than signed ones)
                        to, frm = np.uint64(dst + 32 * x), np.uint64(at + d * x)
                        if n == 32:                 # a full slice: a fixed 32-byte move
                            for k in range(np.uint64(32)):
                                mem[to + k] = src[frm + k]
                        else:
                            for k in range(np.uint64(n)):
                                mem[to + k] = src[frm + k]

    @njit(cache=True, nogil=True, boundscheck=False)
    def unpack(mem, geometry, dims, out):  # pragma: no cover - compiled
        b_n, h, w, d = dims
        h_tot, n_slices, w_tot, hb, wb, db = geometry
        row = n_slices * w_tot * 32
        for b in range(b_n):
            for y in range(h):
                base = (b * h_tot + y + hb) * row
                for s in range(n_slices):
                    lo = max(0, 32 * s - db)
                    hi = min(d, 32 * s + 32 - db)
                    n = hi - lo
                    if n <= 0:
                        continue
                    at = base + s * w_tot * 32 + wb * 32 + lo + db - 32 * s
                    dst = ((b * h + y) * w) * d + lo
                    for x in range(w):
                        to, frm = np.uint64(dst + d * x), np.uint64(at + 32 * x)
                        if n == 32:
                            for k in range(np.uint64(32)):
                                out[to + k] = mem[frm + k]
                        else:
                            for k in range(np.uint64(n)):
                                out[to + k] = mem[frm + k]

    return pack, unpack


_kernels = compiled.compile_once(_build)


def pack_d32(src: np.ndarray, memory_shape: tuple[int, ...], padding: tuple[int, ...],
             fill: int) -> np.ndarray | None:
    """``src`` (B, H, W, D uint8) in d32 memory order with ``fill`` (0..255) in the padding,
    or None for other types or where the compiled kernels are off (the caller's numpy path
    then)."""
    kernels = _kernels()
    if kernels is None or src.dtype != np.uint8 or not 0 <= fill <= 255:
        return None
    mem = np.empty(memory_shape, np.uint8)
    hb, _, wb, _, db, _ = padding
    _, h_tot, n_slices, w_tot, _ = memory_shape
    kernels[0](np.ascontiguousarray(src).reshape(-1), src.shape, mem.reshape(-1),
               (h_tot, n_slices, w_tot, hb, wb, db), np.uint8(fill))
    return mem


def unpack_d32(memory: np.ndarray, shape: tuple[int, int, int, int],
               padding: tuple[int, ...]) -> np.ndarray | None:
    """The logical (B, H, W, D) data of a uint8 d32 buffer in memory order (a new array), or
    None for other types or where the compiled kernels are off."""
    kernels = _kernels()
    if kernels is None or memory.dtype != np.uint8:
        return None
    out = np.empty(shape, np.uint8)
    hb, _, wb, _, db, _ = padding
    _, h_tot, n_slices, w_tot, _ = memory.shape
    kernels[1](np.ascontiguousarray(memory).reshape(-1), (h_tot, n_slices, w_tot, hb, wb, db),
               tuple(shape), out.reshape(-1))
    return out
