"""Flat quantized elementwise ops: QuantizedMul_8x8to8 and QuantizedAdd_8p8to8.

Quantized-ops spec §12 (Mul, plain C on the device) and §15 (Add: the "flat direct" HVX path
of §13.4-§13.7 for equal shapes, and the older broadcast kernel otherwise). The Add keeps
its adaptive output range in ``ctx.state`` (§1.9).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops._hexmath import (
    adjust_with_constraints,
    div255,
    f2i,
    getexp,
    level_size_zero,
    rndi,
    rndi1,
    sat_i16,
    sat_i32,
    sat_u8,
    wrap_i16,
    wrap_i32,
)
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.quant import adjust_range_for_zero
from hexscope.engine.tensor import Tensor

f32 = np.float32
_AB = (Port("a", DType.QUINT8), Port("b", DType.QUINT8), Port("a_min", DType.FLOAT32),
       Port("a_max", DType.FLOAT32), Port("b_min", DType.FLOAT32), Port("b_max", DType.FLOAT32))
_OUT = (Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32))
_MUL_MAX_ELEMENTS = 1 << 25
_MAX_RETRIES = 64


def _scalar_out(v: float) -> np.ndarray:
    return np.full((1, 1, 1, 1), v, np.float32)


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """Each dimension equal, or 1 on one side; else "incompatible shapes" (§12, §15)."""
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)):
        raise KernelError(f"incompatible shapes: {list(a)} and {list(b)} (each dimension must "
                          "be equal or 1 on one side)")
    return tuple(max(x, y) for x, y in zip(a, b, strict=True))


# --- QuantizedMul_8x8to8 ------------------------------------------------------------------

def _check_mul_capacity(ctx: KernelContext) -> None:
    if not ctx.output_defs:
        return
    sizes = (list(ctx.output_defs[0].max_sizes) + [1, 1, 1, 1])[:4]
    n = min(int(np.prod(sizes, dtype=object)), 2 ** 32 - 1)   # mulu32_x4_sat
    if n == 0 or n > _MUL_MAX_ELEMENTS:
        raise KernelError("can't get plausible max output size for mul output: output 0 "
                          f"declares {n} elements, expected 1 to 2^25")


def _mul_scalar(full: Tensor, fmin: float, fmax: float, code: int, zero: int,
                step: np.float32) -> tuple[np.ndarray, np.float32, np.float32]:
    """The one-to-many shortcut: copy, zero or invert the full side (§12)."""
    c = code - zero
    cf = f32(f32(c) * step)
    if c > 0:
        return full.array.copy(), f32(f32(fmin) * cf), f32(f32(fmax) * cf)
    if c == 0:
        return np.zeros(full.shape, np.uint8), f32(0.0), f32(1.0)
    return 255 - full.array, f32(f32(fmax) * cf), f32(f32(fmin) * cf)


def mul_requantize(p: np.ndarray, sp: np.float32) -> tuple[np.ndarray, np.float32, np.float32]:
    """Output range and codes from the exact products p = (a - za)(b - zb) (§12 steps 2-7)."""
    pmin = min(0, int(p.min())) if p.size else 0
    pmax = max(0, int(p.max())) if p.size else 0
    if pmin == pmax:
        pmax += 4
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mn, mx = adjust_range_for_zero(f32(f32(pmin) * sp), f32(f32(pmax) * sp))
        out_min, out_max = f32(mn), f32(mx)
        ols = div255(f32(out_max - out_min))
        zo = int(sat_u8(rndi(f32(f32(-out_min) / ols))))
        if f32(sp * f32(1.0 / 16.0)) < ols:
            scaleby = f32(sp / ols)
        else:
            # Matches device: a gain above 16 is capped and the range widened instead.
            scaleby = f32(16.0)
            ols = f32(sp * f32(1.0 / 16.0))
            out_min, out_max = f32(f32(-zo) * ols), f32(f32(255 - zo) * ols)
    rsh = min(14 - getexp(scaleby), 23)
    scale = rndi1(f32(scaleby * f32(2.0 ** rsh)))
    offs = ((2 * zo + 1) << (rsh - 1)) + pmin * scale
    p0 = (p.astype(np.int64) - pmin) & 0xFFFF
    # Matches device: the shifted value is stored in a uint16 before the u8 saturation.
    t = (wrap_i32(p0 * scale + offs) >> rsh) & 0xFFFF
    return np.minimum(t, 255).astype(np.uint8), out_min, out_max


@op("QuantizedMul_8x8to8", Category.ELEMENTWISE, inputs=_AB, outputs=_OUT)
def quantized_mul_8x8to8(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor, a_max: Tensor,
                         b_min: Tensor, b_max: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """Elementwise product of two quint8 tensors with broadcast; range from the products.

    Semantics (quantized-ops spec §12): za, zb and the steps come from rule ZB. If B (then
    A) is [1,1,1,1], the other tensor is copied (factor > 0, range scaled), zeroed (factor 0,
    range [0, 1]) or inverted as 255 - x (factor < 0, range scaled and swapped). Otherwise
    p = (a - za)(b - zb) exactly, the range [min(0, min p), max(0, max p)] * sa * sb (max
    bumped by 4 codes when all p are 0) is nudged by R2, and
    y = sat_u8(round_half_up(p * gain + zo)) with a 14-bit fixed-point gain capped at 16 (a
    larger gain widens the range instead).

    Fidelity: plain C on the device, emulated step by step; stateless. The value after the
    final shift is stored in 16 bits before saturation, so it would wrap (-1 -> 255); with
    the range built from the data that cannot happen (§12, unconfirmed edge).

    Errors: "incompatible shapes" (a dimension differs and neither side is 1); prepare check:
    output 0 must declare 1 to 2^25 elements ("can't get plausible max output size").
    """
    _check_mul_capacity(ctx)
    amin, amax, bmin, bmax = (scalar_f(t) for t in (a_min, a_max, b_min, b_max))
    za, sa = level_size_zero(amin, amax)
    zb, sb = level_size_zero(bmin, bmax)
    one = (1, 1, 1, 1)
    if b.shape == one:
        y, lo, hi = _mul_scalar(a, amin, amax, int(b.array.flat[0]), zb, sb)
    elif a.shape == one:
        y, lo, hi = _mul_scalar(b, bmin, bmax, int(a.array.flat[0]), za, sa)
    else:
        broadcast_shape(a.shape, b.shape)
        p = (a.array.astype(np.int32) - za) * (b.array.astype(np.int32) - zb)
        y, lo, hi = mul_requantize(p, f32(sa * sb))
    return (y, _scalar_out(lo), _scalar_out(hi))


# --- QuantizedAdd_8p8to8: state and range set-up (§15, §13.4) ------------------------------

@dataclass
class AddState:
    """The node's adaptive range (``qadd_888_info``), kept in ``ctx.state`` (§1.9)."""

    out_min: np.float32
    out_max: np.float32
    min_fixed: bool
    max_fixed: bool
    has_run_before: bool = False

    @property
    def precalc(self) -> int:
        return int(self.min_fixed) + 2 * int(self.max_fixed)


def _prepare_state(extra: tuple[Tensor, ...]) -> AddState:
    """``qadd_888_check``: fixed ends from inputs 6 and 7 (-inf / +inf / absent = free)."""
    lo = f32(scalar_f(extra[0])) if extra else f32(-np.inf)
    hi = f32(scalar_f(extra[1])) if len(extra) > 1 else f32(np.inf)
    st = AddState(lo if lo != -np.inf else f32(0.0), hi if hi != np.inf else f32(0.5),
                  bool(lo != -np.inf), bool(hi != np.inf))
    if st.min_fixed and st.max_fixed:
        st.out_min, st.out_max = adjust_with_constraints(st.out_min, st.out_max, 3)
        st.has_run_before = True
    return st


def _update_range(st: AddState, spec: tuple[np.float32, np.float32], tmin: np.float32,
                  tmax: np.float32) -> None:
    """Output-range set-up before a flat run: the 1/8 first guess or the 1/32 rule (§13.4)."""
    tmax = np.fmax(tmax, f32(tmin + f32(0.001)))
    if not st.has_run_before:
        omin, omax = f32(f32(0.125) * tmin), f32(f32(0.125) * tmax)
        if st.min_fixed:
            st.out_min = spec[0]
            st.out_max = np.fmax(f32(0.0), f32(st.out_min + f32(omax - omin)))
        elif st.max_fixed:
            st.out_max = spec[1]
            st.out_min = np.fmin(f32(0.0), f32(st.out_max - f32(omax - omin)))
        else:
            st.out_min, st.out_max = omin, omax
        st.out_min, st.out_max = adjust_with_constraints(st.out_min, st.out_max, st.precalc)
        st.has_run_before = True
        return
    span = f32(tmax - tmin)
    current = f32(st.out_max - st.out_min)
    d = f32(span - f32(f32(32.0) * current))
    if not d > 0:
        return
    r = f32(d / f32(f32(32.0) * f32(span - current)))
    if not st.min_fixed:
        adj = f32(f32(tmin - st.out_min) * r)
        if adj < 0:
            st.out_min = f32(st.out_min + adj)
    else:
        st.out_min = spec[0]
    if not st.max_fixed:
        adj = f32(f32(tmax - st.out_max) * r)
        if adj > 0:
            st.out_max = f32(st.out_max + adj)
    else:
        st.out_max = spec[1]
    st.out_min, st.out_max = adjust_with_constraints(st.out_min, st.out_max, st.precalc)


# --- QuantizedAdd_8p8to8: flat direct arithmetic (§13.5, §13.7) ----------------------------

@dataclass(frozen=True)
class AddScaling:
    """``set_addsub_scaling_for_output_range`` for op = add (§13.5)."""

    a_scale: int
    b_scale: int
    rsh: int
    offset: int
    intermed_zero: int
    netscale: np.float32
    underrange: bool


def add_scaling(out_min: np.float32, out_max: np.float32, za: int, sa: np.float32, zb: int,
                sb: np.float32, fixed: bool) -> AddScaling:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        osc = f32(f32(255.0) / f32(out_max - out_min))
        oz = f32(-out_min * osc)
        a_f, b_f = f32(osc * sa), f32(osc * sb)
        scexp = getexp(f32(f32(a_f + b_f) * f32(16384.0 / 16380.0)))
        if scexp > 6 and (not fixed or scexp > 12):
            raise KernelError(
                f"scaling failed: the output range [{out_min:g}, {out_max:g}] is too narrow for "
                f"the input steps (gain exponent {scexp}, at most {12 if fixed else 6})")
        rsh = min(6 - scexp, 7)
        pre = 1 - rsh if fixed and rsh <= 0 else 0
        rsh_scl = f32(2.0 ** rsh)
        a_scale = rndi1(f32(a_f * f32(rsh_scl * f32(256.0))))
        b_scale = rndi1(f32(b_f * f32(rsh_scl * f32(256.0))))
        iz = (za * a_scale + zb * b_scale) >> (8 - pre)
        offset = rndi1(f32(oz * (f32(2.0) if pre else rsh_scl))) - iz
        netscale = f32(f32(1.0) / f32(osc * rsh_scl))
    return AddScaling(a_scale, b_scale, rsh, offset if pre else int(sat_i16(offset)), iz,
                      netscale, bool(pre))


def add_codes(a: np.ndarray, b: np.ndarray, sc: AddScaling) -> tuple[np.ndarray, np.ndarray]:
    """Per-element HVX arithmetic; returns (codes, intermediates t for range tracking)."""
    s = a.astype(np.int64) * sc.a_scale + b.astype(np.int64) * sc.b_scale
    if sc.underrange:
        t = sat_i32(s) >> (7 + sc.rsh)
        y = sat_u8((sat_i16(sat_i32(t + sc.offset)) + 1) >> 1)
        return y.astype(np.uint8), t
    t = s >> 8      # floor((a*A + b*B) / 256): the vmpa/vavg pair of first_stage
    # A rounding shift by 0 adds nothing (QEMU's fVROUND; spec §23 item 2).
    y = sat_u8((sat_i16(t + sc.offset) + ((1 << sc.rsh) >> 1)) >> sc.rsh)
    return y.astype(np.uint8), t


def _rerun_range(ctx: KernelContext, st: AddState, sc: AddScaling, t: np.ndarray,
                 spec: tuple[np.float32, np.float32]) -> bool:
    """``check_addsub_need_rerun``: widen a free end the data overflowed (§13.7)."""
    tmin = min(sc.intermed_zero, int(t.min())) if t.size else sc.intermed_zero
    tmax = max(sc.intermed_zero, int(t.max())) if t.size else sc.intermed_zero
    actual_min = f32(f32(tmin - sc.intermed_zero) * sc.netscale)
    actual_max = f32(f32(tmax - sc.intermed_zero) * sc.netscale)
    span = f32(actual_max - actual_min)
    span = f32(span + np.fmax(f32(f32(0.15) * span), f32(1e-4)))
    out_min, out_max, moved = st.out_min, st.out_max, False
    if not st.min_fixed and actual_min < out_min:
        out_min = np.fmin(f32(0.0), f32(actual_max - span))
        ctx.log(2, f"adjusting out_min from {st.out_min:f} to {out_min:f} "
                   f"(actual min is {actual_min:f})")
        moved = True
    if not st.max_fixed and actual_max > out_max:
        out_max = np.fmax(f32(0.0), f32(actual_min + span))
        ctx.log(2, f"adjusting out_max from {st.out_max:f} to {out_max:f} "
                   f"(actual max is {actual_max:f})")
        moved = True
    if not moved:
        return False
    st.out_min = spec[0] if st.min_fixed else out_min
    st.out_max = spec[1] if st.max_fixed else out_max
    if st.out_min < 0:
        st.out_min, st.out_max = adjust_with_constraints(st.out_min, st.out_max, st.precalc)
    return True


def _add_flat(ctx: KernelContext, st: AddState, a: np.ndarray, b: np.ndarray,
              ranges: tuple[float, float, float, float],
              spec: tuple[np.float32, np.float32]) -> np.ndarray:
    """``addsub_flat_direct_execute`` for equal shapes (§15 with §13.4-§13.7)."""
    amin, amax, bmin, bmax = (f32(v) for v in ranges)
    za, sa = level_size_zero(amin, amax)
    zb, sb = level_size_zero(bmin, bmax)
    fixed = st.min_fixed and st.max_fixed
    if not fixed:
        _update_range(st, spec, f32(amin + bmin), f32(amax + bmax))
    sc = add_scaling(st.out_min, st.out_max, za, sa, zb, sb, fixed)
    y, t = add_codes(a, b, sc)
    # Matches device: tracking is on only when the *max* is free (the source tests
    # "max not fixed" twice, §15).
    if not st.max_fixed and _rerun_range(ctx, st, sc, t, spec):
        sc = add_scaling(st.out_min, st.out_max, za, sa, zb, sb, False)
        y, _ = add_codes(a, b, sc)
    return y


# --- QuantizedAdd_8p8to8: broadcast kernel (§15, low confidence) ---------------------------

def _expand(ctx: KernelContext, t: Tensor, total: tuple[int, ...], name: str) -> np.ndarray:
    """``expand`` as the device indexes it: the *output's* b, h, w index the source rows.

    Only a depth broadcast reads the right bytes; a b/h/w broadcast reads other rows, or
    past the end of the source (the simulator reads the allocation tail, else 0, and warns).
    """
    if t.shape == total:
        return t.array
    _, sh, sw, sd = t.shape
    bb, hh, ww, dd = np.indices(total, dtype=np.int64)
    idx = bb * (sh * sw * sd) + hh * (sw * sd) + ww * sd + (dd if sd == total[3] else 0)
    raw = t.raw
    outside = idx >= raw.size
    if outside.any():
        ctx.warn(f"broadcast of {name} {list(t.shape)} to {list(total)}: the device's expand "
                 "reads past the end of the input there (undefined bytes; simulated as 0)")
    return np.where(outside, 0, raw[np.minimum(idx, max(raw.size - 1, 0))]).astype(np.uint8)


def _add_888(big: np.ndarray, big_rng: tuple[np.float32, np.float32], small: np.ndarray,
             small_rng: tuple[np.float32, np.float32], gmin: np.float32,
             gmax: np.float32) -> tuple[np.ndarray, np.float32, np.float32]:
    """``do_quantized_add_888``: codes and the discovered range for guesses (gmin, gmax)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        step_big = f32(big_rng[1] - big_rng[0])
        step_small = f32(small_rng[1] - small_rng[0])
        alpha = f32(step_big / step_small)
        if alpha >= 256:
            return big.copy(), big_rng[0], big_rng[1]
        ialpha = int(wrap_i16(f2i(f32(f32(128.0) * alpha))))
        kappa = f32(f32(f32(128.0) * alpha) + f32(
            f32(f32(f32(255.0) * big_rng[0]) + f32(f32(255.0) * small_rng[0])) / step_small))
        lmin = f32(f32(gmin * f32(255.0)) / step_small)
        lmax = f32(f32(gmax * f32(255.0)) / step_small)
        step = f32(lmax - lmin)
        frecip = f32(f32(255.0 * 32768.0) / step)
        foffset = f32(f32(f32(255.0) * lmin) / step)
        frecip = f32(32767.0) if frecip >= 32767 else frecip
        recip = int(wrap_i16(f2i(frecip)))
        offset = int(wrap_i16(f2i(f32(foffset - f32(0.5)))))
    ikappa = int(wrap_i16(f2i(kappa)))
    scaled = sat_i16(((big.astype(np.int64) - 128) * ialpha + 64) >> 7)
    z = wrap_i16(scaled + small + ikappa)
    y = sat_u8(wrap_i16(sat_i16((z * recip + 16384) >> 15) - offset)).astype(np.uint8)
    zmin, zmax = (int(z.min()), int(z.max())) if z.size else (0, 0)
    with np.errstate(invalid="ignore", over="ignore"):
        found_min = f32(f32(f32(zmin) * step_small) / f32(255.0))
        found_max = f32(f32(f32(zmax) * step_small) / f32(255.0))
    return y, found_min, found_max


def _add_broadcast(ctx: KernelContext, st: AddState, a: Tensor, b: Tensor,
                   ranges: tuple[float, float, float, float]) -> np.ndarray:
    """``qadd_888_hvx``: the retrying broadcast kernel; the state keeps the guesses (§15)."""
    total = broadcast_shape(a.shape, b.shape)
    amin, amax, bmin, bmax = (f32(v) for v in ranges)
    a_is_big = f32(f32(amax - amin) / f32(255.0)) >= f32(f32(bmax - bmin) / f32(255.0))
    big, small = (a, b) if a_is_big else (b, a)
    big_rng, small_rng = ((amin, amax), (bmin, bmax)) if a_is_big else ((bmin, bmax),
                                                                         (amin, amax))
    big_codes = _expand(ctx, big, total, "a" if a_is_big else "b")
    small_codes = _expand(ctx, small, total, "b" if a_is_big else "a")
    for _ in range(_MAX_RETRIES):
        y, dmin, dmax = _add_888(big_codes, big_rng, small_codes, small_rng, st.out_min,
                                 st.out_max)
        if not st.max_fixed and dmax > st.out_max:
            ctx.log(0, f"Precalculated max: {dmax:f} > {st.out_max:f}, retrying...")
            st.out_max = f32(dmax * f32(1.2))
        elif not st.min_fixed and dmin < st.out_min:
            ctx.log(0, f"Precalculated min: {dmin:f} < {st.out_min:f}, retrying...")
            st.out_min = f32(dmin * f32(1.2))
        elif not st.max_fixed and f32(st.out_max - st.out_min) < f32(big_rng[1] - big_rng[0]):
            ctx.log(0, "making out range at least as large as in range")
            st.out_max = f32(f32(big_rng[1] - big_rng[0]) + st.out_min)
        else:
            return y
    raise KernelError(f"the broadcast add's range retries did not settle after {_MAX_RETRIES} "
                      f"passes (range now [{st.out_min:g}, {st.out_max:g}])")


@op("QuantizedAdd_8p8to8", Category.ELEMENTWISE,
    inputs=(*_AB, Port("out_min", DType.FLOAT32, optional=True),
            Port("out_max", DType.FLOAT32, optional=True)),
    outputs=_OUT, aliases=("QuantizedAdd_8x8to8",))
def quantized_add_8p8to8(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor, a_max: Tensor,
                         b_min: Tensor, b_max: Tensor,
                         *fixed: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """Elementwise sum of two quint8 tensors with an adaptive (stateful) output range.

    Semantics (quantized-ops spec §15): optional inputs 6 and 7 fix out_min / out_max (-inf
    / +inf or absent = free). The node keeps its output range between executions, from
    prepare (min 0, max 0.5, or the fixed values; both fixed: R3 with c = 3) to the next
    re-prepare (§1.9).
    Equal shapes ("flat direct" path, §13.4-§13.7): each run first sets the range (first run:
    1/8 of [a_min + b_min, a_max + b_max]; later runs: the 1/32 rule), nudged by R3; then
    t = floor((a*A + b*B)/256) and y = sat_u8((sat_i16(t + off) + round) >> rsh). If the max
    is free, the span of t is tracked and an overflowed free end is widened by 15 % and the
    whole op runs once more.
    Different shapes (broadcast path): the operand with the larger step is scaled onto the
    other's step, and the range guesses are retried (x1.2) until the data fit.

    Fidelity: flat path bit-exact per the spec's reading of the HVX code, including its quirk
    that tracking is only on when the max is free. A fully fixed range with a tiny width runs
    in "under-range" mode (up to 64x gain). The broadcast path is low confidence (§15, §23
    item 8): its discovered range uses the valid elements only (the device's vector min/max
    may include lanes past the end); its reported range is the final guess, not nudged;
    the device declares that output qint8 (the bytes are quint8 codes, kept as QUINT8 here);
    and the device's ``expand`` indexes the source with the output's b/h/w, so only a depth
    broadcast reads the intended bytes (others read other rows or past the end: a warning).

    Errors: "scaling failed" (output range too narrow for the input steps: gain exponent > 6,
    or > 12 with both ends fixed); "incompatible shapes". Simulator guard: the broadcast
    retries are capped at 64 (the device recurses without a limit).
    """
    if "add" not in ctx.state:
        ctx.state["add"] = _prepare_state(fixed)
    st = ctx.state["add"]
    assert isinstance(st, AddState)
    ranges = tuple(scalar_f(t) for t in (a_min, a_max, b_min, b_max))
    spec = (f32(scalar_f(fixed[0])) if st.min_fixed else st.out_min,
            f32(scalar_f(fixed[1])) if st.max_fixed else st.out_max)
    if a.shape == b.shape:
        y = _add_flat(ctx, st, a.array, b.array, ranges, spec)  # type: ignore[arg-type]
    else:
        y = _add_broadcast(ctx, st, a, b, ranges)  # type: ignore[arg-type]
    return (y, _scalar_out(st.out_min), _scalar_out(st.out_max))
