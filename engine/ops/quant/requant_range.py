"""RequantizationRange_32: the range of qint32 data as two floats (nnlib ``op_requantize.c``,
``do_requantrange_execute``), the first half of TensorFlow's requantize pair.

Prepare fuses it with the Requantize_32to8 that reads it into a
QuantizeDownAndShrinkRange_32to8 (nnlib prepare.c ``try_fuse_requantization_range``,
:mod:`hexscope.engine.prepare.range_ops`), so it runs only where that pattern does not match.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.elementwise.activation import range_words
from hexscope.engine.ops.quant.requantize import code_bounds
from hexscope.engine.ops.reference import real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

f32 = np.float32
_F32 = DType.FLOAT32


def _range_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                     x_max: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """the smallest and largest real value of the data, 0 included."""
    y = real(x, x_min, x_max)
    lo = min(0.0, float(y.min())) if y.size else 0.0
    hi = max(0.0, float(y.max())) if y.size else 0.0
    return np.full((1, 1, 1, 1), lo, f32), np.full((1, 1, 1, 1), hi, f32)


def _requantization_range_32(ctx: KernelContext, x: Tensor, x_min: Tensor,
                             x_max: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """The real range of qint32 data, 0 included, not nudged.

    Semantics (op_requantize.c ``do_requantrange_execute``): the input step is
    f32((x_max - x_min) * 2^-32); the smallest and largest codes are searched from 0 (so
    the range holds 0), and the outputs are step * min code and step * max code. Unlike
    QuantizeDownAndShrinkRange_32to8 there is no R1 adjustment: the zero point need not be
    an integer (the Requantize_32to8 that reads the range nudges it).

    Errors: none beyond arity and types.
    """
    lo, hi = code_bounds(x.array)
    with np.errstate(all="ignore"):
        level = f32(f32(f32(scalar_f(x_max)) - f32(scalar_f(x_min))) * f32(2.0 ** -32))
        mn, mx = f32(level * f32(min(0, lo))), f32(level * f32(max(0, hi)))
    w_min, w_max = range_words(mn, mx)
    return w_min.copy(), w_max.copy()


for _name in ("RequantizationRange_32", "RequantizationRange_32_ref"):
    op(_name, Category.QUANTIZE, reference=_range_reference,
       inputs=(Port("x", DType.QINT32), Port("x_min", _F32), Port("x_max", _F32)),
       outputs=(Port("y_min", _F32), Port("y_max", _F32)))(_requantization_range_32)
