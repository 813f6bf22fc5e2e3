"""The adaptive output range of the add / sub / mul engine (quantized-ops spec §13.4, §13.7).

Written once for the d32 ops (:mod:`d32_arith`) and the flat QuantizedAdd_8p8to8 direct path,
which applies the same rules with op = add (§15). The callers differ only in when they call:
the d32 ops re-derive the range when their scaling is rebuilt, the flat add on every run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hexscope.engine.hexmath import adjust_with_constraints, fmaxf, fminf
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.kernels.d32_engine import AddSubScaling, addsub_actual

f32 = np.float32


@dataclass
class OutRange:
    """A node's output range between executions (§1.9, §13.1), kept in ``ctx.state``.

    ``precalc`` bit 0: min fixed (at ``min_spec``); bit 1: max fixed (at ``max_spec``).
    """

    out_min: np.float32
    out_max: np.float32
    precalc: int
    min_spec: np.float32 = f32(0.0)
    max_spec: np.float32 = f32(0.0)
    has_run_before: bool = False

    @property
    def min_fixed(self) -> bool:
        return bool(self.precalc & 1)

    @property
    def max_fixed(self) -> bool:
        return bool(self.precalc & 2)


def set_before_run(r: OutRange, tmin: np.float32, tmax: np.float32, later_rule: bool) -> None:
    """§13.4 from the theoretical extremes: 1/8 of them on the first scaling, then (only if
    ``later_rule``) the 1/32 rule. Not called when both ends are fixed."""
    tmin = f32(tmin)
    tmax = fmaxf(tmax, f32(tmin + f32(0.001)))
    if not r.has_run_before:
        _first_range(r, tmin, tmax)
    elif later_rule:
        _widen_to_1_32(r, tmin, tmax)


def _first_range(r: OutRange, tmin: np.float32, tmax: np.float32) -> None:
    lo, hi = f32(f32(0.125) * tmin), f32(f32(0.125) * tmax)
    if r.precalc == 1:
        mn = r.min_spec
        mx = fmaxf(0.0, f32(mn + f32(hi - lo)))
    elif r.precalc == 2:
        mx = r.max_spec
        mn = fminf(0.0, f32(mx - f32(hi - lo)))
    else:
        mn, mx = lo, hi
    r.out_min, r.out_max = adjust_with_constraints(mn, mx, r.precalc)
    r.has_run_before = True


def _widen_to_1_32(r: OutRange, tmin: np.float32, tmax: np.float32) -> None:
    """If the extremes span more than 32 times the range, move the free ends part-way."""
    total = f32(tmax - tmin)
    current = f32(r.out_max - r.out_min)
    d = f32(total - f32(f32(32.0) * current))
    if not d > 0:
        return
    k = f32(d / f32(f32(32.0) * f32(total - current)))
    if r.min_fixed:
        r.out_min = r.min_spec
    else:
        adj = f32(f32(tmin - r.out_min) * k)
        if adj < 0:
            r.out_min = f32(r.out_min + adj)
    if r.max_fixed:
        r.out_max = r.max_spec
    else:
        adj = f32(f32(tmax - r.out_max) * k)
        if adj > 0:
            r.out_max = f32(r.out_max + adj)
    r.out_min, r.out_max = adjust_with_constraints(r.out_min, r.out_max, r.precalc)


def padded_range(actual_min: np.float32, actual_max: np.float32) -> tuple[np.float32, np.float32]:
    """The new (min, max) candidates: the found range widened by 15 % (at least 1e-4)."""
    rng = f32(actual_max - actual_min)
    rng = f32(rng + fmaxf(f32(f32(0.15) * rng), f32(1e-4)))
    return fminf(0.0, f32(actual_max - rng)), fmaxf(0.0, f32(actual_min + rng))


def widen_after_run(ctx: KernelContext, r: OutRange, actual_min: np.float32,
                    actual_max: np.float32, low_over: bool, high_over: bool) -> bool:
    """§13.7 (``check_addsub_need_rerun`` / ``check_mul_need_rerun``): move the free ends the
    data overflowed, reset the fixed ones, nudge by R3; True if the op must run once more."""
    pmin, pmax = padded_range(actual_min, actual_max)
    out_min, out_max, moved = r.out_min, r.out_max, False
    if not r.min_fixed and low_over:
        ctx.log(2, f"adjusting out_min from {out_min:f} to {pmin:f} "
                   f"(actual min is {actual_min:f})")
        out_min, moved = pmin, True
    if not r.max_fixed and high_over:
        ctx.log(2, f"adjusting out_max from {out_max:f} to {pmax:f} "
                   f"(actual max is {actual_max:f})")
        out_max, moved = pmax, True
    if not moved:
        return False
    out_min = r.min_spec if r.min_fixed else out_min
    out_max = r.max_spec if r.max_fixed else out_max
    if out_min < 0:
        out_min, out_max = adjust_with_constraints(out_min, out_max, r.precalc)
    r.out_min, r.out_max = f32(out_min), f32(out_max)
    return True


def tracked_extremes(values: npt.NDArray, zero: int) -> tuple[int, int]:
    """Tracked min and max of an intermediate, starting from the value for real 0 (§13.7)."""
    if values.size == 0:
        return zero, zero
    return min(zero, int(values.min())), max(zero, int(values.max()))


def widen_after_addsub(ctx: KernelContext, r: OutRange, t: npt.NDArray,
                       s: AddSubScaling) -> bool:
    """§13.7 for add/sub: the tracked t as output values; a free end the data passed moves."""
    if t.size == 0:
        return widen_after_addsub_span(ctx, r, None, None, s)
    return widen_after_addsub_span(ctx, r, int(t.min()), int(t.max()), s)


def widen_after_addsub_span(ctx: KernelContext, r: OutRange, t_min: int | None,
                            t_max: int | None, s: AddSubScaling) -> bool:
    """:func:`widen_after_addsub` from t's min and max (None: no elements), which a compiled
    kernel takes as it writes the codes."""
    zero = s.intermed_zero
    lo = zero if t_min is None else min(zero, t_min)
    hi = zero if t_max is None else max(zero, t_max)
    amin, amax = addsub_actual(lo, s), addsub_actual(hi, s)
    return widen_after_run(ctx, r, amin, amax, amin < r.out_min, amax > r.out_max)
