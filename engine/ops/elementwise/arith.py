"""Flat quantized elementwise ops: QuantizedMul_8x8to8 and QuantizedAdd_8p8to8.

Quantized-ops spec §12 (Mul, plain C on the device) and §15 (Add: the "flat direct" HVX path
of §13.4-§13.7 for equal shapes, and the older broadcast kernel otherwise). The Add keeps
its adaptive output range in ``ctx.state`` (§1.9).
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import (
    adjust_with_constraints,
    div255,
    f2i,
    getexp,
    level_size_zero,
    rndi,
    rndi1,
    sat_i16,
    sat_u8,
    wrap_i16,
    wrap_i32,
)
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.addsub_range import (
    OutRange,
    set_before_run,
    widen_after_addsub_span,
)
from hexscope.engine.ops.kernels.d32_engine import (
    AddSubScaling,
    Oper,
    addsub_codes,
    addsub_codes_of,
    addsub_intermediate,
    addsub_scaling,
)
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.quant import adjust_range_for_zero
from hexscope.engine.tensor import Tensor, fresh

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
    scale, offs, rsh, out_min, out_max = _mul_scaling(pmin, pmax, sp)
    p0 = (p.astype(np.int64) - pmin) & 0xFFFF
    # Matches device: the shifted value is stored in a uint16 before the u8 saturation.
    t = (wrap_i32(p0 * scale + offs) >> rsh) & 0xFFFF
    return np.minimum(t, 255).astype(np.uint8), out_min, out_max


def _mul_scaling(pmin: int, pmax: int, sp: np.float32
                 ) -> tuple[int, int, int, np.float32, np.float32]:
    """(scale, offset, shift, out_min, out_max) for products within [pmin, pmax] (both
    including 0), §12 steps 3-6."""
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
    return scale, offs, rsh, out_min, out_max


def _mul_compiled(a: np.ndarray, b: np.ndarray, za: int, zb: int, sp: np.float32
                  ) -> tuple[np.ndarray, np.float32, np.float32] | None:
    """mul_requantize((a - za)(b - zb), sp) in two compiled passes that never make the
    products (the range, then the codes), or None where the kernels do not run."""
    bounds_k, codes_k = compiled.kernel("mul_bounds"), compiled.kernel("mul_codes")
    if bounds_k is None or codes_k is None or a.size == 0:
        return None
    fa, fb = _flat_pair(a, b)
    bounds = np.empty(2, np.int64)
    bounds_k(fa, fb, za, zb, bounds)
    pmin, pmax = min(0, int(bounds[0])), max(0, int(bounds[1]))
    scale, offs, rsh, out_min, out_max = _mul_scaling(pmin, pmax, sp)
    y = np.empty(a.shape, np.uint8)
    codes_k(fa, fb, za, zb, pmin, scale, offs, rsh, y.reshape(-1))
    return y, out_min, out_max


def _flat_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both operands flat, C-contiguous and read-only (the kernels' signatures take a pair
    of the same kind; a read-only view of a writable array is allowed)."""
    out = []
    for x in (a, b):
        flat = np.ascontiguousarray(x).reshape(-1).view()
        flat.flags.writeable = False
        out.append(flat)
    return out[0], out[1]


def mul_reference(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor, a_max: Tensor,
                  b_min: Tensor, b_max: Tensor) -> tuple[np.ndarray, ...]:
    """a * b of the dequantized inputs (broadcast)."""
    return ranged(real(a, a_min, a_max) * real(b, b_min, b_max))


@op("QuantizedMul_8x8to8", Category.ELEMENTWISE,
    reference=mul_reference, inputs=_AB, outputs=_OUT)
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

    The output dimension is the larger of the two, also for a 0 against a 1: an input with
    no elements is then read as code 0 with a warning (the device reads past its end;
    simulator's choice).

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
        total = broadcast_shape(a.shape, b.shape)
        a_codes, b_codes = (_mul_operand(ctx, t, total, name) for t, name in ((a, "a"), (b, "b")))
        a_codes, b_codes = np.broadcast_arrays(a_codes, b_codes)
        done = _mul_compiled(a_codes, b_codes, za, zb, f32(sa * sb))
        if done is None:
            p = (a_codes.astype(np.int32) - za) * (b_codes.astype(np.int32) - zb)
            done = mul_requantize(p, f32(sa * sb))
        y, lo, hi = done
    return (y, _scalar_out(lo), _scalar_out(hi))


def _mul_operand(ctx: KernelContext, t: Tensor, total: tuple[int, ...], name: str) -> np.ndarray:
    """The codes of ``t`` for a broadcast to ``total``. A dimension 0 against a 1 is "1 on
    one side" (§12) and the output takes the 1, so an input with no elements would be read
    past its end: the simulator reads code 0 there, with a warning (as the add's expand)."""
    codes = t.array
    if codes.size or not all(total):
        return codes
    ctx.warn(f"{name} {list(t.shape)} has no elements but the broadcast output is "
             f"{list(total)}: the device reads past the end of {name} (undefined bytes; "
             "simulated as code 0)")
    return np.zeros(total, np.uint8)


# --- QuantizedAdd_8p8to8: the flat direct path, on the §13 engine (§15) ------------------

def _prepare_state(extra: tuple[Tensor, ...]) -> OutRange:
    """``qadd_888_check``: fixed ends from inputs 6 and 7 (-inf / +inf / absent = free).

    Unlike the d32 ops, a fixed min is not clamped to <= 0 (§15)."""
    lo = f32(scalar_f(extra[0])) if extra else f32(-np.inf)
    hi = f32(scalar_f(extra[1])) if len(extra) > 1 else f32(np.inf)
    min_fixed, max_fixed = bool(lo != -np.inf), bool(hi != np.inf)
    r = OutRange(lo if min_fixed else f32(0.0), hi if max_fixed else f32(0.5),
                 int(min_fixed) + 2 * int(max_fixed))
    if r.precalc == 3:
        r.out_min, r.out_max = adjust_with_constraints(r.out_min, r.out_max, 3)
        r.has_run_before = True
    return r


def _add_flat(ctx: KernelContext, r: OutRange, a: np.ndarray, b: np.ndarray,
              ranges: tuple[float, float, float, float]) -> np.ndarray:
    """``addsub_flat_direct_execute`` for equal shapes: §13.4-§13.7 with op = add (§15)."""
    amin, amax, bmin, bmax = (f32(v) for v in ranges)
    za, sa = level_size_zero(amin, amax)
    zb, sb = level_size_zero(bmin, bmax)
    fixed = r.precalc == 3
    if not fixed:
        # Matches device: the range set-up runs on every execution (§15).
        set_before_run(r, f32(amin + bmin), f32(amax + bmax), later_rule=True)
    sc = addsub_scaling(za, sa, zb, sb, r.out_min, r.out_max, Oper.ADD, fixed)
    # Matches device: tracking is on only when the *max* is free (the source tests
    # "max not fixed" twice, §15).
    if r.max_fixed:
        # the normal mode in one compiled pass (its span unused); under-range in numpy
        return addsub_codes(a, b, sc) if sc.underrange else _add_tracked(a, b, sc)[0]
    y, lo, hi = _add_tracked(a, b, sc)      # not fully fixed: never under-range mode
    if widen_after_addsub_span(ctx, r, lo, hi, sc):
        sc = addsub_scaling(za, sa, zb, sb, r.out_min, r.out_max, Oper.ADD, False)
        return addsub_codes(a, b, sc)
    return y


def _add_tracked(a: np.ndarray, b: np.ndarray, sc: AddSubScaling
                 ) -> tuple[np.ndarray, int | None, int | None]:
    """Normal-mode codes and the span of the intermediate t (None, None when empty): one
    compiled pass where the kernel runs, else numpy's three."""
    kernel = compiled.kernel("addsub_normal")
    if kernel is not None and a.size and not sc.underrange:
        fa, fb = _flat_pair(a, b)
        y = np.empty(a.shape, np.uint8)
        bounds = np.empty(2, np.int64)
        kernel(fa, fb, sc.a_scale, sc.b_scale, sc.offset, sc.rsh, y.reshape(-1), bounds)
        return y, int(bounds[0]), int(bounds[1])
    t = addsub_intermediate(a, b, sc)
    span = (int(t.min()), int(t.max())) if t.size else (None, None)
    return addsub_codes_of(t, sc), *span


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
    if not raw.size:                # an input with no elements (a 0 against a 1): all outside
        return np.zeros(total, np.uint8)
    return np.where(outside, 0, raw[np.minimum(idx, raw.size - 1)]).astype(np.uint8)


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


def _add_broadcast(ctx: KernelContext, st: OutRange, a: Tensor, b: Tensor,
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


def add_reference(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor, a_max: Tensor,
                  b_min: Tensor, b_max: Tensor, *out_range: Tensor) -> tuple[np.ndarray, ...]:
    """a + b of the dequantized inputs (broadcast)."""
    return ranged(real(a, a_min, a_max) + real(b, b_min, b_max))


@op("QuantizedAdd_8p8to8", Category.ELEMENTWISE,
    reference=add_reference,
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
    its output is tagged qint8 as the device tags it (``tensor_out_prepare_normal_fromshape(...,
    NN_TYPE_QINT8)`` in op_add.c; the flat path tags quint8): the bytes are the same quint8
    codes, and the ops that read them take them as quint8, as the device's do;
    and the device's ``expand`` indexes the source with the output's b/h/w, so only a depth
    broadcast reads the intended bytes (others read other rows or past the end: a warning).

    Errors: "scaling failed" (output range too narrow for the input steps: gain exponent > 6,
    or > 12 with both ends fixed); "incompatible shapes". Simulator guard: the broadcast
    retries are capped at 64 (the device recurses without a limit).
    """
    if "add" not in ctx.state:
        ctx.state["add"] = _prepare_state(fixed)
    r = ctx.state["add"]
    assert isinstance(r, OutRange)
    # The library reads the fixed values on every execution (§15).
    if r.min_fixed:
        r.min_spec = f32(scalar_f(fixed[0]))
    if r.max_fixed:
        r.max_spec = f32(scalar_f(fixed[1]))
    ranges = tuple(scalar_f(t) for t in (a_min, a_max, b_min, b_max))
    if a.shape == b.shape:
        y = _add_flat(ctx, r, a.array, b.array, ranges)  # type: ignore[arg-type]
        return (y, _scalar_out(r.out_min), _scalar_out(r.out_max))
    y = _add_broadcast(ctx, r, a, b, ranges)  # type: ignore[arg-type]
    # op_add.c: this path prepares its output as NN_TYPE_QINT8 (the flat one as QUINT8) over
    # the same quint8 codes, which the ops after it read as quint8
    codes = Tensor.from_array(fresh(np.ascontiguousarray(y, np.uint8)), DType.QUINT8)
    return (codes.tagged(DType.QINT8), _scalar_out(r.out_min), _scalar_out(r.out_max))
