"""Flatten and QuantizedFlatten (graph spec §4.14-§4.15, ``op_flatten.c``)."""

from __future__ import annotations

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.reference import SELF
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor


def flatten_tensor(x: Tensor) -> Tensor:
    """``x`` reshaped to (1,1,1,B*H*W*D): the same bytes, type and (plain) format."""
    if x.layout is not Layout.FLAT:
        # The library copies data_size bytes and keeps the d32 format, which leaves a
        # tensor whose shape and padding no longer describe its bytes.
        raise KernelError(f"Flatten of a d32 tensor ({x.describe()}) gives a tensor whose "
                          "padding does not match its shape; convert it from d32 first")
    b, h, w, d = x.shape
    raw = None if not x.has_data else x.buffer.copy()
    return Tensor((1, 1, 1, b * h * w * d), x.dtype, raw)


@op("Flatten", Category.PLUMBING,
    reference=SELF,
    inputs=(Port("x", None), Port("ignored", None, optional=True, layout=None)),
    outputs=(Port("y", None),))
def flatten(ctx: KernelContext, x: Tensor, *ignored: Tensor) -> tuple[Tensor]:
    """Reshapes to (1,1,1,B*H*W*D), copying the bytes unchanged.

    A second input is accepted and ignored, and there is one output (the seed's "No output"
    is wrong, graph spec §6.7). An output larger than its declared size is "out too small" in
    hexagon_nn; the executor reports it as a warning.
    """
    return (flatten_tensor(x),)


@op("QuantizedFlatten", Category.PLUMBING,
    reference=SELF,
    inputs=(Port("x", None), Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", None), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def quantized_flatten(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """Flatten for quantized data: reshapes to (1,1,1,N); min and max pass through.

    Exactly 3 inputs and 3 outputs (graph spec §4.15): the flattened data, then copies of
    min and of max.
    """
    return flatten_tensor(x), x_min.copy(), x_max.copy()
