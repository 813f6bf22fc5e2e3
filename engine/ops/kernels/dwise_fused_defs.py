"""The compiled pass of :mod:`dwise_fused` (numba, imported on first use): the depthwise
Supernode's sums and requantization read from its d32 input and written into its d32 output.

Module level, not built in a closure, so numba's on-disk cache serves every process (see
gemm_requant_defs).
"""

from __future__ import annotations

import numpy as np
from numba import njit


# contract: a product and its sum as one FMA, exact here (every value an integer under 2**24)
@njit(cache=True, nogil=True, boundscheck=False, fastmath={'contract'})
def dwise_d32(raw, raw8, line_base, zero, wts, fh, fw, sh, sw, ow, oh, h_tot, hb, w_tot, wb, spill,
              ring, ring8, ringf, bias, recip, masks, shamt, zx, valid, pad_code, fill, out,
              lanes, four, chunk):  # pragma: no cover - compiled
    # raw: the input memory as 8-byte words (raw8: the same bytes); line_base (B, R, S):
    # the word offset of each window line's first column (32 lanes = 4 words), zero
    # (B, R, S, C): the columns read as zx. Each window line is converted once to float32
    # into a ring of fh lines (``ringf``; at stride 1 straight from the memory, else through
    # ``ring`` / ``ring8``, one line of words / bytes, stored phase by phase), zx where
    # ``zero`` says so; each output pixel then sums its taps over 32 lanes at a time as
    # x (w - zf) in float32 (exact: |sum| < 2**24 for up to 258 taps), ``chunk`` pixels per
    # inner loop (the weights, bias, multipliers and extremes' masks tiled for them per
    # slice), requantizes them and writes the codes into ``out`` (the d32 output memory as
    # bytes: ``h_tot`` rows, ``hb`` of them above the data, ``w_tot`` columns, the ``ow``
    # computed from column ``wb``), the depth padding lanes of the last slice (lanes
    # ``valid``..31) taking ``pad_code`` and every byte not written ``fill``; then each
    # line's last group of 4 columns' first column is copied into the ``spill`` columns
    # after them (the asm's last group; past the line into the next one's left padding).
    # Returns the min and max of int32(v) over the data lanes.
    nb, n_rows, n_sl = line_base.shape
    n_cols = zero.shape[3]
    words = n_cols * 4
    zw = np.uint64(zx) * np.uint64(0x0101010101010101)
    zxf = np.float32(zx)
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
    one, two, three = np.uint64(1), np.uint64(2), np.uint64(3)
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
            masked = s == n_sl - 1 and valid < 32
            if fh == 3 and fw == 3:
                w0, w1, w2, w3, w4, w5, w6, w7, w8 = (wt[0], wt[1], wt[2], wt[3], wt[4], wt[5],
                                                      wt[6], wt[7], wt[8])
            else:
                w0 = w1 = w2 = w3 = w4 = w5 = w6 = w7 = w8 = wt[0]
            for oy in range(oh):
                y0 = oy * sh
                for fy in range(fh):
                    r = y0 + fy
                    slot = r % fh
                    if held[slot] == r:
                        continue
                    held[slot] = r
                    base = line_base[b, r, s]
                    fo = np.uint64(slot * words * 8)
                    if sw == 1 and base >= 0 and base + words <= raw.shape[0]:
                        # the line's span converted straight from the memory, then the
                        # columns read as zx written over
                        frm8 = np.uint64(base * 8)
                        for j in range(np.uint64(words * 8)):
                            ringf[fo + j] = np.float32(raw8[frm8 + j])
                        for ci in range(n_cols):
                            if zero[b, r, s, ci]:
                                to = fo + np.uint64(ci * 32)
                                for l in range(lanes):
                                    ringf[to + l] = zxf
                        continue
                    dst = np.uint64(0)
                    ci = 0
                    for ph in range(sw):
                        to = dst + np.uint64(phase_at[ph] // 8)
                        for ci in range(ph, n_cols, sw):
                            if zero[b, r, s, ci]:
                                ring[to] = zw
                                ring[to + one] = zw
                                ring[to + two] = zw
                                ring[to + three] = zw
                            else:
                                frm = np.uint64(base + ci * 4)
                                ring[to] = raw[frm]
                                ring[to + one] = raw[frm + one]
                                ring[to + two] = raw[frm + two]
                                ring[to + three] = raw[frm + three]
                            to += four
                    for j in range(np.uint64(words * 8)):
                        ringf[fo + j] = np.float32(ring8[j])
                o_line = np.uint64(((b * h_tot + hb + oy) * n_sl + s) * line_bytes + wb * 32)
                if fh == 3 and fw == 3:
                    r0 = np.uint64((y0 % 3) * words * 8)
                    r1 = np.uint64(((y0 + 1) % 3) * words * 8)
                    r2 = np.uint64(((y0 + 2) % 3) * words * 8)
                    # taps fx = 0, 1, 2: phase fx % sw, place fx // sw
                    p0 = np.uint64(phase_at[0])
                    p1 = np.uint64(phase_at[1 % sw] + (1 // sw) * 32)
                    p2 = np.uint64(phase_at[2 % sw] + (2 // sw) * 32)
                    for ox0 in range(0, ow, chunk):
                        n = np.uint64(min(chunk, ow - ox0) * 32)
                        at = np.uint64(ox0 * 32)
                        o = o_line + at
                        a0, a1, a2 = r0 + at + p0, r0 + at + p1, r0 + at + p2
                        b0, b1, b2 = r1 + at + p0, r1 + at + p1, r1 + at + p2
                        c0, c1, c2 = r2 + at + p0, r2 + at + p1, r2 + at + p2
                        if masked:     # the last slice's depth padding lanes
                            for j in range(n):
                                acc3 = (ringf[a0 + j] * w0[j]
                                        + ringf[a1 + j] * w1[j]
                                        + ringf[a2 + j] * w2[j]
                                        + ringf[b0 + j] * w3[j]
                                        + ringf[b1 + j] * w4[j]
                                        + ringf[b2 + j] * w5[j]
                                        + ringf[c0 + j] * w6[j]
                                        + ringf[c1 + j] * w7[j]
                                        + ringf[c2 + j] * w8[j])
                                s32 = np.int32(np.int32(acc3) + bt[j])
                                t = np.int32(np.uint32(s32) << sh32)
                                v = (np.int64(t) * np.int64(rt[j]) + half) >> np.int64(31)
                                w32 = np.int32(v)
                                lo = min(lo, max(w32, lom[j]))
                                hi = max(hi, min(w32, him[j]))
                                out[o + j] = np.uint8(min(max(v, np.int64(0)), np.int64(255)))
                        else:
                            for j in range(n):
                                acc3 = (ringf[a0 + j] * w0[j]
                                        + ringf[a1 + j] * w1[j]
                                        + ringf[a2 + j] * w2[j]
                                        + ringf[b0 + j] * w3[j]
                                        + ringf[b1 + j] * w4[j]
                                        + ringf[b2 + j] * w5[j]
                                        + ringf[c0 + j] * w6[j]
                                        + ringf[c1 + j] * w7[j]
                                        + ringf[c2 + j] * w8[j])
                                s32 = np.int32(np.int32(acc3) + bt[j])
                                t = np.int32(np.uint32(s32) << sh32)
                                v = (np.int64(t) * np.int64(rt[j]) + half) >> np.int64(31)
                                w32 = np.int32(v)
                                lo = min(lo, w32)
                                hi = max(hi, w32)
                                out[o + j] = np.uint8(min(max(v, np.int64(0)), np.int64(255)))
                        if s == n_sl - 1 and valid < 32:
                            for q in range(np.uint64(0), n, lanes):
                                for l in range(np.uint64(valid), lanes):
                                    out[o + q + l] = pad8
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
    return lo, hi


__all__ = ["dwise_d32"]
