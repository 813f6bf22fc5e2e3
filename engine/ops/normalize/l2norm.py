"""L2Normalize_8: x / ||x|| along one axis of a quint8 tensor, after nnlib's plain-C
``l2normalize_execute_8_ref`` (op_l2normalize_8_ref.c), in float32 and the C's order."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import c_roundf_int, quantize_uint8, sat_u8
from hexscope.engine.ops.context import KernelContext, scalar_f, scalar_i
from hexscope.engine.ops.kernels.normalize_loops import loops
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_RANK = 4


def normalized_axis(axis: int, what: str = "axis") -> int:
    """``handle_negative_axes`` (nn_axis.h): -4..3, a negative one counted from the end."""
    if not -_RANK <= axis < _RANK:
        raise KernelError(f"{what} value {axis} is out of range. Must be in the range "
                          "-4 <= axis < 4")
    return axis + _RANK if axis < 0 else axis


def l2_codes(codes: np.ndarray, zero: int, axis: int) -> np.ndarray:
    """Output codes in [-1, 1] for input codes with zero code ``zero`` along ``axis``: one
    compiled pass per slice where the compiled kernels load, else :func:`l2_codes_numpy`."""
    compiled = loops()
    if compiled is None or codes.size == 0:
        return l2_codes_numpy(codes, zero, axis)
    moved = np.moveaxis(codes, axis, -1)
    rows = np.ascontiguousarray(moved, np.uint8).reshape(-1, moved.shape[-1])
    out = np.empty(rows.shape, np.uint8)
    compiled.l2_rows(rows, int(zero), out)
    return np.ascontiguousarray(np.moveaxis(out.reshape(moved.shape), -1, axis))


def l2_codes_numpy(codes: np.ndarray, zero: int, axis: int) -> np.ndarray:
    """:func:`l2_codes` in numpy passes (the fallback, and the compiled loop's check)."""
    v = np.moveaxis(codes.astype(np.int32) - zero, axis, -1).astype(f32)
    with np.errstate(all="ignore"):
        # the squares are integers below 2**16 (exact); their sum is taken in order
        squares = np.cumsum(v * v, axis=-1, dtype=f32)[..., -1:]
        norm = np.sqrt(squares.astype(np.float64)).astype(f32)   # double sqrt(), stored
        t = np.where(norm == 0, f32(0.0), (v / norm).astype(f32))
        # quantize_uint8(t, -1, 1): (t + 1) * 127.5, roundf, saturated
        scaled = ((t + f32(1.0)).astype(f32) * f32(127.5)).astype(f32)
    y = sat_u8(c_roundf_int(scaled)).astype(np.uint8)
    return np.ascontiguousarray(np.moveaxis(y, -1, axis))


def l2norm_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                     *axis: Tensor) -> tuple[np.ndarray, ...]:
    """x / sqrt(sum x**2) along the axis, of the dequantized input."""
    a = normalized_axis(scalar_i(axis[0])) if axis else 3
    v = real(x, x_min, x_max).astype(np.float64)
    norm = np.sqrt((v * v).sum(axis=a, keepdims=True))
    with np.errstate(all="ignore"):
        return ranged(np.where(norm == 0, 0.0, v / norm).astype(np.float32))


@op("L2Normalize_8", Category.ACTIVATION, reference=l2norm_reference,
    inputs=(Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32), Port("axis", DType.INT32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def l2_normalize_8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                   *axis: Tensor) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """Each 1-D slice along an axis divided by its L2 norm; fixed output range [-1, 1].

    Semantics (nnlib op_l2normalize_8_ref.c): the axis is input 3 (default 3, depth;
    -4..-1 count from the end). With z = quantize_uint8(0, min, max), v = q - z; per slice
    s = sum v*v in order in float32, n = (float) sqrt(s) (double sqrt), and each
    y = quantize_uint8(v / n, -1, 1) (0 when n is 0: code 128). The range is [-1, 1]; the
    output is tagged uint8 as the C tags it (NN_TYPE_UINT8).

    Fidelity: exact with nnlib's plain-C ``_ref`` (the oracle runs it). The device's own
    L2Normalize_8 (op_l2normalize_8.c) is HVX, which the oracle cannot run: it may differ by
    a code.

    Errors: an axis outside -4..3: both C forms log "Axis value ... is out of range" and then
    go on, reading a dimension past the shape (undefined); Hexscope fails the node with that
    message. An output smaller than the input ("op_l2normalize out too small").
    """
    a = normalized_axis(scalar_i(axis[0])) if axis else 3
    zero = quantize_uint8(0.0, scalar_f(x_min), scalar_f(x_max))
    y = l2_codes(x.array, zero, a) if x.elements else np.zeros(x.shape, np.uint8)
    codes = Tensor.from_array(fresh(y), DType.QUINT8).tagged(DType.UINT8)
    return codes, np.full((1, 1, 1, 1), -1.0, f32), np.ones((1, 1, 1, 1), f32)
