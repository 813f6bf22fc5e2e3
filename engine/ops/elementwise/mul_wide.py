"""QuantizedMul_8x8to32: the elementwise product of two quint8 tensors into 32 bits
(nnlib's ``op_addsubmul_8to32.c``, ``mul_832_execute``; the TFLite delegate's MUL feeds it)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import level_size_zero
from hexscope.engine.ops.context import KernelContext, f32_scalar, scalar_f
from hexscope.engine.ops.conv.conv2d import RANGE_OUT, qint32_tensor, range_ports
from hexscope.engine.ops.elementwise.arith import broadcast_shape
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

f32 = np.float32
_IN = (Port("a", DType.QUINT8), Port("b", DType.QUINT8),
       *range_ports("a_min", "a_max", "b_min", "b_max"))


def _mul_reference(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor, a_max: Tensor,
                   b_min: Tensor, b_max: Tensor) -> tuple[np.ndarray, ...]:
    """a * b of the dequantized inputs (broadcast)."""
    return ranged(real(a, a_min, a_max) * real(b, b_min, b_max))


def quantized_mul_8x8to32(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor,
                          a_max: Tensor, b_min: Tensor, b_max: Tensor
                          ) -> tuple[Tensor, Tensor, Tensor]:
    """Elementwise product of two quint8 tensors (with broadcast) into qint32.

    Semantics (op_addsubmul_8to32.c ``mul_832_execute``): za, zb and the steps sa, sb come
    from rule ZB (``get_qu8_level_size_zero``); each output is (a - za) * (b - zb) * 128,
    exact in int32 (at most 255 * 255 * 128). The output range is [-M, M] with
    M = f32(f32(sa * sb) * 2^24), so that the 32-bit codes read at step M / 2^31 stand for
    a * b. Each dimension must be equal or 1 on one side (``nn_elementwise_with_broadcast``).

    Fidelity: byte-exact with the C; the plain and ``_ref`` names compute the same integers
    (their scalar-operand forms a * k + delta are the same product rearranged).

    Errors (KernelError): "incompatible shapes"; an input with no elements broadcast to a
    non-empty output (the device reads past its end).
    """
    total = broadcast_shape(a.shape, b.shape)
    za, sa = level_size_zero(scalar_f(a_min), scalar_f(a_max))
    zb, sb = level_size_zero(scalar_f(b_min), scalar_f(b_max))
    a_codes, b_codes = a.array, b.array
    if (a_codes.size == 0 or b_codes.size == 0) and int(np.prod(total)):
        raise KernelError(f"an input has no elements ({list(a.shape)} x {list(b.shape)}) but "
                          f"the broadcast output is {list(total)}: the device reads past it")
    prod = (a_codes.astype(np.int32) - za) * (b_codes.astype(np.int32) - zb)
    prod = np.broadcast_to(prod, total) * np.int32(128)
    with np.errstate(all="ignore"):
        out_max = f32(f32(sa * sb) * f32(2.0**24))
    return qint32_tensor(total, prod), f32_scalar(-out_max), f32_scalar(out_max)


for _name in ("QuantizedMul_8x8to32", "QuantizedMul_8x8to32_ref"):
    op(_name, Category.ELEMENTWISE, reference=_mul_reference, inputs=_IN,
       outputs=RANGE_OUT)(quantized_mul_8x8to32)
