"""The d32 depthwise Supernode in one compiled pass (filters of up to 258 taps): the taps
read straight from the d32 input's memory (the columns nnlib zaps or that lie outside the
tensor read as zx), summed over 32 lanes at a time, requantized as :mod:`dwise_requant`
does and written into the d32 output memory, its padding rows and columns, depth padding
lanes and spilled columns included, with the extremes for the range search. A 3x3 filter
(MobileNet's): two window lines' codes as int16 pairs in a ring of such pair lines, each
output row one vector loop of six ``vpmaddwd``s a 16-lane vector (fused into VNNI's
``vpdpwssd``) and the requantization in registers (:mod:`dwise_fused_defs`, LLVM IR);
other filters: each window line once as float32 in a ring of lines, summed by numba.

It replaces, for a run's first try, the unpack of the input, the window read of
:mod:`~hexscope.engine.ops.conv.d32_input_reads`, the flat sums and requantization of
:mod:`depthwise` and the pack of the output (the same bytes: tests/engine/ops/
test_dwise_fused.py). The sums are x (w - zf) over every tap, reading zx where nnlib reads
it, plus the bias buffer (``folded - zx * gemsumb``): the flat path's (x - zx)(w - zf) plus
``folded``, the same integers mod 2**32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hexscope.engine.ops.conv.d32_input_reads import Zaps, lines_read, zapped_columns
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.spare_memory import SpareMemories
from hexscope.engine.tensor import Tensor

#: float32 sums stay exact while |sum| <= taps x 255 x 255 < 2**24
MAX_TAPS = 258
_LANES = np.uint64(32)
#: output pixels summed per inner loop (their 32 lanes each, contiguous)
CHUNK = 8


def _build() -> Callable[..., Any]:
    from hexscope.engine.ops.kernels.dwise_fused_defs import dwise_d32

    return dwise_d32  # type: ignore[no-any-return]


_kernel = compiled.compile_once(_build)


def window_lines(x: Tensor, zaps: Zaps, rows: tuple[int, int], cols: tuple[int, int]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per window line (batch, row, depth slice) of rows ``rows[0]`` .. ``+ rows[1]`` by
    columns ``cols[0]`` .. ``+ cols[1]`` of the d32 input ``x`` (0 = its first data row
    and column; no depth padding before): the byte offset in ``x.raw`` of its first column
    (B, R, S) int64, and which of its 32-lane columns are read as zx (B, R, S, C) bool.
    :func:`d32_input_reads.area_index` per column instead of per byte (its lanes of one
    slice share the column's place and zap)."""
    b, h, w, d = x.shape
    p = x.padding
    if p.d_before:
        raise ValueError("window_lines reads inputs without depth padding before")
    ht, wt = h + p.h_before + p.h_after, w + p.w_before + p.w_after
    ns = (d + p.d_after) // 32
    per_batch = ht * ns
    zapped = zapped_columns(x, zaps.left, zaps.right)
    y = np.arange(rows[0], rows[0] + rows[1])[:, None, None]          # (R, 1, 1)
    sl = np.arange(ns)[None, :, None]                                  # (1, S, 1)
    c = p.w_before + np.arange(cols[0], cols[0] + cols[1])[None, None, :]   # (1, 1, C)
    local = (p.h_before + y) * ns + sl + c // wt                        # (R, S, C)
    col = np.broadcast_to(c % wt, local.shape)
    _, zero = lines_read(x, zaps, local, col, zapped)                  # (B, R, S, C)
    first = (np.arange(b)[:, None, None] * per_batch + (p.h_before + y[None, :, :, 0])
             * ns + np.arange(ns)[None, None, :]) * wt + p.w_before + cols[0]
    return (first * 32).astype(np.int64), zero


def prepare_dwise_d32(x: Tensor, zaps: Zaps, rows: tuple[int, int], cols: tuple[int, int],
                      w: np.ndarray, zf: int, steps: tuple[int, int], out_size: tuple[int, int],
                      out_memory_shape: tuple[int, ...], out_before: tuple[int, int],
                      spill: int = 0) -> Callable[..., tuple[np.ndarray, int, int]] | None:
    """The pass for inputs of ``x``'s shape and padding: the windows' area ``rows`` x
    ``cols`` (as :func:`window_lines`), the filter ``w`` [FH, FW, D, 1] uint8 and its zero
    code ``zf``, the strides ``steps`` (rows, columns), ``out_size`` (rows, columns
    computed) into an output memory of ``out_memory_shape`` (D channels from lane 0), the
    first computed at ``out_before`` (padding rows above, columns left); ``spill``: the
    columns after each line's data that take its last group of 4's first column.

    A function of (raw input bytes, bias buffer, recip, shift, zx, pad code, fill) giving
    (the output memory, min, max of int32(v) over the data lanes); the bias buffer and
    recip as :func:`lane_terms` gives them. None where numba is off, the
    filter has too many taps, or the geometry is not one this pass takes."""
    kernel = _kernel()
    fh, fw, d, m = w.shape
    oh, ow = out_size
    nb, h_tot, n_sl, w_tot, _ = out_memory_shape
    hb, wb = out_before
    if kernel is None or m != 1 or fh * fw > MAX_TAPS or wb + ow > w_tot \
            or n_sl != (d + 31) // 32 or x.padding.d_before or not (oh and ow and d) \
            or (x.shape[3] + x.padding.d_after) // 32 != n_sl or x.shape[0] != nb \
            or x.shape[3] != d or hb + oh > h_tot or not 0 <= spill <= 3 \
            or (spill and ow < 4 - spill):
        return None
    line_base, zero = window_lines(x, zaps, rows, cols)
    if line_base.shape[1] < (oh - 1) * steps[0] + fh or \
            zero.shape[3] < (ow - 1) * steps[1] + fw:
        return None
    lanes = n_sl * 32
    chunk = chunk_of(ow)
    wl = np.zeros((fh * fw, lanes), np.float32)
    wl[:, :d] = (w[:, :, :, 0].astype(np.int32) - zf).reshape(fh * fw, d)
    wts = np.ascontiguousarray(np.tile(wl.reshape(fh * fw, n_sl, 1, 32), (1, 1, chunk, 1))
                               .transpose(1, 0, 2, 3).reshape(n_sl, fh * fw, chunk * 32))
    # lanes past the channels stay out of the extremes: min(lo, max(v, -2**31)) and
    # max(hi, min(v, 2**31 - 1)) for the data lanes, the other way round for them
    ok = np.arange(lanes) < d
    big, small = np.int32(2**31 - 1), np.int32(-(2**31))
    masks = np.stack([np.where(ok, small, big), np.where(ok, big, small)]).astype(np.int32)
    masks = np.ascontiguousarray(np.tile(masks.reshape(2, n_sl, 1, 32), (1, 1, chunk, 1))
                                 .transpose(1, 0, 2, 3).reshape(n_sl, 2, chunk * 32))
    size = int(np.prod(x.geometry.memory_shape))
    words = zero.shape[3] * 4
    three = fh == 3 and fw == 3
    # 64-byte aligned: the pass reads it in 16-lane vectors, each then within a cache line
    size_f = 0 if three else fh * words * 8
    store = np.empty(size_f + 16, np.float32)
    skip = (-store.ctypes.data % 64) // 4
    ringf = store[skip:skip + size_f]
    ringp = np.zeros(0, np.int32)
    wpairs = np.zeros(0, np.int32)
    if three:
        # the 3x3 rows' pair lines (two window lines' codes as int16 pairs) and their
        # weights: per slice, rows at an even / odd window line, taps (pair, fx)
        keep = np.empty(2 * words * 8 + 16, np.int32)
        skip = (-keep.ctypes.data % 64) // 4
        ringp = keep[skip:skip + 2 * words * 8]
        wq = np.zeros((3, 3, lanes), np.int64)
        wq[:, :, :d] = w[:, :, :, 0].astype(np.int64) - zf
        none = np.zeros((3, lanes), np.int64)
        firsts = ((wq[0], wq[1]), (wq[2], none), (none, wq[0]), (wq[1], wq[2]))
        words16 = np.stack([(a & 0xFFFF) | ((b & 0xFFFF) << 16) for a, b in firsts])
        wpairs = np.ascontiguousarray(words16.reshape(2, 6, n_sl, 32).transpose(2, 0, 1, 3)
                                      .astype(np.uint32).view(np.int32))
    base_words = line_base // 8
    zero_u8 = np.ascontiguousarray(zero, np.uint8)
    valid = d - 32 * (n_sl - 1)
    sh, sw = steps
    mem_shape = tuple(int(v) for v in out_memory_shape)
    tiles = (n_sl, chunk * 32)

    def run(raw: np.ndarray, bias: np.ndarray, recip: np.ndarray, shamt: int, zx: int,
            pad_code: int, fill: int) -> tuple[np.ndarray, int, int]:
        if bias.shape != tiles or recip.shape != tiles:     # the kernel reads them unchecked
            raise ValueError(f"lane terms of shape {bias.shape} / {recip.shape} for tiles "
                             f"{tiles}")
        mem = np.empty(mem_shape, np.uint8)
        # read-only whatever the input's flags: numba then loads one specialisation (a
        # writable input would compile a second one at a process's first such run)
        src8 = raw[:size]
        if src8.flags.writeable:
            src8 = src8.view()
            src8.flags.writeable = False
        lo, hi = kernel(src8, base_words, zero_u8, wts, fh, fw, sh, sw,
                        ow, oh, h_tot, hb, w_tot, wb, spill, ringf, ringp, wpairs,
                        bias, recip, masks, shamt, zx, valid, pad_code, fill,
                        mem.reshape(-1), _LANES, chunk)
        return mem, int(lo), int(hi)

    def bind(bias: np.ndarray, recip: np.ndarray, shamt: int, zx: int, pad_code: int,
             fill: int) -> Callable[[np.ndarray], tuple[np.ndarray, int, int]]:
        """``run`` with every argument but the input bytes fixed: a node's steady runs
        (dwise_d32.kept_run), the per-run checks made once."""
        if bias.shape != tiles or recip.shape != tiles:
            raise ValueError(f"lane terms of shape {bias.shape} / {recip.shape} for tiles "
                             f"{tiles}")
        head = (base_words, zero_u8, wts, fh, fw, sh, sw, ow, oh, h_tot, hb, w_tot, wb, spill,
                ringf, ringp, wpairs, bias, recip, masks, int(shamt), int(zx), valid,
                int(pad_code), int(fill))

        unfilled = (*head[:-1], -1)
        spare = SpareMemories()

        def go(raw: np.ndarray) -> tuple[np.ndarray, int, int]:
            src8 = raw[:size]
            if src8.flags.writeable:
                src8 = src8.view()
                src8.flags.writeable = False
            # a memory this pass wrote before that nothing refers to keeps its fill
            mem = spare.take()
            if mem is not None:
                lo, hi = kernel(src8, *unfilled, mem.reshape(-1), _LANES, chunk)
                return mem, int(lo), int(hi)
            mem = np.empty(mem_shape, np.uint8)
            lo, hi = kernel(src8, *head, mem.reshape(-1), _LANES, chunk)
            spare.keep(mem)
            return mem, int(lo), int(hi)

        return go

    run.bind = bind  # type: ignore[attr-defined]
    return run


def chunk_of(ow: int) -> int:
    """The output pixels the pass sums per inner loop for rows of ``ow`` pixels."""
    return max(1, min(CHUNK, ow))


def lane_terms(folded: np.ndarray, gemsumb: np.ndarray, zx: int, recip: np.ndarray,
               lanes: int, chunk: int = 1) -> tuple[np.ndarray, np.ndarray] | None:
    """The bias buffer ``folded - zx * gemsumb`` wrapped to int32 and the multipliers
    (int32), one per memory lane (0 past the channels): what the pass adds to its sums of
    x (w - zf) and multiplies them by. None for a multiplier outside 0..2**31 - 1 (the
    pass multiplies 32-bit lanes; nnlib's are at most 0x7FFFFFFF). Both as (slices,
    ``chunk`` x 32), each slice's 32 repeated for ``chunk`` pixels (:func:`chunk_of`), as
    the pass reads them."""
    d = gemsumb.size
    r = np.asarray(recip, np.int64).reshape(-1)
    if r.size and (r.min() < 0 or r.max() > 0x7FFFFFFF):
        return None
    bias = np.zeros(lanes, np.int32)
    wide = np.asarray(folded, np.int64) - np.asarray(gemsumb, np.int64) * zx
    bias[:d] = ((wide + 2**31) % 2**32 - 2**31).astype(np.int32)
    rec = np.zeros(lanes, np.int32)
    rec[:d] = np.broadcast_to(r, (d,))
    n_sl = lanes // 32
    return tuple(np.ascontiguousarray(np.tile(a.reshape(n_sl, 1, 32), (1, chunk, 1))
                                      .reshape(n_sl, chunk * 32))
                 for a in (bias, rec))  # type: ignore[return-value]


__all__ = ["CHUNK", "MAX_TAPS", "chunk_of", "lane_terms", "prepare_dwise_d32", "window_lines"]
