"""What the d32 DepthwiseSupernode's flat path writes into its output's padding after the
packing (op_dwise_snode_8bit.c's asm, docs/oracle-hvx.md): the depth padding lanes' code and
the last group of 4 columns spilled past each row's data. The fused pass
(:mod:`~hexscope.engine.ops.kernels.dwise_fused`) writes the same bytes itself.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry
from hexscope.engine.tensor import Tensor


def fill_pad_lanes(out: Tensor, code: int | None, cols: slice) -> None:
    """Write ``code`` into the depth padding lanes of the data rows' columns ``cols``."""
    pad = out.padding
    if code is None or pad.d_before or not pad.d_after:
        return
    g = D32Geometry(out.shape, pad)
    mem = np.asarray(out.raw).reshape(g.memory_shape)
    # no depth padding before: the padding lanes are the end of the last slice
    mem[:, pad.h_before:pad.h_before + out.shape[1], -1, cols, 32 - pad.d_after:] = code


def spill_last_group(out: Tensor, extra: int) -> None:
    """Copy each row's last group's first column (all 32 lanes, its depth padding lanes
    included) into the ``extra`` columns after the row's data in every depth slice of
    ``out``'s memory, where they land: past the right padding, the next slice's (or row's)
    left padding; never its data."""
    pad = out.padding
    g = D32Geometry(out.shape, pad)
    nb, oh, ow, _ = out.shape
    # the memory as lines of one slice of one row: the line after a row's last slice is
    # the next row's first
    lines = np.asarray(out.raw).reshape(-1, g.w_total, 32)
    first = pad.w_before + ow - (4 - extra)
    for b in range(nb):
        l0 = (b * g.h_total + pad.h_before) * g.n_slices
        l1 = l0 + oh * g.n_slices
        src = lines[l0:l1, first].copy()
        for col in range(pad.w_before + ow, pad.w_before + ow + extra):
            if col < g.w_total:
                lines[l0:l1, col] = src
            elif col - g.w_total < pad.w_before:
                lines[l0 + 1:l1 + 1, col - g.w_total] = src


__all__ = ["fill_pad_lanes", "spill_last_group"]
