"""C ``printf`` conversions as hexagon_nn's log lines render them (glibc behaviour assumed).

The DSP's C library was not checked (graph spec §7): NaN and infinity follow glibc, which
prints ``-nan`` for a NaN whose sign bit is set. Floats are promoted to double by the C
varargs call, so every float32 value prints exactly.
"""

from __future__ import annotations

import math

import numpy as np


def c_f(value: float | np.floating) -> str:
    """``%f``: six decimals; ``inf``, ``-inf``, ``nan`` and ``-nan`` as glibc prints them."""
    x = float(value)
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"{x:f}"


def c_a(value: float | np.floating) -> str:
    """``%a`` of a float promoted to double, as glibc prints it (``0x1.8p+0``, ``0x0p+0``)."""
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        return c_f(x).replace(".000000", "")
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0.0:
        return sign + "0x0p+0"
    mantissa, exponent = abs(x).hex()[2:].split("p")
    lead, _, frac = mantissa.partition(".")
    frac = frac.rstrip("0")
    return f"{sign}0x{lead}{'.' + frac if frac else ''}p{exponent}"


def c_x(value: int, width: int) -> str:
    """``%0<width>x`` of a value passed as a 32-bit int (two's complement for negatives)."""
    return f"{int(value) & 0xFFFFFFFF:0{width}x}"


def c_ptr(node_id: int) -> str:
    """Stand-in for a ``%p`` host pointer, which no simulator can reproduce (§5.1)."""
    return f"<node 0x{node_id:x}>"
