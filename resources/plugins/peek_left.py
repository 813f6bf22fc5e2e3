"""Example user op plugin: a 1x2 max filter on a d32 tensor that peeks into the left padding.

Load it with ``hexscope --plugin resources/plugins/peek_left.py``. The op is deliberately
buggy, the way hand-written HVX kernels often are: at w = 0 its left neighbour is the byte in
the left padding, which hexagon_nn leaves undefined. The padding check
(``hexscope check-padding``) reports it; resources/examples/padding_demo.hexgraph uses it.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.ops.context import KernelContext, require_d32
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor


@op("PeekLeft_8_d32", Category.USER, user=True, d32_output=True,
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def peek_left_8_d32(ctx: KernelContext, x: Tensor, x_min: Tensor,
                    x_max: Tensor) -> tuple[Tensor, ...]:
    """Max of each element and its left neighbour (reads the left padding at w = 0).

    y[b,h,w,d] = max(x[b,h,w,d], x[b,h,w-1,d]), where x[b,h,-1,d] is the left padding byte
    (graph spec §1.6.3: negative indices address padding). The range passes through. With
    no left padding the element itself stands in for its neighbour.
    """
    require_d32(x)
    padded = x.padded_array()
    p = x.padding
    _, h, w, d = x.shape
    rows = slice(p.h_before, p.h_before + h)
    depth = slice(p.d_before, p.d_before + d)
    here = padded[:, rows, p.w_before:p.w_before + w, depth]
    if p.w_before > 0:
        left = padded[:, rows, p.w_before - 1:p.w_before - 1 + w, depth]
    else:
        left = np.concatenate([here[:, :, :1], here[:, :, :-1]], axis=2)
    y = Tensor.from_array(np.maximum(here, left), DType.QUINT8)
    return y.to_d32(p, fill=ctx.padding_fill), x_min.copy(), x_max.copy()
