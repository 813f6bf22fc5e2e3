"""Arithmetic of the d32 add / sub / mul engine (quantized-ops spec §13), shared by its ops.

Everything here is float32 evaluated in the library's order, or exact integer arithmetic on
int64 arrays; the scalar primitives (rounding, saturation, R3) come from `engine/hexmath.py`. The
state machine that drives the engine lives in :mod:`d32_arith`; the flat QuantizedAdd_8p8to8
runs the same add arithmetic (§15).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum

import numpy as np
import numpy.typing as npt

from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import fmaxf, getexp, rndi1, sat_i16, sat_i32, wrap_i16

f32 = np.float32


class Oper(Enum):
    ADD = "add"
    SUB = "sub"
    RSUB = "rsub"   # x - y computed as -(b) + a after a swap (A broadcasts to B, §13.2)
    MUL = "mul"


# --- add / sub (§13.5) ------------------------------------------------------------------------
@dataclass(frozen=True)
class AddSubScaling:
    """``set_addsub_scaling_for_output_range`` for one output range."""

    a_scale: int
    b_scale: int
    offset: int
    rsh: int
    underrange: bool
    intermed_zero: int
    netscale: np.float32


def addsub_scaling(za: int, sa: float, zb: int, sb: float, out_min: float, out_max: float,
                   op: Oper, fixed: bool) -> AddSubScaling:
    """Scales, offset and shift for the current output range; raises "scaling failed".

    Memoised on the exact bits of its arguments (the same few repeat run after run; the
    float32 scalar steps cost ~40 us a call); a failure is not kept."""
    key = struct.pack("<qdqddd?", za, sa, zb, sb, out_min, out_max, fixed) + op.value.encode()
    found = _SCALINGS.get(key)
    if found is None:
        found = _addsub_scaling(za, sa, zb, sb, out_min, out_max, op, fixed)
        if len(_SCALINGS) >= 4096:
            _SCALINGS.clear()
        _SCALINGS[key] = found
    return found


_SCALINGS: dict[bytes, AddSubScaling] = {}


def _addsub_scaling(za: int, sa: float, zb: int, sb: float, out_min: float, out_max: float,
                    op: Oper, fixed: bool) -> AddSubScaling:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        osc = f32(f32(255.0) / f32(f32(out_max) - f32(out_min)))
        oz = f32(f32(-f32(out_min)) * osc)
        a_f, b_f = f32(osc * f32(sa)), f32(osc * f32(sb))
        scaleval = f32(a_f + b_f)
        if op is not Oper.ADD:
            scaleval = fmaxf(a_f, b_f)
            if op is Oper.SUB:
                b_f = -b_f
            else:
                a_f = -a_f
        e = getexp(f32(scaleval * f32(16384.0 / 16380.0)))
        if e > 6 and (not fixed or e > 12):
            raise KernelError(f"scaling failed: the output range [{float(out_min):g}, "
                              f"{float(out_max):g}] is too small for the input steps "
                              f"(scale exponent {e}, at most {12 if fixed else 6})")
        rsh = min(6 - e, 7)
        pre = 1 - rsh if fixed and rsh <= 0 else 0
        rsh_scl = f32(2.0 ** rsh)
        a_scale = rndi1(f32(a_f * f32(rsh_scl * f32(256.0))))
        b_scale = rndi1(f32(b_f * f32(rsh_scl * f32(256.0))))
        iz = (za * a_scale + zb * b_scale) >> (8 - pre)
        offset = rndi1(f32(oz * (f32(2.0) if pre else rsh_scl))) - iz
        netscale = f32(f32(1.0) / f32(osc * rsh_scl))
    return AddSubScaling(a_scale, b_scale, offset if pre else int(sat_i16(offset)), rsh,
                         pre != 0, iz, netscale)


def addsub_intermediate(a: npt.NDArray, b: npt.NDArray, s: AddSubScaling) -> npt.NDArray:
    """Step (2): floor((a*A + b*B) / 256), the tracked int16 intermediate (§13.5)."""
    return (a.astype(np.int64) * s.a_scale + b.astype(np.int64) * s.b_scale) >> 8


def addsub_codes(a: npt.NDArray, b: npt.NDArray, s: AddSubScaling) -> npt.NDArray[np.uint8]:
    """Output codes of §13.5, normal or under-range mode."""
    if s.underrange:
        prod = sat_i32(a.astype(np.int64) * s.a_scale + b.astype(np.int64) * s.b_scale)
        t = prod >> (7 + s.rsh)
        y = (sat_i16(sat_i32(t + s.offset)) + 1) >> 1
        return np.clip(y, 0, 255).astype(np.uint8)
    return addsub_codes_of(addsub_intermediate(a, b, s), s)


def addsub_codes_of(t: npt.NDArray, s: AddSubScaling) -> npt.NDArray[np.uint8]:
    """Normal-mode codes from the intermediate t: sat_u8((sat_i16(t + off) + rb) >> rsh)."""
    rb = (1 << s.rsh) >> 1
    # matches device on the assumption (§23 item 2) that a rounding shift by 0 adds 0
    y = (sat_i16(t + s.offset) + rb) >> s.rsh
    return np.clip(y, 0, 255).astype(np.uint8)


def addsub_actual(value: int, s: AddSubScaling) -> np.float32:
    """``convert_intermed_to_outval``: a tracked intermediate as an output value."""
    return f32(f32(value - s.intermed_zero) * s.netscale)


# --- mul (§13.6) ------------------------------------------------------------------------------
@dataclass(frozen=True)
class MulScaling:
    """``set_mul_scaling_for_output_range`` plus the input-range parts of the scaling."""

    range_bias: int
    rcp: np.float32
    post_scale: int
    adj_bias: int
    rsh: int


def mul_range_bias(za: int, zb: int) -> int:
    return (((2 * za - 255) * (2 * zb - 255) + 256) >> 9) * 256


def mul_scaling(za: int, sa: float, zb: int, sb: float, out_min: float,
                out_max: float) -> MulScaling:
    rb = mul_range_bias(za, zb)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rcp = f32(f32(sa) * f32(sb))
        osc = f32(f32(255.0) / f32(f32(out_max) - f32(out_min)))
        oz = f32(f32(-f32(out_min)) * osc)
        psf = f32(osc * rcp)
        rsh = min(-getexp(psf), 7)
        fac = f32(2.0 ** rsh)
        ps = int(sat_i16(rndi1(f32(f32(psf * fac) * f32(32768.0)))))
        adj = ((rb * ps + 16384) >> 15) + rndi1(f32(oz * fac))
    return MulScaling(rb, rcp, ps, int(wrap_i16(adj)), rsh)


def mul_intermediate(a: npt.NDArray, b: npt.NDArray, za: int, zb: int,
                     s: MulScaling) -> npt.NDArray:
    """p = (a - za)(b - zb) - range_bias, computed modulo 2**16 as the vector code does."""
    p = (a.astype(np.int64) - za) * (b.astype(np.int64) - zb) - s.range_bias
    return wrap_i16(p)


def mul_code_unsaturated(p: npt.NDArray | int, s: MulScaling) -> npt.NDArray | int:
    """The C re-run test's view of a code: no int16 saturation, shift only if rsh > 0."""
    q = ((p * s.post_scale + 16384) >> 15) + s.adj_bias
    return ((q >> (s.rsh - 1)) + 1) >> 1 if s.rsh > 0 else q


def mul_codes(a: npt.NDArray, b: npt.NDArray, za: int, zb: int,
              s: MulScaling) -> npt.NDArray[np.uint8]:
    """Output codes of §13.6. For rsh <= 0 (unconfirmed, §13.6) no shift is applied."""
    p = mul_intermediate(a, b, za, zb, s)
    q = sat_i16((p * s.post_scale + 16384) >> 15)
    v = sat_i16(q + s.adj_bias)
    y = (v + ((1 << s.rsh) >> 1)) >> s.rsh if s.rsh > 0 else v
    return np.clip(y, 0, 255).astype(np.uint8)


def mul_actual(value: int, s: MulScaling) -> np.float32:
    """``convert_mul_intermed_to_outval``."""
    return f32(f32(value + s.range_bias) * s.rcp)
