"""The numba kernels behind :mod:`d32_elementwise`: Requantize_8to8_d32 and the d32 add's
normal mode, each one pass straight over the d32 memory (imported, and so compiled or loaded
from numba's disk cache, on first use). Each mirrors the numpy path of its op step for step;
the callers check the preconditions written here before they call.

The d32 add's runs go 32 lanes of int32 at a time (``addsub_span``, LLVM vector IR) where no
step can wrap: numba widens every step to int64, and its loop had 8 lanes (56x56x24: 62 -> 28
us).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from hexscope.engine.ops.kernels.llvm_vectors import splat as splat_into

_OPTS = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}
_I64 = types.int64


def _arr(readonly: bool) -> types.Array:
    return types.Array(types.uint8, 1, "C", readonly=readonly)


@njit([types.void(_arr(ro), _arr(False), *([_I64] * 16)) for ro in (False, True)], **_OPTS)
def requantize_d32(src, out, batches, h_total, n_slices, w_total, row0, row1, nd32, col0,
                   col1, in_off, mul_even, mul_odd, add, shift, out_off,
                   fill):  # pragma: no cover - compiled
    """The output memory of ``nn_requantize_qu8_to_qu8_hvx_d32``, every byte of it, for a
    d32 memory [batches, h_total, n_slices, w_total, 32]: in the data rows ``row0:row1``
    and the slices ``:nd32``, columns ``col0:col1`` are sat_u8((((c - in_off) * mul + add)
    >> shift) + out_off) with ``mul_even`` at an even memory offset and ``mul_odd`` at an odd
    one; every other byte is ``fill``. Precondition: ``src`` holds the whole memory, ``out``
    has its size, and the caller checked the step against the op's lane arithmetic."""
    seg = w_total * 32
    io, me, mo = np.int32(in_off), np.int32(mul_even), np.int32(mul_odd)
    a, s, oo = np.int32(add), np.int32(shift), np.int32(out_off)
    lo_i, hi_i = np.int32(0), np.int32(255)
    f = np.uint8(fill)
    for b in range(batches):
        for h in range(h_total):
            data_row = row0 <= h < row1
            for k in range(n_slices):
                base = ((b * h_total + h) * n_slices + k) * seg
                if not data_row or k >= nd32:
                    out[base:base + seg] = f
                    continue
                start, stop = base + col0 * 32, base + col1 * 32
                out[base:start] = f
                out[stop:base + seg] = f
                # views indexed from 0: numba then knows the index is not negative and
                # drops its wraparound select, so LLVM vectorises the loop
                x, y = src[start:stop], out[start:stop]
                if me == mo:
                    for i in range(x.size):
                        v = (((np.int32(x[i]) - io) * me + a) >> s) + oo
                        y[i] = np.uint8(min(max(v, lo_i), hi_i))
                else:
                    # every row segment starts at an even offset (strides are multiples
                    # of 32): the lane's parity is i's
                    step = mo - me
                    for i in range(x.size):
                        m = me + np.int32(i & 1) * step
                        v = (((np.int32(x[i]) - io) * m + a) >> s) + oo
                        y[i] = np.uint8(min(max(v, lo_i), hi_i))


@intrinsic
def addsub_span(typingctx, a, pa, b, pb, out, po, n, lanes, a_scale, b_scale, offset, rsh,
                fill, bounds):  # pragma: no cover - compiled
    # addsub_d32's run of n bytes (a multiple of 32: whole columns of one slice) at a[pa],
    # b[pb] into out[po], in int32 lanes 32 at a time: t = (x A + y B) >> 8, the codes
    # sat_u8((sat_i16(t + offset) + rb) >> rsh), lanes from ``lanes`` on the fill and out
    # of t's extremes, which go into bounds[0] (min) and bounds[1] (max). Precondition:
    # 255 (|A| + |B|) < 2^31 and |offset| < 2^30 (no int32 step can wrap), 0 <= rsh < 32.
    sig = types.void(a, pa, b, pb, out, po, n, lanes, a_scale, b_scale, offset, rsh, fill,
                     bounds)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return _addsub_span_ir(context, builder, signature, args)

    return sig, codegen


def _addsub_span_ir(context, builder, signature, args):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    from numba.core import cgutils

    a, pa, b, pb, out, po, n, lanes, a_scale, b_scale, offset, rsh, fill, bounds = args
    ptr = {i: context.make_array(signature.args[i])(context, builder, args[i]).data
           for i in (0, 2, 4, 13)}
    i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    vb, vi = ir.VectorType(i8, 32), ir.VectorType(i32, 32)

    def splat(value, vty):  # type: ignore[no-untyped-def]
        return splat_into(builder, value, vty)

    def clamp(v, lo, hi):  # type: ignore[no-untyped-def]
        v = builder.select(builder.icmp_signed("<", v, lo), lo, v)
        return builder.select(builder.icmp_signed(">", v, hi), hi, v)

    def vptr(base, at):  # type: ignore[no-untyped-def]
        return builder.bitcast(builder.gep(base, [at]), vb.as_pointer())

    sa, sb = splat(builder.trunc(a_scale, i32), vi), splat(builder.trunc(b_scale, i32), vi)
    off = splat(builder.trunc(offset, i32), vi)
    sh = splat(builder.trunc(rsh, i32), vi)
    rb = builder.lshr(builder.shl(ir.Constant(vi, [1] * 32), sh), ir.Constant(vi, [1] * 32))
    eight = ir.Constant(vi, [8] * 32)
    i16_lo, i16_hi = ir.Constant(vi, [-32768] * 32), ir.Constant(vi, [32767] * 32)
    u8_lo, u8_hi = ir.Constant(vi, [0] * 32), ir.Constant(vi, [255] * 32)
    valid = builder.icmp_signed("<", ir.Constant(vi, list(range(32))),
                                splat(builder.trunc(lanes, i32), vi))
    fills = splat(builder.trunc(fill, i8), vb)
    lo_acc = cgutils.alloca_once_value(builder, ir.Constant(vi, [2**31 - 1] * 32))
    hi_acc = cgutils.alloca_once_value(builder, ir.Constant(vi, [-(2**31)] * 32))
    with cgutils.for_range(builder, builder.udiv(n, i64(32))) as loop:
        step = builder.mul(loop.index, i64(32))
        x = builder.zext(builder.load(vptr(ptr[0], builder.add(pa, step)), align=1), vi)
        y = builder.zext(builder.load(vptr(ptr[2], builder.add(pb, step)), align=1), vi)
        t = builder.ashr(builder.add(builder.mul(x, sa), builder.mul(y, sb)), eight)
        lo, hi = builder.load(lo_acc), builder.load(hi_acc)
        builder.store(builder.select(builder.and_(valid, builder.icmp_signed("<", t, lo)),
                                     t, lo), lo_acc)
        builder.store(builder.select(builder.and_(valid, builder.icmp_signed(">", t, hi)),
                                     t, hi), hi_acc)
        v = clamp(builder.add(t, off), i16_lo, i16_hi)
        c = clamp(builder.ashr(builder.add(v, rb), sh), u8_lo, u8_hi)
        builder.store(builder.select(valid, builder.trunc(c, vb), fills),
                      vptr(ptr[4], builder.add(po, step)), align=1)
    lo_v, hi_v = builder.load(lo_acc), builder.load(hi_acc)
    for k, (vec, less) in enumerate(((lo_v, True), (hi_v, False))):
        at = builder.gep(ptr[13], [i64(k)])
        best = builder.load(at)
        for j in range(32):
            e = builder.sext(builder.extract_element(vec, i32(j)), i64)
            better = builder.icmp_signed("<" if less else ">", e, best)
            best = builder.select(better, e, best)
        builder.store(best, at)
    return context.get_dummy_value()


@njit([types.void(_arr(ra), _arr(rb), _arr(False), *([_I64] * 25),
                  types.Array(types.int64, 1, "C")) for ra in (False, True)
       for rb in (False, True)], **_OPTS)
def addsub_d32(a, b, out, batches, height, width, depth,
               a_h0, a_w0, a_d0, a_bs, a_rs, a_ss, b_h0, b_w0, b_d0, b_bs, b_rs, b_ss,
               o_bs, o_rs, o_ss, a_scale, b_scale, offset, rsh, fill, whole,
               bounds):  # pragma: no cover - compiled
    """§13.5's normal mode (``compiled_defs.addsub_normal``) on two d32 memories of the same
    logical shape, into the output's memory: t = floor((a A + b B) / 256), y = sat_u8((
    sat_i16(t + off) + rb) >> rsh) for every element; ``bounds`` gets t's min and max.

    Each memory is given by its padding before (h, w, d) and its batch, row and slice
    strides; the output has a's height and width padding and no depth-before padding, and
    every byte of it that holds no element is ``fill`` (with ``whole`` 0, only the lanes
    past the depth are written: the others hold the fill already, a memory this pass
    wrote before). Precondition: rsh >= 0, at least one element, every memory whole (the
    caller sizes them from their geometry)."""
    rb = (1 << rsh) >> 1
    lo = np.int64(9223372036854775807)
    hi = np.int64(-9223372036854775807)
    # the runs in int32 lanes where no step can wrap (the scales of a normal mode: |A|, |B|
    # about 2^15 at most), else in int64 below
    narrow = 255 * (abs(a_scale) + abs(b_scale)) < 2**31 and abs(offset) < 2**30 \
        and 0 <= rsh < 32
    bounds[0] = lo
    bounds[1] = hi
    if whole:
        out[:] = np.uint8(fill)
    for n in range(batches):
        for h in range(height):
            ra = n * a_bs + (h + a_h0) * a_rs
            rb_ = n * b_bs + (h + b_h0) * b_rs
            ro = n * o_bs + (h + a_h0) * o_rs + a_w0 * 32
            for k in range((depth + 31) // 32):
                lanes = min(32, depth - 32 * k)
                po = ro + k * o_ss
                if a_d0 == 0 and b_d0 == 0:
                    # the slice's lanes at the same places in all three: the row's columns
                    # are one run, the lanes past the depth masked (not tracked, the fill)
                    pa = ra + k * a_ss + a_w0 * 32
                    pb = rb_ + k * b_ss + b_w0 * 32
                    n_run = width * 32
                    if narrow:
                        addsub_span(a, pa, b, pb, out, po, n_run, lanes, a_scale, b_scale,
                                    offset, rsh, fill, bounds)
                        continue
                    # views indexed from 0, as in requantize_d32: the loop vectorises
                    xa, xb, y = a[pa:pa + n_run], b[pb:pb + n_run], out[po:po + n_run]
                    for i in range(n_run):
                        t = (np.int64(xa[i]) * a_scale + np.int64(xb[i]) * b_scale) >> 8
                        valid = (i & 31) < lanes
                        lo = min(lo, t) if valid else lo
                        hi = max(hi, t) if valid else hi
                        v = min(max(t + offset, -32768), 32767)
                        c = min(max((v + rb) >> rsh, 0), 255)
                        y[i] = c if valid else fill
                    continue
                for w in range(width):
                    for j in range(lanes):
                        da = 32 * k + j + a_d0
                        db = 32 * k + j + b_d0
                        ia = ra + (da >> 5) * a_ss + (w + a_w0) * 32 + (da & 31)
                        ib = rb_ + (db >> 5) * b_ss + (w + b_w0) * 32 + (db & 31)
                        t = (np.int64(a[ia]) * a_scale + np.int64(b[ib]) * b_scale) >> 8
                        lo = min(lo, t)
                        hi = max(hi, t)
                        v = min(max(t + offset, -32768), 32767)
                        out[po + w * 32 + j] = min(max((v + rb) >> rsh, 0), 255)
    bounds[0] = min(bounds[0], lo)
    bounds[1] = max(bounds[1], hi)
