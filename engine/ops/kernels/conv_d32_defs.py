"""The compiled driver of :mod:`conv_d32` (numba, imported on first use): one first try of a
d32 Supernode: the per-channel terms of this run, the output padding's fill, the windows
that leave the data gathered (or one buffer of zx), the kernel ``ivnni_d32``
(:mod:`igemm_d32_ir`) called through its address over the windows inside the data and then
the gathered ones, and the run's range in output codes.

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
_NO_TERMS = -(2**62)        # params[14] when the kept terms stand for no zx


@intrinsic
def call_kernel_d32(typingctx, fn, a, inoff, m, nq, tapoff, b, nb, fb, tlo, thi, r2, shamt,
                    lo, hi, out, outoff, oslice, ncount, mc):  # pragma: no cover - compiled
    # ivnni_d32(a, inoff, m, nq, tapoff, b, nb, fb, tlo, thi, r2, shamt, lo, hi, out,
    # outoff, oslice, ncount, mc) (igemm_d32_ir), every argument an integer here
    sig = types.void(fn, a, inoff, m, nq, tapoff, b, nb, fb, tlo, thi, r2, shamt, lo, hi,
                     out, outoff, oslice, ncount, mc)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64, ptr = ir.IntType(64), ir.IntType(8).as_pointer()
        kinds = (ptr, ptr, i64, i64, ptr, ptr, i64, ptr, ptr, ptr, ptr, i64, ptr, ptr, ptr,
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
def fill_padding(mem, fill):  # pragma: no cover - compiled
    # the 4 rows above and below and the 4 columns left of each data row of a d32 output
    # memory (B, rows, slices, width, 32), which the kernel does not write
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


@njit(cache=True, nogil=True, boundscheck=False)
def conv_d32(params, raw, mem, chan64, chan32, gather_to, gather_from, buf, folded_in,
             recip_in, zx, shamt, minmax_all, fill):  # pragma: no cover - compiled
    # returns (ok, low, high): the run's range in output codes (min of lo x recip, max of
    # hi x recip, rounded at bit 31); ok False where channel_terms refuses the recips
    # (nothing written then). params: conv_d32.PARAMS; chan64 rows: folded, recip (copied
    # from folded_in, recip_in), colsum, 2 recip;
    # chan32 rows: fb, tlo, thi, lo, hi (the kernel's per-channel terms and extremes).
    # The inside windows are read from ``raw`` (window p's quad q at inoff[p] +
    # tapoff[q]); the gathered ones from ``buf`` (window p's nq quads at p x 4nq): zx's low
    # byte (filled again only when that byte moves), then buf[gather_to[i]] =
    # raw[gather_from[i]] for the bytes read from the memory
    fn, nq, nb, oslice, mc, b_ptr = params[0], params[1], params[2], params[3], params[4], \
        params[5]
    n_in, n_in_counted, n_out, n_out_counted = params[6], params[7], params[8], params[9]
    tapoff, tapbuf, inoff, outoff = params[10], params[11], params[12], params[13]
    folded, recip, colsum, r2 = chan64[0], chan64[1], chan64[2], chan64[3]
    # this run's folded and recip into the driver's own rows; the terms of channel_terms
    # (two divisions a channel) kept from the last run where they and zx are the same
    same = params[14] == zx
    for c in range(folded.shape[0]):
        if folded[c] != folded_in[c] or recip[c] != recip_in[c]:
            same = False
        folded[c] = folded_in[c]
        recip[c] = recip_in[c]
    fb, tlo, thi, lo32, hi32 = chan32[0], chan32[1], chan32[2], chan32[3], chan32[4]
    if not same:
        params[14] = _NO_TERMS
        if not channel_terms(folded, recip, colsum, zx, fb, tlo, thi, r2):
            return False, 0, 0
        params[14] = zx
    for c in range(lo32.shape[0]):
        lo32[c] = _INT32_MAX
        hi32[c] = _INT32_MIN
    if fill >= 0:
        fill_padding(mem, fill)
    zx8 = np.int64(zx) & 0xFF
    if n_out > 0:
        if params[15] != zx8:
            buf[:] = np.uint8(zx8)
            params[15] = zx8
        for i in range(gather_to.shape[0]):
            buf[gather_to[i]] = raw[gather_from[i]]
    fb_p, tlo_p, thi_p = np.int64(fb.ctypes.data), np.int64(tlo.ctypes.data), \
        np.int64(thi.ctypes.data)
    r2_p, lo_p, hi_p = np.int64(r2.ctypes.data), np.int64(lo32.ctypes.data), \
        np.int64(hi32.ctypes.data)
    m_ptr, sh = np.int64(mem.ctypes.data), np.int64(shamt)
    if n_in:
        call_kernel_d32(fn, np.int64(raw.ctypes.data), inoff, n_in, nq, tapoff, b_ptr, nb,
                        fb_p, tlo_p, thi_p, r2_p, sh, lo_p, hi_p, m_ptr, outoff, oslice,
                        n_in if minmax_all else n_in_counted, mc)
    if n_out:
        # the gathered windows' offsets in buf follow the inside windows' in inoff, and
        # their output offsets the inside windows' in outoff (int32 tables)
        call_kernel_d32(fn, np.int64(buf.ctypes.data), inoff + 4 * n_in, n_out, nq, tapbuf,
                        b_ptr, nb, fb_p, tlo_p, thi_p, r2_p, sh, lo_p, hi_p, m_ptr,
                        outoff + 4 * n_in, oslice, n_out if minmax_all else n_out_counted, mc)
    low = np.int64(2**62)
    high = np.int64(-(2**62))
    for c in range(lo32.shape[0]):
        low = min(low, np.int64(lo32[c]) * recip[c] + np.int64(1 << 30))
        high = max(high, np.int64(hi32[c]) * recip[c] + np.int64(1 << 30))
    return True, low >> 31, high >> 31


__all__ = ["channel_terms", "conv_d32", "fill_padding"]
