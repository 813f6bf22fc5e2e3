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

from hexscope.engine.ops.kernels.llvm_vectors import splat as splat_into


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


@intrinsic
def pair_cols(typingctx, raw8, a_at, b_at, src_step, zero, za_at, zb_at, z_step, count, ringp,
              dst_at, zx):  # pragma: no cover - compiled
    # ``count`` columns of a pair line into ringp (int32: per column 32 lanes, each the
    # int16 pair (line a's code, line b's code)), column k at dst_at + 32 k: a line's code
    # is raw8[x_at + k src_step + lane], or zx where zero[zx_at + k z_step]; b_at < 0: no
    # line b (its codes 0).
    sig = types.void(raw8, a_at, b_at, src_step, zero, za_at, zb_at, z_step, count, ringp,
                     dst_at, zx)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return _pair_cols_ir(context, builder, signature, args)

    return sig, codegen


def _pair_cols_ir(context, builder, signature, args):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    from numba.core import cgutils

    raw8, a_at, b_at, src_step, zero, za_at, zb_at, z_step, count, ringp, dst_at, zx = args
    ptr = {i: context.make_array(signature.args[i])(context, builder, args[i]).data
           for i in (0, 4, 9)}
    i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    vb, vi = ir.VectorType(i8, 16), ir.VectorType(i32, 16)
    zv = builder.shuffle_vector(
        builder.insert_element(ir.Constant(vb, ir.Undefined), builder.trunc(zx, i8), i32(0)),
        ir.Constant(vb, ir.Undefined), ir.Constant(ir.VectorType(i32, 16), [0] * 16))
    has_b = builder.icmp_signed(">=", b_at, i64(0))

    def codes(flag_at, src, h):  # type: ignore[no-untyped-def]  # zx or the 16 bytes
        zapped = builder.icmp_unsigned("!=", builder.load(builder.gep(ptr[4], [flag_at])), i8(0))
        with builder.if_else(zapped) as (yes, no):
            with yes:
                at_yes = builder.basic_block
            with no:
                frm = builder.gep(ptr[0], [builder.add(src, i64(16 * h))])
                read = builder.load(builder.bitcast(frm, vb.as_pointer()), align=1)
                at_no = builder.basic_block
        got = builder.phi(vb)
        got.add_incoming(zv, at_yes)
        got.add_incoming(read, at_no)
        return got

    with cgutils.for_range(builder, count) as loop:
        k = loop.index
        dst = builder.add(dst_at, builder.mul(k, i64(32)))
        step = builder.mul(k, src_step)
        zstep = builder.mul(k, z_step)
        for h in range(2):
            lo16 = builder.zext(codes(builder.add(za_at, zstep), builder.add(a_at, step), h), vi)
            with builder.if_else(has_b) as (yes, no):
                with yes:
                    hi16 = codes(builder.add(zb_at, zstep), builder.add(b_at, step), h)
                    at_yes = builder.basic_block
                with no:
                    at_no = builder.basic_block
            second = builder.phi(vb)
            second.add_incoming(hi16, at_yes)
            second.add_incoming(ir.Constant(vb, [0] * 16), at_no)
            pair = builder.or_(lo16, builder.shl(builder.zext(second, vi),
                                                 ir.Constant(vi, [16] * 16)))
            at = builder.gep(ptr[9], [builder.add(dst, i64(16 * h))])
            builder.store(pair, builder.bitcast(at, vi.as_pointer()), align=4)
    return context.get_dummy_value()


def _pmaddwd_512() -> bool:  # pragma: no cover - compiled
    """Whether the code numba makes here has AVX-512 BW's vpmaddwd (its own intrinsic; LLVM
    does not find it in the plain IR of the same sums): numba compiles for this host unless
    told a CPU (NUMBA_CPU_NAME / NUMBA_CPU_FEATURES), then the plain IR."""
    import llvmlite.binding as llvm
    from numba.core import config

    if config.CPU_NAME or config.CPU_FEATURES:
        return False
    try:
        return bool(llvm.get_host_cpu_features().get("avx512bw"))
    except RuntimeError:
        return False


@intrinsic
def row_pairs(typingctx, ringp, taps, n_pix, wpairs, w_at, bias, recip, t_at, shamt, valid,
              pad_code, out, o_at, lohi):  # pragma: no cover - compiled
    # One output row of the 3x3 kernels from two pair lines (:func:`pair_cols`): for each of
    # ``n_pix`` pixels (32 lanes, 32 words apart), the sum over k < 6 of the int16 pairs at
    # ringp[taps[k] + 32 x + lane] times wpairs[w_at + 32 k + lane] (vpmaddwd: the pairs'
    # two products added), from the bias buffer [t_at + lane], int32 wrapping; then as
    # the requantization of dwise_requant (int32 wrap, shift, 64-bit product and rounding,
    # whose result fits int32) with recip [t_at + lane]; the codes stored at
    # out[o_at + 32 x + lane], lanes from ``valid`` on taking ``pad_code`` and staying out
    # of the extremes, which are kept per lane in lohi (16 minima, then 16 maxima).
    sig = types.void(ringp, taps, n_pix, wpairs, w_at, bias, recip, t_at, shamt, valid,
                     pad_code, out, o_at, lohi)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return _row_pairs_ir(context, builder, signature, args)

    return sig, codegen


def _row_pairs_ir(context, builder, signature, args):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    from numba.core import cgutils

    (ringp, taps, n_pix, wpairs, w_at, bias, recip, t_at, shamt, valid, pad_code, out, o_at,
     lohi) = args
    ptr = {i: context.make_array(signature.args[i])(context, builder, args[i]).data
           for i in (0, 1, 3, 5, 6, 11, 13)}
    i8, i16, i32, i64 = ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
    vb, vi, vw = (ir.VectorType(t, 16) for t in (i8, i32, i16))
    vh = ir.VectorType(i16, 32)
    vq = ir.VectorType(i64, 8)

    def splat(value, vty):  # type: ignore[no-untyped-def]
        return splat_into(builder, value, vty)

    def vload(base, at, vty):  # type: ignore[no-untyped-def]
        return builder.load(builder.bitcast(builder.gep(base, [at]), vty.as_pointer()),
                            align=4)

    even_ix = ir.Constant(ir.VectorType(i32, 16), list(range(0, 32, 2)))
    odd_ix = ir.Constant(ir.VectorType(i32, 16), list(range(1, 32, 2)))

    native = _pmaddwd_512()
    if native:
        pmadd = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vi, [vh, vh]),
                                               "llvm.x86.avx512.pmaddw.d.512")

    def madd(a, b):  # type: ignore[no-untyped-def]  # vpmaddwd of two <16 x i32> as int16 pairs
        ah, bh = builder.bitcast(a, vh), builder.bitcast(b, vh)
        if native:
            return builder.call(pmadd, [ah, bh])
        undef = ir.Constant(vh, ir.Undefined)
        parts = []
        for ix in (even_ix, odd_ix):
            x = builder.sext(builder.shuffle_vector(ah, undef, ix), vi)
            w = builder.sext(builder.shuffle_vector(bh, undef, ix), vi)
            parts.append(builder.mul(x, w))
        return builder.add(parts[0], parts[1])

    s32, s1 = ir.Constant(vq, [32] * 8), ir.Constant(vq, [1] * 8)

    def sext_low(q):  # type: ignore[no-untyped-def]  # each i64 lane's low half, sign-extended
        return builder.ashr(builder.shl(q, s32), s32)

    tap = [builder.load(builder.gep(ptr[1], [i64(k)])) for k in range(6)]
    sh = splat(builder.trunc(shamt, i32), vi)
    lanes = splat(builder.trunc(valid, i32), vi)
    pad = splat(builder.trunc(pad_code, i8), vb)
    lo_slot, hi_slot = cgutils.alloca_once(builder, vi), cgutils.alloca_once(builder, vi)
    builder.store(vload(ptr[13], i64(0), vi), lo_slot)
    builder.store(vload(ptr[13], i64(16), vi), hi_slot)
    zero, top = ir.Constant(vi, [0] * 16), ir.Constant(vi, [255] * 16)
    half, s31 = ir.Constant(vq, [1 << 30] * 8), ir.Constant(vq, [31] * 8)
    for h in range(2):      # a half at a time: its weights and terms stay in registers
        live = builder.icmp_signed("<", ir.Constant(vi, list(range(16 * h, 16 * h + 16))),
                                   lanes)
        wv = [vload(ptr[3], builder.add(w_at, i64(32 * k + 16 * h)), vi) for k in range(6)]
        bv = vload(ptr[5], builder.add(t_at, i64(16 * h)), vi)
        rq = builder.bitcast(vload(ptr[6], builder.add(t_at, i64(16 * h)), vi), vq)
        r_even, r_odd = sext_low(rq), builder.ashr(rq, s32)
        with cgutils.for_range(builder, n_pix) as loop:
            at = builder.add(builder.mul(loop.index, i64(32)), i64(16 * h))
            lo, hi = builder.load(lo_slot), builder.load(hi_slot)
            acc = bv
            for k in range(6):
                acc = builder.add(acc, madd(vload(ptr[0], builder.add(tap[k], at), vi), wv[k]))
            t = builder.bitcast(builder.shl(acc, sh), vq)
            # the 32 x 32 -> 64-bit products of the even lanes and of the odd ones
            # (vpmuldq), rounded; v is bits 31..62 of each, an int32 (|t r| < 2**62)
            even = builder.lshr(builder.add(builder.mul(sext_low(t), r_even), half), s31)
            odd = builder.shl(builder.add(builder.mul(builder.ashr(t, s32), r_odd), half), s1)
            v = builder.shuffle_vector(builder.bitcast(even, vi), builder.bitcast(odd, vi),
                                       ir.Constant(ir.VectorType(i32, 16), [
                                           k + 16 * (k & 1) for k in range(16)]))
            lo = builder.select(builder.and_(live, builder.icmp_signed("<", v, lo)), v, lo)
            hi = builder.select(builder.and_(live, builder.icmp_signed(">", v, hi)), v, hi)
            c = builder.select(builder.icmp_signed("<", v, zero), zero, v)
            c = builder.select(builder.icmp_signed(">", c, top), top, c)
            c8 = builder.select(live, builder.trunc(c, vb), pad)
            dst = builder.gep(ptr[11], [builder.add(o_at, at)])
            builder.store(c8, builder.bitcast(dst, vb.as_pointer()), align=1)
            builder.store(lo, lo_slot)
            builder.store(hi, hi_slot)
    for slot, at in ((lo_slot, 0), (hi_slot, 16)):
        dst = builder.gep(ptr[13], [i64(at)])
        builder.store(builder.load(slot), builder.bitcast(dst, vi.as_pointer()), align=1)
    return context.get_dummy_value()


# contract: a product and its sum as one FMA, exact here (every value an integer under 2**24)
@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def spill_columns(out, o_line, ow, wb, w_tot, spill, lanes):  # pragma: no cover - compiled
    """The ``spill`` columns after a row's ``ow`` outputs, which the asm's stores of whole
    4-column groups also write: each a copy of the column ``4 - spill`` before the row's end,
    where it lands inside the line's width or its left pad (shared by both row loops)."""
    src = o_line + np.uint64((ow - (4 - spill)) * 32)
    for col in range(wb + ow, wb + ow + spill):
        if col < w_tot or col - w_tot < wb:
            to = o_line + np.uint64((col - wb) * 32)
            for l in range(lanes):
                out[to + l] = out[src + l]


@njit(cache=True, nogil=True, boundscheck=False, fastmath={'contract'})
def dwise_d32(raw8, line_base, zero, wts, fh, fw, sh, sw, ow, oh, h_tot, hb, w_tot, wb, spill,
              ringf, ringp, wpairs, bias, recip, masks, shamt, zx, valid, pad_code, fill, out,
              lanes, chunk):  # pragma: no cover - compiled
    # raw8: the input memory's bytes; line_base (B, R, S): the 8-byte word offset of each
    # window line's first column (32 lanes = 4 words), zero (B, R, S, C, C-ordered): the
    # columns read as zx (those columns are not read). A 3x3 filter: window lines j, j + 1
    # (j even) as one pair line of int16 pairs (:func:`pair_cols`) in a ring of 2
    # (``ringp``), each output row summed from two pair lines with ``wpairs`` (per slice,
    # rows at an even / odd window line, taps (pair, fx): the lines' weights as int16
    # pairs) in one :func:`row_pairs`, exact in int32 from the bias buffer. Other filters:
    # each window line converted once to float32 into a ring of fh lines (``ringf``;
    # :func:`ring_cols`), each output pixel summing its taps over 32 lanes as x (w - zf) in
    # float32 (exact: |sum| < 2**24 for up to 258 taps), ``chunk`` pixels per inner loop
    # (the weights, bias, multipliers and extremes' masks tiled for them per slice). Both
    # store phase by phase (column c at phase c % sw, place c // sw), requantize and write
    # the codes into ``out`` (the d32 output memory as
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
    fill8 = np.uint8(fill & 255)
    # fill < 0: ``out`` holds this layout's fill there already (a memory this pass wrote
    # before: kernels/spare_memory.py); the spill columns below are written all the same
    for b in range(nb if fill >= 0 else 0):
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
    taps = np.empty(6, np.int64)
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
            if fh == 3 and fw == 3:
                # pair lines of window lines (j, j + 1), j even, in a ring of 2: row y0
                # even reads (y0, y0 + 1) and (y0 + 2, -), odd (-, y0) and (y0 + 1, y0 + 2)
                for oy in range(oh):
                    y0 = oy * sh
                    kind = y0 & 1
                    first = y0 - kind
                    for j in range(first, first + 4, 2):
                        slot = (j >> 1) & 1
                        if held[slot] == j:
                            continue
                        held[slot] = j
                        two = j + 1 < n_rows
                        for ph in range(sw):
                            za = ((b * n_rows + j) * n_sl + s) * n_cols + ph
                            pair_cols(raw8, np.int64(line_base[b, j, s] * 8 + ph * 32),
                                      np.int64(line_base[b, j + 1, s] * 8 + ph * 32
                                               if two else -1),
                                      np.int64(sw * 32), zero, np.int64(za),
                                      np.int64(za + n_sl * n_cols if two else za),
                                      np.int64(sw), np.int64((n_cols - ph + sw - 1) // sw),
                                      ringp, np.int64(slot * words * 8 + phase_at[ph]),
                                      np.int64(zx))
                    for q in range(2):
                        line = (((first >> 1) + q) & 1) * words * 8
                        for fx in range(3):
                            taps[3 * q + fx] = line + phase_at[fx % sw] + (fx // sw) * 32
                    o_line = np.uint64(((b * h_tot + hb + oy) * n_sl + s) * line_bytes
                                       + wb * 32)
                    row_pairs(ringp, taps, np.int64(ow), wpairs,
                              np.int64(((s * 2 + kind) * 6) * 32), bias, recip,
                              np.int64(s * span), np.int64(shamt),
                              np.int64(valid if s == n_sl - 1 else 32), np.int64(pad_code),
                              out, np.int64(o_line), lohi)
                    if spill:
                        spill_columns(out, o_line, ow, wb, w_tot, spill, lanes)
                continue
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
                    spill_columns(out, o_line, ow, wb, w_tot, spill, lanes)
    return min(lo, lohi[:16].min()), max(hi, lohi[16:].max())


__all__ = ["dwise_d32"]
