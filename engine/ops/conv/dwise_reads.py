"""What the depthwise Supernode's asm reads past the data of its d32 input: the padding
``dwise_supernode_execute`` zaps, the extra bottom row a last row's windows reach, and the
codes the windows read there (:mod:`d32_input_reads`).
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.d32_input_reads import Zaps, kept_border, window_input
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.tensor import Tensor


def read_memory(ctx: KernelContext, x: Tensor, data: np.ndarray, rows: Window,
                 data_cols: Window, cols: Window, zx: int) -> tuple[np.ndarray, int, int]:
    """The codes the windows ``rows`` x ``cols`` read and their padding before (rows,
    columns): the d32 input's memory as the asm reads it (:mod:`d32_input_reads`, zapped as
    ``dwise_supernode_execute`` asks, op_dwise_snode_8bit.c:579-611: the rows the data
    windows reach above and below plus the extra bottom row, the whole width padding), or
    ``data`` itself when every code read outside it is zx."""
    zaps = dwise_zaps(x, rows, data_cols)
    if not 0 <= zx <= 255:
        return data, rows.before, cols.before
    full, plain = window_input(x, zaps, zx, rows, cols,
                               kept_border(ctx.state, x, zaps, rows, cols))
    if plain or full is None:
        return data, rows.before, cols.before
    return full, 0, 0


def dwise_zaps(x: Tensor, rows: Window, data_cols: Window) -> Zaps:
    """What ``dwise_supernode_execute`` zaps (op_dwise_snode_8bit.c:579-611)."""
    p = x.padding
    return Zaps(rows.before, rows.after + extra_bottom_row(x, rows, data_cols), p.w_before,
                p.w_after)


def extra_bottom_row(x: Tensor, rows: Window, cols: Window) -> int:
    """1 when the last row's windows reach past its right padding into the row below
    (op_dwise_snode_8bit.c:580-593), unless a vertical stride leaves the last rows unused."""
    if cols.after <= x.padding.w_after:
        return 0
    if rows.s > 1 and rows.after == 0 and rows.f + (rows.out - 1) * rows.s \
            < rows.before + x.shape[1]:
        return 0
    return 1
