"""The compiled per-row loops of :mod:`normalize_loops` (numba, imported on first use).

Module level, not built in a closure: numba keys its on-disk cache of a function that calls
other closures (the scalar helpers here) by a per-process id of theirs, so the three loops
were compiled again in every process (0.75 s of each app start's kernel preload).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

f32 = np.float32
jit = njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")


@jit
def f2i(v):  # pragma: no cover - compiled
    # convert_sf2w:chop on a float64: NaN -> -1, saturate, truncate (hexmath.f2i)
    if v != v:
        return -1
    if v >= 2147483647.0:
        return 2147483647
    if v <= -2147483648.0:
        return -2147483648
    return int(v)


@jit
def sat_u8(v):  # pragma: no cover - compiled
    return 0 if v < 0 else (255 if v > 255 else v)


@jit
def expf_approx(x):  # pragma: no cover - compiled
    # op_softmax.c expf_approx, float32 at every step (softmax.expf_approx)
    a = f32(x * f32(16384.0 / 0.69314718056))
    s = f32(a + f32(math.copysign(0.5, a)))      # roundf_i32
    frac = f2i(float(s))
    xf = f32(f32(frac & 0x3FFF) * f32(1.0 / 16384.0))
    poly = f32(xf * f32(0.07154756))
    poly = f32(f32(f32(0.23793659) + poly) * xf)
    poly = f32(f32(f32(0.69051585) + poly) * xf)
    exp0 = f32(f32(1.0) + poly)
    e = (frac >> 14) + 127
    if e <= 0:
        scale = f32(0.0)
    elif e >= 255:
        scale = f32(np.inf)
    else:
        scale = f32(math.ldexp(1.0, e - 127))
    return f32(scale * exp0)


@jit
def softmax_rows(codes, step, no_max_step, out):  # pragma: no cover - compiled
    # t depends on the code alone (no max pass) or on code - row max (-255..0): 256
    # values of expf_approx, taken once per call and looked up per element
    rows, depth = codes.shape
    no_max = step < no_max_step
    table = np.empty(256, np.float32)
    for k in range(256):
        if no_max:
            table[k] = expf_approx(f32(f32(step * f32(k)) - f32(83.0)))
        else:
            table[k] = expf_approx(f32(step * f32(k - 255)))
    for r in range(rows):
        base = 0
        if not no_max:
            top = 0
            for k in range(depth):
                top = max(top, np.int64(codes[r, k]))
            base = 255 - top
        total = f32(0.0)
        for k in range(depth):
            total = f32(total + table[np.int64(codes[r, k]) + base])
        recip = f32(f32(255.0) / total)
        for k in range(depth):
            y = float(f32(recip * table[np.int64(codes[r, k]) + base]))
            # fast_roundf (convert_sf2w): half to even, saturated, NaN -> -1
            out[r, k] = sat_u8(-1 if y != y else f2i(np.rint(y)))


@jit
def l2_rows(codes, zero, out):  # pragma: no cover - compiled
    rows, depth = codes.shape
    for r in range(rows):
        s = f32(0.0)
        for k in range(depth):
            v = f32(np.int64(codes[r, k]) - zero)
            s = f32(s + f32(v * v))
        norm = f32(math.sqrt(float(s)))       # double sqrt(), stored as float
        for k in range(depth):
            v = f32(np.int64(codes[r, k]) - zero)
            t = f32(0.0) if norm == 0 else f32(v / norm)
            a = float(f32(f32(t + f32(1.0)) * f32(127.5)))
            if a != a or math.isinf(a):
                q = f2i(a)
            else:                               # roundf: half away from zero
                q = f2i(math.copysign(math.floor(abs(a) + 0.5), a))
            out[r, k] = sat_u8(q)


@jit
def mean_requant(sums, adj, lo, hi, shift, out_zero, out):  # pragma: no cover
    sh = min(shift, 31)
    bias = 0 if shift > 31 else (1 << shift) >> 1
    for i in range(sums.size):
        s = min(max(np.int64(sums[i]) - adj, -2147483648), 2147483647)
        x = ((((s * lo) >> 16) + s * hi) >> 14) + 1 >> 1
        x = min(max(x, -2147483648), 2147483647)
        x = min(max(x + bias, -2147483648), 2147483647) >> sh
        x = min(max(x + out_zero, -2147483648), 2147483647)
        x = ((x + 32768) & 0xFFFF) - 32768
        out[i] = sat_u8(x)


@jit
def sat16(v):  # pragma: no cover - compiled
    return -32768 if v < -32768 else (32767 if v > 32767 else v)


@jit
def mpy_rnd(a, b):  # pragma: no cover - compiled
    # vmpy(Vu.h, Vv.h):<<1:rnd:sat (softmax_hvx.mpy_rnd)
    return sat16(min(a * b * 2 + 0x8000, 2147483647) >> 16)


@jit
def recip16(d, rcp):  # pragma: no cover - compiled
    # hvx_recip16_inline(d, 10) (softmax_hvx.recip16); rcp: the c2, c1, c0 segment rows
    d4 = (d << 2) & 0xFFFF
    seg = d4 >> 14
    p = rcp[0, seg]
    p = sat16((p * d4 - (rcp[1, seg] << 15)) >> 16)        # vmps
    p = sat16((p * d4 + (rcp[2, seg] << 15)) >> 16)        # vmpa
    x0 = sat16(p + p)
    pd = sat16(mpy_rnd(d, x0) - (1 << 14))
    return sat16(x0 - mpy_rnd(sat16(pd + pd), x0))


@jit
def to_u8(v):  # pragma: no cover - compiled
    # vasr(w, w, 12):sat to halfwords, then vasr(h, h, 6):rnd:sat to bytes
    return sat_u8((sat16(v >> 12) + 32) >> 6)


@jit
def softmax_hvx_rows(codes, real, pow32, m16, accshift, rcp, out):  # pragma: no cover
    # softmax_hvx.softmax_hvx row by row: the maximum and the wrapping sum over the first
    # ``real`` lanes, the reciprocal and shift, then every lane from its distance below the
    # maximum; lanes 2, 3 of each four multiply by the low halfword of 0x10000 >> rs
    rows, lanes = codes.shape
    for r in range(rows):
        top = 0
        for i in range(real):
            top = max(top, np.int64(codes[r, i]))
        total = 0
        for i in range(real):
            total += pow32[top - min(np.int64(codes[r, i]), top)]
        total = ((total + 2147483648) & 0xFFFFFFFF) - 2147483648          # vadd(w) wraps
        mag = ~total if total < 0 else total
        bits = 0
        while mag:
            mag >>= 1
            bits += 1
        norm = 31 - bits                                                    # vnormamt
        top16 = ((((total << norm) + 2147483648) & 0xFFFFFFFF) - 2147483648) >> 16
        rm = mpy_rnd(recip16(top16, rcp), 255 << 7)
        rs = max(accshift + 3 - norm, 0)
        factor = (0x10000 >> rs) & 0xFFFF if rs < 32 else 0
        plain = 1 <= rs <= 16
        for i in range(lanes):
            m = m16[top - min(np.int64(codes[r, i]), top)]
            if plain or i & 3 < 2:
                out[r, i] = to_u8((m * rm) >> rs)
            else:
                out[r, i] = to_u8((m * rm * factor) >> 16)


@jit
def sum_hw(codes, sums):  # pragma: no cover - compiled
    # QuantizedMean_8 over height and width: exact sums per (batch, depth) into sums (B, D),
    # zeroed; codes C-contiguous. An int32 row of sums (LLVM vectorises its adds) while
    # 255 * pixels fits one, int64 beyond.
    batches, height, width, depth = codes.shape
    pixels = height * width
    flat = codes.reshape(batches, pixels, depth)
    for b in range(batches):
        if pixels < 8388608:
            acc = np.zeros(depth, np.int32)
            for p in range(pixels):
                px = flat[b, p]
                for d in range(depth):
                    acc[d] += np.int32(px[d])
            for d in range(depth):
                sums[b, d] = acc[d]
        else:
            wide = sums[b]
            for p in range(pixels):
                px = flat[b, p]
                for d in range(depth):
                    wide[d] += np.int64(px[d])
