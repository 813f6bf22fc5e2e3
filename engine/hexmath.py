"""Hexagon's scalar arithmetic primitives, written once for every op family (quantized-ops
spec §0, §1.3-§1.5).

Everything here emulates a device primitive literally: float32 evaluation in the library's
order, Hexagon's float-to-int conversion, and the integer shifts and saturations of the HVX
code. :mod:`hexscope.engine.quant` has the range rules R1/R2; R3 lives here.

One float -> int convention for the whole project: truncate toward zero, saturate to int32,
and NaN -> -1 (``convert_sf2w`` as QEMU's Hexagon target models it; quantized-ops spec §23
item 4 lists the conversion of NaN and out-of-range values as unconfirmed on hardware).
Array functions take and return int64 arrays; the ``...1`` variants work on one value.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import numpy.typing as npt

f32 = np.float32
_CLOSE = f32(6.1035156e-05)        # 2**-14 (§1.5)
_CLOSE_HI = f32(0.999938965)
_I32_MIN, _I32_MAX = -(2 ** 31), 2 ** 31 - 1
_HALF = f32(0.5)
_R = TypeVar("_R")


def exact_memo(fn: Callable[..., _R], size: int = 4096) -> Callable[..., _R]:
    """``fn`` of scalar numbers (float, np.float32, int below 2**53), memoised on the exact
    bits of its arguments as doubles, so repeated runs skip the scalar range maths.

    The key is the arguments packed as float64: every float32 and such int is exact there,
    -0.0 and 0.0 differ, and NaNs with other payloads do not collide. ``fn`` must be pure
    and return immutable values (ints, bools, numpy scalars, tuples of them). The cache is
    cleared when it holds ``size`` entries (bounded memory; a miss only recomputes).
    """
    cache: dict[bytes, _R] = {}
    pack = struct.pack

    @functools.wraps(fn)
    def memoised(*args: float) -> _R:
        key = pack(f"<{len(args)}d", *args)
        try:
            return cache[key]
        except KeyError:
            pass
        # The device's float32 maths meets inf and NaN on degenerate ranges; kernels report
        # those themselves, so numpy's RuntimeWarnings would only be noise on the console.
        with np.errstate(all="ignore"):
            value = fn(*args)
        if len(cache) >= size:
            cache.clear()
        cache[key] = value
        return value

    memoised.cache_clear = cache.clear  # type: ignore[attr-defined]
    return memoised


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


#: The NaN that Hexagon's floating-point unit returns for an invalid operation (all bits set,
#: as QEMU's Hexagon target models it; unconfirmed on hardware). Bit patterns matter where a
#: step's mantissa and exponent are read as integers (hvx_do_dequantize).
HEXAGON_NAN = np.array(0xFFFFFFFF, np.uint32).view(np.float32)[()]


def div255(x: float) -> np.float32:
    """``flt_div_255`` (quantize.h): on Hexagon its fused form, x*c1 + (-c2*x), equals the
    correctly rounded x / 255 for finite x (§0); for an infinite x the two products are
    infinities of opposite signs, so the result is NaN (not inf as x / 255 would give)."""
    x = f32(x)
    if np.isinf(x):
        return HEXAGON_NAN
    return f32(x / f32(255.0))


def getexp(x: float) -> int:
    """``flt_getexp``: the biased exponent field minus 126 (the frexp exponent, §0)."""
    bits = int(np.asarray(f32(x)).view(np.uint32))
    return ((bits >> 23) & 0xFF) - 126


def fmaxf(a: float, b: float) -> np.float32:
    """C ``fmaxf``: float32 maximum; a NaN operand loses to the other one."""
    return f32(np.fmax(f32(a), f32(b)))


def fminf(a: float, b: float) -> np.float32:
    """C ``fminf``: float32 minimum; a NaN operand loses to the other one."""
    return f32(np.fmin(f32(a), f32(b)))


# --- zero codes (§1.4) --------------------------------------------------------------------------
def za_scaled(val: float, mn: float, mx: float) -> np.float32:
    """The float that rule ZA rounds: f32((val - min) * f32(255 / max(1e-18, max - min)))."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        r = max(f32(1e-18), f32(f32(mx) - f32(mn)))    # max() keeps 1e-18 for a NaN width
        k = f32(f32(255.0) / r)
        return f32(f32(f32(val) - f32(mn)) * k)


def quantize_uint8(val: float, mn: float, mx: float) -> int:
    """``quantize_uint8`` (rule ZA of §1.4 applied to ``val``): width floored at 1e-18."""
    return min(255, max(0, c_roundf_int1(za_scaled(val, mn, mx))))


def level_size_zero(mn: float, mx: float) -> tuple[int, np.float32]:
    """``get_qu8_level_size_zero`` (rule ZB of §1.4): (zero code, step = div255(max - min)).

    No floor on the width: the add/sub/mul engines (flat and d32) and Mul_8x8to8 use it as is.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        step = div255(f32(f32(mx) - f32(mn)))
        z = rndi1(f32(f32(-f32(mn)) / step))
    return min(255, max(0, z)), step


def level_size_zero_floored(mn: float, mx: float) -> tuple[int, np.float32]:
    """Dequantize's variant of rule ZB (§18): step = div255(fmaxf(1e-18, max - min)).

    ``fmaxf`` drops a NaN width, so a NaN range gives the step of 1e-18 too.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        step = div255(fmaxf(f32(1e-18), f32(f32(mx) - f32(mn))))
        z = rndi1(f32(f32(-f32(mn)) / step))
    return min(255, max(0, z)), step


# --- R3 (§1.5) ----------------------------------------------------------------------------------
def adjust_with_constraints(mn: float, mx: float, c: int) -> tuple[np.float32, np.float32]:
    """R3, ``adjust_minmax_for_zero_with_constraints`` (§1.5).

    ``c`` bit 0: min fixed; bit 1: max fixed. Returns the (possibly) nudged (min, max).
    """
    mn, mx = f32(mn), f32(mx)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
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
        move = _r3_decision(c & 3, z, zi, zr, mnk, mxk)
        if move == "both":
            adj = f32(f32(f32(z - zr) * dif) * f32(1.0 / 255.0))
            return f32(mn + adj), f32(mx + adj)
        if move in ("max_out", "max_nearest"):
            k = zi if move == "max_out" else zr
            return mn, f32(mn - f32(f32(f32(255.0) * mn) / k))
        k = f32(zi + f32(1.0)) if move == "min_out" else zr
        return f32(f32(mx * k) / f32(k - f32(255.0))), mx


def _r3_decision(c: int, z: np.float32, zi: np.float32, zr: np.float32, mnk: np.float32,
                 mxk: np.float32) -> str:
    """Which end R3 moves, and to which zero code (the table of §1.5)."""
    if c == 0:
        return "max_out" if zi >= 1 and (zi >= 254 or mnk >= mxk) else "min_out"
    if c == 1:
        far = zi >= 1 and (z >= f32(192.25) or f32(mnk * f32(8.0)) > mxk)
        return "max_out" if far else "min_nearest"
    if c == 2:
        far = z >= f32(63.75) and (zi >= 254 or mnk > f32(mxk * f32(8.0)))
        return "max_nearest" if far else "min_out"
    if z <= f32(63.75):
        return "min_nearest"
    return "max_nearest" if z >= f32(192.25) else "both"
