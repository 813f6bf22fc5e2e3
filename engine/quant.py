"""Quantization rules shared by the ops (quantized-ops spec §1).

All range arithmetic is float32, evaluated in the order the library writes it, because users
compare bytes and ranges with the device's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hexscope.engine.hexmath import div255, level_size_zero_floored

f32 = np.float32
_CLOSE = f32(6.1035156e-05)        # 2**-14: a zero point this close to an integer is exact
_CLOSE_HI = f32(0.999938965)


def roundf(x: npt.ArrayLike) -> npt.NDArray:
    """C ``roundf``: nearest integer, ties away from zero (as floats)."""
    a = np.asarray(x)
    return np.sign(a) * np.floor(np.abs(a) + 0.5)


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
        """The code that stands for 0.0 (rule ZB of §1.4, width floored so that a degenerate
        range still has a code)."""
        return level_size_zero_floored(self.min, self.max)[0]

    @property
    def zero_exact(self) -> bool:
        """Whether 0.0 is exactly representable: the zero point is an integer code in 0..255."""
        if not self.min <= 0.0 <= self.max or self.max <= self.min:
            return False
        if not (np.isfinite(self.min) and np.isfinite(self.max)):
            return False            # an infinite end has no step, so no exact code for 0.0
        z = f32(-f32(self.min)) * (f32(255.0) / (f32(self.max) - f32(self.min)))
        frac = z - np.floor(z)
        return bool(frac <= _CLOSE or frac >= _CLOSE_HI)

    def quantize(self, values: npt.ArrayLike) -> npt.NDArray[np.uint8]:
        return quantize_u8(values, self.min, self.max)

    def dequantize(self, codes: npt.ArrayLike) -> npt.NDArray[np.float32]:
        return dequantize_u8(codes, self.min, self.max)


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
        with np.errstate(invalid="ignore"):     # inf * 0 for an infinite min: NaN, as in C
            z = f32(-mn) * k
        zi = np.floor(z)
        zf = f32(z - zi)
        # Written as the C's test (zf > lo && zf < hi) so that a NaN zero point, from an
        # infinite min, leaves the range alone: quantize_adjust_range(-inf, x) keeps -inf.
        if _CLOSE < zf < _CLOSE_HI:
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
