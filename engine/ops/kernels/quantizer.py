"""Bit-level building blocks of hexagon_nn's float <-> quint8 kernels (quantized-ops spec §17-§21).

The plain Quantize/AutoQuantize ops do not round in float: they run an HVX fixed-point
quantizer on the float bit fields (§17.2). Dequantize builds its float results from an exact
integer product rounded half up (§18). Both are emulated here with integer numpy arithmetic so
that every code and every float bit matches the device.

Float -> int conversions, rounding and saturation come from `engine/hexmath.py` (Hexagon's
``convert_sf2w``: toward zero, saturating, NaN -> -1; unconfirmed on hardware, §23 item 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hexscope.engine.dtypes import F32Array, U8Array
from hexscope.engine.hexmath import rndi, sat_u8, wrap_i32
from hexscope.engine.quant import adjust_range_for_zero

F32 = np.float32
_HIDDEN = 1 << 23
_MANT = _HIDDEN - 1


def f32_bits(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """The IEEE binary32 bit patterns of ``x`` as non-negative int64."""
    a = np.asarray(x, dtype=F32)
    return np.ascontiguousarray(a).view(np.uint32).astype(np.int64).reshape(a.shape)


def scalar_bits(x: float) -> int:
    """The bit pattern of one float32."""
    return int(np.array(x, dtype=F32).view(np.uint32))


def bits_f32(bits: npt.ArrayLike) -> F32Array:
    """Floats from 32-bit patterns (any integer array; only the low 32 bits count)."""
    word = (np.asarray(bits, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)
    return word.view(F32)


# The HVX fixed-point quantizer (§17.2) ------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HvxQuantParams:
    """``struct hvx_quant_parms``: the adjusted range and the fixed-point constants."""

    minval: np.float32
    maxval: np.float32
    min_offset: int
    scaling: int
    common_exp: int


def hvx_quant_params(neg_min: float, max_: float) -> HvxQuantParams | None:
    """``find_scaling_for_hvx_quant`` from {-min, max}; None if either is inf or NaN."""
    a, b = F32(neg_min), F32(max_)
    if not (np.isfinite(a) and np.isfinite(b)):
        return None
    minv = F32(-a)
    maxv = np.fmax(F32(minv + F32(1e-18)), b)
    if minv < 0:
        # matches device: only a negative min gets the zero nudge (R2); min > 0 passes as is.
        lo, hi = adjust_range_for_zero(minv, maxv)
        minv, maxv = F32(lo), F32(hi)
    with np.errstate(over="ignore"):
        range_f = F32(maxv - minv)
        scaled = F32(range_f * F32(1.003921569))
    rbits = scalar_bits(scaled)
    common_exp = ((rbits >> 23) & 0xFF) + 4
    mbits = scalar_bits(minv)
    # matches device: an unsigned shift count, so a min above the range scale gives 0
    shift = (common_exp - ((mbits >> 23) & 0xFF)) & 0xFFFFFFFF
    min_offset = 0 if shift >= 24 else ((mbits & _MANT) | _HIDDEN) >> shift
    range_mant = ((rbits & _MANT) | _HIDDEN) >> 4
    scaling = 0xFFFFFFFF // range_mant
    min_offset += range_mant >> 9
    return HvxQuantParams(minv, maxv, min_offset, scaling, common_exp)


def _vlsr(values: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    # Unconfirmed (§23 item 3): a negative count is read as a sign-extended 6-bit field that
    # shifts left, as Hexagon's bidirectional register shifts do.
    c = ((counts & 63) ^ 32) - 32
    right = values >> np.maximum(c, 0)
    left = (values << np.clip(-c, 0, 32)) & 0xFFFFFFFF
    return np.where(c >= 0, right, left)


def _offset_words(x: npt.ArrayLike, p: HvxQuantParams) -> npt.NDArray[np.int64]:
    """Per element: the denormalised magnitude, signed, plus min_offset (32-bit words)."""
    bits = f32_bits(x)
    exp = (bits >> 23) & 0xFF
    mant = (bits & _MANT) | _HIDDEN      # hidden bit even for 0/denormals: it shifts out
    shift = np.minimum(p.common_exp - exp, 31)
    mag = wrap_i32(_vlsr(mant, shift))
    signed = np.where(bits >= 2 ** 31, -mag, mag)
    return wrap_i32(signed + p.min_offset)


def hvx_quantize(x: npt.ArrayLike, p: HvxQuantParams) -> U8Array:
    """``quantize_floats_to_8b_asm``: (w * scaling) >> 16 (48-bit product), saturated to
    16 bits unsigned, top byte (§17.2). Out-of-range values saturate to 0 or 255."""
    w = (_offset_words(x, p) * p.scaling) >> 16
    return (np.clip(w, 0, 65535) >> 8).astype(np.uint8)


def hvx_quantize_d32(x: npt.ArrayLike, p: HvxQuantParams) -> U8Array:
    """The AutoQuantize_d32 vector routine: the product is kept modulo 2^32 and its top byte
    taken, with no saturation (§20). Equal to :func:`hvx_quantize` for in-range values."""
    w = (_offset_words(x, p) * p.scaling) & 0xFFFFFFFF
    return (w >> 24).astype(np.uint8)


def hvx_range(x: npt.ArrayLike) -> tuple[np.float32, np.float32]:
    """``find_minmax_of_floats_asm``: (-min(0, data min), max(0, data max)).

    Works on the bit patterns as signed integers, so any NaN wins and makes the result
    non-finite, and data without negative values give -min = +0.0 (§19).
    """
    bits = np.ascontiguousarray(x, dtype=F32).reshape(-1).view(np.int32).astype(np.int64)
    if bits.size == 0:
        return F32(0.0), F32(0.0)
    top = max(0, int(bits.max()))
    flipped = np.where(bits < 0, bits + 2 ** 31, bits - 2 ** 31)
    bottom = max(0, int(flipped.max()))
    return F32(bits_f32(bottom)), F32(bits_f32(top))


# Dequantize (§18) ----------------------------------------------------------------------------
DEQ_STEP_LIMIT = F32(2.0 ** 121)
DEQ_STEP_TINY = F32(2.0 ** -126)


def hvx_dequantize(q: npt.ArrayLike, zero: int, step: np.float32) -> F32Array:
    """``hvx_do_dequantize``: |q - z| times the 24-bit mantissa of ``step``, normalised and
    rounded half up to 24 bits, then packed with the step's exponent (§18).

    The sign and exponent are assembled in a 16-bit field, so an exponent overflow (steps
    near 2^121) carries into the sign exactly as the vector code does.
    """
    sbits = scalar_bits(step)
    scale = (sbits & _MANT) | _HIDDEN
    base_exp = ((sbits >> 23) & 0xFF) + 8
    d = np.asarray(q, dtype=np.int64) - zero
    prod = np.abs(d) * scale                                   # < 2^32, exact
    nbits = np.frexp(prod.astype(np.float64))[1].astype(np.int64)
    clz = 32 - nbits
    norm = (prod << np.where(prod > 0, clz, 0)) & 0xFFFFFFFF
    rounded = (norm + 0x80) & 0xFFFFFFFF
    carry = (rounded < 2 ** 31).astype(np.int64)               # all 25 top bits were ones
    mant = (rounded >> 8) & _MANT
    hi = (((d < 0).astype(np.int64) << 15) + ((base_exp - clz + carry) << 7)) & 0xFFFF
    word = np.where(d == 0, 0, (hi << 16) | mant)
    return bits_f32(word).reshape(np.shape(d))


# Reference-style quantizer used by QuantizeForTest_d32 (§21) ----------------------------------
def fortest_range(x: npt.ArrayLike) -> tuple[np.float32, np.float32]:
    """The range of QuantizeForTest_d32: fminf/fmaxf over the data (NaN skipped, inf kept),
    0 included, width at least 0.001, then R2 when min < 0."""
    flat = np.asarray(x, dtype=F32).reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):
        lo = np.fmin.reduce(flat) if flat.size else F32(0.0)
        hi = np.fmax.reduce(flat) if flat.size else F32(0.0)
        mn = np.fmin(F32(0.0), F32(lo))
        mx = np.fmax(np.fmax(F32(0.0), F32(hi)), F32(mn + F32(0.001)))
        if mn < 0:
            a, b = adjust_range_for_zero(mn, mx)
            mn, mx = F32(a), F32(b)
    return F32(mn), F32(mx)


def round_quantize(x: npt.ArrayLike, mn: np.float32, mx: np.float32) -> U8Array:
    """sat_u8(roundf_i32((x - min) * (255 / (max - min)))), all in float32."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        k = F32(F32(255.0) / F32(mx - mn))
        v = ((np.asarray(x, dtype=F32) - mn).astype(F32) * k).astype(F32)
    return sat_u8(rndi(v)).astype(np.uint8)


def requantized_float(codes: npt.ArrayLike, mn: np.float32, mx: np.float32) -> F32Array:
    """What each code means: f32(f32(q * f32((max - min) / 255)) + min) (§21 output 3)."""
    with np.errstate(invalid="ignore", over="ignore"):
        step = F32(F32(mx - mn) / F32(255.0))
        return ((np.asarray(codes, dtype=F32) * step).astype(F32) + mn).astype(F32)
