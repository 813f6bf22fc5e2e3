"""QuantizedMinimum_8 and QuantizedMaximum_8: elementwise min / max of two quint8 tensors
with broadcast, both requantized onto one output range (nnlib op_minimum_maximum.c)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import c_roundf_int1, fmaxf, fminf, level_size_zero, sat_i16, sat_u8
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op, shared_doc
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_SHIFT = 12
_CODES = np.arange(256, dtype=np.uint8)
_INPUTS = (Port("a", DType.QUINT8), Port("b", DType.QUINT8), Port("a_min", DType.FLOAT32),
           Port("a_max", DType.FLOAT32), Port("b_min", DType.FLOAT32),
           Port("b_max", DType.FLOAT32), Port("out_min", DType.FLOAT32, optional=True),
           Port("out_max", DType.FLOAT32, optional=True))
_OUTPUTS = (Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
            Port("y_max", DType.FLOAT32))


def requantize_codes(codes: np.ndarray, in_range: tuple[float, float],
                     out_range: tuple[float, float]) -> np.ndarray:
    """``requantize_to_outrange`` (HVX ``jointly_quantize``): d = q - zi (16 bits), times the
    gain round(4096 * si / so) taken as an unsigned 16-bit lane, rounding shift by 12 with
    16-bit saturation, plus zo (saturating), packed to a byte with saturation."""
    zi, si = level_size_zero(*in_range)
    zo, so = level_size_zero(*out_range)
    with np.errstate(all="ignore"):
        gain = c_roundf_int1(f32(f32(1 << _SHIFT) * f32(si / so))) & 0xFFFF
    d = codes.astype(np.int64) - zi
    scaled = sat_i16((d * gain + (1 << (_SHIFT - 1))) >> _SHIFT)
    return sat_u8(sat_i16(scaled + zo)).astype(np.uint8)


def _out_range(a_min: float, a_max: float, b_min: float, b_max: float,
               given: tuple[Tensor, ...]) -> tuple[np.float32, np.float32]:
    if len(given) == 2:
        return f32(scalar_f(given[0])), f32(scalar_f(given[1]))
    hi = fmaxf(a_max, b_max)
    lo = f32(scalar_f(given[0])) if given else fminf(a_min, b_min)
    return lo, hi


def _operand(ctx: KernelContext, t: Tensor, rng: tuple[np.float32, np.float32],
             out: tuple[np.float32, np.float32], name: str) -> np.ndarray:
    codes = t.array
    if t.shape == (1, 1, 1, 1) and codes.size and int(codes.flat[0]) == 0 and \
            rng == out:
        # the HVX kernel takes a scalar's code 0 for "not a constant" and reads the scratch
        ctx.warn(f"{name} is a scalar of code 0: the device's vector kernel reads its scratch "
                 "instead (undefined bytes; simulated as the code 0)")
    # the library's test is a float compare of both ends (NaNs always differ)
    if not (rng[0] == out[0] and rng[1] == out[1]):
        # a function of the code alone: one 256-entry table, then a look-up
        return np.take(requantize_codes(_CODES, rng, out), codes)
    return codes


def _minmax(ctx: KernelContext, a: Tensor, b: Tensor, ranges: tuple[Tensor, ...],
            given: tuple[Tensor, ...], ufunc: np.ufunc) -> tuple[np.ndarray, ...]:
    a_min, a_max, b_min, b_max = (f32(scalar_f(t)) for t in ranges)
    lo, hi = _out_range(a_min, a_max, b_min, b_max, given)
    if not lo < hi:
        raise KernelError("minimum/maximum output min >= output max "
                          f"([{float(lo)!r}, {float(hi)!r}])")
    if any(x != y and 1 not in (x, y) for x, y in zip(a.shape, b.shape, strict=True)):
        raise KernelError(f"incompatible shapes ({'x'.join(map(str, a.shape))}) "
                          f"({'x'.join(map(str, b.shape))})")
    qa = _operand(ctx, a, (a_min, a_max), (lo, hi), "a")
    qb = _operand(ctx, b, (b_min, b_max), (lo, hi), "b")
    y = ufunc(qa, qb)
    return fresh(np.ascontiguousarray(y, np.uint8)), np.full((1, 1, 1, 1), lo, f32), \
        np.full((1, 1, 1, 1), hi, f32)


def _reference(ufunc: np.ufunc, what: str):
    def reference(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor, a_max: Tensor,
                  b_min: Tensor, b_max: Tensor, *given: Tensor) -> tuple[np.ndarray, ...]:
        return ranged(ufunc(real(a, a_min, a_max), real(b, b_min, b_max)))
    reference.__doc__ = f"The elementwise {what} of the dequantized inputs (broadcast)."
    return reference


_DOC = """
    Semantics (nnlib op_minimum_maximum.c ``minmax_execute``): the output range is inputs 6
    and 7 when given (only 6: [out_min, max(a_max, b_max)]), else [min(a_min, b_min),
    max(a_max, b_max)], not nudged. An input whose range differs from it (float compare of
    both ends) is requantized onto it: d = q - za, y = sat_u8(sat16((d * g + 2048) >> 12) +
    zo) with g = round(4096 * sa / so) in an unsigned 16-bit lane (the HVX
    ``jointly_quantize``); then the codes are compared with numpy broadcasting (each
    dimension equal or 1 on one side; the output takes the larger).

    Fidelity: where both inputs already have the output range and the shapes need a general
    broadcast, nnlib's plain-C broadcast loop runs and the oracle checks it bit for bit; the
    requantization and the equal-shape, scalar and depth-broadcast kernels are HVX only,
    simulated from the instruction semantics (a gain of 16 or more wraps in its 16-bit
    lane, as the device's ``combine`` keeps the low half). A scalar operand of code 0 is read
    from the scratch by the device's vector kernel (undefined; warned, simulated as 0).

    Errors: "minimum/maximum output min >= output max" (checked first, also for NaN ends);
    "incompatible shapes (AxBxCxD) (...)"; an output smaller than the result ("failed to
    prepare output", after the range outputs are written).
"""


@op("QuantizedMinimum_8", Category.ELEMENTWISE, reference=_reference(np.minimum, "minimum"),
    inputs=_INPUTS, outputs=_OUTPUTS)
@shared_doc(_DOC)
def quantized_minimum_8(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor,
                        a_max: Tensor, b_min: Tensor, b_max: Tensor,
                        *given: Tensor) -> tuple[np.ndarray, ...]:
    """Elementwise minimum of two quint8 tensors (broadcast) on a common output range."""
    return _minmax(ctx, a, b, (a_min, a_max, b_min, b_max), given, np.minimum)


@op("QuantizedMaximum_8", Category.ELEMENTWISE, reference=_reference(np.maximum, "maximum"),
    inputs=_INPUTS, outputs=_OUTPUTS)
@shared_doc(_DOC)
def quantized_maximum_8(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor,
                        a_max: Tensor, b_min: Tensor, b_max: Tensor,
                        *given: Tensor) -> tuple[np.ndarray, ...]:
    """Elementwise maximum of two quint8 tensors (broadcast) on a common output range."""
    return _minmax(ctx, a, b, (a_min, a_max, b_min, b_max), given, np.maximum)
