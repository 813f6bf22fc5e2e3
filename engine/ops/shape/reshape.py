"""Reshape and Transpose_8 (``op_reshape.c``, ``op_transpose.c`` with ``gentranspose.c``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, data_of, output_fits
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.shape.params import int_words, mulu32_sat
from hexscope.engine.tensor import Shape, Tensor, fresh


def reshaped(shape: Shape, new_shape: Tensor) -> Shape:
    """The shape ``reshape_execute`` gives: the last ``rank`` dimensions from ``new_shape``
    (rank = its depth, 1..4), at most one negative entry inferred from the element count."""
    rank = new_shape.shape[3]
    if rank < 1 or rank > 4:
        raise KernelError(f"bad shape input for reshape: the shape tensor "
                          f"{new_shape.describe()} must have depth 1..4")
    dims = [1, 1, 1, 1]
    unknown, known = -1, 1
    for i, d in enumerate(int_words(new_shape, rank, "the shape tensor"), start=4 - rank):
        if d < 0:
            if unknown >= 0:
                raise KernelError("too many unknown dimensions in the reshape shape")
            unknown = i
        else:
            dims[i] = d
            known = mulu32_sat(known, d)
    if known in (0, 0xFFFFFFFF):
        raise KernelError(f"bad shape input for reshape: {dims} has a 0 or overflows")
    elements = int(np.prod(shape)) & 0xFFFFFFFF
    if unknown >= 0:
        dims[unknown] = elements // known
        if known * dims[unknown] != elements:
            raise KernelError(f"reshape: can't determine unknown dim {unknown} = "
                              f"{elements}/{known}")
    elif known != elements:
        raise KernelError(f"reshape: size mismatch: {shape} ({elements} elements) into "
                          f"{dims} ({known})")
    return tuple(dims)  # type: ignore[return-value]


def reshape_reference(ctx: KernelContext, x: Tensor, shape: Tensor) -> tuple[Tensor]:
    """the input's values in the new shape."""
    # Not the kernel itself: its "out too small" check counts bytes against the output's
    # declared size, which holds the device's codes, while a float value has 4 bytes each.
    if x.layout is not Layout.FLAT:
        raise KernelError(f"Reshape of a d32 tensor ({x.describe()}): convert it from d32 first")
    return (Tensor(reshaped(x.shape, shape), x.dtype, x.buffer.copy() if x.has_data else None),)


@op("Reshape", Category.PLUMBING,
    reference=reshape_reference,
    inputs=(Port("x", None), Port("shape", DType.INT32)),
    outputs=(Port("y", None),))
def reshape(ctx: KernelContext, x: Tensor, shape: Tensor) -> tuple[Tensor]:
    """Gives a tensor a new shape with the same bytes (one dimension may be -1).

    Semantics (``op_reshape.c``, ``reshape_execute``): the shape tensor's depth is the new
    rank (1..4); its values fill the last dimensions, the others are 1. One negative value
    stands for the dimension that keeps the element count. The bytes and the type tag are
    copied unchanged (so a quantized tensor keeps its codes; its range travels separately).

    Fidelity: byte-exact with nnlib's op run as C in the oracle (``tests/oracle``), 300+
    cases in ``tests/data/oracle/Reshape.json``.

    Errors, as nnlib raises them: "bad shape input for reshape" (rank not 1..4, a 0 in the
    shape or a product past 32 bits); "too many unknown dimensions"; "reshape: can't
    determine unknown dim"; "reshape: size mismatch"; "out too small" when the input's bytes
    exceed the output's declared size.
    """
    if x.layout is not Layout.FLAT:
        raise KernelError(f"Reshape of a d32 tensor ({x.describe()}): convert it from d32 first")
    dims = reshaped(x.shape, shape)
    raw = None if not x.has_data else x.buffer.copy()
    output_fits(ctx, 0, 0 if raw is None else raw.size, f"reshaped {dims}")
    return (Tensor(dims, x.dtype, raw),)


def transposed_shape(shape: Shape, perm: list[int]) -> Shape:
    """``nn_transpose_check``: ``perm`` (n <= 4 entries, a permutation of 0..n-1) reorders
    the last n dimensions."""
    n = len(perm)
    if sorted(perm) != list(range(n)):
        raise KernelError(f"bad transpose control: {perm} is not a permutation of 0..{n - 1}")
    out = list(shape)
    for i, k in enumerate(perm):
        out[4 - n + i] = shape[4 - n + k]
    return tuple(out)  # type: ignore[return-value]


def _perm(perm: Tensor) -> list[int]:
    if perm.shape[:3] != (1, 1, 1):
        raise KernelError(f"dims !1d: the permutation {perm.describe()} must be 1x1x1xN")
    n = perm.nbytes // 4
    if n > 4:
        raise KernelError(f"bad transpose control: {n} permutation entries (at most 4)")
    return int_words(perm, n, "the permutation")


def transpose_array(x: np.ndarray, perm: list[int]) -> np.ndarray:
    axes = list(range(4 - len(perm))) + [4 - len(perm) + k for k in perm]
    return np.ascontiguousarray(np.transpose(x, axes))


def transpose_8_reference(ctx: KernelContext, x: Tensor, perm: Tensor, x_min: Tensor,
                          x_max: Tensor) -> tuple[np.ndarray, ...]:
    """the real input transposed."""
    return ranged(transpose_array(real(x, x_min, x_max), _perm(perm)))


@op("Transpose_8", Category.PLUMBING,
    reference=transpose_8_reference,
    inputs=(Port("x", DType.QUINT8), Port("perm", DType.INT32), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def transpose_8(ctx: KernelContext, x: Tensor, perm: Tensor, x_min: Tensor,
                x_max: Tensor) -> tuple[np.ndarray, Tensor, Tensor]:
    """Permutes the dimensions of a quint8 tensor; min/max pass through.

    Semantics (``op_transpose.c``, ``nn_transpose_check``): ``perm`` holds n <= 4 int32
    entries, a permutation of 0..n-1 applied to the last n dimensions: with n = 2 on
    (B,H,W,D), perm [1, 0] swaps W and D.

    Fidelity: byte-exact with nnlib's op (``gentranspose.c``'s strategies) run as C in the
    oracle where it picks a scalar strategy (an HVX strategy is reported "C path unavailable"
    there), 300+ cases in ``tests/data/oracle/Transpose_8.json``.

    Errors, as nnlib raises them: "dims !1d" (perm not 1x1x1xN); "bad transpose control"
    (more than 4 entries, or not a permutation); "out too small" when the result exceeds the
    output's declared size.
    """
    p = _perm(perm)
    shape = transposed_shape(x.shape, p)
    output_fits(ctx, 0, int(np.prod(shape)), f"transposed {shape}")
    y = transpose_array(data_of(x, "the input"), p)
    return fresh(y), x_min.copy(), x_max.copy()
