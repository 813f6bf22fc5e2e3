"""Hexagon's integer shifts and wraps on whole int64 arrays (each element a 32-bit value).

C leaves a shift by a negative count or past the width, and a signed overflow, undefined;
the Hexagon instructions the compiler lowers them to do not. The register-count shifts
(``asr``/``asl``/``lsl(Rs, Rt)``) read the count as a signed 7-bit number and shift the
other way for a negative one, working on the 64-bit sign extension and keeping the low 32
bits; HVX's ``vasr(Vu.w, Vv.w)`` does the same with a signed 6-bit count; sums and products
keep their low 32 bits (Hexagon V66 Programmer's Reference Manual, "shift by register").
"""

from __future__ import annotations

import numpy as np

I64 = np.int64


def wrap32(v: np.ndarray) -> np.ndarray:
    """The low 32 bits of an int64 array, as signed words."""
    return ((np.asarray(v, I64) + 2**31) & 0xFFFFFFFF) - 2**31


def sat16(v: np.ndarray) -> np.ndarray:
    return np.clip(v, -32768, 32767)


def _count(n: np.ndarray | int, bits: int) -> np.ndarray:
    half = 1 << (bits - 1)
    return ((np.asarray(n, I64) & (2 * half - 1)) ^ half) - half


def _shift(v: np.ndarray, c: np.ndarray, arith: bool = True) -> np.ndarray:
    """v shifted left by c (right by -c), 64-bit, low 32 bits kept."""
    v = np.asarray(v, I64)
    src = v if arith else v & 0xFFFFFFFF
    right = src >> np.clip(-c, 0, 63)
    left = v << np.clip(c, 0, 32)             # 32 and more leave nothing in the low word
    return wrap32(np.where(c >= 0, left, right))


def asr(v: np.ndarray, n: np.ndarray | int) -> np.ndarray:
    """``asr(Rs, Rt)``: right by sxt7(Rt), left for a negative count."""
    return _shift(v, -_count(n, 7))


def asl(v: np.ndarray, n: np.ndarray | int) -> np.ndarray:
    """``asl(Rs, Rt)``: left by sxt7(Rt), arithmetic right for a negative count."""
    return _shift(v, _count(n, 7))


def lsl(v: np.ndarray, n: np.ndarray | int) -> np.ndarray:
    """``lsl(Rs, Rt)``: left by sxt7(Rt), logical right for a negative count."""
    return _shift(v, _count(n, 7), arith=False)


def vasr_w(v: np.ndarray, n: np.ndarray | int) -> np.ndarray:
    """HVX ``vasr(Vu.w, Vv.w)``: right by the low 6 bits of the count read as signed, left
    for a negative one."""
    return _shift(v, -_count(n, 6))


def vasl_w(v: np.ndarray, n: np.ndarray | int) -> np.ndarray:
    """HVX ``vasl(Vu.w, Vv.w)``: left by the low 6 bits of the count read as signed, right
    (arithmetic) for a negative one."""
    return _shift(v, _count(n, 6))
