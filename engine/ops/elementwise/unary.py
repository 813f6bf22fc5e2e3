"""Flat quantized unary ops: QuantizedNeg_8, QuantizedSqrt_8, QuantizedTanh_8 and
QuantizedSigmoid_8.

Each maps a quint8 code to a quint8 code through a function of the code alone (given the
range), so every kernel is a 256-entry table built once per range and one ``take``.
nnlib: op_neg.c, op_sqrt.c, op_tanh.c (the ``_ref`` C of tanh and sigmoid).
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import div255, exact_memo, rndi, sat_u8
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op, shared_doc
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_IN = (Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32))
_OUT = (Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32))
_CODES = np.arange(256, dtype=np.uint8)
#: QuantizedTanh_8's fixed output range: -1 to 128/127 (the C's double quotient stored in a
#: float), so code 127 is 0 and the largest code tanh reaches is 254.
TANH_MAX = f32(128.0 / 127.0)


def _word(v: float) -> np.ndarray:
    return np.full((1, 1, 1, 1), v, np.float32)


def _through(table: np.ndarray, x: Tensor) -> np.ndarray:
    """Every code of x replaced by its table entry (a fresh uint8 array of x's shape)."""
    return fresh(np.take(table, x.array))


def tanhf(v: np.ndarray) -> np.ndarray:
    """float32 tanh, correctly rounded (computed in float64, then rounded once). glibc
    2.36's ``tanhf`` (the C oracle's) differs from it by up to 2 ulp on 12 % of float32
    inputs, numpy's float32 tanh by up to 3; the DSP's libm is unconfirmed (graph spec §8)."""
    with np.errstate(all="ignore"):
        return np.tanh(v.astype(np.float64)).astype(np.float32)


# --- QuantizedNeg_8 ------------------------------------------------------------------------

def neg_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                  x_max: Tensor) -> tuple[np.ndarray, ...]:
    """-x of the dequantized input."""
    return ranged(-real(x, x_min, x_max))


@op("QuantizedNeg_8", Category.ELEMENTWISE, reference=neg_reference, inputs=_IN, outputs=_OUT)
def quantized_neg_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                    x_max: Tensor) -> tuple[np.ndarray, ...]:
    """Negation: y = 255 - x (the codes' ones' complement), range [-x_max, -x_min].

    Semantics: code q stands for min + q*step; 255 - q in the range [-max, -min] stands for
    -max + (255 - q)*step = -(min + q*step), so the negation is exact (nnlib op_neg.c,
    ``unary_op_execute`` with ``OPER_1SCOMP``).

    Fidelity: exact. The device's kernel is HVX only (a vector NOT), with no plain-C path
    the oracle could run; checked against hand-computed vectors and the identity above.
    A range whose ends are NaN or infinite is negated as it is.

    Errors: an output smaller than the input ("output too small", the executor's capacity
    check).
    """
    lo, hi = f32(scalar_f(x_min)), f32(scalar_f(x_max))
    return fresh(np.bitwise_not(x.array)), _word(-hi), _word(-lo)


# --- QuantizedSqrt_8 -----------------------------------------------------------------------

#: sqrt_lut of op_sqrt.c: round(sqrt(255 q)), the square root of q/255 scaled back to 0..255
#: (checked entry by entry against the C table).
SQRT_TABLE = np.floor(np.sqrt(255.0 * np.arange(256)) + 0.5).astype(np.uint8)


def sqrt_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                   x_max: Tensor) -> tuple[np.ndarray, ...]:
    """sqrt(x) of the dequantized input (negative values give NaN)."""
    with np.errstate(invalid="ignore"):
        return ranged(np.sqrt(real(x, x_min, x_max)))


@op("QuantizedSqrt_8", Category.ELEMENTWISE, reference=sqrt_reference, inputs=_IN, outputs=_OUT)
def quantized_sqrt_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                     x_max: Tensor) -> tuple[np.ndarray, ...]:
    """Square root (not reciprocal square root) by a table on the codes; range sqrt'd.

    Semantics (nnlib op_sqrt.c ``sqrt_execute``): y = round(sqrt(255 x)) per code, and the
    range [sqrtf(x_min), sqrtf(x_max)]. The table treats code 0 as the value 0, so the result
    means sqrt of the input only when x_min is 0; with x_min > 0 every code is still mapped
    as if the range started at 0 (a device quirk, simulated as it is). TFLite's Hexagon
    delegate builds its RSQRT from this op; the op itself computes a square root.

    Fidelity: exact. The device's table look-up is HVX only (no plain-C path for the
    oracle); the table is the C's (checked entry by entry) and the range uses float32
    ``sqrtf`` (correctly rounded, IEEE). x_max < 0 with x_min >= 0 gives a NaN y_max, as
    ``sqrtf`` does.

    Errors: "Current sqrt implementation does not support negative numbers" when x_min < 0
    (checked first; -0.0 passes); an output smaller than the input ("out too small").
    """
    lo, hi = f32(scalar_f(x_min)), f32(scalar_f(x_max))
    if lo < 0:
        raise KernelError("Current sqrt implementation does not support negative numbers "
                          f"(x_min is {float(lo)!r})")
    with np.errstate(invalid="ignore"):
        return _through(SQRT_TABLE, x), _word(np.sqrt(lo)), _word(np.sqrt(hi))


# --- QuantizedTanh_8, QuantizedSigmoid_8 ---------------------------------------------------

@exact_memo
def tanh_table(mn: float, mx: float, sigmoid: bool) -> np.ndarray:
    """The 256 output codes of ``qtanh_execute_ref`` for the range (mn, mx).

    In float32, in the C's order: step = flt_div_255(max - min); sigmoid halves the gain and
    the offset; v = off + gain * q; y = sat_u8(roundf_i32((tanhf(v) + 1) * out_gain)) with
    out_gain 127.5 (sigmoid) or 127 (tanh)."""
    with np.errstate(all="ignore"):
        gain = div255(f32(f32(mx) - f32(mn)))
        off = f32(mn)
        if sigmoid:
            gain, off = f32(gain * f32(0.5)), f32(off * f32(0.5))
        out_gain = f32(127.5) if sigmoid else f32(127.0)
        v = (off + gain * _CODES.astype(np.float32)).astype(np.float32)
        t = ((tanhf(v) + f32(1.0)) * out_gain).astype(np.float32)
    table = sat_u8(rndi(t)).astype(np.uint8)
    table.flags.writeable = False
    return table


def tanh_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                   x_max: Tensor) -> tuple[np.ndarray, ...]:
    """tanh(x) of the dequantized input."""
    return ranged(np.tanh(real(x, x_min, x_max)))


def sigmoid_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                      x_max: Tensor) -> tuple[np.ndarray, ...]:
    """1 / (1 + exp(-x)) of the dequantized input."""
    v = real(x, x_min, x_max).astype(np.float64)
    return ranged((0.5 * (1.0 + np.tanh(0.5 * v))).astype(np.float32))


_TANH_DOC = """
    Fidelity: exact with nnlib's plain-C ``qtanh_execute_ref`` (op_tanh.c, the
    ``_ref`` op), which the oracle runs; the device's own op is HVX (op_tanh_d32.c, a
    fixed-point approximation the oracle cannot run) and may differ from it by a code. The
    float steps are the C's, in float32; ``tanhf`` is correctly rounded here (float64 then
    one rounding), within 2 ulp of glibc's ``tanhf`` (12 % of 500,000 sampled inputs differ)
    and of whatever the DSP's libm gives: a code changes only where (tanh + 1) * gain falls
    within those ulps of a half, which none of the oracle's cases did (400 of 400 exact).
    A NaN step (infinite range) gives NaN inputs to tanhf and code 0 (the Hexagon NaN -> int
    conversion, -1, saturated).

    Errors: an output smaller than the input ("out too small").
"""


@op("QuantizedTanh_8", Category.ACTIVATION, reference=tanh_reference, inputs=_IN,
    outputs=_OUT)
@shared_doc(_TANH_DOC)
def quantized_tanh_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                     x_max: Tensor) -> tuple[np.ndarray, ...]:
    """tanh of every value; fixed output range [-1, 128/127] (zero at code 127).

    Semantics (nnlib op_tanh.c): v = x_min + q * flt_div_255(x_max - x_min) in float32,
    y = sat_u8(roundf_i32((tanhf(v) + 1) * 127)), so -1 is code 0 and +1 code 254; the
    output range is always [-1, 128/127].
    """
    table = tanh_table(scalar_f(x_min), scalar_f(x_max), False)
    return _through(table, x), _word(-1.0), _word(TANH_MAX)


@op("QuantizedSigmoid_8", Category.ACTIVATION, reference=sigmoid_reference, inputs=_IN,
    outputs=_OUT)
@shared_doc(_TANH_DOC)
def quantized_sigmoid_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                        x_max: Tensor) -> tuple[np.ndarray, ...]:
    """Logistic sigmoid of every value; fixed output range [0, 1].

    Semantics (nnlib op_tanh.c): sigmoid(v) = (1 + tanh(v / 2)) / 2, computed as
    v/2 = x_min/2 + q * (step/2) in float32 and y = sat_u8(roundf_i32((tanhf(v/2) + 1) *
    127.5)); the output range is always [0, 1].
    """
    table = tanh_table(scalar_f(x_min), scalar_f(x_max), True)
    return _through(table, x), _word(0.0), _word(1.0)
