"""The compiled pass of :mod:`dwise_fused` (numba, imported on first use): the depthwise
Supernode's sums and requantization read from its d32 input and written into its d32 output.

Module level, not built in a closure, so numba's on-disk cache serves every process (see
gemm_requant_defs).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def row_3x3(typingctx, ringf, taps, n_pix, wts, w_at, w_step, bias, recip, t_at, shamt, valid,
            pad_code, out, o_at, lohi):  # pragma: no cover - compiled
    # One output row of the 3x3 kernels in 16-lane vectors (LLVM IR: numba leaves parts of
    # this loop scalar): for each of ``n_pix`` pixels (32 lanes each, 32 floats apart in
    # the ring), the 9 taps' x (w - zf) at ringf[taps[k] + 32 x + lane] times
    # wts[w_at + k w_step + lane] summed (exact in float32), then the requantization of
    # dwise_requant (int32 wrap, shift, 64-bit product and rounding, whose result fits
    # int32) with bias / recip [t_at + lane]; the codes stored at out[o_at + 32 x + lane],
    # lanes from ``valid`` on taking ``pad_code`` and staying out of the extremes, which
    # are kept per lane in lohi (16 minima, then 16 maxima).
    sig = types.void(ringf, taps, n_pix, wts, w_at, w_step, bias, recip, t_at, shamt, valid,
                     pad_code, out, o_at, lohi)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return _row_3x3_ir(context, builder, signature, args)

    return sig, codegen


def _row_3x3_ir(context, builder, signature, args):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    from numba.core import cgutils

    (ringf, taps, n_pix, wts, w_at, w_step, bias, recip, t_at, shamt, valid, pad_code, out,
     o_at, lohi) = args
    ptr = {i: context.make_array(signature.args[i])(context, builder, args[i]).data
           for i in (0, 1, 3, 6, 7, 12, 14)}
    f32, i8, i32, i64 = ir.FloatType(), ir.IntType(8), ir.IntType(32), ir.IntType(64)
    vf, vb, vi = (ir.VectorType(t, 16) for t in (f32, i8, i32))
    vq = ir.VectorType(i64, 8)

    def splat(value, vty):  # type: ignore[no-untyped-def]
        one = builder.insert_element(ir.Constant(vty, ir.Undefined), value, i32(0))
        return builder.shuffle_vector(one, ir.Constant(vty, ir.Undefined),
                                      ir.Constant(ir.VectorType(i32, 16), [0] * 16))

    def vload(base, at, vty):  # type: ignore[no-untyped-def]
        return builder.load(builder.bitcast(builder.gep(base, [at]), vty.as_pointer()),
                            align=1)

    fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vf, [vf, vf, vf]),
                                         "llvm.fma.v16f32")
    tap = [builder.load(builder.gep(ptr[1], [i64(k)])) for k in range(9)]
    wv = [[vload(ptr[3], builder.add(w_at, builder.add(builder.mul(w_step, i64(k)), i64(16 * h))),
                 vf) for h in range(2)] for k in range(9)]
    bv = [vload(ptr[6], builder.add(t_at, i64(16 * h)), vi) for h in range(2)]
    s32, s1 = ir.Constant(vq, [32] * 8), ir.Constant(vq, [1] * 8)

    def sext_low(q):  # type: ignore[no-untyped-def]  # each i64 lane's low half, sign-extended
        return builder.ashr(builder.shl(q, s32), s32)

    rq = [builder.bitcast(vload(ptr[7], builder.add(t_at, i64(16 * h)), vi), vq)
          for h in range(2)]
    rv = [(sext_low(q), builder.ashr(q, s32)) for q in rq]
    sh = splat(builder.trunc(shamt, i32), vi)
    lanes = splat(builder.trunc(valid, i32), vi)
    live = [builder.icmp_signed("<", ir.Constant(vi, list(range(16 * h, 16 * h + 16))), lanes)
            for h in range(2)]
    pad = splat(builder.trunc(pad_code, i8), vb)
    lo_slot, hi_slot = cgutils.alloca_once(builder, vi), cgutils.alloca_once(builder, vi)
    builder.store(vload(ptr[14], i64(0), vi), lo_slot)
    builder.store(vload(ptr[14], i64(16), vi), hi_slot)
    zero, top = ir.Constant(vi, [0] * 16), ir.Constant(vi, [255] * 16)
    half, s31 = ir.Constant(vq, [1 << 30] * 8), ir.Constant(vq, [31] * 8)
    with cgutils.for_range(builder, n_pix) as loop:
        base = builder.mul(loop.index, i64(32))
        lo, hi = builder.load(lo_slot), builder.load(hi_slot)
        for h in range(2):
            at = builder.add(base, i64(16 * h))
            acc = builder.fmul(vload(ptr[0], builder.add(tap[0], at), vf), wv[0][h])
            for k in range(1, 9):
                acc = builder.call(fma, [vload(ptr[0], builder.add(tap[k], at), vf), wv[k][h],
                                         acc])
            t = builder.bitcast(builder.shl(builder.add(builder.fptosi(acc, vi), bv[h]), sh), vq)
            # the 32 x 32 -> 64-bit products of the even lanes and of the odd ones
            # (vpmuldq), rounded; v is bits 31..62 of each, an int32 (|t r| < 2**62)
            even = builder.lshr(builder.add(builder.mul(sext_low(t), rv[h][0]), half), s31)
            odd = builder.shl(builder.add(builder.mul(builder.ashr(t, s32), rv[h][1]), half), s1)
            v = builder.shuffle_vector(builder.bitcast(even, vi), builder.bitcast(odd, vi),
                                       ir.Constant(ir.VectorType(i32, 16), [
                                           k + 16 * (k & 1) for k in range(16)]))
            lo = builder.select(builder.and_(live[h], builder.icmp_signed("<", v, lo)), v, lo)
            hi = builder.select(builder.and_(live[h], builder.icmp_signed(">", v, hi)), v, hi)
            c = builder.select(builder.icmp_signed("<", v, zero), zero, v)
            c = builder.select(builder.icmp_signed(">", c, top), top, c)
            c8 = builder.select(live[h], builder.trunc(c, vb), pad)
            dst = builder.gep(ptr[12], [builder.add(o_at, at)])
            builder.store(c8, builder.bitcast(dst, vb.as_pointer()), align=1)
        builder.store(lo, lo_slot)
        builder.store(hi, hi_slot)
    for slot, at in ((lo_slot, 0), (hi_slot, 16)):
        dst = builder.gep(ptr[14], [i64(at)])
        builder.store(builder.load(slot), builder.bitcast(dst, vi.as_pointer()), align=1)
    return context.get_dummy_value()


@intrinsic
def ring_cols(typingctx, raw8, src_at, src_step, zero, z_at, z_step, count, ringf, dst_at,
              zx):  # pragma: no cover - compiled
    # ``count`` columns of 32 lanes into ringf (float32), column k at dst_at + 32 k: zx
    # where zero[z_at + k z_step] (zero's bytes as one C-ordered run), else the bytes
    # raw8[src_at + k src_step + lane] (only those columns are read).
    sig = types.void(raw8, src_at, src_step, zero, z_at, z_step, count, ringf, dst_at, zx)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return _ring_cols_ir(context, builder, signature, args)

    return sig, codegen


def _ring_cols_ir(context, builder, signature, args):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    from numba.core import cgutils

    raw8, src_at, src_step, zero, z_at, z_step, count, ringf, dst_at, zx = args
    ptr = {i: context.make_array(signature.args[i])(context, builder, args[i]).data
           for i in (0, 3, 7)}
    f32, i8, i32, i64 = ir.FloatType(), ir.IntType(8), ir.IntType(32), ir.IntType(64)
    vf, vb = ir.VectorType(f32, 16), ir.VectorType(i8, 16)
    zf = builder.uitofp(zx, f32)
    zv = builder.shuffle_vector(builder.insert_element(ir.Constant(vf, ir.Undefined), zf, i32(0)),
                                ir.Constant(vf, ir.Undefined),
                                ir.Constant(ir.VectorType(i32, 16), [0] * 16))
    with cgutils.for_range(builder, count) as loop:
        k = loop.index
        dst = builder.add(dst_at, builder.mul(k, i64(32)))
        flag = builder.load(builder.gep(ptr[3], [builder.add(z_at, builder.mul(k, z_step))]))
        with builder.if_else(builder.icmp_unsigned("!=", flag, i8(0))) as (zapped, read):
            with zapped:
                for h in range(2):
                    at = builder.gep(ptr[7], [builder.add(dst, i64(16 * h))])
                    builder.store(zv, builder.bitcast(at, vf.as_pointer()), align=4)
            with read:
                src = builder.add(src_at, builder.mul(k, src_step))
                for h in range(2):
                    frm = builder.gep(ptr[0], [builder.add(src, i64(16 * h))])
                    codes = builder.load(builder.bitcast(frm, vb.as_pointer()), align=1)
                    at = builder.gep(ptr[7], [builder.add(dst, i64(16 * h))])
                    builder.store(builder.uitofp(codes, vf), builder.bitcast(at, vf.as_pointer()),
                                  align=4)
    return context.get_dummy_value()


# contract: a product and its sum as one FMA, exact here (every value an integer under 2**24)
@njit(cache=True, nogil=True, boundscheck=False, fastmath={'contract'})
def dwise_d32(raw8, line_base, zero, wts, fh, fw, sh, sw, ow, oh, h_tot, hb, w_tot, wb, spill,
              ringf, bias, recip, masks, shamt, zx, valid, pad_code, fill, out,
              lanes, chunk):  # pragma: no cover - compiled
    # raw8: the input memory's bytes; line_base (B, R, S): the 8-byte word offset of each
    # window line's first column (32 lanes = 4 words), zero (B, R, S, C, C-ordered): the
    # columns read as zx. Each window line is converted once to float32 into a ring of fh
    # lines (``ringf``, 64-byte aligned; :func:`ring_cols`, stored phase by phase), zx where
    # ``zero`` says so (those columns are not read); each output pixel then sums its taps
    # over 32 lanes at a time as x (w - zf) in float32 (exact: |sum| < 2**24 for up to 258
    # taps): a 3x3 row in one :func:`row_3x3`, other filters ``chunk`` pixels per inner
    # loop (the weights, bias, multipliers and extremes' masks tiled for them per slice),
    # requantizes them and writes the codes into ``out`` (the d32 output memory as
    # bytes: ``h_tot`` rows, ``hb`` of them above the data, ``w_tot`` columns, the ``ow``
    # computed from column ``wb``), the depth padding lanes of the last slice (lanes
    # ``valid``..31) taking ``pad_code`` and every byte not written ``fill``; then each
    # line's last group of 4 columns' first column is copied into the ``spill`` columns
    # after them (the asm's last group; past the line into the next one's left padding).
    # Returns the min and max of int32(v) over the data lanes.
    nb, n_rows, n_sl = line_base.shape
    n_cols = zero.shape[3]
    words = n_cols * 4
    line_bytes = w_tot * 32
    fill8 = np.uint8(fill)
    for b in range(nb):
        for r in range(h_tot):
            at = (b * h_tot + r) * n_sl * line_bytes
            if r < hb or r >= hb + oh:
                for k in range(np.uint64(n_sl * line_bytes)):
                    out[np.uint64(at) + k] = fill8
                continue
            for s in range(n_sl):
                line = np.uint64(at + s * line_bytes)
                for k in range(np.uint64(wb * 32)):
                    out[line + k] = fill8
                for k in range(np.uint64((wb + ow) * 32), np.uint64(line_bytes)):
                    out[line + k] = fill8
    held = np.full(fh, -1, np.int64)
    # a window line in the ring is stored phase by phase (column c at phase c % sw, place
    # c // sw), so a tap's reads for consecutive output pixels are consecutive
    phase_at = np.zeros(sw + 1, np.int64)
    for ph in range(sw):
        phase_at[ph + 1] = phase_at[ph] + (n_cols - ph + sw - 1) // sw * 32
    span = chunk * 32
    acc = np.empty(span, np.float32)
    lo = np.int32(2**31 - 1)
    hi = np.int32(-(2**31))
    sh32 = np.uint32(shamt)
    half = np.int64(1073741824)
    pad8 = np.uint8(pad_code)
    taps = np.empty(9, np.int64)
    lohi = np.empty(32, np.int32)
    lohi[:16] = lo
    lohi[16:] = hi
    for b in range(nb):
        for s in range(n_sl):
            # this slice's weights, bias, multipliers and extremes' masks, each repeated
            # for ``chunk`` pixels (tiles made once by the caller)
            wt = wts[s]
            bt = bias[s]
            rt = recip[s]
            lom = masks[s, 0]
            him = masks[s, 1]
            for j in range(fh):
                held[j] = -1
            for oy in range(oh):
                y0 = oy * sh
                for fy in range(fh):
                    r = y0 + fy
                    slot = r % fh
                    if held[slot] == r:
                        continue
                    held[slot] = r
                    base = line_base[b, r, s]
                    fo = slot * words * 8
                    for ph in range(sw):
                        ring_cols(raw8, np.int64(base * 8 + ph * 32), np.int64(sw * 32), zero,
                                  np.int64(((b * n_rows + r) * n_sl + s) * n_cols + ph),
                                  np.int64(sw), np.int64((n_cols - ph + sw - 1) // sw), ringf,
                                  np.int64(fo + phase_at[ph]), np.int64(zx))
                o_line = np.uint64(((b * h_tot + hb + oy) * n_sl + s) * line_bytes + wb * 32)
                if fh == 3 and fw == 3:
                    # taps fx = 0, 1, 2: phase fx % sw, place fx // sw
                    for fy in range(3):
                        line = ((y0 + fy) % 3) * words * 8
                        taps[3 * fy] = line + phase_at[0]
                        taps[3 * fy + 1] = line + phase_at[1 % sw] + (1 // sw) * 32
                        taps[3 * fy + 2] = line + phase_at[2 % sw] + (2 // sw) * 32
                    row_3x3(ringf, taps, np.int64(ow), wts, np.int64(s * 9 * span),
                            np.int64(span), bias, recip, np.int64(s * span), np.int64(shamt),
                            np.int64(valid if s == n_sl - 1 else 32), np.int64(pad_code), out,
                            np.int64(o_line), lohi)
                else:
                    for ox0 in range(0, ow, chunk):
                        n = np.uint64(min(chunk, ow - ox0) * 32)
                        for j in range(n):
                            acc[j] = np.float32(0.0)
                        for fy in range(fh):
                            line = np.uint64(((y0 + fy) % fh) * words * 8)
                            for fx in range(fw):
                                xo = line + np.uint64(phase_at[fx % sw] + (ox0 + fx // sw) * 32)
                                wr = wt[fy * fw + fx]
                                for j in range(n):
                                    acc[j] += ringf[xo + j] * wr[j]
                        o = o_line + np.uint64(ox0 * 32)
                        for j in range(n):
                            s32 = np.int32(np.int32(acc[j]) + bt[j])
                            t = np.int32(np.uint32(s32) << sh32)
                            v = (np.int64(t) * np.int64(rt[j]) + half) >> np.int64(31)
                            w32 = np.int32(v)
                            lo = min(lo, max(w32, lom[j]))
                            hi = max(hi, min(w32, him[j]))
                            out[o + j] = np.uint8(min(max(v, np.int64(0)), np.int64(255)))
                        if s == n_sl - 1 and valid < 32:
                            for q in range(np.uint64(0), n, lanes):
                                for l in range(np.uint64(valid), lanes):
                                    out[o + q + l] = pad8
                if spill:
                    src = o_line + np.uint64((ow - (4 - spill)) * 32)
                    for col in range(wb + ow, wb + ow + spill):
                        if col < w_tot or col - w_tot < wb:
                            to = o_line + np.uint64((col - wb) * 32)
                            for l in range(lanes):
                                out[to + l] = out[src + l]
    return min(lo, lohi[:16].min()), max(hi, lohi[16:].max())


__all__ = ["dwise_d32"]
