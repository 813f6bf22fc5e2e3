"""QuantizedStridedSlice_8 (``op_stridedslice.c``, ``strided_slice_impl``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, data_of, output_fits, scalar_i
from hexscope.engine.ops.reference import real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.shape.params import int_words
from hexscope.engine.tensor import Shape, Tensor, fresh

_NAMES = "bhwd"


@dataclass(frozen=True, slots=True)
class StridedPlan:
    """Per dimension (B,H,W,D) the first index, step and count; and the output shape."""

    starts: tuple[int, ...]
    steps: tuple[int, ...]
    counts: tuple[int, ...]
    out_shape: Shape


def _out_size(start: int, stop: int, step: int) -> int:
    span = stop - start
    if step < 0:
        span, step = -span, -step
    return 0 if span <= 0 else (span + step - 1) // step


def _last4(t: Tensor, order: int, default: int, what: str) -> list[int]:
    words = int_words(t, order, what) if order > 0 else []
    return [default] * (4 - len(words)) + words[-4:]


def strided_plan(shape: Shape, start: Tensor, stop: Tensor, step: Tensor,
                 masks: tuple[int, int, int]) -> StridedPlan:
    """The library's reading of start/stop/step (their last ``order`` entries, order = the
    start tensor's depth), negative indices, then the masks (bit 0 = B ... bit 3 = D)."""
    order = start.shape[3]
    starts = _last4(start, order, 0, "the start tensor")
    known = min(order, 4)
    stops = list(shape[:4 - known]) + _last4(stop, order, 0, "the stop tensor")[4 - known:]
    steps = _last4(step, order, 1, "the step tensor")
    begin_mask, end_mask, shrink_mask = masks
    for i, n in enumerate(shape):
        if starts[i] < 0:
            starts[i] = max(0, starts[i] + n)
        if stops[i] < 0:
            stops[i] = max(-1, stops[i] + n)
        bit = 1 << i
        if shrink_mask & bit:
            stops[i], steps[i] = starts[i] + 1, 1
        else:
            if begin_mask & bit:
                starts[i] = n - 1 if steps[i] < 0 else 0
            if end_mask & bit:
                stops[i] = -1 if steps[i] < 0 else n
    for i in range(4):
        if steps[i] == 0:
            raise KernelError(f"invalid {_NAMES[i]}_step: a step of 0")
    counts = [_out_size(a, b, s) for a, b, s in zip(starts, stops, steps, strict=True)]
    if 0 in counts:
        raise KernelError(f"no output: the slice {list(zip(starts, stops, steps, strict=True))} "
                          f"of {shape} is empty (sizes {counts})")
    for i, n in enumerate(shape):
        first, last = starts[i], starts[i] + steps[i] * (counts[i] - 1)
        if min(first, last) < 0 or max(first, last) >= n:
            raise KernelError(f"indices beyond input range: {_NAMES[i]} from {first} to {last} "
                              f"in a dimension of {n}")
    kept = [c for i, c in enumerate(counts) if not shrink_mask & (1 << i)]
    out = tuple([1] * (4 - len(kept)) + kept)
    return StridedPlan(tuple(starts), tuple(steps), tuple(counts), out)  # type: ignore[arg-type]


def strided_array(x: np.ndarray, plan: StridedPlan) -> np.ndarray:
    """The selection as basic slices (a view; the plan has checked every index)."""
    index = []
    for a, s, c in zip(plan.starts, plan.steps, plan.counts, strict=True):
        stop = a + s * (c - 1) + (1 if s > 0 else -1)
        index.append(slice(a, None if stop < 0 else stop, s))
    return np.ascontiguousarray(x[tuple(index)]).reshape(plan.out_shape)


def _plan(x: Tensor, start: Tensor, stop: Tensor, step: Tensor, begin_mask: Tensor,
          end_mask: Tensor, shrink_mask: Tensor) -> StridedPlan:
    masks = (scalar_i(begin_mask), scalar_i(end_mask), scalar_i(shrink_mask))
    return strided_plan(x.shape, start, stop, step, masks)


def strided_slice_8_reference(ctx: KernelContext, x: Tensor, start: Tensor, stop: Tensor,
                              step: Tensor, begin_mask: Tensor, end_mask: Tensor,
                              shrink_mask: Tensor, x_min: Tensor, x_max: Tensor
                              ) -> tuple[np.ndarray | None, ...]:
    """the real input's strided selection."""
    plan = _plan(x, start, stop, step, begin_mask, end_mask, shrink_mask)
    return strided_array(real(x, x_min, x_max), plan), None, None


@op("QuantizedStridedSlice_8", Category.PLUMBING,
    reference=strided_slice_8_reference,
    inputs=(Port("x", DType.QUINT8), Port("start", DType.INT32), Port("stop", DType.INT32),
            Port("step", DType.INT32), Port("begin_mask", DType.INT32),
            Port("end_mask", DType.INT32), Port("shrink_mask", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def quantized_strided_slice_8(ctx: KernelContext, x: Tensor, start: Tensor, stop: Tensor,
                              step: Tensor, begin_mask: Tensor, end_mask: Tensor,
                              shrink_mask: Tensor, x_min: Tensor, x_max: Tensor
                              ) -> tuple[np.ndarray, Tensor, Tensor]:
    """Selects every step-th element between start and stop per dimension; min/max pass through.

    Semantics (``op_stridedslice.c``): start, stop and step are int32 vectors whose last
    entries address the last dimensions (their count is the start tensor's depth; missing
    dimensions take 0, the full size and 1). A negative start becomes max(0, start + n), a
    negative stop max(-1, stop + n). Then the masks, whose bits are fixed to dimensions
    (bit 0 = batches, 1 = height, 2 = width, 3 = depth, whatever the vectors' length):
    begin_mask starts at 0 (n - 1 for a negative step), end_mask stops at n (-1), and
    shrink_mask takes the single element at start and drops the dimension (the output's
    remaining dimensions move to the end).

    Fidelity: byte-exact with nnlib's op run as C in the oracle (``tests/oracle``), 300+
    cases in ``tests/data/oracle/QuantizedStridedSlice_8.json``.

    Errors, as nnlib raises them: "invalid <d>_step" (a step of 0); "no output" (an empty
    selection); "indices beyond input range"; "out too small" when the result exceeds the
    output's declared size.
    """
    plan = _plan(x, start, stop, step, begin_mask, end_mask, shrink_mask)
    output_fits(ctx, 0, int(np.prod(plan.out_shape)), f"selection {plan.out_shape}")
    y = strided_array(data_of(x, "the input"), plan)
    return fresh(y), x_min.copy(), x_max.copy()
