"""A faulty op for the compare tests: QuantizedRelu_8, but one output byte flipped.

Element FLIP_INDEX (flat, logical order) of y is XORed with 0xFF; everything else is
QuantizedRelu_8's result. Comparing a graph using it against the same graph using
QuantizedRelu_8 must name this node and this element as the first divergence.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.elementwise.activation import quantized_relu_8
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

FLIP_INDEX = 5


@op("FlipRelu_8", Category.USER, user=True,
    inputs=(Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def flip_relu_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                x_max: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """QuantizedRelu_8 with byte FLIP_INDEX of the output flipped (a test fault)."""
    y, y_min, y_max = quantized_relu_8(ctx, x, x_min, x_max)
    codes = np.array(y.array if isinstance(y, Tensor) else y, np.uint8)
    codes.reshape(-1)[FLIP_INDEX] ^= 0xFF
    return codes, y_min, y_max
