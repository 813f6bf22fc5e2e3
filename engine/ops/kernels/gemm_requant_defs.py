"""The compiled driver of :mod:`gemm_requant` (numba, imported on first use): it calls the
VNNI kernel of :mod:`igemm` through its address for each block of output rows and
requantizes the block's sums into the d32 output memory.

Module level, not built in a closure: numba keys its on-disk cache by the function's closure
variables too, and an intrinsic there pickles differently in every process (the driver
then compiled again at every process's first run, 4 s).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def call_kernel(typingctx, fn, a, lda, m, k, b, nb, off, c, ldc, mc, bounds,
                rowterm):  # pragma: no cover - compiled
    # void kernel(A, lda, m, k, B, nb, off, C, ldc, mc, bounds, rowterm) (igemm's
    # signature), every argument an integer here: the pointers as addresses
    sig = types.void(fn, a, lda, m, k, b, nb, off, c, ldc, mc, bounds, rowterm)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64, ptr = ir.IntType(64), ir.IntType(8).as_pointer()
        kinds = (ptr, i64, i64, i64, ptr, i64, ptr, ptr, i64, i64, ptr, ptr)
        fnty = ir.FunctionType(ir.VoidType(), kinds)
        target = builder.inttoptr(args[0], fnty.as_pointer())
        values = [builder.inttoptr(v, t) if t is ptr else v
                  for v, t in zip(args[1:], kinds, strict=True)]
        builder.call(target, values)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, boundscheck=False)
def gemm_requant(fn, lhs, src, geometry, dims, unit, flip, past_off, past_zero, raw8, zx,
                 buf, bufw, b_ptr,
                 nb_full, tail_ptr, offsets, off, coef, rowterm, scratch, bounds, mc, oh,
                 width, ow, cout, rows_blk, folded, recip, shamt, minmax_all, after_shift,
                 fill, mem, lo, hi):  # pragma: no cover - compiled
    # also, so that a node makes one call: the GEMM's row term (coef x each row's sum),
    # the offsets copied into the padded buffer, the fill of the memory's padding the
    # requantization does not write (4 rows above and below, 4 columns left; fill < 0:
    # none), and the run's range in output codes (supernode_hvx's _extremes).
    # With dims[0] > 0 the rows come from a d32 memory ``src`` (words of ``unit``
    # bytes), unpacked and centred (``flip``) block by block into ``buf`` (``bufw``:
    # its words) with the columns past the data after them (``raw8`` at ``past_off``, or
    # ``zx`` where ``past_zero``: d32_input_reads' area reader): no whole-layer copy
    # (d32_layout's unpack, the same moves); else from ``lhs`` (m, K)
    from_d32 = dims[0] > 0
    k = buf.shape[1]
    m = dims[0] * oh * width if from_d32 else lhs.shape[0]
    n_pad = scratch.shape[1]
    b = m // (oh * width) if oh * width else 0
    h_tot, n_slices, w_tot, hb, wb, db = geometry
    w, depth = dims[2], dims[3]
    line = n_slices * w_tot * 32 // unit
    count_past = past_off.shape[2]
    channels = folded.shape[0]
    for j in range(offsets.shape[0]):
        off[j] = offsets[j]
    if fill >= 0:
        code = np.uint8(fill)
        for n in range(mem.shape[0]):
            for r in range(mem.shape[1]):
                top = r < 4 or r >= mem.shape[1] - 4
                for sl in range(mem.shape[2]):
                    for col in range(mem.shape[3] if top else 4):
                        for kk in range(32):
                            mem[n, r, sl, col, kk] = code
    a_ptr = np.int64(lhs.ctypes.data)
    s_ptr = np.int64(scratch.ctypes.data)
    o_ptr = np.int64(off.ctypes.data)
    r_ptr = np.int64(rowterm.ctypes.data)
    bd_ptr = np.int64(bounds.ctypes.data)
    c32 = np.int32(coef)
    f = np.empty(channels, np.int32)
    for kk in range(channels):
        f[kk] = np.int32(folded[kk])          # the vector add wraps: folded mod 2**32
    lo32 = np.full(channels, 2**31 - 1, np.int32)
    hi32 = np.full(channels, -(2**31), np.int32)
    codes = np.empty(channels, np.uint8)
    # the lanes past cout (zero weights) hold one code each (supernode_requant)
    for kk in range(cout, channels):
        s = f[kk]
        t = np.int32(np.int64(s) << shamt)
        v = (np.int64(t) * recip[kk] + 1073741824) >> 31
        codes[kk] = 0 if v < 0 else (255 if v > 255 else v)
        if b * oh * (width if minmax_all else ow) > 0:
            ee = t if after_shift else s
            lo32[kk] = ee
            hi32[kk] = ee
    blocks = channels >> 5
    row = np.empty((width, channels), np.uint8)
    row_w = row.reshape(-1).view(np.uint64)
    mem_w = mem.reshape(-1).view(np.uint64)
    words_row = channels >> 3
    mem_rows, mem_w_tot = mem.shape[1], mem.shape[3]
    for col in range(width):
        row[col, cout:] = codes[cout:]
    sh = np.uint32(shamt)
    for n in range(b):
        for r0 in range(0, oh, rows_blk):
            nr = min(rows_blk, oh - r0)
            p0 = (n * oh + r0) * width
            count = nr * width
            if from_d32:
                a_at = np.int64(buf.ctypes.data)
                for rr in range(nr):
                    base = (n * h_tot + r0 + rr + hb) * line
                    for sl in range(n_slices):
                        c0 = max(0, 32 * sl - db)       # logical depths in this slice
                        c1 = min(depth, 32 * sl + 32 - db)
                        if c1 <= c0:
                            continue
                        words = np.uint64((c1 - c0) // unit)
                        at = base + (sl * w_tot * 32 + wb * 32 + c0 + db - 32 * sl) // unit
                        dst = ((rr * width) * depth + c0) // unit
                        for xx in range(w):
                            to = np.uint64(dst + depth // unit * xx)
                            frm = np.uint64(at + 32 // unit * xx)
                            for kk in range(words):
                                bufw[to + kk] = src[frm + kk] ^ flip
                    for xx in range(count_past):
                        for j in range(depth):
                            code = zx if past_zero[n, r0 + rr, xx, j] else \
                                np.int64(raw8[past_off[n, r0 + rr, xx, j]])
                            buf[rr * width + w + xx, j] = np.int8(code - 128)
                rows = buf
                first = 0
            else:
                a_at = a_ptr + np.int64(p0) * k
                rows = lhs
                first = p0
            r_at = r_ptr
            for i in range(count):
                acc = np.int32(0)
                if c32 != 0:
                    for j in range(k):
                        acc += rows[first + i, j]
                rowterm[i] = acc * c32          # wraps as gemm_into's int32 term
            if nb_full:
                call_kernel(fn, a_at, np.int64(k), np.int64(count), np.int64(k), b_ptr,
                            np.int64(nb_full), o_ptr, s_ptr, np.int64(n_pad), mc, bd_ptr,
                            r_at)
            if tail_ptr:
                at = np.int64(nb_full * 16 * 4)
                call_kernel(fn, a_at, np.int64(k), np.int64(count), np.int64(k), tail_ptr,
                            np.int64(1), o_ptr + at, s_ptr + at, np.int64(n_pad), mc,
                            bd_ptr, r_at)
            for rr in range(nr):
                r = r0 + rr
                for col in range(width):
                    sums_row = scratch[rr * width + col]
                    dst_codes = row[col]
                    if minmax_all or col < ow:
                        for kk in range(cout):
                            s = np.int32(sums_row[kk] + f[kk])
                            t = np.int32(np.uint32(s) << sh)
                            v = (np.int64(t) * recip[kk] + np.int64(1073741824)) \
                                >> np.int64(31)
                            dst_codes[kk] = np.uint8(min(max(v, np.int64(0)),
                                                         np.int64(255)))
                            ee = t if after_shift else s
                            lo32[kk] = min(lo32[kk], ee)
                            hi32[kk] = max(hi32[kk], ee)
                    else:
                        for kk in range(cout):
                            s = np.int32(sums_row[kk] + f[kk])
                            t = np.int32(np.uint32(s) << sh)
                            v = (np.int64(t) * recip[kk] + np.int64(1073741824)) \
                                >> np.int64(31)
                            dst_codes[kk] = np.uint8(min(max(v, np.int64(0)),
                                                         np.int64(255)))
                # 8-byte words at unsigned offsets: LLVM moves them as vectors (bytewise
                # it left the 32-byte moves scalar, as in d32_layout)
                for blk in range(blocks):
                    at = np.uint64((((n * mem_rows + r + 4) * blocks + blk) * mem_w_tot + 4)
                                   * 4)
                    for col in range(width):
                        to = at + np.uint64(col * 4)
                        frm = np.uint64(col * words_row + blk * 4)
                        for kk in range(4):
                            mem_w[to + kk] = row_w[frm + kk]
    low = np.int64(2**62)
    high = np.int64(-(2**62))
    for kk in range(channels):
        lo[kk] = lo32[kk]
        hi[kk] = hi32[kk]
        low = min(low, np.int64(lo32[kk]) * recip[kk] + np.int64(1 << 30))
        high = max(high, np.int64(hi32[kk]) * recip[kk] + np.int64(1 << 30))
    return low >> 31, high >> 31


__all__ = ["gemm_requant"]
