"""QuantizedSoftmax_8_d32's HVX arithmetic, lane by lane (vectorised numpy).

nnlib's ``softmax_operate_hvx_function`` (op_softmax_d32.c) is not its plain C twin: on
Hexagon v65 and later it evaluates pow2 with ``pow2_v65_poly`` (a 4-segment quadratic
through ``vlut4`` / ``vmpa``) and the reciprocal of the sum with ``hvx_recip16_inline(.., 10)``
(hvx_mathops.h: a 4-segment quadratic and one Newton step), and its shifts are the vector
shifts, defined for every count. This module computes what those instructions compute, one
lane at a time, with each instruction's semantics as the Hexagon V66 HVX Programmer's
Reference Manual gives them (``vmpa``/``vmps`` with an unsigned multiplicand, the
bidirectional ``vasr`` whose count is the low 6 bits of a word read as signed, the
saturating narrowing shifts). Nothing here is copied from nnlib; the polynomial
coefficients are device constants (they are the function, not code).

All arithmetic is in int64 on whole arrays: one pass per instruction, no loop over lanes
(:func:`softmax_hvx_numpy`); :func:`softmax_hvx` runs the same steps as one compiled loop
per row (``normalize_defs.softmax_hvx_rows``) where the compiled kernels load.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from hexscope.engine.ops.kernels.compiled import read_only
from hexscope.engine.ops.kernels.hexagon_int import sat16, vasr_w, wrap32
from hexscope.engine.ops.kernels.normalize_loops import loops

I64 = np.int64

#: pow2_v65_poly's segment constants (op_softmax_d32.c:728-730; the vlut4 table and the two
#: vmpa tables, as unsigned halfwords, lowest segment first)
_POW2_C2 = np.array([0x10CC, 0x13FF, 0x17C7, 0x1C3E], I64)
_POW2_C1 = np.array([0x587C, 0x5538, 0x4D91, 0x4014], I64)
_POW2_C0 = np.array([0x8001, 0x806C, 0x825B, 0x8773], I64)
#: hvx_recip16_inline's 2nd-order 4-segment constants (hvx_mathops.h:348-350)
_RCP_C2 = np.array([0x2E12, 0x199B, 0x0F69, 0x09E2], I64)
_RCP_C1 = np.array([0x7D56, 0x6AB6, 0x5751, 0x472E], I64)
_RCP_C0 = np.array([0x8001, 0x7DE8, 0x794E, 0x736C], I64)
#: 255 << 7 (op_softmax_d32.c:1043): the reciprocal's scale to 255 / 256
_SCALE_255 = 255 << 7


def mpy_rnd(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """``vmpy(Vu.h, Vv.h):<<1:rnd:sat``: sat16(upper half of sat32(2ab + 0x8000))."""
    return sat16(np.minimum(a * b * 2 + 0x8000, 2**31 - 1) >> 16)


def _vmpa(acc: np.ndarray, x: np.ndarray, table: np.ndarray, sign: int = 1) -> np.ndarray:
    """``vmpa(Vx.h, Vu.uh, Rtt.uh):sat`` (``vmps`` with sign -1): the table entry picked by
    the top 2 bits of x, sat16((acc x +- entry << 15) >> 16)."""
    return sat16((acc * x + sign * (table[x >> 14] << 15)) >> 16)


def pow2_poly(frac: np.ndarray) -> np.ndarray:
    """``pow2_v65_poly``: pow2(-frac / 65536) with 15 fractional bits, frac in 0..0xFFFF."""
    vx = 0xFFFF - frac                    # vnot: the polynomial is built on 1 - frac
    p = _POW2_C2[vx >> 14]                # vlut4
    p = _vmpa(p, vx, _POW2_C1)
    return _vmpa(p, vx, _POW2_C0)


def recip16(d: np.ndarray) -> np.ndarray:
    """``hvx_recip16_inline(d, 10)`` on v65+: about 2**29 / d for d in 0x4000..0x7FFF (any
    halfword is accepted and computed as the instructions do)."""
    d4 = (d << 2) & 0xFFFF                # vasl by 2, as an unsigned halfword
    p = _RCP_C2[d4 >> 14]
    p = _vmpa(p, d4, _RCP_C1, sign=-1)
    p = _vmpa(p, d4, _RCP_C0)
    x0 = sat16(p + p)
    pd = sat16(mpy_rnd(d, x0) - (1 << 14))
    return sat16(x0 - mpy_rnd(sat16(pd + pd), x0))


def _normamt(s: np.ndarray) -> np.ndarray:
    """``vnormamt(Vu.w)``: the redundant sign bits of a word (31 for 0 and -1)."""
    mag = np.where(s < 0, ~s, s)          # 0 .. 2**31 - 1
    bits = np.frexp(mag.astype(np.float64))[1]      # bit length; 0 for 0 (exact below 2**53)
    return 31 - bits


def distances(codes: np.ndarray, real: int) -> np.ndarray:
    """Each lane's distance below its row's maximum over the first ``real`` lanes (0 for a
    lane above it, as ``vsub(Vu.ub, Vv.ub):sat`` gives), as indices."""
    x = np.asarray(codes, np.uint8)
    top = x[..., :real].max(axis=-1, keepdims=True)
    return np.subtract(top, np.minimum(x, top), dtype=np.intp)


def by_distance(dist: np.ndarray, values: np.ndarray,
                fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``fn(values[dist])`` lane by lane, where ``values`` is a 256-entry table and ``fn``
    may broadcast per-row parameters (shape (..., 1)). A row at least 256 lanes long gets
    ``fn`` once per distance (a (rows, 256) table) and gathers it; a shorter one gets it
    once per lane."""
    if dist.shape[-1] < 256:
        return fn(values[dist])
    table = fn(np.broadcast_to(values, dist.shape[:-1] + (256,)))
    rows = np.arange(dist[..., 0].size, dtype=np.intp).reshape(dist.shape[:-1] + (1,))
    return table.reshape(-1)[dist + rows * 256]


@functools.lru_cache(maxsize=256)
def _terms(betamul: int, rsh: int, accshift: int) -> tuple[np.ndarray, np.ndarray]:
    """Per distance 0..255 below the maximum: the 32-bit term summed and the 16-bit term
    kept (``hvx_pow2_func``); constant for a node, so computed once per scaling."""
    d = np.arange(256, dtype=I64)
    prod = (d << 8) * (betamul & 0xFFFF)                          # vmpy(uh, uh) -> uw
    prsh = wrap32(prod) >> (rsh & 31)                             # vasr(w, R)
    frac, ipart = prsh & 0xFFFF, prsh >> 16
    m32 = (pow2_poly(frac) & 0xFFFF) * ((0x00010001 << (16 - accshift)) & 0xFFFF)
    pow32 = vasr_w(wrap32(m32), np.minimum(ipart, 31))
    sh = (16 - accshift) & 15
    rnd = (1 << (sh - 1)) if sh else 0
    m16 = sat16((pow32 + rnd) >> sh)                              # vasr(w, w, R):rnd:sat
    pow32.flags.writeable = m16.flags.writeable = False
    return pow32, m16


#: recip16's segment constants as the compiled loop takes them (rows c2, c1, c0)
_RCP = np.stack([_RCP_C2, _RCP_C1, _RCP_C0])


def softmax_hvx(codes: np.ndarray, real: int, betamul: int, rsh: int,
                accshift: int) -> np.ndarray:
    """The HVX function's output bytes for ``codes`` (..., L): softmax over the last axis,
    whose first ``real`` lanes are the data (they give the maximum and the sum) and the
    others depth padding lanes computed against them. L must be a multiple of 4 (lanes are
    taken in groups of four as the vector code does). A lane's terms depend on its distance
    below the maximum alone: they are computed per distance and gathered. One compiled pass
    per row where the compiled kernels load (:func:`softmax_hvx_numpy` otherwise: the same
    bytes, the reference the tests compare it with)."""
    compiled = loops()
    if compiled is None or not codes.size:
        return softmax_hvx_numpy(codes, real, betamul, rsh, accshift)
    pow32, m16 = _terms(betamul, rsh, accshift)
    rows = np.ascontiguousarray(codes, np.uint8).reshape(-1, codes.shape[-1])
    out = np.empty(rows.shape, np.uint8)
    compiled.softmax_hvx_rows(read_only(rows), real, pow32, m16, accshift, _RCP, out)
    return out.reshape(codes.shape)


def softmax_hvx_numpy(codes: np.ndarray, real: int, betamul: int, rsh: int,
                      accshift: int) -> np.ndarray:
    """:func:`softmax_hvx` in numpy passes over whole arrays."""
    pow32, m16 = _terms(betamul, rsh, accshift)
    dist = distances(codes, real)
    # per row: the wrapping word sum, its reciprocal and shift
    total = wrap32(pow32[dist[..., :real]].sum(axis=-1, keepdims=True))  # vadd(w): wraps
    norm = _normamt(total)
    top16 = wrap32(total << norm) >> 16                           # vasl, vshuffo: upper half
    rm = mpy_rnd(recip16(top16), _SCALE_255)
    rs = np.maximum(accshift + 3 - norm, 0)                       # vsub(uh, uh):sat
    # lanes 0, 1 of each four shift with vasr, lanes 2, 3 multiply by the low halfword of
    # 0x10000 >> rs (vmpye): the same for rs in 1..16, 0 when rs is 0 or above 16
    # (vasr(w, w) by rs is a plain >> here: rs is 0..19 (accshift <= 16, normamt >= 0) and
    # |m rm| < 2**30, so no count wraps and no bit leaves the word)
    lo = by_distance(dist, m16, lambda m: _to_u8((m * rm) >> rs))
    if ((rs >= 1) & (rs <= 16)).all():
        return lo
    factor = vasr_w(np.full_like(rs, 0x10000), rs) & 0xFFFF
    hi = by_distance(dist, m16, lambda m: _to_u8((m * rm * factor) >> 16))
    return np.where(np.arange(dist.shape[-1]) & 3 < 2, lo, hi)


def _to_u8(v: np.ndarray) -> np.ndarray:
    """``vasr(w, w, 12):sat`` to halfwords, then ``vasr(h, h, 6):rnd:sat`` to bytes."""
    return np.clip((sat16(v >> 12) + 32) >> 6, 0, 255).astype(np.uint8)
