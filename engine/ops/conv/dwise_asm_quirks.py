"""The depthwise Supernode's asm quirks as its range-search loop applies them (traced under
qemu-hexagon, docs/oracle-hvx.md): the s2 3x3 kernel's first group (:mod:`dwise_s2_3x3`)
and the 5xN s2 kernel's column shifted twice (:mod:`dwise_shifts`), its codes kept in the
node until the d32 form writes them.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.ops.context import KernelContext, Shared
from hexscope.engine.ops.conv.dwise_d32_pad import lane_code
from hexscope.engine.ops.conv.dwise_reads import dwise_zaps
from hexscope.engine.ops.conv.dwise_s2_3x3 import first_group_delta
from hexscope.engine.ops.conv.dwise_scaling import Scaling
from hexscope.engine.ops.conv.dwise_setup import FilterTerms
from hexscope.engine.ops.conv.dwise_shifts import shift_twice, write_twice
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.tensor import Tensor


def first_group_terms(x: Tensor, filt: Tensor, channel_scale: tuple[Tensor, ...],
                 consts: FilterTerms, rows: Window, data_cols: Window, cols: Window, zx: int
                 ) -> np.ndarray | None:
    """``dwconv2dbbb_s2_3x3_asm``'s first group of each row and slice (taken for a 3x3
    filter at stride width 2 without ChannelScale; ``cols`` the padded width it computes):
    what its sums gain from the bytes it reads there (:mod:`dwise_s2_3x3`), None if
    nothing."""
    if filt.shape[:2] != (3, 3) or channel_scale or cols.s != 2:
        return None
    return first_group_delta(x, consts.w, consts.zf, zx, dwise_zaps(x, rows, data_cols), rows,
                             x.padding.w_before - cols.before)


def shift_twice_kept(ctx: KernelContext, sums: np.ndarray, folded: np.ndarray, sc: Scaling,
                 lo: int, hi: int) -> tuple[int, int]:
    """:func:`~dwise_shifts.shift_twice`, its codes kept for :func:`write_kept_twice`; the
    run's (min, max) with them."""
    codes, lo2, hi2 = shift_twice(sums, folded, sc.shamt, sc.recip)
    ctx.state["dwise_twice"] = codes
    return min(lo, lo2), max(hi, hi2)


def write_kept_twice(ctx: KernelContext, out: Tensor) -> None:
    """:func:`~dwise_shifts.write_twice` of the last run's codes, the depth padding lanes
    their bias shifted twice (left as they are with channel scales)."""
    codes = ctx.state.pop("dwise_twice", None)
    if not isinstance(codes, np.ndarray):
        return
    kept = ctx.state.get("dwise_last")
    lane = lane_code(*kept.value[:2], twice=True) \
        if isinstance(kept, Shared) and kept.value[2] else None  # type: ignore[index, misc]
    write_twice(out, codes, lane)


def add_first_group(sums: np.ndarray, first: np.ndarray | None) -> np.ndarray:
    """``sums`` with :func:`first_group_terms`'s terms added to output columns 0 and 1 (int32
    wrapping, as the asm's words)."""
    if first is not None:
        sums[:, :, :2] = (sums[:, :, :2].astype(np.int64) + first).astype(np.int32)
    return sums
