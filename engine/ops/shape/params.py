"""Reading the small int32 parameter tensors of the shape ops (pads, sizes, axes, block sizes)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import data_of
from hexscope.engine.tensor import Shape, Tensor

#: The largest dimension hexagon_nn accepts after padding (``0x7FFFFFFF``).
MAX_DIM = 0x7FFFFFFF
_U32 = 0xFFFFFFFF


def int_words(t: Tensor, count: int, what: str) -> list[int]:
    """The first ``count`` int32 words of ``t``'s bytes, as the library reads them.

    Raises KernelError when the tensor holds fewer bytes: the device would read past it.
    """
    raw = np.ascontiguousarray(data_of(t, what)).reshape(-1).view(np.uint8)
    if raw.size < 4 * count:
        raise KernelError(f"{what} {t.describe()} holds {raw.size // 4} int32 values but "
                          f"{count} are read; the device would read past its buffer")
    return [int(v) for v in raw[: 4 * count].view(np.int32)]


def mulu32_sat(a: int, b: int) -> int:
    """``mulu32_sat``: the unsigned 32-bit product, saturated to 0xFFFFFFFF."""
    return min((a & _U32) * (b & _U32), _U32)


def element_count_sat(shape: Shape) -> int:
    """The element count as hexagon_nn's saturating 32-bit products give it."""
    n = 1
    for d in shape:
        n = mulu32_sat(n, d)
    return n


def axis_in_range(axis: int, what: str = "axis") -> int:
    """``handle_negative_axes``: -4..3, negative counted from the end (nn_axis.h)."""
    if axis < -4 or axis >= 4:
        raise KernelError(f"{what} value {axis} is out of range. Must be in the range "
                          "-4 <= axis < 4")
    return axis + 4 if axis < 0 else axis
