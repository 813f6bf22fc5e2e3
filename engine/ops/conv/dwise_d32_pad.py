"""What the d32 DepthwiseSupernode's flat path writes into its output's padding after the
packing (op_dwise_snode_8bit.c's asm, docs/oracle-hvx.md): the depth padding lanes' code and
the last group of 4 columns spilled past each row's data. The fused pass
(:mod:`~hexscope.engine.ops.kernels.dwise_fused`) writes the same bytes itself.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry
from hexscope.engine.ops.context import KernelContext, Shared
from hexscope.engine.ops.conv.dwise_scaling import Scaling
from hexscope.engine.ops.conv.dwise_shifts import vasl_words
from hexscope.engine.ops.kernels.dwise_requant import dwise_requantize
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


def pad_lane_code(ctx: KernelContext) -> int | None:
    """The code of the output's depth padding lanes: the asm computes every lane of a
    slice (``out_depth_valid = out_depth_total``), whose padded weights are the filter's zero
    code (``dwise_rearrange_weights``), so the sum is 0 whatever the input holds there, and
    whose bias is 0: ``fill_bias_buf``'s round(-out_min / product step) requantized. None
    with channel scales (the padding lanes' k is not modelled)."""
    kept = ctx.state.get("dwise_last")
    if not isinstance(kept, Shared) or not kept.value[2]:  # type: ignore[index]
        return None
    sc, mn, _ = kept.value  # type: ignore[misc]
    return kept_lane_code(ctx, sc, mn)


def kept_lane_code(ctx: KernelContext, sc: Scaling, mn: float) -> int | None:
    """:func:`lane_code`, kept in the node: the same scaling and range as the last run's
    give the same code (a run's steady state)."""
    lane = ctx.state.get("dwise_lane")
    if isinstance(lane, Shared) and lane.key[0] is sc and lane.key[1] == mn:  # type: ignore[index]
        return lane.value  # type: ignore[no-any-return]
    code = lane_code(sc, mn)
    ctx.state["dwise_lane"] = Shared((sc, mn), code)
    return code


def lane_code(sc: Scaling, mn: float, twice: bool = False) -> int | None:
    """The code a depth padding lane gets (a zero sum plus the zero channel's bias), None
    where the bias leaves int32."""
    with np.errstate(all="ignore"):
        off = np.float32(np.float32(-mn) / sc.prod_level)
    if not np.isfinite(off) or abs(float(off)) >= 2.0**31:
        return None
    bias = np.rint([float(off)]).astype(np.int64)
    # twice: as dwise_asm_quirks.shift_twice_kept, the bias (sum 0) shifted twice, shift 0 after
    if twice:
        start, shift = vasl_words(vasl_words(bias, sc.shamt), sc.shamt) - bias, 0
    else:
        start, shift = 0 * bias, sc.shamt & 31
    code, _, _ = dwise_requantize(start.reshape(1, 1).astype(np.int32), bias,
                                  np.asarray(sc.recip).reshape(-1)[:1], shift)
    return int(code[0, 0])


__all__ = ["fill_pad_lanes", "kept_lane_code", "lane_code", "pad_lane_code",
           "spill_last_group"]
