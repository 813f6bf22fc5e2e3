"""The float32 set-up of nnlib's depthwise Supernode (op_dwise_snode_8bit.c and the helpers of
hexagon/include/supernode_utils.h it calls): the output range, the per-channel multipliers,
the folded bias and the range retry. Every step is float32 in the C's order, so the
integers it hands to the requantization are the C's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import (
    adjust_with_constraints,
    c_roundf_int1,
    fmaxf,
    fminf,
    getexp,
    level_size_zero,
    za_scaled,
)
from hexscope.engine.tensor import Tensor

f32 = np.float32
_R4 = (f32(0.594603539), f32(0.7071067691), f32(0.8408964276))   # 2**(k/4) / 2


@dataclass
class DwiseRange:
    """The output range the node keeps (``supernode_info_new``): its bounds, which of them
    the inputs fix (bit 0 min, bit 1 max), the inputs' values, and whether the first-guess
    adjustment is still due."""

    mn: np.float32
    mx: np.float32
    flags: int
    spec_mn: np.float32
    spec_mx: np.float32
    first_guess: bool


def ldexp_f(x: float, e: int) -> np.float32:
    """``flt_ldexp``: x times the float32 power of two (a float32 product)."""
    with np.errstate(over="ignore"):
        return f32(f32(x) * f32(2.0 ** e))


def roundf_u32(x: float) -> int:
    """``roundf_u32`` on Hexagon: convert_sf2uw:chop(x + 0.5f), negatives to 0, saturating, a
    NaN to 0xFFFFFFFF (as qemu-hexagon computes it: an infinite filter or input range's NaN
    gain then takes the largest multiplier, docs/oracle-hvx.md)."""
    v = f32(f32(x) + f32(0.5))
    if not np.isfinite(v):
        return 0 if v < 0 else 0xFFFFFFFF
    return int(min(max(np.floor(float(v)), 0.0), 4294967295.0))


def roundf_u32_array(x: np.ndarray) -> np.ndarray:
    """``roundf_u32`` of each float32 of ``x``, as int64 (one call per channel was a third of
    a MobileNetV2 run in Python)."""
    with np.errstate(invalid="ignore", over="ignore"):
        v = (np.asarray(x, f32) + f32(0.5)).astype(np.float64)
    out = np.clip(np.floor(np.nan_to_num(v, nan=4294967295.0, posinf=4294967295.0,
                                         neginf=0.0)),
                  0.0, 4294967295.0)
    return out.astype(np.int64)


def round_up_quarter_octave(x: float) -> np.float32:
    """``round_up_quarter_octave``: the next power of 2**(1/4) above x*1.189 (sign kept)."""
    xk = f32(f32(x) * f32(1.18920708))
    bits = int(np.asarray(xk).view(np.uint32))
    frac = abs(np.asarray((bits & 0x807FFFFF) | (126 << 23), np.uint32).view(np.float32)[()])
    if frac >= _R4[1]:
        mant = f32(1.0) if frac >= _R4[2] else _R4[2]
    else:
        mant = _R4[1] if frac >= _R4[0] else _R4[0]
    return f32(np.copysign(ldexp_f(mant, getexp(xk)), f32(x)))


def initial_range(o_min: float, o_max: float, free_min: float = -0.125,
                  free_max: float = 0.125) -> DwiseRange:
    """``setup_initial_output_range(.., free_min, free_max)``: ``dwise_supernode_check``
    passes -0.125, 0.125; ``supernode_check`` 0, 0.5; ``shortin_supernode_check`` -1/128,
    1/128 (op_supernode_new.c)."""
    mn, mx = f32(o_min), f32(o_max)
    if mn > 0 or mx < 0 or not mn < mx:
        raise KernelError(f"output range [{mn}, {mx}] must hold 0 and have min < max "
                          "(device: 'supernode: invalid input min/max')")
    flags = (0 if np.isinf(mx) and mx > 0 else 2) | (0 if np.isinf(mn) and mn < 0 else 1)
    lo = mn if flags & 1 else f32(free_min)
    hi = mx if flags & 2 else f32(free_max)
    if lo < 0:
        lo, hi = adjust_with_constraints(lo, hi, flags)
    return DwiseRange(f32(lo), f32(hi), flags, mn, mx, flags != 3)


def channel_scales(channel_scale: tuple[Tensor, ...], channels: int
                    ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(k, 1/k) from input 12 as ``check_channelscale_present`` and ``load_channel_scales``
    read it, or (None, None) when it is absent or a single 1.0."""
    if not channel_scale or not channel_scale[0].has_data:
        return None, None
    s = np.asarray(channel_scale[0].array, np.float32).reshape(-1)
    if s.size == 1 and s[0] == 1.0:
        return None, None
    if s.size != channels:
        raise KernelError(f"expected size {channels} vector for channel_scale, got {s.size} "
                          "(device's message)")
    bad = np.flatnonzero(~((s <= 1.0) & (s >= f32(1.0 / 2048.0))))
    if bad.size:
        raise KernelError(f"bad channel scale[{bad[0]}]= {s[bad[0]]:.8f}: scales must lie in "
                          "[1/2048, 1] (device's message)")
    with np.errstate(divide="ignore"):
        kinv = np.where(s == 1.0, f32(1.0), (f32(1.0) / s).astype(np.float32))
    return s, kinv.astype(np.float32)


@dataclass(frozen=True)
class Scaling:
    """What ``fill_info_minmax_basics`` leaves: steps, zero code and multipliers."""

    in_offset: int
    prod_level: np.float32
    out_level: np.float32
    shamt: int
    recip: np.ndarray        # int64, one per output channel


def minmax_basics(rng: DwiseRange, x_min: float, x_max: float, w_level: np.float32,
                  scales: np.ndarray | None, channels: int) -> Scaling:
    """``fill_info_minmax_basics`` for max_k = 1 (channel scales are all <= 1); may move the
    output range on the first guess. ``scales`` are the channel scales (k), or None."""
    in_min = f32(x_min)
    in_max = fmaxf(f32(x_max), f32(in_min + f32(1e-18)))
    if not (np.isfinite(in_min) and np.isfinite(in_max)):
        raise KernelError("input range to supernode, not finite (device's message)")
    in_offset, in_level = level_size_zero(in_min, in_max)
    with np.errstate(all="ignore"):
        prod = f32(in_level * w_level)
        _, out_level = level_size_zero(rng.mn, rng.mx)
        scaling = f32(f32(f32(1.0) * prod) / out_level)
        if rng.first_guess:
            scaling, out_level = _first_guess(rng, prod, scaling, out_level)
            rng.first_guess = False
        # (final_scaling <= 1.0f) ? 0 : flt_getexp(..): a NaN gain takes the exponent, 129
        shamt = 0 if scaling <= 1.0 else getexp(scaling)
        if scales is None:
            recip = np.full(channels, min(roundf_u32(ldexp_f(scaling, 31 - shamt)),
                                          0x7FFFFFFF), np.int64)
        else:
            common = ldexp_f(f32(prod / out_level), 31 - shamt)
            # the product in the scales' own precision, then float32, as the scalar C did
            products = np.asarray(common * np.asarray(scales)).astype(f32)
            recip = np.minimum(roundf_u32_array(products), 0x7FFFFFFF)
    return Scaling(in_offset, prod, out_level, shamt, recip)


def _first_guess(rng: DwiseRange, prod: np.float32, scaling: np.float32,
                 out_level: np.float32) -> tuple[np.float32, np.float32]:
    """The ``outrange_firstguess`` branch: a first gain over 1.75 widens a free range."""
    if not scaling > f32(1.75):
        return scaling, out_level
    out_level = f32(prod / f32(1.75))
    need_adjust = False
    if rng.flags == 1:
        rng.mx = f32(rng.mn + f32(f32(255.0) * out_level))
        need_adjust = bool(rng.mn < 0)
    elif rng.flags == 2:
        rng.mn = f32(rng.mx - f32(f32(255.0) * out_level))
        need_adjust = True
    else:
        rng.mn = f32(f32(-63.0) * out_level)
        rng.mx = f32(f32(192.0) * out_level)
    scaling = f32(1.75)
    if need_adjust:
        rng.mn, rng.mx = adjust_with_constraints(rng.mn, rng.mx, rng.flags)
        _, out_level = level_size_zero(rng.mn, rng.mx)
        scaling = f32(prod / out_level)
    return scaling, out_level


def bias_buffer(bias: np.ndarray, bias32: bool, b_min: float, b_max: float, rng: DwiseRange,
                sc: Scaling, gemsumb: np.ndarray, kinv: np.ndarray | None) -> np.ndarray:
    """``fill_bias_buf``: per channel round(f32(f32(bias in product steps - out_min in
    product steps) * kinv) - gemsumb * in_offset), int64; raises where it leaves int32.
    ``bias`` holds the bias tensor's values; channels past its end take its zero code
    (``quantize_uint``, unclamped above, as the C).

    The C's ``fast_i64_roundf`` is Hexagon's convert_sf2d, rounding half to even (the
    host build's roundf rounds half away), a NaN giving -1 (checked under qemu-hexagon,
    docs/oracle-hvx.md)."""
    bmn, bmx = f32(b_min), f32(b_max)
    offset = 0 if bias32 else max(0, c_roundf_int1(za_scaled(0.0, bmn, bmx)))
    channels = gemsumb.size
    given = np.asarray(bias).reshape(-1)[:channels].astype(np.int64)
    bias = np.full(channels, offset, np.int64)      # channels past the bias read its zero
    bias[:given.size] = given
    with np.errstate(all="ignore"):
        level = f32(f32(bmx - bmn) / f32(2.0**32 if bias32 else 255.0))
        ratio = f32(level / sc.prod_level)
        out_off = f32(f32(-rng.mn) / sc.prod_level)
        vals = (bias.astype(np.int64) - offset).astype(np.int32).astype(np.float32)
        fval = (vals * ratio).astype(np.float32)
        minout = (fval + out_off).astype(np.float32)
        if kinv is not None:
            minout = (minout * kinv.astype(np.float32)).astype(np.float32)
        g = (gemsumb.astype(np.int64) * sc.in_offset).astype(np.int32).astype(np.float32)
        final = (minout - g).astype(np.float32)
    # convert_sf2d of a NaN (an empty filter or input range: 0 x inf, inf - inf) is -1 on
    # Hexagon; an infinity saturates, which the int32 test below refuses
    rounded = np.rint(np.where(np.isnan(final), -1.0, final.astype(np.float64)))
    if np.any((rounded < -(2.0**31)) | (rounded >= 2.0**31)):
        raise KernelError("the bias in steps of the sums leaves int32 (device: 'Final too big, "
                          "will cause overflow.')")
    return rounded.astype(np.int64)


def would_retry(flags: int, lo: int, hi: int) -> bool:
    """Whether outputs ``lo``..``hi`` (before clamping) leave a free bound of a range with
    ``flags``: :func:`retry`'s test without its moves (a kept run that would move the range
    takes the general path)."""
    return flags != 3 and (not flags & 2 and hi > 255 or not flags & 1 and lo < 0)


def retry(rng: DwiseRange, sc: Scaling, lo: int, hi: int) -> bool:
    """``supernode_execute_workitem_check_for_retry``: widen a free bound the outputs
    (``lo``..``hi`` before clamping) left; True when the node must run again."""
    if not would_retry(rng.flags, lo, hi):
        return False
    moved = False
    with np.errstate(all="ignore"):
        if not rng.flags & 2 and hi > 255:
            ext = f32(f32(sc.out_level * f32(f32(hi) + f32(0.5))) + rng.mn)
            rng.mx = round_up_quarter_octave(fmaxf(ext, f32(2.0**-4)))
            moved = True
        if not rng.flags & 1 and lo < 0:
            ext = f32(f32(sc.out_level * f32(f32(lo) - f32(0.5))) + rng.mn)
            rng.mn = round_up_quarter_octave(fminf(ext, f32(-(2.0**-8))))
            moved = True
    if moved:
        if rng.flags & 1:
            rng.mn = rng.spec_mn
        if rng.flags & 2:
            rng.mx = rng.spec_mx
        mn, mx = adjust_with_constraints(rng.mn, rng.mx, rng.flags)
        rng.mn, rng.mx = f32(mn), f32(mx)
    return moved


__all__ = ["DwiseRange", "Scaling", "bias_buffer", "channel_scales", "initial_range",
           "minmax_basics", "retry", "round_up_quarter_octave", "roundf_u32", "roundf_u32_array",
           "would_retry"]
