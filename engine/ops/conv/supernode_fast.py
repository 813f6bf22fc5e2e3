"""A d32 Supernode's steady run in few steps: once a run has gone through its first try's
fused pass (:mod:`supernode_direct` or the GEMM's) without moving the output range, what
that run fixed (the scaling, the bias buffer folded, the output's shape, padding and range
tensors, the pass that served it) is kept in the node's state, keyed on every input it
depends on: the Consts by identity (read-only, as :mod:`supernode_hvx` keeps them), the
input's geometry, the context's padding, fill and debug level, and the input range and the
node's output range by value. A run whose key holds goes straight into that pass; any other
(a Const or range edited, another input shape, a run that would move the range) takes
:func:`supernode_hvx.run_hvx`'s general path, which makes every check and keeps a new
entry. MobileNetV2 spent ~15 us of Python a Supernode around its kernel before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.ops.context import KernelContext, Shared, scalar_f
from hexscope.engine.ops.conv.dwise_scaling import DwiseRange
from hexscope.engine.ops.kernels.supernode_requant import d32_kernel
from hexscope.engine.tensor import Tensor

#: The node-state entry.
KEY = "hvx_fast"


class FastRun(NamedTuple):
    """What a steady run of the node needs; ``scaling`` is the input range and the node's
    range (mn, mx, flags) it holds for."""

    scaling: tuple
    zx: int
    folded: np.ndarray
    recip: np.ndarray
    shift: int
    path: Callable[..., tuple[int, int] | None]
    mem_shape: tuple[int, int, int, int, int]
    template: Tensor            # shape-only: the output's shape and padding
    words: tuple[Tensor, Tensor]


def fast_key(ctx: KernelContext, x: Tensor, consts: tuple[Tensor, ...], bias32: bool,
             short: bool) -> tuple:
    """What a kept run depends on besides the ranges (Tensors compare by identity)."""
    return (x.shape, x.padding, x.layout, x.dtype, ctx.padding, ctx.padding_fill,
            ctx.debug_level, bias32, short, *consts)


def run_fast(ctx: KernelContext, key: tuple, x: Tensor, x_min: Tensor, x_max: Tensor
             ) -> tuple[Tensor, Tensor, Tensor] | None:
    """The node's output and range from its kept run, or None (nothing changed in the
    state) when the key does not hold, the kept pass does not serve this run or the run
    would move the output range."""
    kept = ctx.state.get(KEY)
    if type(kept) is not Shared or kept.key != key:
        return None
    run: FastRun = kept.value  # type: ignore[assignment]
    state = ctx.state.get("hvx_range")
    if type(state) is not DwiseRange or state.first_guess \
            or (scalar_f(x_min), scalar_f(x_max), state.mn, state.mx, state.flags) \
            != run.scaling:
        return None
    mem = np.empty(run.mem_shape, np.uint8)
    got = run.path(x, run.zx, run.folded, run.recip, run.shift, mem, ctx.padding_fill)
    if got is None:
        return None
    lo, hi = got
    flags = state.flags
    # dwise_scaling.retry's test, without its moves: such a run goes the general way
    if flags != 3 and (not flags & 2 and hi > 255 or not flags & 1 and lo < 0):
        return None
    return run.template.alike(mem.reshape(-1)), run.words[0], run.words[1]


def keep_fast(ctx: KernelContext, key: tuple, scaling: tuple, zx: int, folded: np.ndarray,
              recip: np.ndarray, shift: int, path: Callable[..., tuple[int, int] | None],
              mem_shape: tuple[int, int, int, int, int], y: Tensor,
              words: tuple[Tensor, Tensor]) -> None:
    """Keep a general run that went through ``path`` at its first try and did not move the
    range: ``scaling`` the (input min, max, node's mn, mx, flags) it ran with."""
    template = Tensor(y.shape, DType.QUINT8, None, Layout.D32, y.padding)
    ctx.state[KEY] = Shared(key, FastRun(scaling, zx, folded, recip, shift, path,
                                         mem_shape, template, words))


def requant_of(ow: int, channels: int, short: bool) -> Callable[..., tuple[int, int]] | None:
    """:func:`supernode_requant.requantize_into_d32` and the run's extremes of a node's
    output (``supernode_hvx._extremes``), in fewer steps: (sums, folded, recip, shift, mem)
    -> the run's (min, max) in output codes."""
    kernel = d32_kernel()
    if kernel is None:
        return None
    start = (0, 0) if short else (1 << 24, -(1 << 24))

    def run(sums: np.ndarray, folded: np.ndarray, recip: np.ndarray, shift: int,
            mem: np.ndarray) -> tuple[int, int]:
        lo, hi = np.empty(channels, np.int64), np.empty(channels, np.int64)
        rec = np.ascontiguousarray(recip, np.int64)
        kernel(np.ascontiguousarray(sums, np.int32), ow, np.ascontiguousarray(folded, np.int64),
               rec, int(shift), short, True, mem, lo, hi)
        return _lane_range(lo, hi, rec, start)

    return run


def _lane_range(lo: np.ndarray, hi: np.ndarray, rec: np.ndarray, start: tuple[int, int]
                ) -> tuple[int, int]:
    """The extremes of int64 lanes (changed in place): each lane's extremes times its
    recip, rounded at bit 31, then the min and max with the node's start."""
    lo *= rec
    hi *= rec
    lo += 1 << 30
    hi += 1 << 30
    return min(start[0], int(lo.min()) >> 31), max(start[1], int(hi.max()) >> 31)


__all__ = ["KEY", "FastRun", "fast_key", "keep_fast", "requant_of", "run_fast"]
