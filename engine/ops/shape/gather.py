"""Gather_f, Gather_int32, Gather_8: table lookups (graph spec §4.25, ``op_gather.c``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, data_of, scalar_i
from hexscope.engine.ops.reference import SELF, ranged, real
from hexscope.engine.ops.registry import Category, Port, op, shared_doc
from hexscope.engine.tensor import Shape, Tensor


def apparent_rank(shape: Shape) -> int:
    """4 if batches > 1, else 3 if height > 1, 2 if width > 1, 1 if depth > 1, else 0 (§1.1)."""
    for rank, n in zip((4, 3, 2, 1), shape, strict=True):
        if n > 1:
            return rank
    return 0


@dataclass(frozen=True, slots=True)
class GatherPlan:
    """``analyze_gather_op``: the output shape and the [outer, TabN, inner] table view."""

    out_shape: Shape
    index_dim: int
    outer: int
    table_n: int
    inner: int
    n_indices: int


def gather_plan(index_shape: Shape, table_shape: Shape, index_dim: int = -1,
                index_rank: int = -1) -> GatherPlan:
    """The output shape and lookup geometry; negative ``index_dim``/``index_rank`` = absent.

    Raises KernelError with the library's messages for a bad index_rank, index_dim or an
    output rank above 4.
    """
    irank = apparent_rank(index_shape)
    if index_rank >= 0:
        if index_rank > 4 or index_rank < irank:
            raise KernelError(f"improper rank {index_rank} given for apparent rank={irank}")
        irank = index_rank
    trank = max(1, apparent_rank(table_shape))
    idim = 4 - trank
    if index_dim >= 0:
        if index_dim > 3:
            raise KernelError(f"dimension_index = {index_dim} : must be -1 ...3")
        idim = index_dim
        trank = max(trank, 4 - idim)
    out_rank = irank + trank - 1
    if out_rank > 4:
        raise KernelError(f"index_rank = {irank}, table_rank = {trank}; output_rank = "
                          f"{out_rank} is too large")
    before = list(table_shape[4 - trank:idim])
    after = list(table_shape[idim + 1:])
    dims = before + list(index_shape[4 - irank:]) + after
    out_shape = tuple([1] * (4 - len(dims)) + dims)
    return GatherPlan(out_shape, idim, int(np.prod(before, dtype=np.int64)),  # type: ignore[arg-type]
                      table_shape[idim], int(np.prod(after, dtype=np.int64)),
                      int(np.prod(index_shape[4 - irank:], dtype=np.int64)))


def _gather(ctx: KernelContext, index: Tensor, table: Tensor, options: tuple[Tensor, ...],
            out_type: DType) -> np.ndarray:
    dims = [scalar_i(t) for t in options] + [-1, -1]
    plan = gather_plan(index.shape, table.shape, dims[0], dims[1])
    idx = np.ascontiguousarray(data_of(index, "the index tensor")).view(np.int32).reshape(-1)
    idx = idx[: plan.n_indices].astype(np.int64)
    bad = np.flatnonzero((idx < 0) | (idx >= plan.table_n))
    if bad.size and ctx.padding is Padding.SAME:
        k = int(bad[0])
        raise KernelError(f"out-of-range value {int(idx[k])} found at offset {k}; table size "
                          f"is {plan.table_n}")
    size = out_type.size
    words = data_of(table, "the table")
    if words.dtype.itemsize != size:
        raise KernelError(f"the table must hold {size}-byte elements, got {table.describe()}")
    if plan.outer * plan.n_indices * plan.inner == 0:
        return np.zeros(plan.out_shape, out_type.numpy)
    _check_sizes(ctx, index, table, (idx.size, words.size), plan, dims[1])
    idx = np.clip(idx, 0, plan.table_n - 1)
    view = np.ascontiguousarray(words).view(out_type.numpy).reshape(
        plan.outer, plan.table_n, plan.inner)
    return view[:, idx, :].reshape(plan.out_shape)


def _check_sizes(ctx: KernelContext, index: Tensor, table: Tensor, stored: tuple[int, int],
                 plan: GatherPlan, index_rank: int) -> None:
    """Raise where the device's lookup would read outside the index or table buffer."""
    n_indices, n_table = stored
    # Apparent rank skips a leading dimension of size 0, so nidx and TabN x outer x inner can
    # count elements the tensor does not store.
    if n_indices < plan.n_indices:
        rank = index_rank if index_rank >= 0 else apparent_rank(index.shape)
        raise KernelError(f"the index tensor {index.describe()} is too small: it holds "
                          f"{n_indices} indices, but with index rank {rank} the lookup reads "
                          f"{plan.n_indices} (the empty dimension lies outside the rank); the "
                          f"device would read outside its buffer")
    if plan.table_n == 0:
        # SAME has already failed on the first index; every other padding clips it to
        # min(TabN - 1, max(idx, 0)) = -1 and copies the row before the table.
        raise KernelError(f"the table {table.describe()} has no rows on index_dim "
                          f"{plan.index_dim} (TabN = 0), so padding {ctx.padding.name} clips "
                          f"every index to -1; the device would read outside its buffer")
    need = plan.outer * plan.table_n * plan.inner
    if n_table < need:
        raise KernelError(f"the table {table.describe()} is too small: it holds {n_table} "
                          f"elements, but the lookup on index_dim {plan.index_dim} reads it as "
                          f"outer x TabN x inner = {plan.outer} x {plan.table_n} x "
                          f"{plan.inner} = {need} (the empty dimension lies outside the table "
                          f"rank); the device would read outside its buffer")


_DOC = """

    The output shape replaces the table's index dimension (``index_dim``, by default its
    first dimension > 1) with the index tensor's shape (its apparent rank, or
    ``index_rank``): e.g. indices (1,1,4,20) into table (1,5,64,12) with index_dim 2 give
    (5,4,20,12). The output rank ``index_rank + table_rank - 1`` must be <= 4. Out-of-range
    indices depend on the node's padding: SAME fails ("out-of-range value <v> found at
    offset <k>; table size is <N>"); every other mode, NA included, clips to [0, N-1]
    (graph spec §4.25). A negative index_dim or index_rank means absent.

    Zero-size dimensions are the simulator's choice (device behaviour unconfirmed, graph spec
    §7): an output with no elements is returned empty, as nothing is copied. Otherwise it
    raises where the device would read outside a buffer: an index tensor holding fewer
    indices than its rank implies (indices (1,1,1,0) have apparent rank 0, so one index is
    read), a table with TabN = 0 under a padding that clips (to [0, -1]), and a table holding
    fewer elements than outer x TabN x inner (table (1,1,0,4) has apparent rank 1, so TabN =
    4).
"""


def _options() -> tuple[Port, ...]:
    return (Port("index_dim", DType.INT32, optional=True),
            Port("index_rank", DType.INT32, optional=True))


def _plain_gather(dtype: DType, what: str) -> Callable[..., tuple[np.ndarray]]:
    def kernel(ctx: KernelContext, index: Tensor, table: Tensor, *options: Tensor
               ) -> tuple[np.ndarray]:
        return (_gather(ctx, index, table, options, dtype),)

    kernel.__doc__ = f"Looks up {what} table rows (or slices) by int32 indices."
    return kernel


for _name, _dtype, _what in (("Gather_f", DType.FLOAT32, "float"),
                             ("Gather_int32", DType.INT32, "int32")):
    op(_name, Category.LOOKUP,
       inputs=(Port("index", DType.INT32), Port("table", _dtype), *_options()),
       outputs=(Port("y", _dtype),), uses_padding=True,
       reference=SELF)(shared_doc(_DOC)(_plain_gather(_dtype, _what)))


def gather_8_reference(ctx: KernelContext, index: Tensor, table: Tensor, table_min: Tensor,
                       table_max: Tensor, *dims: Tensor) -> tuple[np.ndarray, ...]:
    """the gathered table rows, dequantized (Gather_f on the real table)."""
    table_f = Tensor.from_array(real(table, table_min, table_max).astype(np.float32))
    return ranged(_gather(ctx, index, table_f, dims, DType.FLOAT32))


@op("Gather_8", Category.LOOKUP,
    reference=gather_8_reference,
    inputs=(Port("index", DType.INT32), Port("table", DType.QUINT8),
            Port("table_min", DType.FLOAT32), Port("table_max", DType.FLOAT32), *_options()),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)), uses_padding=True)
@shared_doc(_DOC)
def gather_8(ctx: KernelContext, index: Tensor, table: Tensor, table_min: Tensor,
             table_max: Tensor, *options: Tensor) -> tuple[np.ndarray, Tensor, Tensor]:
    """Looks up quint8 table rows (or slices) by int32 indices; min/max pass through."""
    return (_gather(ctx, index, table, options, DType.QUINT8), table_min.copy(),
            table_max.copy())
