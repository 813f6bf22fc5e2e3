"""A plugin op for the reduction tests: QuantizedRelu_8 that raises when its input holds a
code above TRAP_CODE (a data-dependent error, as a device kernel's would be)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.elementwise.activation import quantized_relu_8, relu_reference
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

TRAP_CODE = 100
SKEW = 40


@op("TrapRelu_8", Category.USER, user=True,
    inputs=(Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def trap_relu_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                x_max: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """QuantizedRelu_8 that fails on a code above TRAP_CODE (a test fault)."""
    if int(np.max(x.array)) > TRAP_CODE:
        raise KernelError(f"trap: a code above {TRAP_CODE}")
    return quantized_relu_8(ctx, x, x_min, x_max)


@op("SkewRelu_8", Category.USER, user=True, reference=relu_reference,
    inputs=(Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def skew_relu_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                x_max: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """QuantizedRelu_8 whose codes come out SKEW codes too high (an accuracy fault)."""
    y, y_min, y_max = quantized_relu_8(ctx, x, x_min, x_max)
    codes = np.array(y.array if isinstance(y, Tensor) else y, np.int32) + SKEW
    return np.clip(codes, 0, 255).astype(np.uint8), y_min, y_max


#: the byte FillPadding_8_d32 writes by default: the padding trap fires on it
POISON = 255


@op("PadTrap_8_d32", Category.USER, user=True,
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32),),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32),), d32_output=True)
def pad_trap_8_d32(ctx: KernelContext, x: Tensor) -> tuple[Tensor]:
    """Passes a d32 tensor on; fails when a padding byte is POISON (a kernel reading
    padding it should not: a padding-dependent test fault)."""
    if bool(np.any(x.memory[x.padding_mask()] == POISON)):
        raise KernelError(f"pad trap: a padding byte is {POISON}")
    return (x,)
