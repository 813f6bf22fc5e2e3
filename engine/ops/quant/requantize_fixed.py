"""Requantize to a given range: Requantize_32to8 (qint32 -> quint8) and Requantize_8to8
(quint8 -> quint8), nnlib's ``op_requantize.c`` (``do_requantize_execute``,
``do_requantize_8to8_execute``) and ``quantize.c`` (``nn_requantize_qu8_to_qu8_hvx``).

The TFLite Hexagon delegate emits Requantize_32to8 at the end of its FULLY_CONNECTED chain and
Requantize_8to8 for QUANTIZE (a change of range of 8-bit data).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import exact_memo, getexp, rndi1
from hexscope.engine.ops.context import KernelContext, Shared, scalar_f
from hexscope.engine.ops.elementwise.activation import range_words
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.quant.requantize import code_bounds, requantize_i32_to_u8
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.quant import adjust_range
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_F32 = DType.FLOAT32
_RANGE_IN = (Port("x_min", _F32), Port("x_max", _F32), Port("out_min", _F32),
             Port("out_max", _F32))
_OUT = (Port("y", DType.QUINT8), Port("y_min", _F32), Port("y_max", _F32))


def _clamped_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                       out_min: Tensor, out_max: Tensor) -> tuple[np.ndarray, ...]:
    """the value itself, clamped to the requested output range (nudged to hold 0)."""
    lo, hi = adjust_range(scalar_f(out_min), scalar_f(out_max))
    y = np.clip(real(x, x_min, x_max), lo, hi)
    return ranged(y)[0], np.float32(lo), np.float32(hi)


# Requantize_32to8 ---------------------------------------------------------------------------

def _requantize_32to8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                      out_min: Tensor, out_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Requantize qint32 to quint8 in a given range.

    Semantics (op_requantize.c ``do_requantize_execute``): the input step is
    f32((x_max - x_min) * 2^-32); the output range is R1 (``quantize_adjust_range``) of the
    given [out_min, out_max], which includes 0 and is nudged so 0.0 is an exact code; the
    codes are then requantized by ``nn_requantize_i32_to_qu8_hvx`` into that range (as
    QuantizeDownAndShrinkRange_32to8 does after its shrink, quantized-ops spec §7). Outputs
    1 and 2 are the adjusted range.

    Fidelity: the integer paths are those of QuantizeDownAndShrinkRange_32to8: gain >= 1
    takes the float path C; otherwise a 31-bit gain, with Path A (``quantize_asm``, DSP
    only) for 128 or more elements and a gain code >= 1024, else Path B. The oracle runs
    nnlib's non-HVX twin ``nn_requantize_i32_to_qu8`` (Path B or C): below 128 elements the
    two are byte-exact; above, Path B matches the twin and Path A is checked separately
    (docs/oracle-fc.md). ``_ref`` is the same code in nnlib (both names run
    ``requantize_execute``).

    Errors: none beyond arity and types (nnlib checks only the output capacity).
    """
    codes = x.array
    level, mn, mx, w_min, w_max = requantize_32to8_plan(scalar_f(x_min), scalar_f(x_max),
                                                        scalar_f(out_min), scalar_f(out_max))
    # the codes' bounds serve only path A's numpy form (they let it skip a clip)
    bounds = None if compiled.kernel("requantize_path_a") else code_bounds(codes)
    with np.errstate(all="ignore"):     # inf/NaN ranges follow the C's float arithmetic
        y = requantize_i32_to_u8(codes, level, mn, mx, bounds=bounds)
    # Tensors already: the executor's plain check takes them as they are
    return (Tensor.from_array(fresh(np.asarray(y).astype(np.uint8, copy=False).reshape(x.shape)),
                              DType.QUINT8), Tensor.scalar_of(w_min), Tensor.scalar_of(w_max))


@exact_memo
def requantize_32to8_plan(x_min: float, x_max: float, out_min: float, out_max: float
                          ) -> tuple[np.float32, np.float32, np.float32, np.ndarray, np.ndarray]:
    """(input step, output min, output max, their words) of Requantize_32to8, in the C's
    float32 steps; memoised on the exact bits (the ranges repeat from run to run, and the
    scalar maths ran cold once a run: ~15 us of a MobileNetV2 run's classifier)."""
    level = f32(f32(f32(x_max) - f32(x_min)) * f32(2.0 ** -32))
    mn, mx = (f32(v) for v in adjust_range(out_min, out_max))
    return (level, mn, mx, *range_words(mn, mx))


for _name in ("Requantize_32to8", "Requantize_32to8_ref"):
    op(_name, Category.QUANTIZE, reference=_clamped_reference,
       inputs=(Port("x", DType.QINT32), *_RANGE_IN), outputs=_OUT)(_requantize_32to8)


# Requantize_8to8 ----------------------------------------------------------------------------

def requantize_8to8_plan(in_min: float, in_max: float, out_min: float, out_max: float
                         ) -> tuple[np.float32, int, int]:
    """(gain, in_offset, out_offset) as ``do_requantize_8to8_execute`` computes them."""
    with np.errstate(all="ignore"):
        in_range = f32(f32(in_max) - f32(in_min))
        out_range = f32(f32(out_max) - f32(out_min))
        gain = f32(in_range / out_range)
        in_off = min(255, max(0, rndi1(f32(f32(f32(-255.0) * f32(in_min)) / in_range))))
        out_off = min(255, max(0, rndi1(f32(f32(f32(-255.0) * f32(out_min)) / out_range))))
    return gain, in_off, out_off


def requantize_u8_lanes(codes: np.ndarray, gain: np.float32, in_off: int,
                        out_off: int) -> np.ndarray:
    """``nn_requantize_qu8_to_qu8_hvx`` lane by lane: 16-bit lanes, three paths by gain.

    |gain - 1| < 2^-14: y = sat_u8(x + sat16(out_off - in_off)). gain > 1: the fraction of
    gain (frexp, [0.5, 1)) as a 16-bit gi = sat16(roundf_i32(frac * 2^15)), then
    sat16((d * gi + rnd) >> (15 - exp)) with rnd = 2^(shift-1) (0 for a zero shift),
    d = x - in_off. Otherwise gi = sat16(roundf_i32(gain * 2^15)) and
    sat16((2 * d * gi + 2^15) >> 16) (``vmpy(Vh, Rh):<<1:rnd:sat``); the odd lanes multiply
    by the upper half of ``gi | gi << 16``, which is gi for gi >= 0 and -1 for a negative
    gi (a negative gain: an input range with max < min). The output offset is then added
    with 16-bit saturation and the result saturated to 0..255.
    """
    d = codes.astype(np.int32) - np.int32(in_off)
    if abs(float(gain) - 1.0) < 6.1035156e-05:      # CLOSE_ENUF(gain, 1.0f)
        tot = max(-32768, min(32767, out_off - in_off))
        return np.clip(codes.astype(np.int32) + tot, 0, 255).astype(np.uint8)
    if gain > 1:
        frac = f32(np.frexp(gain)[0])
        gi = max(-32768, min(32767, rndi1(f32(frac * f32(32768.0)))))
        shift = 15 - getexp(gain)
        rnd = (1 << (shift - 1)) if shift > 0 else 0
        prod = np.clip((d * gi + rnd) >> shift, -32768, 32767)
    else:
        gi = max(-32768, min(32767, rndi1(f32(gain * f32(32768.0)))))
        gi_odd = -1 if gi < 0 else gi      # the upper half of gi | gi << 16
        g = np.full(codes.shape, gi, np.int32)
        g.reshape(-1)[1::2] = gi_odd
        prod = np.clip((2 * d * g + 32768) >> 16, -32768, 32767)
    return np.clip(np.clip(prod + out_off, -32768, 32767), 0, 255).astype(np.uint8)


def requantize_u8_by_table(codes: np.ndarray, gain: np.float32, in_off: int,
                           out_off: int) -> np.ndarray:
    """:func:`requantize_u8_lanes` of a flat array, as a lookup: each output depends only on
    its code and on whether its lane is odd, so the 256 codes are requantized once per lane
    parity and the data indexes the tables (a 112x112x32 tensor of MobileNetV2 took 0.6 ms
    in the int32 arithmetic, most of the model's 32 Requantize_8to8)."""
    if codes.size <= 512:
        return requantize_u8_lanes(codes, gain, in_off, out_off)
    gain_bits = int(np.float32(gain).view(np.uint32))
    steps = _affine_steps(gain_bits, in_off, out_off)
    affine = compiled.kernel("affine_codes")
    if steps is not None and affine is not None:
        y = np.empty(codes.shape, np.uint8)
        affine(np.ascontiguousarray(codes).reshape(-1), *steps, y.reshape(-1))
        return y
    even, odd = _lane_tables(gain_bits, in_off, out_off)
    lookup = compiled.kernel("lookup_into")
    if odd is None and lookup is not None:
        # one compiled pass: numpy's fancy indexing widens every code to intp first
        y = np.empty(codes.shape, np.uint8)
        lookup(np.ascontiguousarray(codes).reshape(1, -1), even, y.reshape(1, -1), 0)
        return y
    y = even[codes]
    if odd is not None:         # only a negative gain gives odd lanes their own
        y[1::2] = odd[codes[1::2]]
    return y


@functools.lru_cache(maxsize=1024)
def _lane_tables(gain_bits: int, in_off: int, out_off: int
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """The 256 codes requantized at an even lane and at an odd one (None when the same),
    read-only, for the float32 gain of these bits; the same few plans repeat run after run."""
    gain = np.array(gain_bits, np.uint32).view(np.float32)[()]
    # code c at an even lane (2c) and at an odd lane (2c + 1)
    table = requantize_u8_lanes(np.repeat(np.arange(256, dtype=np.uint8), 2), gain, in_off,
                                out_off)
    even, odd = table[0::2].copy(), table[1::2].copy()
    even.flags.writeable = odd.flags.writeable = False
    return even, None if np.array_equal(even, odd) else odd


@functools.lru_cache(maxsize=1024)
def _affine_steps(gain_bits: int, in_off: int, out_off: int
                  ) -> tuple[int, int, int, int, int] | None:
    """(in_off, mul, add, shift, out_off) such that every code c requantizes to
    sat_u8((((c - in_off) * mul + add) >> shift) + out_off), or None (odd lanes of their own,
    or the compiled kernels off). :func:`requantize_u8_lanes`'s 16-bit saturations cannot
    bind before its last clamp to 0..255 (|d * gi| < 2^24 in int32, and a saturated lane
    saturates the byte the same way), so its three paths are this one step; kept only when
    the compiled step gives the 256-entry table exactly."""
    even, odd = _lane_tables(gain_bits, in_off, out_off)
    affine = compiled.kernel("affine_codes")
    if odd is not None or affine is None:
        return None
    gain = np.array(gain_bits, np.uint32).view(np.float32)[()]
    if abs(float(gain) - 1.0) < 6.1035156e-05:      # CLOSE_ENUF(gain, 1.0f)
        steps = (0, 1, 0, 0, max(-32768, min(32767, out_off - in_off)))
    elif gain > 1:
        frac = f32(np.frexp(gain)[0])
        gi = max(-32768, min(32767, rndi1(f32(frac * f32(32768.0)))))
        shift = 15 - getexp(gain)
        steps = (in_off, gi, (1 << (shift - 1)) if shift > 0 else 0, shift, out_off)
    else:
        gi = max(-32768, min(32767, rndi1(f32(gain * f32(32768.0)))))
        steps = (in_off, 2 * gi, 32768, 16, out_off)
    got = np.empty(256, np.uint8)
    affine(np.arange(256, dtype=np.uint8), *steps, got)
    return steps if np.array_equal(got, even) else None


def _requantize_8to8_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                               out_min: Tensor, out_max: Tensor) -> tuple[np.ndarray, ...]:
    """the value itself, clamped to the requested output range."""
    lo, hi = scalar_f(out_min), scalar_f(out_max)
    return ranged(np.clip(real(x, x_min, x_max), lo, hi))[0], np.float32(lo), np.float32(hi)


@op("Requantize_8to8", Category.QUANTIZE, reference=_requantize_8to8_reference,
    inputs=(Port("x", DType.QUINT8), *_RANGE_IN), outputs=_OUT)
def requantize_8to8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                    out_min: Tensor, out_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Change the range of quint8 data to a given output range (the delegate's QUANTIZE).

    Semantics (op_requantize.c ``do_requantize_8to8_execute``): the given output range must
    already be R1-exact (``quantize_adjust_range`` leaves it unchanged, so 0.0 is a code);
    gain = f32(f32(x_max - x_min) / f32(out_max - out_min)); in_offset =
    sat_u8(roundf_i32(-255 * x_min / in_range)) and out_offset likewise; each code becomes
    sat_u8(out_offset + gain * (x - in_offset)) in the 16-bit fixed point of
    ``nn_requantize_qu8_to_qu8_hvx`` (see :func:`requantize_u8_lanes`).

    Fidelity: nnlib has only the HVX body (no ``_ref``, no scalar twin). The oracle runs
    nnlib's op with that function replaced by a lane-by-lane C emulation of its HVX
    instructions written from the HVX manual's semantics (tests/oracle/driver/overrides.c):
    the checks, the gain and the offsets are nnlib's own C, the lane arithmetic is not an
    independent check. Outputs 1 and 2 are R1's result (equal to the given range, except that
    a given -0.0 comes out as 0.0). A zero shift in the gain > 1 path (gain in
    [2^14, 2^15)) is taken as adding no rounding (the manual's 1 << (shift - 1) is undefined
    there; unconfirmed).

    Errors (KernelError): an output range that R1 would change ("does not yield an integer
    zero-point", with the range to use); a gain of 2^15 or more ("Out range too small
    compared to in range").
    """
    plan = _checked_plan(scalar_f(x_min), scalar_f(x_max), scalar_f(out_min),
                         scalar_f(out_max))
    gain, in_off, out_off, w_min, w_max = plan
    codes = x.array.reshape(-1)
    # the node keeps its lookup while the (memoised, so the same) plan and size come in
    kept = ctx.state.get("requantize")
    if isinstance(kept, Shared) and kept.key[0] is plan and kept.key[1] == codes.size:  # type: ignore[index]
        y = kept.value(codes)  # type: ignore[operator]
    else:
        run = _requantizer(gain, in_off, out_off, codes.size)
        ctx.state["requantize"] = Shared((plan, codes.size), run)
        y = run(codes)
    # Tensors as the executor would wrap the arrays (its plan then takes them as they are)
    return (Tensor(x.shape, DType.QUINT8, y), Tensor.scalar_of(w_min), Tensor.scalar_of(w_max))


def _requantizer(gain: np.float32, in_off: int, out_off: int, size: int
                 ) -> Callable[[np.ndarray], np.ndarray]:
    """:func:`requantize_u8_by_table` of ``size`` codes with its step found once: the
    compiled affine step where it applies, else that function itself."""
    steps = _affine_steps(int(np.float32(gain).view(np.uint32)), in_off, out_off) \
        if size > 512 else None
    affine = compiled.kernel("affine_codes") if steps is not None else None
    if steps is None or affine is None:
        return lambda codes: requantize_u8_by_table(codes, gain, in_off, out_off)

    def run(codes: np.ndarray) -> np.ndarray:
        y = np.empty(codes.shape, np.uint8)
        affine(np.ascontiguousarray(codes), *steps, y)
        return y

    return run


@exact_memo
def _checked_plan(x_min: float, x_max: float, out_min: float, out_max: float
                  ) -> tuple[np.float32, int, int, np.ndarray, np.ndarray]:
    """:func:`requantize_8to8_plan` after the op's checks, with the output range words;
    memoised on the exact bits of the four values (a refusal is raised, never kept)."""
    o_min, o_max = f32(out_min), f32(out_max)
    with np.errstate(all="ignore"):
        a_min, a_max = adjust_range(o_min, o_max)
    if f32(a_min) != o_min or f32(a_max) != o_max:
        raise KernelError(f"Requantize_8to8: the output range ({o_min:g}, {o_max:g}) does not "
                          f"give an integer zero code; use ({a_min:.9g}, {a_max:.9g})")
    gain, in_off, out_off = requantize_8to8_plan(x_min, x_max, o_min, o_max)
    if getexp(gain) > 15:
        raise KernelError(f"Requantize_8to8: the output range is too small compared to the "
                          f"input range (gain {float(gain):g} >= 2^15)")
    w_min, w_max = range_words(f32(a_min), f32(a_max))     # -0.0 comes out as R1's 0.0
    return gain, in_off, out_off, w_min, w_max
