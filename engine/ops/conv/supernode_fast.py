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
from hexscope.engine.ops.conv.dwise_scaling import DwiseRange, would_retry
from hexscope.engine.ops.kernels.spare_memory import SpareMemories
from hexscope.engine.ops.kernels.supernode_requant import d32_kernel
from hexscope.engine.tensor import Tensor

#: The node-state entry.
KEY = "hvx_fast"


class FastRun(NamedTuple):
    """What a steady run of the node needs; ``scaling`` is the input range and the node's
    range (mn, mx, flags) it holds for. ``bound``: the direct pass's driver and its kept
    arguments (:func:`conv_d32.prepared_conv_d32`), called straight (the key stands for
    its checks); else ``path``, a fused pass of :mod:`supernode_hvx`'s ``_Steady``."""

    scaling: tuple
    bound: tuple | None
    path: Callable[..., tuple[int, int] | None]
    zx: int
    folded: np.ndarray          # int64
    recip: np.ndarray           # int64
    shift: int
    mem_shape: tuple[int, int, int, int, int]
    template: Tensor            # shape-only: the output's shape and padding
    words: tuple[Tensor, Tensor]
    spare: SpareMemories        # the direct pass's output memories, given out again


def steady_key(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...]) -> tuple:
    """What a kept run of a d32 Supernode or depthwise Supernode depends on besides the
    ranges: the op, the input's geometry, the context's padding, fill and debug level, and
    every input but the input range's (``rest`` = the inputs after x; Tensors compare by
    identity)."""
    return (ctx.op, x.shape, x.padding, x.layout, x.dtype, ctx.padding, ctx.padding_fill,
            ctx.debug_level, rest[0], *rest[3:])


def kept_entry(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...], key: str,
               range_key: str) -> tuple[object, DwiseRange] | None:
    """A d32 Supernode's or depthwise Supernode's kept run (state entry ``key``) and its
    range state (``range_key``), or None when the run's key does not hold or the range is
    still at its first guess."""
    kept = ctx.state.get(key)
    if type(kept) is not Shared or kept.key != steady_key(ctx, x, rest):
        return None
    state = ctx.state.get(range_key)
    if type(state) is not DwiseRange or state.first_guess:
        return None
    return kept.value, state


def run_fast(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...]
             ) -> tuple[Tensor, Tensor, Tensor] | None:
    """The node's output and range from its kept run, or None (nothing changed in the
    state) when the key does not hold, the kept pass does not serve this run or the run
    would move the output range."""
    found = kept_entry(ctx, x, rest, KEY, "hvx_range")
    if found is None:
        return None
    run: FastRun = found[0]  # type: ignore[assignment]
    state = found[1]
    if (scalar_f(rest[1]), scalar_f(rest[2]), state.mn, state.mx, state.flags) != run.scaling:
        return None
    if run.bound is not None:
        driver, params, chan64, chan32, gather_to, gather_from, buf = run.bound
        # a memory this run wrote before that nothing refers to keeps its padding fill
        # (the driver's -1: none), the most of a small layer's memory; the key holds the fill
        mem = run.spare.take()
        fresh = mem is None
        if mem is None:
            mem = np.empty(run.mem_shape, np.uint8)
        ok, lo, hi = driver(params, x.raw, mem, chan64, chan32, gather_to, gather_from, buf,
                            run.folded, run.recip, run.zx, run.shift, False,
                            ctx.padding_fill if fresh else -1)
        if not ok:          # nothing written
            return None
        if fresh:
            run.spare.keep(mem)
        lo, hi = min(_START[0], lo), max(_START[1], hi)
    else:
        mem = np.empty(run.mem_shape, np.uint8)
        got = run.path(x, run.zx, run.folded, run.recip, run.shift, mem, ctx.padding_fill)
        if got is None:
            return None
        lo, hi = got
    if would_retry(state.flags, lo, hi):
        return None
    return run.template.alike(mem.reshape(-1)), run.words[0], run.words[1]


def keep_fast(ctx: KernelContext, key: tuple, scaling: tuple, zx: int, folded: np.ndarray,
              recip: np.ndarray, shift: int, path: Callable[..., tuple[int, int] | None],
              mem_shape: tuple[int, int, int, int, int], y: Tensor,
              words: tuple[Tensor, Tensor]) -> None:
    """Keep a general run that went through ``path`` at its first try and did not move the
    range: ``scaling`` the (input min, max, node's mn, mx, flags) it ran with."""
    template = Tensor(y.shape, DType.QUINT8, None, Layout.D32, y.padding)
    direct = getattr(path, "direct", None)
    bound = getattr(direct, "bound", None)
    ctx.state[KEY] = Shared(key, FastRun(
        scaling, bound, path, int(zx), np.ascontiguousarray(folded, np.int64),
        np.ascontiguousarray(recip, np.int64), int(shift), mem_shape, template, words,
        SpareMemories()))


#: The range search's start (supernode_hvx's ``_extremes``).
_START = (1 << 24, -(1 << 24))


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


__all__ = ["KEY", "FastRun", "keep_fast", "kept_entry", "requant_of", "run_fast",
           "steady_key"]
