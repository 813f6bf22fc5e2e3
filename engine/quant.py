"""Quantization rules shared by the ops (quantized-ops spec §1).

All range arithmetic is float32, evaluated in the order the library writes it, because users
compare bytes and ranges with the device's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

f32 = np.float32
_CLOSE = f32(6.1035156e-05)        # 2**-14: a zero point this close to an integer is exact
_CLOSE_HI = f32(0.999938965)


def div255(x: float) -> np.float32:
    """``flt_div_255``: on Hexagon its fused form equals the correctly rounded x / 255 (§0)."""
    return f32(x) / f32(255.0)


def roundf(x: npt.ArrayLike) -> npt.NDArray:
    """C ``roundf``: nearest integer, ties away from zero."""
    a = np.asarray(x)
    return np.sign(a) * np.floor(np.abs(a) + 0.5)


def roundf_i32(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """The library's ``roundf_i32``: add copysign(0.5, x) in float32, then truncate (§0)."""
    a = np.asarray(x, dtype=f32)
    s = (a + np.copysign(f32(0.5), a)).astype(f32)
    return np.trunc(s).astype(np.int64)


@dataclass(frozen=True, slots=True)
class QuantRange:
    """A quint8 range [min, max]: code q stands for min + q * (max - min) / 255 (§1.1)."""

    min: float
    max: float

    @property
    def stepsize(self) -> float:
        return float(div255(f32(self.max) - f32(self.min)))

    @property
    def zero_code(self) -> int:
        """The code that stands for 0.0 (``get_qu8_level_size_zero``, rule ZB of §1.4)."""
        return zero_code_zb(self.min, self.max)

    @property
    def zero_exact(self) -> bool:
        """Whether 0.0 is exactly representable: the zero point is an integer code in 0..255."""
        if not self.min <= 0.0 <= self.max or self.max <= self.min:
            return False
        z = f32(-f32(self.min)) * (f32(255.0) / (f32(self.max) - f32(self.min)))
        frac = z - np.floor(z)
        return bool(frac <= _CLOSE or frac >= _CLOSE_HI)

    def quantize(self, values: npt.ArrayLike) -> npt.NDArray[np.uint8]:
        return quantize_u8(values, self.min, self.max)

    def dequantize(self, codes: npt.ArrayLike) -> npt.NDArray[np.float32]:
        return dequantize_u8(codes, self.min, self.max)


def zero_code_za(mn: float, mx: float, *, saturate: bool = True) -> int:
    """``quantize_uint8(0, mn, mx)``: the zero code that Relu, MatMul and BiasAdd use (§1.4)."""
    r = max(f32(1e-18), f32(f32(mx) - f32(mn)))
    k = f32(f32(255.0) / r)
    z = int(roundf(f32(f32(0.0 - f32(mn)) * k)))
    return min(255, max(0, z)) if saturate else z


def zero_code_zb(mn: float, mx: float) -> int:
    """``get_qu8_level_size_zero``: the zero code of the add/sub/mul engines (§1.4, ZB)."""
    s = div255(max(f32(1e-18), f32(f32(mx) - f32(mn))))
    return int(min(255, max(0, int(roundf_i32(f32(-f32(mn)) / s)))))


def quantize_u8(values: npt.ArrayLike, mn: float, mx: float) -> npt.NDArray[np.uint8]:
    """Reference quantizer: round((x - min) * 255 / (max - min)), saturated to 0..255."""
    r = max(f32(1e-18), f32(f32(mx) - f32(mn)))
    k = f32(f32(255.0) / r)
    q = roundf((np.asarray(values, f32) - f32(mn)) * k)
    return np.clip(q, 0, 255).astype(np.uint8)


def dequantize_u8(codes: npt.ArrayLike, mn: float, mx: float) -> npt.NDArray[np.float32]:
    """min + q * step, in float32."""
    step = div255(f32(mx) - f32(mn))
    return (f32(mn) + np.asarray(codes, np.float32) * step).astype(f32)


def qint32_stepsize(mn: float, mx: float) -> np.float32:
    """Step of a qint32 range: (max - min) / 2**32 (§1.2)."""
    return f32(f32(f32(mx) - f32(mn)) * f32(2.0 ** -32))


def adjust_range(in_min: float, in_max: float) -> tuple[float, float]:
    """R1, ``quantize_adjust_range``: include 0 and nudge one end so 0.0 is an exact code."""
    mn, mx = min(f32(0.0), f32(in_min)), max(f32(0.0), f32(in_max))
    rng = max(f32(1e-18), f32(mx - mn))
    k = f32(f32(255.0) / rng)
    if mn < 0:
        z = f32(-mn) * k
        zi = np.floor(z)
        zf = f32(z - zi)
        if not (zf <= _CLOSE or zf >= _CLOSE_HI):
            if zi > 0 and (zi > 253 or f32((zf - f32(1.0)) * mn) >= f32(zf * mx)):
                rng = f32(f32(f32(-255.0) * mn) / f32(zi))
                mx = f32(mn + rng)
            else:
                mn = f32(f32(mx * f32(zi + 1)) / f32(zi - 254))
    return float(mn), float(mx)


def adjust_range_for_zero(mn: float, mx: float) -> tuple[float, float]:
    """R2, ``adjust_minmax_for_zero``: the same nudge, as the HVX quantizers evaluate it.

    Callers make sure that mn <= 0 <= mx first.
    """
    mn, mx = f32(mn), f32(mx)
    dif = f32(mx - mn)
    if not dif >= f32(1e-6) or mn == 0:
        return float(mn), float(mx)
    z = f32(f32(f32(-255.0) * mn) / dif)
    zi = np.floor(z)
    zf = f32(z - zi)
    if zf <= _CLOSE or zf >= _CLOSE_HI:
        return float(mn), float(mx)
    if zi > 0 and (zi > 253 or f32((zf - f32(1.0)) * mn) >= f32(zf * mx)):
        mx = f32(mn - f32(f32(f32(255.0) * mn) / f32(zi)))
    else:
        mn = f32(f32(mx * f32(zi + 1)) / f32(zi - 254))
    return float(mn), float(mx)
