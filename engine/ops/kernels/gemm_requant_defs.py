"""The compiled driver of :mod:`gemm_requant` (numba, imported on first use): for each block
of output rows it unpacks the d32 input's rows and calls the requantizing VNNI kernel of
:mod:`igemm` (``ivnni_rq``) through its address, which writes the codes into the d32 output
memory from its registers (the int32 sums are never stored).

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
def call_kernel_rq(typingctx, fn, a, lda, m, k, b, nb, off, mc, rowterm, fb, rc, mask,
                   shamt, after, lo, hi, out, rowoff, rowflag, slice_
                   ):  # pragma: no cover - compiled
    # ivnni_rq(A, lda, m, k, B, nb, off, C, ldc, mc, bounds, rowterm, folded, recip, mask,
    # shamt, after, lo, hi, out, rowoff, rowflag, slice) (igemm_ir's _outer with requant;
    # C, ldc and bounds unused: passed as 0), every argument an integer here
    sig = types.void(fn, a, lda, m, k, b, nb, off, mc, rowterm, fb, rc, mask, shamt, after,
                     lo, hi, out, rowoff, rowflag, slice_)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64, ptr = ir.IntType(64), ir.IntType(8).as_pointer()
        kinds = (ptr, i64, i64, i64, ptr, i64, ptr, ptr, i64, i64, ptr, ptr, ptr, ptr, ptr,
                 i64, i64, ptr, ptr, ptr, ptr, ptr, i64)
        fnty = ir.FunctionType(ir.VoidType(), kinds)
        target = builder.inttoptr(args[0], fnty.as_pointer())
        zero = ir.Constant(i64, 0)
        given = [*args[1:8], zero, zero, args[8], zero, *args[9:]]
        values = [builder.inttoptr(v, t) if t is ptr else v
                  for v, t in zip(given, kinds, strict=True)]
        builder.call(target, values)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, boundscheck=False)
def gemm_requant(fn, lhs, src, geometry, dims, unit, flip, past_off, past_zero, raw8, zx,
                 buf, bufw, b_ptr, nb_all, offsets, off, coef, rowterm, rowoff, rowflag, mc,
                 oh, width, ow, cout, rows_blk, folded, recip, shamt, minmax_all, after_shift,
                 fill, mem, lo, hi, windows):  # pragma: no cover - compiled
    # also, so that a node makes one call: the GEMM's row term (coef x each row's sum),
    # the offsets copied into the padded buffer, the fill of the memory's padding the
    # requantization does not write (4 rows above and below, 4 columns left; fill < 0:
    # none), and the run's range in output codes (supernode_hvx's _extremes).
    # With dims[0] > 0 the rows come from a d32 memory ``src`` (words of ``unit``
    # bytes), unpacked and centred (``flip``) block by block into ``buf`` (``bufw``:
    # its words) with the columns past the data after them (``raw8`` at ``past_off``, or
    # ``zx`` where ``past_zero``: d32_input_reads' area reader): no whole-layer copy
    # (d32_layout's unpack, the same moves); else from ``lhs`` (m, K). The kernel
    # requantizes each tile in its registers into the memory (``rowoff``: each pixel's
    # byte offset there; ``rowflag``: whether it counts in the extremes)
    from_d32 = dims[0] > 0
    k = buf.shape[1]
    # windows = (lda, pitch): the rows of ``lhs`` (B*OH, pitch) hold an output row's
    # overlapping windows, pixel x's K codes at x * lda (one block per output row); (0, 0):
    # lhs is (m, K)
    win_lda, pitch = windows
    m = dims[0] * oh * width if from_d32 else (
        lhs.shape[0] * width if win_lda else lhs.shape[0])
    lda = win_lda if win_lda else k
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
    o_ptr = np.int64(off.ctypes.data)
    r_ptr = np.int64(rowterm.ctypes.data)
    c32 = np.int32(coef)
    f = np.empty(channels, np.int32)
    mask = np.zeros(channels, np.int32)
    for kk in range(channels):
        f[kk] = np.int32(folded[kk])          # the vector add wraps: folded mod 2**32
        if kk < cout:
            mask[kk] = -1
    lo32 = np.full(channels, 2**31 - 1, np.int32)
    hi32 = np.full(channels, -(2**31), np.int32)
    # the lanes past cout (zero weights) hold one code each (supernode_requant): the
    # kernel computes them as it does the others, from masked sums
    blocks = channels >> 5
    mem_rows, mem_w_tot = mem.shape[1], mem.shape[3]
    slice_bytes = np.int64(mem_w_tot * 32)
    m_ptr = np.int64(mem.ctypes.data)
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
            if win_lda:
                a_at = a_ptr + np.int64(n * oh + r0) * pitch
                windows_row = lhs[n * oh + r0]
                for i in range(count):
                    acc = np.int32(0)
                    if c32 != 0:
                        window = windows_row[i * lda:i * lda + k]    # contiguous: vectorised
                        for j in range(k):
                            acc += window[j]
                    rowterm[i] = acc * c32
            else:
                for i in range(count):
                    acc = np.int32(0)
                    if c32 != 0:
                        for j in range(k):
                            acc += rows[first + i, j]
                    rowterm[i] = acc * c32      # wraps as gemm_into's int32 term
            for rr in range(nr):
                at0 = (((n * mem_rows + r0 + rr + 4) * blocks) * mem_w_tot + 4) * 32
                for col in range(width):
                    rowoff[rr * width + col] = at0 + col * 32
                    rowflag[rr * width + col] = 1 if minmax_all or col < ow else 0
            call_kernel_rq(fn, a_at, np.int64(lda), np.int64(count), np.int64(k), b_ptr,
                           np.int64(nb_all), o_ptr, np.int64(mc), r_ptr,
                           np.int64(f.ctypes.data), np.int64(recip.ctypes.data),
                           np.int64(mask.ctypes.data), np.int64(shamt),
                           np.int64(1 if after_shift else 0), np.int64(lo32.ctypes.data),
                           np.int64(hi32.ctypes.data), m_ptr, np.int64(rowoff.ctypes.data),
                           np.int64(rowflag.ctypes.data), slice_bytes)
    low = np.int64(2**62)
    high = np.int64(-(2**62))
    for kk in range(channels):
        lo[kk] = lo32[kk]
        hi[kk] = hi32[kk]
        low = min(low, np.int64(lo32[kk]) * recip[kk] + np.int64(1 << 30))
        high = max(high, np.int64(hi32[kk]) * recip[kk] + np.int64(1 << 30))
    return low >> 31, high >> 31


@njit(cache=True, nogil=True, boundscheck=False)
def d32_windows(src, geometry, dims, rows, cols, fill, out):  # pragma: no cover - compiled
    # for each output row (n, oy) of a convolution of the d32 memory ``src`` (uint8, flat),
    # the input columns its windows reach, each column's FH rows' D codes together: ``out``
    # (B*OH, WQ, FH, D) int8, centred; then a window at column ox is the FW * FH * D codes
    # from ox * stride (fx, fy, c order). A tap inside the data reads its code, every other
    # the ``fill`` code; rows and cols = (stride, padding before, out, filter)
    h_tot, n_slices, w_tot, hb, wb, db = geometry
    nb, h, w, depth = dims
    sy, by, oh, fh = rows
    sx, bx, ow, fw = cols
    wq = out.shape[1]
    pad = np.int8(fill - 128)
    flip = np.uint8(128)
    x0 = min(max(bx, 0), wq)            # the columns that hold data
    x1 = min(max(bx + w, x0), wq)
    step = fh * depth
    for n in range(nb):
        for oy in range(oh):
            row = out[n * oh + oy].reshape(-1)
            for fy in range(fh):
                iy = oy * sy + fy - by
                base = fy * depth
                if not 0 <= iy < h:
                    for xx in range(wq):
                        for c in range(depth):
                            row[xx * step + base + c] = pad
                    continue
                for xx in range(x0):
                    for c in range(depth):
                        row[xx * step + base + c] = pad
                for xx in range(x1, wq):
                    for c in range(depth):
                        row[xx * step + base + c] = pad
                line = (n * h_tot + iy + hb) * n_slices
                for c in range(depth):
                    ch = c + db
                    at = ((line + (ch >> 5)) * w_tot + x0 - bx + wb) * 32 + (ch & 31)
                    for xx in range(x0, x1):
                        row[xx * step + base + c] = np.int8(src[at] ^ flip)
                        at += 32


__all__ = ["d32_windows", "gemm_requant"]
