"""The 1x1 d32 Supernode's first try in one compiled call that reads the d32 input where it
lies: ``ivnni_d32`` (:mod:`igemm_d32_ir`) sums the data codes against the filter less its
zero code and requantizes in its register tiles into the d32 output memory.

The fused pass of :mod:`gemm_requant` unpacks each block of input rows into a centred copy,
sums each row for the GEMM's row term, builds a table of output offsets, and requantizes with
64-bit products; this one keeps every table a node's geometry fixes (the pixels' input and
output offsets, the filter packed as signed w - zf) and, per run, computes only the
per-channel terms (:func:`conv1x1_d32_defs.channel_terms`). It serves a filter whose codes
all lie within [zf - 128, zf + 127] (the int8 weights TFLite's delegate passes, zero 128) and
recips below 2**31 (``fill_info_minmax_basics`` clamps them to 0x7FFFFFFF); else None and
the caller keeps :mod:`gemm_requant`'s pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hexscope.engine.ops.kernels import compiled, igemm
from hexscope.engine.ops.kernels.igemm_d32_ir import SLICE_QUADS

#: Bytes of input codes per chunk of pixels, which stays in L2 while every output slice
#: passes over it.
CHUNK_BYTES = 160 * 1024

D32Run = Callable[[np.ndarray, int, np.ndarray, np.ndarray, int, bool, np.ndarray, int],
                  tuple[int, int] | None]


def _build() -> Callable[..., Any]:
    from hexscope.engine.ops.kernels.conv1x1_d32_defs import conv1x1_d32

    return conv1x1_d32  # type: ignore[no-any-return]


_driver = compiled.compile_once(_build)


def signed_filter(codes: np.ndarray, zf: int, channels: int, quads: int) -> np.ndarray | None:
    """The (K, N) filter codes as ``ivnni_d32`` reads them: w - zf as int8 in blocks of 16
    channels, (channels / 16, quads, 16, 4), zero past K and N; None when a code lies
    outside [zf - 128, zf + 127]."""
    k, n = codes.shape
    values = codes.astype(np.int16) - np.int16(zf)
    if values.size and (values.min() < -128 or values.max() > 127):
        return None
    padded = np.zeros((4 * quads, channels), np.int8)
    padded[:k, :n] = values
    blocks = np.ascontiguousarray(padded.reshape(quads, 4, channels // 16, 16)
                                  .transpose(2, 0, 3, 1))
    blocks.flags.writeable = False
    return blocks


def prepared_conv1x1_d32(codes: np.ndarray, zf: int, channels: int,
                         memory_shape: tuple[int, ...], dims: tuple[int, int, int, int],
                         padding: tuple[int, ...], extra: int,
                         past: tuple[np.ndarray, np.ndarray] | None) -> D32Run | None:
    """The first try of a 1x1 stride-1 Supernode over a d32 input of ``memory_shape``,
    ``dims`` (B, H, W, D) and ``padding`` (as :class:`D32Padding` orders it; no depth
    padding before), filter ``codes`` (D, N) with zero ``zf``, output depth ``channels`` (N
    rounded up to 32): a function of (raw, zx, folded, recip, shift, minmax_all, mem, fill)
    that writes the codes of the W data columns and the ``extra`` columns past them into
    the d32 output memory ``mem`` (B, H + 8, channels / 32, W + extra + 4, 32) as
    :func:`supernode_requant.requantize_into_d32` does (the extremes of t, of every column
    with ``minmax_all``), ``fill`` (0..255; -1: none) into its 4 rows above and below and 4
    columns left, and returns the run's range in output codes (min and max of (lo x recip +
    2**30) >> 31 over the lanes), or None, nothing written, for recips it does not serve.
    ``past`` = (byte offsets in raw, read-as-zx mask), (B, H, extra, D), where the extra
    columns read (:func:`d32_input_reads.area_index`). None where it does not apply here
    (the caller keeps :mod:`gemm_requant`)."""
    fn, driver = igemm.kernel_address_d32(), _driver()
    b, h, w, depth = dims
    k, n = codes.shape
    hb, _, wb, _, db, _ = padding
    if not fn or driver is None or db or k != depth or channels % 32 or channels < n \
            or not (b and h and w and n and k) or (extra and past is None):
        return None
    quads = -(-k // 4)
    blocks = signed_filter(codes, zf, channels, quads)
    if blocks is None:
        return None
    colsum = np.zeros(channels, np.int64)
    colsum[:n] = codes.astype(np.int64).sum(0) - np.int64(zf) * k
    h_tot, slices, w_tot = memory_shape[1:4]
    line = w_tot * 32                                       # one slice's row of the input
    image, row = np.arange(b * h) // h, np.arange(b * h) % h
    rows_in = ((image * h_tot + row + hb) * slices) * line  # (B*H,) each data row's start
    inoff = (rows_in[:, None] + (wb + np.arange(w))[None, :] * 32).reshape(-1)
    mem_rows, out_slices, mem_w = h + 8, channels // 32, w + extra + 4
    rows_out = ((image * mem_rows + row + 4) * out_slices) * mem_w * 32
    out_data = (rows_out[:, None] + (4 + np.arange(w))[None, :] * 32).reshape(-1)
    out_past = (rows_out[:, None] + (4 + w + np.arange(extra))[None, :] * 32).reshape(-1)
    outoff = np.concatenate([out_data, out_past]).astype(np.int64)
    buf_pixel = slices * 32
    buf = np.zeros(max(1, b * h * extra) * buf_pixel, np.uint8)
    buf_off = (np.arange(b * h * extra) * buf_pixel).astype(np.int64)
    if past is None:
        past = (np.zeros((b, h, 0, depth), np.int64), np.zeros((b, h, 0, depth), np.bool_))
    all_zx = bool(np.all(past[1]))
    buf_zx = np.full(1, -1, np.int64)
    mc = max(6, CHUNK_BYTES // (4 * quads) // 6 * 6)
    terms = [np.empty(channels, t) for t in (np.int32, np.int32, np.int32, np.int64,
                                             np.int32, np.int32)]
    # this run's folded and recip copied into buffers of our own: one type for numba
    # whatever the caller's arrays are (a read-only one would compile another version)
    folded_buf, recip_buf = np.empty(channels, np.int64), np.empty(channels, np.int64)
    size = int(np.prod(memory_shape))
    mem_shape = (b, mem_rows, out_slices)
    fixed = (np.int64(fn), inoff.astype(np.int64), np.int64(quads), np.int64(line),
             np.int64(blocks.ctypes.data), np.int64(channels // 16), outoff,
             np.int64(mem_w * 32), np.int64(mc), buf, buf_off, past[0], past[1], all_zx,
             buf_zx)

    def run(raw: np.ndarray, zx: int, folded: np.ndarray, recip: np.ndarray, shift: int,
            minmax_all: bool, mem: np.ndarray, fill: int) -> tuple[int, int] | None:
        if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size < size:
            raise ValueError(f"{raw.size} bytes are not the memory {memory_shape}")
        if mem.dtype != np.uint8 or not mem.flags.c_contiguous or mem.shape[:3] != mem_shape \
                or mem.shape[3] != mem_w or mem.shape[4] != 32:
            # the kernel writes by address: refuse a memory it would overrun
            raise ValueError(f"the output memory {mem.shape} is not a C-contiguous uint8 "
                             f"d32 memory of {mem_shape} x {mem_w} x 32")
        folded_buf[:] = folded
        recip_buf[:] = recip
        ok, low, high = driver(*fixed, raw, folded_buf, recip_buf, colsum, int(zx), int(shift),
                               bool(minmax_all), int(fill), mem, *terms)
        return (int(low), int(high)) if ok else None

    run.blocks = blocks  # type: ignore[attr-defined]  # the kernel reads them by address
    return run


__all__ = ["CHUNK_BYTES", "SLICE_QUADS", "prepared_conv1x1_d32", "signed_filter"]
