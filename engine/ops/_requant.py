"""Fixed-point and float32 helpers shared by the flat quantized kernels (quantized-ops spec §0, §1).

Everything here emulates a device primitive literally: float32 evaluation in the library's
order, Hexagon's float-to-int conversion, and the integer shifts and saturations of the HVX
code. :mod:`hexscope.engine.quant` has the range rules R1/R2; R3 lives here.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

f32 = np.float32
_CLOSE = f32(6.1035156e-05)        # 2**-14 (§1.5)
_CLOSE_HI = f32(0.999938965)
_I32_MIN, _I32_MAX = -(2 ** 31), 2 ** 31 - 1
_HALF = f32(0.5)


def f2i(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """C float -> int32 on Hexagon (``convert_sf2w:chop``): truncate, saturate, NaN -> -1.

    Matches device: the saturation and the NaN result -1 are the Hexagon conversion as QEMU's
    Hexagon target models it (spec §23 item 4 lists it as unconfirmed on hardware).
    """
    a = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        t = np.trunc(np.clip(np.nan_to_num(a, nan=-1.0), _I32_MIN, _I32_MAX))
    return t.astype(np.int64)


def rndi(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``roundf_i32``: s = f32(x + copysign(0.5, x)), then the float -> int conversion (§0)."""
    a = np.asarray(x, dtype=f32)
    with np.errstate(invalid="ignore", over="ignore"):
        s = (a + np.copysign(f32(0.5), a)).astype(f32)
    return f2i(s)


def rndi1(x: float) -> int:
    """:func:`rndi` of one value, as a Python int (scalar arithmetic, same float32 steps)."""
    a = f32(x)
    # float32 scalar arithmetic as in rndi; a finite a + 0.5 never overflows, so no warnings.
    return f2i1(a + np.copysign(_HALF, a))


def f2i1(x: float) -> int:
    """:func:`f2i` of one value, as a Python int: truncate, saturate, NaN -> -1."""
    v = float(x)
    if v != v:
        return -1
    if v >= _I32_MAX:
        return _I32_MAX
    if v <= _I32_MIN:
        return _I32_MIN
    return int(v)


def c_roundf_int1(x: float) -> int:
    """:func:`c_roundf_int` of one value, as a Python int."""
    a = float(x)
    if a != a or math.isinf(a):
        return f2i1(a)
    r = math.floor(abs(a) + 0.5)        # float64, as c_roundf_int evaluates it
    return f2i1(r if a > 0 else -r)


def c_roundf_int(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``int32_t v = roundf(x)``: exact round half away from zero, then the conversion."""
    a = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        r = np.sign(a) * np.floor(np.abs(a) + 0.5)
    return f2i(r)


def sat_u8(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    return np.clip(np.asarray(x, dtype=np.int64), 0, 255)


def sat_i16(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    return np.clip(np.asarray(x, dtype=np.int64), -32768, 32767)


def sat_i32(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    return np.clip(np.asarray(x, dtype=np.int64), _I32_MIN, _I32_MAX)


def wrap_i16(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Two's-complement wrap to int16 (a 16-bit lane add without saturation)."""
    return ((np.asarray(x, dtype=np.int64) + 32768) & 0xFFFF) - 32768


def wrap_i32(x: npt.ArrayLike) -> npt.NDArray[np.int64]:
    return ((np.asarray(x, dtype=np.int64) + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31


def div255(x: float) -> np.float32:
    """``flt_div_255``: on Hexagon its fused form equals the correctly rounded x / 255 (§0)."""
    return f32(f32(x) / f32(255.0))


def getexp(x: float) -> int:
    """``flt_getexp``: the biased exponent field minus 126 (the frexp exponent, §0)."""
    bits = int(np.asarray(f32(x)).view(np.uint32))
    return ((bits >> 23) & 0xFF) - 126


def quantize_uint8(val: float, mn: float, mx: float) -> int:
    """``quantize_uint8`` (rule ZA of §1.4 applied to ``val``): width floored at 1e-18."""
    r = max(f32(1e-18), f32(f32(mx) - f32(mn)))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        k = f32(f32(255.0) / r)
        v = f32(f32(f32(val) - f32(mn)) * k)
    return min(255, max(0, c_roundf_int1(v)))


def level_size_zero(mn: float, mx: float) -> tuple[int, np.float32]:
    """``get_qu8_level_size_zero`` (rule ZB of §1.4): (zero code, step = div255(max - min))."""
    step = div255(f32(f32(mx) - f32(mn)))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        z = rndi(f32(-f32(mn)) / step)
    return int(sat_u8(z)), step


def adjust_with_constraints(mn: float, mx: float, c: int) -> tuple[np.float32, np.float32]:
    """R3, ``adjust_minmax_for_zero_with_constraints`` (§1.5).

    ``c`` bit 0: min fixed; bit 1: max fixed. Returns the (possibly) nudged (min, max).
    """
    mn, mx = f32(mn), f32(mx)
    dif = f32(mx - mn)
    if not dif > 0 or mn == 0:
        return mn, mx
    z = f32(f32(f32(-255.0) * mn) / dif)
    zi = f32(np.floor(z))
    zf = f32(z - zi)
    if zf <= _CLOSE or zf >= _CLOSE_HI:
        return mn, mx
    mnk, mxk = f32((zf - f32(1.0)) * mn), f32(zf * mx)
    zr = f32(zi + f32(1.0)) if zf >= f32(0.5) else zi
    c &= 3
    if c == 3:
        if z <= f32(63.75):
            return _move_min(mn, mx, zr)
        if z >= f32(192.25):
            return _move_max(mn, mx, zr)
        adj = f32(f32(f32(z - zr) * dif) * f32(1.0 / 255.0))
        return f32(mn + adj), f32(mx + adj)
    if c == 0:
        if zi >= 1 and (zi >= 254 or mnk >= mxk):
            return _move_max(mn, mx, zi)
        return _move_min(mn, mx, f32(zi + f32(1.0)))
    if c == 1:
        if zi >= 1 and (z >= f32(192.25) or f32(mnk * f32(8.0)) > mxk):
            return _move_max(mn, mx, zi)
        return _move_min(mn, mx, zr)
    if z >= f32(63.75) and (zi >= 254 or mnk > f32(mxk * f32(8.0))):
        return _move_max(mn, mx, zr)
    return _move_min(mn, mx, f32(zi + f32(1.0)))


def _move_max(mn: np.float32, mx: np.float32, zi: np.float32) -> tuple[np.float32, np.float32]:
    return mn, f32(mn - f32(f32(f32(255.0) * mn) / zi))


def _move_min(mn: np.float32, mx: np.float32, zr: np.float32) -> tuple[np.float32, np.float32]:
    return f32(f32(mx * zr) / f32(zr - f32(255.0))), mx
