"""The flat QuantizedSoftmax_8's two table paths on Hexagon (op_softmax_d32.c): depth 2
(``softmax_d2_flat_exec``, a 256-entry lookup on |d0 - d1|) and large depths
(``softmax_larged_flat_exec``, a per-row histogram dotted with a 256-entry exp table).

Each table is built in float32 as the Hexagon build computes it, then applied to whole arrays
(a histogram per row with one ``bincount``, the fixed-point reciprocal per row, a gather per
element): no loop over elements. Read from nnlib for facts only.
"""

from __future__ import annotations

import functools

import numpy as np

from hexscope.engine.hexmath import div255
from hexscope.engine.ops.kernels.hexagon_int import sat16, vasl_w, wrap32
from hexscope.engine.ops.kernels.softmax_hvx import mpy_rnd, recip16

f32 = np.float32
I64 = np.int64
#: expf_approx's constants (op_softmax_d32.c, the same as op_softmax.c's)
_TO_FRAC = f32(16384.0 / 0.69314718056)
_C1, _C2, _C3 = f32(0.69051585), f32(0.23793659), f32(0.07154756)
_FRAC_STEP = f32(1.0 / 16384.0)


def sffma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 a*b + c with one rounding (Hexagon's ``sffma``, which clang's contraction
    emits for ``c + a*b``): a*b is exact in float64; the sum's float64 rounding error is
    recovered (TwoSum) and nudges a sum that sits on a float32 midpoint, so the final
    float32 rounding is the exact one."""
    with np.errstate(all="ignore"):
        p = np.asarray(a, f32).astype(np.float64) * np.asarray(b, f32).astype(np.float64)
        q = np.asarray(c, f32).astype(np.float64)
        s = p + q
        bb = s - p
        err = (p - (s - bb)) + (q - bb)
        nudge = np.where(err > 0, np.inf, -np.inf)
        s = np.where((err != 0) & np.isfinite(s), np.nextafter(s, nudge), s)
        return s.astype(f32)


def _round_i32(v: np.ndarray) -> np.ndarray:
    """``roundf_i32`` as the Hexagon build computes it: v + copysign(0.5, v) in float32, then
    ``convert_sf2w:chop`` (truncates, saturates to int32; NaN gives -1 as QEMU models it)."""
    with np.errstate(all="ignore"):
        t = (np.asarray(v, f32) + np.copysign(f32(0.5), v).astype(f32)).astype(f32)
        t64 = np.nan_to_num(np.trunc(t.astype(np.float64)), nan=-1.0)
        return np.clip(t64, -2.0 ** 31, 2.0 ** 31 - 1).astype(I64)


def _expf_approx(x: np.ndarray) -> np.ndarray:
    """op_softmax_d32.c ``expf_approx`` with the Hexagon build's fused multiply-adds (the
    cubic's three ``c + xf * (...)`` steps)."""
    with np.errstate(all="ignore"):
        frac = _round_i32((np.asarray(x, f32) * _TO_FRAC).astype(f32))
        xf = ((frac & 0x3FFF).astype(f32) * _FRAC_STEP).astype(f32)
        poly = sffma(xf, _C3, _C2)
        poly = sffma(xf, poly, _C1)
        exp0 = sffma(xf, poly, f32(1.0))
        bits = (np.clip((frac >> 14) + 127, 0, 255) << 23).astype(np.uint32)
        return (bits.view(f32) * exp0).astype(f32)


def d2_table(fullscale: np.float32) -> np.ndarray:
    """:func:`d2_table_of` cached per fullscale (nnlib keeps it in the node's cache too)."""
    return _d2_cached(float(fullscale))


@functools.lru_cache(maxsize=64)
def _d2_cached(fullscale: float) -> np.ndarray:
    t = d2_table_of(f32(fullscale))
    t.flags.writeable = False
    return t


def d2_table_of(fullscale: np.float32) -> np.ndarray:
    """``fill_d2_lookup_table``: entry i (0..255) is round(255 / (1 + expf_approx(-k i)))
    with k = fullscale / 255, the output for the larger of the two codes when they are i
    apart; entry 0 is 128, and from the first 255 on every entry is 255 (the C stops)."""
    k = div255(fullscale)
    i = np.arange(1, 256, dtype=f32)
    with np.errstate(all="ignore"):
        e = _expf_approx((-k * i).astype(f32))
        vals = _round_i32((f32(255.0) / (f32(1.0) + e).astype(f32)).astype(f32))
    vals = vals & 0xFF                                   # stored as uint8
    hit = np.flatnonzero(vals == 255)
    if hit.size:
        vals[hit[0]:] = 255
    return np.concatenate(([128], vals)).astype(np.uint8)


def softmax_d2(codes: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``process_softmax_128xd2`` on pairs (..., 2): the first output is table[|d0 - d1|]
    when d0 >= d1, else 255 minus it; the second is 255 minus the first (so equal codes
    give 128 and 127)."""
    c = np.asarray(codes, np.int16)
    diff = c[..., 0] - c[..., 1]
    first = table[np.abs(diff)]
    first = np.where(diff < 0, 255 - first, first).astype(np.uint8)
    return np.stack([first, 255 - first], axis=-1).astype(np.uint8)


def larged_tables(fullscale: np.float32) -> tuple[np.ndarray, np.ndarray]:
    """:func:`larged_tables_of` cached per fullscale."""
    return _larged_cached(float(fullscale))


@functools.lru_cache(maxsize=64)
def _larged_cached(fullscale: float) -> tuple[np.ndarray, np.ndarray]:
    y16, y32 = larged_tables_of(f32(fullscale))
    y16.flags.writeable = y32.flags.writeable = False
    return y16, y32


def larged_tables_of(fullscale: np.float32) -> tuple[np.ndarray, np.ndarray]:
    """``fill_largedepth_lookup``: y[i] = exp(step (i - 255)) for i = 0..255 with step =
    fullscale / 255 (expf at every 4th i, the three after it from expm1f(step) and
    expm1f(2 step) with fused multiply-adds), as (y16, y32): the 16-bit terms (y 255 128,
    rounded, the low 16 bits as a signed halfword) and the 32-bit ones (y 2**32 + 0.5
    truncated; 0xFFFFFFFF from y >= 1); entry 255 is 0x7F80 and 0xFFFFFFFF. expf and expm1f
    are taken correctly rounded (the oracle's libm; the DSP's own is another one)."""
    step = div255(fullscale)
    with np.errstate(all="ignore"):
        e2 = f32(np.expm1(np.float64(f32(np.float64(step) * 2.0))))
        e1 = f32(np.expm1(np.float64(step)))
        base = np.arange(0, 256, 4, dtype=I64)
        y0 = np.exp((step * (base - 255).astype(f32)).astype(f32).astype(np.float64)).astype(f32)
        y1 = sffma(y0, e1, y0)
        y2 = sffma(y0, e2, y0)
        y3 = sffma(y1, e2, y1)
        y = np.stack([y0, y1, y2, y3], axis=-1).reshape(-1)
        y16 = _round_i32((y * f32(255 * 128)).astype(f32)) & 0xFFFF
        low = (f32(0.5) + (y * f32(2.0 ** 32)).astype(f32)).astype(f32).astype(np.float64)
        # (uint32) is convert_sf2uw:chop: truncates, saturates (NaN: all ones, as QEMU)
        low = np.clip(np.nan_to_num(np.trunc(low), nan=2.0 ** 32 - 1), 0, 2.0 ** 32 - 1)
        y32 = np.where(y >= f32(1.0), 0xFFFFFFFF, low).astype(I64)
    y16[255], y32[255] = 0x7F80, 0xFFFFFFFF
    return ((y16 ^ 0x8000) - 0x8000), y32


def softmax_larged(rows: np.ndarray, y16: np.ndarray, y32: np.ndarray) -> np.ndarray:
    """``softmax_larged_batchchunk`` on rows (n, depth): per row the code histogram (16-bit
    counts) and its largest code m; the 48-bit dot product of the counts with y32 aligned
    so that m meets entry 255, kept as its middle 32 bits (hi sum + lo sum >> 16, words that
    wrap); its reciprocal (``hvx_recip16_inline`` on the normalised top 15 bits, shifted back
    and rounded to 16 bits); then a 192-entry table of the y16[64..255] scaled by it and
    rounded to u8, indexed by q - (m - 191): codes more than 191 below m give 0."""
    n, depth = rows.shape
    flat = rows.astype(np.intp) + (np.arange(n, dtype=np.intp) * 256)[:, None]
    hist = np.minimum(np.bincount(flat.reshape(-1), minlength=n * 256).reshape(n, 256), 0xFFFF)
    top = 255 - np.argmax(hist[:, ::-1] > 0, axis=1)                 # largest non-empty bin
    # entry of the exp table for bin j: j + 255 - m (bins above m are empty)
    entry = np.arange(256)[None, :] + (255 - top)[:, None]
    live = entry <= 255
    y = np.where(live, y32[np.minimum(entry, 255)], 0)
    lo = wrap32((hist * (y & 0xFFFF)).sum(axis=1)) & 0xFFFFFFFF
    hi = wrap32((hist * (y >> 16)).sum(axis=1))
    dot = wrap32(hi + (lo >> 16)) & 0xFFFFFFFF
    shc = 32 - np.frexp(dot.astype(np.float64))[1]                   # cl0 of the word
    norm = vasl_w(dot, shc) & 0xFFFFFFFF
    rcp = recip16((norm >> 16) >> 1) & 0xFFFF                        # vavg(uh, 0): >> 1
    rcp = vasl_w(rcp, shc)
    rcp = sat16((rcp + (1 << 14)) >> 15)                             # vasr(w, w, 15):rnd:sat
    scaled = mpy_rnd(y16[None, 64:], rcp[:, None])                   # (n, 192)
    lut = np.clip((scaled + 64) >> 7, 0, 255).astype(np.uint8)       # vasr(h, h, 7):rnd:sat
    idx = (rows.astype(np.intp) - (top[:, None] - 191)) & 0xFF
    lut = np.concatenate([lut, np.zeros((n, 64), np.uint8)], axis=1)  # 192..255: vlut32 0
    return lut[np.arange(n)[:, None], idx]
