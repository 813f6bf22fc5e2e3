"""Flat quantized activations: QuantizedRelu_8 and QuantizedReluX_8 (quantized-ops spec §5, §6)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.hexmath import exact_memo, quantize_uint8
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.reference import code_scale, ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

_IN = (Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32))
_OUT = (Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32))


def _range_copy(x_min: Tensor, x_max: Tensor) -> tuple[np.ndarray, np.ndarray]:
    # Matches device: the output range is the input range, never narrowed (§5).
    w_min, w_max = range_words(scalar_f(x_min), scalar_f(x_max))
    return w_min.copy(), w_max.copy()


def _word(value: float) -> np.ndarray:
    word = np.full((1, 1, 1, 1), value, np.float32)
    word.flags.writeable = False
    return word


@exact_memo
def range_words(mn: float, mx: float) -> tuple[np.ndarray, np.ndarray]:
    """(mn, mx) as read-only [1,1,1,1] float32 arrays (what ``np.full`` gives) to copy as
    range outputs; memoised on the exact bits (ranges repeat from run to run)."""
    return _word(mn), _word(mx)


@exact_memo
def _relu_plan(mn: float, mx: float) -> tuple[int, np.ndarray, np.ndarray]:
    """(zero code, mn word, mx word) of Relu, memoised on the exact bits of the range."""
    return (quantize_uint8(0.0, mn, mx), *range_words(mn, mx))


def _clamped(codes: np.ndarray, lo: int, hi: int) -> np.ndarray | None:
    """``min(max(codes, lo), hi)`` in one compiled pass, or None (numpy then)."""
    kernel = compiled.kernel("clamp_codes")
    if kernel is None or codes.dtype != np.uint8:
        return None
    y = np.empty(codes.shape, np.uint8)
    kernel(np.ascontiguousarray(codes).reshape(-1), lo, hi, y.reshape(-1))
    return y


def _max_with(codes: np.ndarray, z: int) -> np.ndarray:
    """``np.maximum(codes, z)`` as a fresh array. numpy's uint8 maximum against a scalar has
    no vector loop (measured ~15x slower), against a full array it has: so z is broadcast
    into the output first."""
    y = _clamped(codes, z, 255)
    if y is not None:
        return y
    y = np.full(codes.shape, z, np.uint8)
    return np.maximum(codes, y, out=y)


def relu_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                   x_max: Tensor) -> tuple[np.ndarray, ...]:
    """max(x, 0) of the dequantized input."""
    y = _relu_of_reals(x, x_min, x_max)
    return ranged(np.maximum(real(x, x_min, x_max), 0.0) if y is None else y)


def _relu_of_reals(x: Tensor, x_min: Tensor, x_max: Tensor) -> np.ndarray | None:
    """``np.maximum(real(x, x_min, x_max), 0.0)`` with numpy's bits in one compiled pass
    (numpy's maximum against a scalar has no vector loop here: 4x slower), or None."""
    a = x.array
    if not a.flags.c_contiguous or x.dtype not in (DType.FLOAT32, DType.QUINT8):
        return None
    kernel = compiled.kernel("relu_f32" if x.dtype is DType.FLOAT32 else "relu_u8")
    if kernel is None:
        return None
    y = np.empty(a.shape, np.float32)
    if x.dtype is DType.FLOAT32:
        kernel(a.reshape(-1), y.reshape(-1))
    else:       # the steps real() takes (reference.read_codes), fused with the clamp
        scale, offset = code_scale(x, x_min, x_max)
        kernel(a.reshape(-1), np.float32(scale), np.float32(offset), y.reshape(-1))
    return y


@op("QuantizedRelu_8", Category.ACTIVATION,
    reference=relu_reference, inputs=_IN, outputs=_OUT)
def quantized_relu_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                     x_max: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """Relu on quint8 codes: y = max(x, zero code); the range passes through unchanged.

    Semantics: the zero code z is ``quantize_uint8(0, min, max)`` (rule ZA, quantized-ops
    spec §1.4); every code below z becomes z. y_min and y_max are copies of x_min and x_max,
    so the output keeps the negative part of the range (§5).

    Fidelity: bit-exact with the HVX kernel; with min >= 0 it is the identity. For a
    degenerate range (min == max) the width is floored at 1e-18 and the zero code comes from
    a saturating float-to-int conversion: 255 if min < 0, 0 if min > 0 (§1.6; the saturation
    is Hexagon's conversion as QEMU models it, unconfirmed on hardware).

    Errors: none beyond arity and types.
    """
    z, w_min, w_max = _relu_plan(scalar_f(x_min), scalar_f(x_max))
    return fresh(_max_with(x.array, z)), w_min.copy(), w_max.copy()


def relu_x_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                     max_value: Tensor) -> tuple[np.ndarray, ...]:
    """min(max(x, 0), max_value) of the dequantized input."""
    return ranged(np.clip(real(x, x_min, x_max), 0.0, scalar_f(max_value)))


@op("QuantizedReluX_8", Category.ACTIVATION,
    reference=relu_x_reference,
    inputs=(*_IN, Port("max_value", DType.FLOAT32)), outputs=_OUT)
def quantized_relux_8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                      max_value: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """Relu clamped above at X: y = min(max(x, zero code), code of X); range unchanged.

    Semantics: z = ``quantize_uint8(0, min, max)`` and qX = ``quantize_uint8(X, min, max)``
    (rule ZA, quantized-ops spec §1.4, §6); y = min(max(x, z), qX), byte-wise. y_min and
    y_max are copies of x_min and x_max; the range is never narrowed to [min, X].

    Fidelity: bit-exact with the shared Relu kernel. X is not checked: X <= 0 gives
    qX <= z, so every output is qX; X >= max gives qX = 255, a plain Relu (§6).

    Errors: none beyond arity and types.
    """
    mn, mx = scalar_f(x_min), scalar_f(x_max)
    z = quantize_uint8(0.0, mn, mx)
    qx = quantize_uint8(scalar_f(max_value), mn, mx)
    y = _clamped(x.array, z, qx) if z <= qx else None     # else every code is qx (§6)
    if y is None:
        y = _max_with(x.array, z)
        np.minimum(y, np.full(y.shape, qx, np.uint8), out=y)
    return (fresh(y), *_range_copy(x_min, x_max))
