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
from hexscope.engine.ops.kernels.spare_memory import SpareMemories


def _build() -> tuple[Callable[..., Any], Callable[..., Any]]:
    from numba import njit

    # Flat 1-D buffers of 8-byte words (a depth and depth padding in multiples of 8) or of
    # bytes, explicit unsigned offsets: numba then skips its negative-index wrap, and the
    # moves are whole words (bytewise, LLVM left the 32-byte moves scalar: 4x slower).
    @njit(cache=True, nogil=True, boundscheck=False)
    def pack(src, dims, mem, geometry, fill, unit, whole):  # pragma: no cover - compiled
        # ``whole`` False: only the data is written (``mem`` holds the fill everywhere else,
        # a memory this pass wrote before: spare_memory.py)
        b_n, h, w, d = dims
        h_tot, n_slices, w_tot, hb, wb, db = geometry
        row = n_slices * w_tot * 32 // unit
        for k in range(mem.size if whole else 0):
            mem[k] = fill
        for b in range(b_n):
            for y in range(h):
                base = (b * h_tot + y + hb) * row
                for s in range(n_slices):
                    lo = max(0, 32 * s - db)            # logical depths in this slice
                    hi = min(d, 32 * s + 32 - db)
                    if hi <= lo:
                        continue
                    n = np.uint64((hi - lo) // unit)
                    dst = base + (s * w_tot * 32 + wb * 32 + lo + db - 32 * s) // unit
                    at = (((b * h + y) * w) * d + lo) // unit
                    for x in range(w):
                        to = np.uint64(dst + 32 // unit * x)
                        frm = np.uint64(at + d // unit * x)
                        for k in range(n):
                            mem[to + k] = src[frm + k]

    @njit(cache=True, nogil=True, boundscheck=False)
    def unpack(mem, geometry, dims, out, unit, flip, ow):  # pragma: no cover - compiled
        # ``flip`` is XORed into every byte moved (the top bit: codes - 128 as int8, a
        # GEMM's centred rows, in the same pass); ``ow`` >= w is the output rows' width (the
        # columns past w are left to the caller)
        b_n, h, w, d = dims
        h_tot, n_slices, w_tot, hb, wb, db = geometry
        row = n_slices * w_tot * 32 // unit
        for b in range(b_n):
            for y in range(h):
                base = (b * h_tot + y + hb) * row
                for s in range(n_slices):
                    lo = max(0, 32 * s - db)
                    hi = min(d, 32 * s + 32 - db)
                    if hi <= lo:
                        continue
                    n = np.uint64((hi - lo) // unit)
                    at = base + (s * w_tot * 32 + wb * 32 + lo + db - 32 * s) // unit
                    dst = (((b * h + y) * ow) * d + lo) // unit
                    for x in range(w):
                        to = np.uint64(dst + d // unit * x)
                        frm = np.uint64(at + 32 // unit * x)
                        for k in range(n):
                            out[to + k] = mem[frm + k] ^ flip

    return pack, unpack


_kernels = compiled.compile_once(_build)


def _words(depth: int, d_before: int) -> bool:
    """Every run of data is whole 8-byte words (and so are the buffers)."""
    return depth % 8 == 0 and d_before % 8 == 0


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
    flat, out = np.ascontiguousarray(src).reshape(-1), mem.reshape(-1)
    if _words(src.shape[3], db):
        kernels[0](flat.view(np.uint64), src.shape, out.view(np.uint64),
                   (h_tot, n_slices, w_tot, hb, wb, db), np.uint64(fill * 0x0101010101010101), 8,
                   True)
    else:
        kernels[0](flat, src.shape, out, (h_tot, n_slices, w_tot, hb, wb, db), np.uint8(fill),
                   1, True)
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
    flat, dst = np.ascontiguousarray(memory).reshape(-1), out.reshape(-1)
    geometry = (h_tot, n_slices, w_tot, hb, wb, db)
    if _words(shape[3], db):
        kernels[1](flat.view(np.uint64), geometry, tuple(shape), dst.view(np.uint64), 8,
                   np.uint64(0), shape[2])
    else:
        kernels[1](flat, geometry, tuple(shape), dst, 1, np.uint8(0), shape[2])
    return out


def unpacker(memory_shape: tuple[int, ...], shape: tuple[int, int, int, int],
             padding: tuple[int, ...], centre: bool = False, width: int | None = None
             ) -> Callable[[np.ndarray], np.ndarray] | None:
    """:func:`unpack_d32` for buffers of one geometry, its set-up done once: a function of
    a tensor's raw bytes (1-D, contiguous, at least the memory's size) giving the logical
    data (a new array). None where the compiled kernels are off. A node that unpacks an
    input of the same geometry at every run keeps one (a Supernode's 1x1 GEMM).

    ``centre``: each code's top bit flipped as it is moved (``code ^ 128``, the bits of
    ``code - 128`` as int8: the centred rows of :func:`gemm.centre_into` in the same pass).
    ``width`` (>= the data's): the array's rows are that wide, the columns past the data
    left unwritten for the caller (a Supernode appends what its windows read past it)."""
    kernels = _kernels()
    if kernels is None:
        return None
    kernel = kernels[1]
    hb, _, wb, _, db, _ = padding
    _, h_tot, n_slices, w_tot, _ = memory_shape
    geometry = (h_tot, n_slices, w_tot, hb, wb, db)
    dims = tuple(int(n) for n in shape)
    ow = dims[2] if width is None else int(width)
    if ow < dims[2]:
        raise ValueError(f"width {ow} is less than the data's {dims[2]}")
    out_dims = (dims[0], dims[1], ow, dims[3])
    size = int(np.prod(memory_shape))
    words = _words(dims[3], db)
    word = np.uint64(0x8080808080808080 if centre else 0)
    byte = np.uint8(0x80 if centre else 0)

    def run(raw: np.ndarray) -> np.ndarray:
        out = np.empty(out_dims, np.uint8)
        if words:
            kernel(raw[:size].view(np.uint64), geometry, dims, out.reshape(-1).view(np.uint64),
                   8, word, ow)
        else:
            kernel(raw[:size], geometry, dims, out.reshape(-1), 1, byte, ow)
        return out

    return run


def packer(memory_shape: tuple[int, ...], shape: tuple[int, int, int, int],
           padding: tuple[int, ...], fill: int) -> Callable[[np.ndarray], np.ndarray] | None:
    """:func:`pack_d32` for data of one shape into one geometry with one fill, its set-up
    done once: a function of a (B, H, W, D) uint8 array giving the memory (a new array).
    None where the compiled kernels are off or ``fill`` is not a byte."""
    kernels = _kernels()
    if kernels is None or not 0 <= fill <= 255:
        return None
    kernel = kernels[0]
    hb, _, wb, _, db, _ = padding
    _, h_tot, n_slices, w_tot, _ = memory_shape
    geometry = (h_tot, n_slices, w_tot, hb, wb, db)
    dims = tuple(int(n) for n in shape)
    mem_shape = tuple(int(n) for n in memory_shape)
    words = _words(dims[3], db)
    word = np.uint64(fill * 0x0101010101010101)
    byte = np.uint8(fill)

    spare = SpareMemories()

    def run(src: np.ndarray) -> np.ndarray:
        # a memory given out before keeps its fill: only the data is written into it (a
        # 3-deep input's memory is 29/32 depth padding)
        mem = spare.take()
        whole = mem is None
        if mem is None:
            mem = np.empty(mem_shape, np.uint8)
        flat = np.ascontiguousarray(src).reshape(-1)
        if words:
            kernel(flat.view(np.uint64), dims, mem.reshape(-1).view(np.uint64), geometry, word,
                   8, whole)
        else:
            kernel(flat, dims, mem.reshape(-1), geometry, byte, 1, whole)
        if whole:
            spare.keep(mem)
        return mem

    return run
