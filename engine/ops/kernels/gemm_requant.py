"""The 1x1 d32 Supernode's GEMM and requantization in one compiled pass: the requantizing VNNI
kernel (:mod:`igemm`'s ``ivnni_rq``) takes a block of a few output rows and writes their
codes into the d32 output memory from its register tiles: the int32 sums are never stored.

The separate steps (:func:`gemm.prepared_gemm8`, then
:func:`supernode_requant.requantize_into_d32`) write a whole layer's sums out (4.8 MB for a
112x112x96 layer) and read them back cold; here they stay in a block of about 96 KiB.
The requantization is the one of :mod:`supernode_requant` (the same steps, lane for lane);
the sums are not kept, so a run whose range must be searched again takes the separate
steps (the caller's retry).

The numba driver (:mod:`gemm_requant_defs`) calls the llvmlite kernel through its address
(an intrinsic that casts the integer to a function pointer), so the driver itself is cached
on disk like the other kernels: a ctypes function as a global would make numba compile it
in every process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hexscope.engine.ops.kernels import compiled, igemm
from hexscope.engine.ops.kernels.gemm import Rhs, wrap32

#: Bytes of input rows and output codes per block of output rows (a share of L2).
BLOCK_BYTES = 96 * 1024


def _build() -> Callable[..., Any]:
    from hexscope.engine.ops.kernels.gemm_requant_defs import gemm_requant

    return gemm_requant  # type: ignore[no-any-return]


_kernel = compiled.compile_once(_build)


def _build_windows() -> Callable[..., Any]:
    from hexscope.engine.ops.kernels.gemm_requant_defs import d32_windows

    return d32_windows  # type: ignore[no-any-return]


_windows = compiled.compile_once(_build_windows)


def d32_windower(memory_shape: tuple[int, ...], dims: tuple[int, int, int, int],
                 padding: tuple[int, ...], rows: tuple[int, int, int, int],
                 cols: tuple[int, int, int, int]
                 ) -> tuple[Callable[[np.ndarray, int], np.ndarray], int] | None:
    """The windows of a convolution of a d32 input (memory shape, data shape (B, H, W, D),
    padding as :class:`D32Padding` orders it; ``rows`` and ``cols`` = (stride, padding
    before, output size, filter size)), centred int8, with no copy per window: (a function
    of (the input's raw bytes, fill code 0..255 that every tap outside the data reads) that
    gives (B*OH, pitch) rows, lda). Output row r's window at column ox is the FW*FH*D codes
    at row r, ox * lda, in (fx, fy, c) order (each input column's FH rows together, so the
    FW columns of a window are consecutive and the next window starts a stride later): the
    filter is read in that order too. The rows are a buffer of the function's, written again
    by its next call. None where numba does not run here."""
    kernel = _windows()
    if kernel is None:
        return None
    hb, _, wb, _, db, _ = padding
    geometry = (memory_shape[1], memory_shape[2], memory_shape[3], hb, wb, db)
    size = int(np.prod(memory_shape))
    wq = (cols[2] - 1) * cols[0] + cols[3] if cols[2] else 0    # the columns reached
    out = np.empty((dims[0] * rows[2], wq, rows[3], dims[3]), np.int8)
    flat = out.reshape(dims[0] * rows[2], -1)
    lda = cols[0] * rows[3] * dims[3]
    dims = tuple(int(v) for v in dims)

    def run(raw: np.ndarray, fill: int) -> np.ndarray:
        if not 0 <= fill <= 255 or raw.size < size:
            raise ValueError(f"fill {fill} is not a code, or {raw.size} bytes are not the "
                             f"memory {memory_shape}")
        kernel(raw, geometry, dims, rows, cols, np.int64(fill), out)
        return flat

    return run, lda


def prepared_gemm_requant(rhs: Rhs, b: int, shape: tuple[int, int, int], ow: int,
                          channels: int, d32: tuple[tuple[int, ...], tuple[int, int, int, int],
                                                    tuple[int, ...]] | None = None,
                          lda: int = 0
                          ) -> Callable[..., tuple[np.ndarray, np.ndarray, int, int]] | None:
    """:func:`gemm.prepared_gemm8` (``rhs``, row coefficient ``b``) then
    :func:`supernode_requant.requantize_into_d32` in one pass, for int8 left-hand sides of
    ``shape`` = (B, OH, width) pixels, the first ``ow`` columns of each row the data: a
    function of (source, offsets int32 (N,), folded, recip (one per channel of
    ``channels``), shift, minmax_all, after_shift, mem, fill, past, zx) that writes the codes
    into ``mem`` as :func:`requantize_into_d32` does, and ``fill`` (0..255; -1: none) into
    the 4 rows above and below and the 4 columns left, and returns its (lo, hi) (buffers of
    the function's, reused by its next call) and the range the lanes give in output codes:
    min of (lo x recip + 2**30) >> 31, max of (hi x recip + 2**30) >> 31.

    ``source`` is the left-hand side (m, K) int8, C-contiguous; or, prepared with ``d32`` =
    (memory shape, data shape (B, OH, W, K), padding) of a d32 input (a 1x1 convolution's),
    that input's raw bytes: its rows are unpacked and centred block by block (as
    :func:`d32_layout.unpacker` with ``centre``), followed by the columns the windows read
    past the data: ``past`` = (byte offsets in the raw bytes, read-as-``zx`` mask), both
    (B, OH, width - W, K), as :func:`d32_input_reads.area_index` gives them (the zx's low
    byte where the mask is set). ``lda`` > 0 (no ``d32``): ``source`` is (B*OH, pitch)
    rows of overlapping windows, pixel ox's K codes at row (b, oy), ox * lda
    (:func:`d32_windower`). None where the VNNI kernel or numba does not run here (the
    caller keeps the separate steps)."""
    kernel, driver = igemm.kernel8(), _kernel()
    nb, oh, width = shape
    m, k, n = nb * oh * width, rhs.k, rhs.n
    if kernel is None or driver is None or not igemm.available8() or not (m and n and k) \
            or channels % 32 or channels < n:
        # (the kernel's tiles take a d32 slice's 32 channels at a time)
        return None
    packed = rhs.packed8
    coef = wrap32(b - rhs.zero)
    cols = igemm.COLS
    n_pad = -(-n // cols) * cols
    blocks = packed.blocks
    if channels > n_pad:
        # the kernel takes every channel block of the output: the lanes past the filter's
        # columns are zero weights (and masked), no byte loop of the driver's for them
        blocks = np.zeros((channels // cols, *blocks.shape[1:]), np.uint8)
        blocks[:packed.blocks.shape[0]] = packed.blocks
        n_pad = channels
    b_ptr = blocks.ctypes.data
    # a block's output rows: its input rows (unpacked from a d32 input) and its output
    # codes take about BLOCK_BYTES; the sums never leave the kernel's registers, so the
    # block need not be small (few blocks: the filter streams through the cache once a
    # block, 1.2 MB for a 7x7x320 -> 1280 layer)
    rows_blk = max(1, min(oh, BLOCK_BYTES // max(1, width * (k + n_pad))))
    if lda:
        rows_blk = 1            # the windows' rows: one output row a kernel call
    mc = max(igemm.ROWS, igemm.CHUNK_BYTES // k // igemm.ROWS * igemm.ROWS)
    rowterm = np.empty(rows_blk * width, np.int32)
    rowoff = np.empty(rows_blk * width, np.int64)
    rowflag = np.empty(rows_blk * width, np.int32)
    fn = np.int64(igemm.kernel_address_rq8())
    mem_rows = (nb, oh + 8, -(-channels // 32))
    off = np.zeros(n_pad, np.int32)
    bias, rec = np.empty(channels, np.int64), np.empty(channels, np.int64)
    lo, hi = np.empty(channels, np.int64), np.empty(channels, np.int64)
    no_lhs = np.zeros((0, k), np.int8)
    if d32 is None:
        geometry, dims, unit, size = (1, 1, 1, 0, 0, 0), (0, oh, width, k), 8, 0
        buf = np.zeros((1, k), np.int8)
    else:
        memory_shape, dims, padding = d32
        if dims[:2] != (nb, oh) or dims[3] != k or not dims[2] <= width:
            raise ValueError(f"a d32 input of shape {dims} does not give the rows {shape} x "
                             f"{k}")
        hb, _, wb, _, db, _ = padding
        geometry = (memory_shape[1], memory_shape[2], memory_shape[3], hb, wb, db)
        unit = 8 if k % 8 == 0 and db % 8 == 0 else 1
        size = int(np.prod(memory_shape))
        buf = np.empty((rows_blk * width, k), np.int8)
    no_past = (np.zeros((nb, oh, 0, k), np.int64), np.zeros((nb, oh, 0, k), np.bool_))
    no_raw = np.zeros(1, np.uint8)
    wordtype = np.uint64 if unit == 8 else np.uint8
    bufw = buf.reshape(-1).view(wordtype) if buf.size % unit == 0 else buf.reshape(-1)
    flip = wordtype(0x8080808080808080 if unit == 8 else 0x80)
    none = np.zeros(1, wordtype)
    dims = tuple(int(v) for v in dims)
    # the call's fixed arguments as numba receives them, made once
    fixed = (np.int64(b_ptr), np.int64(n_pad // cols))
    fixed2 = (np.int64(coef), rowterm, rowoff, rowflag, np.int64(mc), oh, width, ow, n,
              rows_blk, bias, rec)
    windows = (np.int64(lda), np.int64(0))

    def run(source: np.ndarray, offsets: np.ndarray, folded: np.ndarray, recip: np.ndarray,
            shift: int, minmax_all: bool, after_shift: bool, mem: np.ndarray, fill: int = -1,
            past: tuple[np.ndarray, np.ndarray] | None = None, zx: int = 0
            ) -> tuple[np.ndarray, np.ndarray, int, int]:
        if mem.dtype != np.uint8 or not mem.flags.c_contiguous or mem.shape[:3] != mem_rows \
                or mem.shape[3] < width + 4 or mem.shape[4] != 32:
            # the kernel writes by address: refuse a memory it would overrun
            raise ValueError(f"the output memory {mem.shape} is not a C-contiguous uint8 "
                             f"d32 memory of {mem_rows} x (>= {width + 4}) x 32")
        # folded and recip copied into buffers of our own: writable, of one type (numba
        # compiles one specialisation, where other types would each add their own)
        bias[:] = folded
        rec[:] = recip
        if d32 is None:
            lhs, src, raw = source, none, no_raw
        else:
            lhs, src, raw = no_lhs, source[:size].view(wordtype), source
        offsets_past, zero_past = no_past if past is None else past
        if lda and (source.ndim != 2 or source.shape[0] != nb * oh
                    or source.shape[1] < (width - 1) * lda + k or not source.flags.c_contiguous):
            raise ValueError(f"rows of windows {source.shape} do not hold {nb * oh} rows of "
                             f"{width} windows {lda} apart")
        low, high = driver(fn, lhs, src, geometry, dims, unit, flip,
                           offsets_past, zero_past, raw, np.int64(zx & 0xFF), buf, bufw,
                           *fixed, offsets, off, *fixed2, int(shift), bool(minmax_all),
                           bool(after_shift), int(fill), mem, lo, hi,
                           windows if not lda else (windows[0], np.int64(source.shape[1])))
        return lo, hi, int(low), int(high)

    run.blocks = blocks  # type: ignore[attr-defined]  # the kernel reads them by address
    return run


__all__ = ["BLOCK_BYTES", "d32_windower", "prepared_gemm_requant"]
