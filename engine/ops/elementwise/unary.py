"""Flat quantized unary ops: QuantizedNeg_8 and QuantizedSqrt_8 (nnlib op_neg.c, op_sqrt.c).

Each maps a quint8 code to a quint8 code through a function of the code alone, so the
kernels are a complement and a 256-entry table look-up.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.d32.convert import d32_output
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_IN = (Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32))
_OUT = (Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32))


def _word(v: float) -> np.ndarray:
    return np.full((1, 1, 1, 1), v, np.float32)


def _through(table: np.ndarray, x: Tensor) -> np.ndarray:
    """Every code of x replaced by its table entry (a fresh uint8 array of x's shape)."""
    return fresh(np.take(table, x.array))


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


def neg_d32_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                      x_max: Tensor) -> tuple[np.ndarray, ...]:
    """-x of the dequantized logical input."""
    return ranged(-real(x, x_min, x_max))


@op("QuantizedNeg_8_d32", Category.D32, reference=neg_d32_reference,
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)), d32_output=True)
def quantized_neg_8_d32(ctx: KernelContext, x: Tensor, x_min: Tensor,
                        x_max: Tensor) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """Negation of a d32 tensor: y = 255 - x with the input's padding; range [-max, -min].

    Semantics (nnlib op_add_d32.c ``neg_d32_execute``): the output takes every padding
    amount of the input (``tensor_out_prepare_padded_d32``), the range is inverted, and the
    codes go through ``tensor_copy_scaled_d32`` with scale -32768 and offset 32640:
    sat_u8((-32768 x + 32640 * 256 + 16384) >> 15) = 255 - x.

    Fidelity: the logical values are exact by that identity; the copy is HVX, so the oracle
    checks only the layout nnlib decides in C (shapes and padding amounts); the padding
    bytes are not simulated (filled with the padding fill).

    Errors: "output too small" (the output, with the input's padding, does not fit).
    """
    lo, hi = f32(scalar_f(x_min)), f32(scalar_f(x_max))
    y = d32_output(ctx, np.bitwise_not(x.array), x.padding, "output too small", widened=True)
    return y, _word(-hi), _word(-lo)
