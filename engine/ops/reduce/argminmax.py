"""ArgMax_8toInt32 and ArgMin_8: the index of the largest / smallest code along one axis
(nnlib op_argmax.c, op_argmin.c with hexagon/src/argminmax.c)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, scalar_i
from hexscope.engine.ops.normalize.l2norm import normalized_axis
from hexscope.engine.ops.reference import real
from hexscope.engine.ops.registry import Category, Port, op, shared_doc
from hexscope.engine.tensor import Tensor, fresh

_IN = (Port("x", DType.QUINT8), Port("axis", DType.INT32), Port("x_min", DType.FLOAT32),
       Port("x_max", DType.FLOAT32))
_OUT = (Port("index", DType.INT32),)


def _axis(op_name: str, x: Tensor, axis: Tensor) -> int:
    a = scalar_i(axis)
    try:
        a = normalized_axis(a)
    except KernelError as exc:
        raise KernelError(f"{op_name}: axis is out of range ({exc})") from None
    if x.shape[a] == 0 and x.elements == 0 and any(n for i, n in enumerate(x.shape) if i != a):
        # the device divides by the axis size (argmax) or reads the empty row's first byte
        raise KernelError(f"{op_name}: the axis {a} has size 0 in {list(x.shape)} (the device "
                          "reads past the data or divides by zero there)")
    return a


def _index(codes: np.ndarray, a: int, largest: bool) -> np.ndarray:
    """The first index of the extreme along axis a (ties: the smallest index, as both the
    scalar loop's strict comparison and the vector kernels' min reduction of
    (value, index) give), kept as a dimension of 1."""
    if codes.size == 0:
        return np.zeros(tuple(1 if i == a else n for i, n in enumerate(codes.shape)), np.int32)
    found = np.argmax(codes, axis=a) if largest else np.argmin(codes, axis=a)
    return np.expand_dims(found.astype(np.int32), a)


def _reference(largest: bool):
    def reference(ctx: KernelContext, x: Tensor, axis: Tensor, x_min: Tensor,
                  x_max: Tensor) -> tuple[np.ndarray]:
        v = real(x, x_min, x_max)
        a = normalized_axis(scalar_i(axis))
        found = np.argmax(v, axis=a) if largest else np.argmin(v, axis=a)
        return (np.expand_dims(found, a).astype(np.float64),)
    reference.__doc__ = (f"The index of the {'largest' if largest else 'smallest'} dequantized "
                         "value along the axis (as a real number).")
    return reference


@op("ArgMax_8toInt32", Category.ELEMENTWISE, reference=_reference(True), inputs=_IN,
    outputs=_OUT)
def argmax_8toint32(ctx: KernelContext, x: Tensor, axis: Tensor, x_min: Tensor,
                    x_max: Tensor) -> tuple[np.ndarray]:
    """Index (int32) of the largest code along an axis; the axis becomes 1.

    Semantics (nnlib op_argmax.c ``argmax_execute_8toInt32``): the axis is input 1 (-4..3,
    a negative one counted from the end); the output has the input's shape with that
    dimension 1, and holds the first index of the largest code (ties: the smallest index).
    The range inputs are not read: codes order as their values do.

    Fidelity: exact. Where the axis is not the innermost one with data (stride > 1) the C
    is a plain loop, which the oracle runs; the innermost case is HVX
    (``horizontal_argmax_hvx``, the smallest index of the max as well), checked with hand
    vectors. The prepare check reads the axis before negative axes are mapped (an
    out-of-bounds read of the shape for a negative axis); that is not simulated.

    Errors: "ArgMax_8toInt32: axis is out of range" (outside -4..3); an axis of size 0 in a
    tensor whose other dimensions are not (the device divides by it); an output smaller
    than the input with the axis at 1 ("failed to prepare output").
    """
    a = _axis("ArgMax_8toInt32", x, axis)
    return (fresh(_index(x.array, a, True)),)


@op("ArgMin_8", Category.ELEMENTWISE, reference=_reference(False), inputs=_IN, outputs=_OUT)
def argmin_8(ctx: KernelContext, x: Tensor, axis: Tensor, x_min: Tensor,
             x_max: Tensor) -> tuple[np.ndarray]:
    """Index (int32) of the smallest code along an axis; the axis becomes 1.

    Semantics (nnlib op_argmin.c ``argmin_execute_8`` with argminmax.c): as ArgMax_8toInt32
    with the smallest code; ties give the smallest index ("If the max (or min) occurs more
    than once, the result is the smallest index", argminmax.c).

    Fidelity: exact by construction; the device's kernels are HVX only
    (``hvx_argmin_or_max_in_rows`` / ``_in_cols``), so the oracle cannot run them: checked
    with hand vectors and against ArgMax of the inverted codes.

    Errors: "ArgMin_8: axis is out of range" (outside -4..3); an axis of size 0 in a tensor
    whose other dimensions are not; an output smaller than the input with the axis at 1
    ("ArgMin_8 out too small").
    """
    a = _axis("ArgMin_8", x, axis)
    return (fresh(_index(x.array, a, False)),)


_IN_D32 = (Port("x", DType.QUINT8, layout=Layout.D32), Port("axis", DType.INT32),
           Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32))


def _d32_axis(x: Tensor, axis: Tensor) -> int:
    a = scalar_i(axis)
    try:
        return normalized_axis(a)
    except KernelError as exc:
        raise KernelError(f"argminmax_8_d32: axis is out of range ({exc})") from None


_D32_DOC = """
    Fidelity: exact by construction (the first index of the extreme, as the flat op); the
    device's kernels are HVX (``hvx_argmin_or_max_d_8_d32`` on depth,
    ``hvx_argmin_or_max_whb_8_d32`` otherwise), so the oracle checks the output shape and
    the errors nnlib raises in C before them. The padding is never read.

    Errors: "argminmax_8_d32: axis is out of range" (outside -4..3); an output smaller than
    the result ("argminmax_8_d32 out too small").
"""


@op("ArgMax_8_d32", Category.D32, reference=_reference(True), inputs=_IN_D32, outputs=_OUT)
@shared_doc(_D32_DOC)
def argmax_8_d32(ctx: KernelContext, x: Tensor, axis: Tensor, x_min: Tensor,
                 x_max: Tensor) -> tuple[np.ndarray]:
    """Index (int32, flat output) of the largest code of a d32 tensor along an axis.

    Semantics (nnlib op_argminmax_8_d32.c): as ArgMax_8toInt32 on the logical values of a
    d32 input; the output is a flat int32 tensor (prepare puts no Convert_from_d32 after it).
    """
    return (fresh(_index(x.array, _d32_axis(x, axis), True)),)


@op("ArgMin_8_d32", Category.D32, reference=_reference(False), inputs=_IN_D32, outputs=_OUT)
@shared_doc(_D32_DOC)
def argmin_8_d32(ctx: KernelContext, x: Tensor, axis: Tensor, x_min: Tensor,
                 x_max: Tensor) -> tuple[np.ndarray]:
    """Index (int32, flat output) of the smallest code of a d32 tensor along an axis.

    Semantics (nnlib op_argminmax_8_d32.c): as ArgMin_8 on the logical values of a d32
    input; the output is a flat int32 tensor.
    """
    return (fresh(_index(x.array, _d32_axis(x, axis), False)),)
