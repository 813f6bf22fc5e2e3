"""The compiled driver of :mod:`conv1x1_d32` (numba, imported on first use): one run of a 1x1
d32 Supernode's first try: the per-channel terms of this run, the output padding's fill,
the columns past the data gathered (or one buffer of zx), the kernel ``ivnni_d32``
(:mod:`igemm_d32_ir`) called through its address over the data pixels and then the columns
past them, and the run's range in output codes.

Module level, not built in a closure: numba keys its on-disk cache by the function's closure
variables too (:mod:`gemm_requant_defs`).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1


@intrinsic
def call_kernel_d32(typingctx, fn, a, inoff, m, nq, kstride, b, nb, fb, tlo, thi, r2, shamt,
                    lo, hi, out, outoff, oslice, ncount, mc):  # pragma: no cover - compiled
    # ivnni_d32(a, inoff, m, nq, kstride, b, nb, fb, tlo, thi, r2, shamt, lo, hi, out,
    # outoff, oslice, ncount, mc) (igemm_d32_ir), every argument an integer here
    sig = types.void(fn, a, inoff, m, nq, kstride, b, nb, fb, tlo, thi, r2, shamt, lo, hi,
                     out, outoff, oslice, ncount, mc)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64, ptr = ir.IntType(64), ir.IntType(8).as_pointer()
        kinds = (ptr, ptr, i64, i64, i64, ptr, i64, ptr, ptr, ptr, ptr, i64, ptr, ptr, ptr,
                 ptr, i64, i64, i64)
        fnty = ir.FunctionType(ir.VoidType(), kinds)
        target = builder.inttoptr(args[0], fnty.as_pointer())
        values = [builder.inttoptr(v, t) if t is ptr else v
                  for v, t in zip(args[1:], kinds, strict=True)]
        builder.call(target, values)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, boundscheck=False)
def channel_terms(folded, recip, colsum, zx, fb, tlo, thi, r2):  # pragma: no cover
    # this run's per-channel terms: fb = folded - zx x colsum (mod 2**32: the data enter
    # the GEMM as codes, not centred on zx), t's clamp [tlo, thi] (the t whose codes are
    # 0..255: tlo = ceil(-2**30 / recip), thi = floor((2**39 - 2**30 - 1) / recip), all of
    # int32 for recip 0) and 2 x recip. False, nothing written, where a recip lies outside
    # 0..2**31 - 1 (the clamp then no longer stands for the saturation)
    n = folded.shape[0]
    for c in range(n):
        if recip[c] < 0 or recip[c] > _INT32_MAX:
            return False
    for c in range(n):
        v = (folded[c] - np.int64(zx) * colsum[c]) & 0xFFFFFFFF
        fb[c] = np.int32(v - 2**32 if v > _INT32_MAX else v)
        r = recip[c]
        if r == 0:
            tlo[c] = _INT32_MIN
            thi[c] = _INT32_MAX
        else:
            tlo[c] = np.int32(-((1 << 30) // r))
            thi[c] = np.int32(min(((1 << 39) - (1 << 30) - 1) // r, _INT32_MAX))
        r2[c] = 2 * r
    return True


@njit(cache=True, nogil=True, boundscheck=False)
def conv1x1_d32(fn, inoff, nq, kstride, b_ptr, nb, outoff, oslice, mc, buf, buf_off,
                past_off, past_zero, all_zx, buf_zx, raw, folded, recip, colsum, zx, shamt,
                minmax_all, fill, mem, fb, tlo, thi, r2, lo32, hi32
                ):  # pragma: no cover - compiled
    # returns (ok, low, high): the run's range in output codes (min of lo x recip, max of
    # hi x recip, rounded at bit 31); ok False where channel_terms refuses the recips
    # (nothing written then). The data pixels (inoff, outoff's first inoff.size entries)
    # are read from ``raw``; the columns past the data (the rest of outoff) from ``buf``,
    # pixel p at buf_off[p]: every code zx's low byte where ``all_zx`` (filled again only
    # when that byte moves: buf_zx[0]), else gathered at past_off, zx where past_zero
    if not channel_terms(folded, recip, colsum, zx, fb, tlo, thi, r2):
        return False, 0, 0
    for c in range(lo32.shape[0]):
        lo32[c] = _INT32_MAX
        hi32[c] = _INT32_MIN
    if fill >= 0:
        # the 4 rows above and below, the 4 columns left of each data row (the kernel
        # writes every other byte of the memory)
        code = np.uint8(fill)
        b, rows, slices, width = mem.shape[0], mem.shape[1], mem.shape[2], mem.shape[3]
        flat = mem.reshape(-1)
        line = width * 32
        image = rows * slices * line
        for n in range(b):
            at = n * image
            flat[at:at + 4 * slices * line] = code
            flat[at + (rows - 4) * slices * line:at + image] = code
            for r in range(4, rows - 4):
                for sl in range(slices):
                    start = at + (r * slices + sl) * line
                    flat[start:start + 128] = code
    zx8 = np.int64(zx) & 0xFF
    n_data = inoff.shape[0]
    n_past = outoff.shape[0] - n_data
    if n_past > 0:
        if all_zx:
            if buf_zx[0] != zx8:
                buf[:] = np.uint8(zx8)
                buf_zx[0] = zx8
        else:
            buf_zx[0] = -1
            b, h, count, depth = past_off.shape
            p = 0
            for n in range(b):
                for y in range(h):
                    for e in range(count):
                        at = buf_off[p]
                        for d in range(depth):
                            buf[at + d] = np.uint8(zx8) if past_zero[n, y, e, d] \
                                else raw[past_off[n, y, e, d]]
                        p += 1
    fb_p, tlo_p, thi_p = np.int64(fb.ctypes.data), np.int64(tlo.ctypes.data), \
        np.int64(thi.ctypes.data)
    r2_p, lo_p, hi_p = np.int64(r2.ctypes.data), np.int64(lo32.ctypes.data), \
        np.int64(hi32.ctypes.data)
    m_ptr, o_ptr = np.int64(mem.ctypes.data), np.int64(outoff.ctypes.data)
    if n_data:
        call_kernel_d32(fn, np.int64(raw.ctypes.data), np.int64(inoff.ctypes.data),
                        np.int64(n_data), np.int64(nq), np.int64(kstride), np.int64(b_ptr),
                        np.int64(nb), fb_p, tlo_p, thi_p, r2_p, np.int64(shamt), lo_p, hi_p,
                        m_ptr, o_ptr, np.int64(oslice), np.int64(n_data), np.int64(mc))
    if n_past:
        call_kernel_d32(fn, np.int64(buf.ctypes.data), np.int64(buf_off.ctypes.data),
                        np.int64(n_past), np.int64(nq), np.int64(32), np.int64(b_ptr),
                        np.int64(nb), fb_p, tlo_p, thi_p, r2_p, np.int64(shamt), lo_p, hi_p,
                        m_ptr, o_ptr + np.int64(8 * n_data), np.int64(oslice),
                        np.int64(n_past if minmax_all else 0), np.int64(mc))
    low = np.int64(2**62)
    high = np.int64(-(2**62))
    for c in range(lo32.shape[0]):
        low = min(low, np.int64(lo32[c]) * recip[c] + np.int64(1 << 30))
        high = max(high, np.int64(hi32[c]) * recip[c] + np.int64(1 << 30))
    return True, low >> 31, high >> 31


__all__ = ["channel_terms", "conv1x1_d32"]
