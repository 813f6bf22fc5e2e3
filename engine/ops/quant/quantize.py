"""Float <-> quint8 conversion: Quantize, AutoQuantize, Dequantize (quantized-ops spec §17-§19).

The plain ops run hexagon_nn's HVX routines, emulated bit for bit in ``quantizer``: the
fixed-point quantizer (not float rounding) and the round-half-up dequantizer.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import level_size_zero_floored
from hexscope.engine.ops.context import KernelContext, data_of, f32_scalar, scalar_f
from hexscope.engine.ops.kernels import quantizer as hq
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

_RANGE_IN = (Port("min", DType.FLOAT32), Port("max", DType.FLOAT32))
_QU8_OUT = (Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
            Port("y_max", DType.FLOAT32))


def log_params(ctx: KernelContext, p: hq.HvxQuantParams) -> None:
    """The level-2 line the HVX quantizers write after their range setup."""
    if ctx.debug_level >= 2:
        ctx.log(2, f"minval={p.minval:f} maxval={p.maxval:f} range={p.maxval - p.minval:f} "
                   f"scaling = {p.scaling}, common_exp = {p.common_exp} "
                   f"min_offset={p.min_offset:x}")


def quantized(ctx: KernelContext, x: np.ndarray, p: hq.HvxQuantParams) -> tuple[Tensor, ...]:
    log_params(ctx, p)
    codes = hq.hvx_quantize(x, p).reshape(x.shape)
    return (Tensor.from_array(codes, DType.QUINT8), f32_scalar(p.minval),
            f32_scalar(p.maxval))


def auto_params(x: np.ndarray, what: str) -> hq.HvxQuantParams:
    """The AutoQuantize range: data with 0 included, via the bit-pattern range finder."""
    neg_min, max_ = hq.hvx_range(x)
    params = hq.hvx_quant_params(neg_min, max_)
    if params is None:
        raise KernelError(f"inf or NaN input to {what}: the data range is "
                          f"{-neg_min} .. {max_}; every value must be finite")
    return params


def quantize_reference(ctx: KernelContext, x: Tensor, *ranges: Tensor) -> tuple[np.ndarray, ...]:
    """the value itself (quantizing approximates it)."""
    return ranged(real(x))


@op("Quantize", Category.QUANTIZE,
    reference=quantize_reference, inputs=(Port("x", DType.FLOAT32), *_RANGE_IN),
    outputs=_QU8_OUT)
def quantize(ctx: KernelContext, x: Tensor, mn: Tensor, mx: Tensor) -> tuple[Tensor, ...]:
    """Float to quint8 over a given range, with the HVX fixed-point quantizer.

    Range (quantized-ops spec §17.2): out_min = min, out_max = max(min + 1e-18, max), then
    the zero nudge R2 when min < 0; that nudged range is reported. Codes come from the
    fixed-point path on the float bit fields, which truncates its constants, so about 1 % of
    codes are one below round-to-nearest. Values outside the range saturate to 0 or 255.

    Quirks kept from the device: a min above 0 is neither rejected nor clamped (its
    magnitude is added as if it were negative), and a range wholly below 0 is not corrected;
    both give meaningless codes (Quantize_ref rejects them). Inputs far outside the range
    (beyond about 16 times its width) go through a negative vector shift count whose
    hardware meaning is unconfirmed (§23 item 3); it is read as a left shift.

    Errors: min or max inf or NaN ("inf or NaN input").
    """
    lo, hi = scalar_f(mn), scalar_f(mx)
    params = hq.hvx_quant_params(-np.float32(lo), hi)
    if params is None:
        raise KernelError(f"inf or NaN input, to autoquantize: the range {lo} .. {hi} must "
                          "be finite")
    return quantized(ctx, data_of(x, "input 0").astype(np.float32), params)


@op("AutoQuantize", Category.QUANTIZE,
    reference=quantize_reference, inputs=(Port("x", DType.FLOAT32),), outputs=_QU8_OUT)
def auto_quantize(ctx: KernelContext, x: Tensor) -> tuple[Tensor, ...]:
    """Float to quint8 over the data's own range (0 included), HVX fixed-point quantizer.

    quantized-ops spec §19: the range finder compares float bit patterns, so any NaN or inf
    fails the op ("inf or NaN input"). The range (-min(0, data min), max(0, data max)) then
    goes through the Quantize setup (§17.2): max at least min + 1e-18, R2 nudge when min < 0.
    Data without negative values report out_min = -0.0; all-zero data give (-0.0, 1e-18) and
    all codes 0. Prepare creates this op from Quantize fed by Min_f/Max_f.
    """
    data = data_of(x, "input 0").astype(np.float32)
    return quantized(ctx, data, auto_params(data, "autoquantize"))


def dequantize_array(ctx: KernelContext, q: np.ndarray, lo: float, hi: float) -> np.ndarray:
    zero, step = level_size_zero_floored(lo, hi)
    # As dequantize_execute (op_quantize.c) tests it: a NaN step (an infinite range width,
    # flt_div_255) passes the check and goes to the vector routine.
    if step < 0 or step >= hq.DEQ_STEP_LIMIT:
        raise KernelError(f"infeasible quantization step: {step:.6g} (range {lo} .. {hi}); "
                          "the step (max - min)/255 must be below 2^121")
    if step < hq.DEQ_STEP_TINY:
        ctx.log(0, f"dequant with stepsize = {step:.6g}: filling with zero")
        return np.zeros(q.shape, np.float32)
    return hq.hvx_dequantize(q, zero, step)


def _dequantize(ctx: KernelContext, q: Tensor, mn: Tensor, mx: Tensor) -> tuple[np.ndarray]:
    codes = data_of(q, "input 0").astype(np.uint8)
    return (dequantize_array(ctx, codes, scalar_f(mn), scalar_f(mx)),)


def dequantize_reference(ctx: KernelContext, q: Tensor, mn: Tensor,
                         mx: Tensor) -> tuple[np.ndarray]:
    """the real value of each code: min + q (max - min) / 255."""
    return (real(q, mn, mx),)


@op("Dequantize", Category.QUANTIZE,
    reference=dequantize_reference, inputs=(Port("q", DType.QUINT8), *_RANGE_IN),
    outputs=(Port("y", DType.FLOAT32),))
def dequantize(ctx: KernelContext, q: Tensor, mn: Tensor, mx: Tensor) -> tuple[np.ndarray]:
    """quint8 to float: (q - zero) * step, rounded half up as the HVX routine does.

    quantized-ops spec §18: step = div255(max(1e-18, max - min)), zero =
    sat_u8(roundf_i32(-min / step)). The exact product |q - zero| * mantissa(step) is rounded to
    24 bits with ties going up (a float multiply would round ties to even: about 2 % of results
    differ by one ulp); q == zero gives +0.0. A min above 0 gives zero code 0 and a max below 0
    zero code 255, so such ranges do not mean min + q * step. A NaN width is floored to 1e-18;
    a NaN min gives zero code 0 (Hexagon converts NaN to -1; unconfirmed).

    Errors: step >= 2^121 ("infeasible quantization step"). The device's "step below 2^-126:
    fill with zeros" branch is kept but cannot be reached, since the width is floored at
    1e-18 first. Dequantize_ref runs the same routine.
    """
    return _dequantize(ctx, q, mn, mx)


@op("Dequantize_ref", Category.QUANTIZE,
    reference=dequantize_reference, inputs=(Port("q", DType.QUINT8), *_RANGE_IN),
    outputs=(Port("y", DType.FLOAT32),))
def dequantize_ref(ctx: KernelContext, q: Tensor, mn: Tensor, mx: Tensor) -> tuple[np.ndarray]:
    """quint8 to float, exactly as Dequantize (hexagon_nn binds both ids to one routine).

    See Dequantize (quantized-ops spec §18) for the rounding, the zero code and the errors.
    """
    return _dequantize(ctx, q, mn, mx)
