"""The flat DepthwiseSupernode's run: its range search (``dwise_supernode_execute``'s loop,
op_dwise_snode_8bit.c) over the exact sums (numba), the HVX requantization as its C model
writes it (:mod:`hexscope.engine.ops.kernels.dwise_requant`) and the asm's quirks
(:mod:`dwise_asm_quirks`); the d32 form (:mod:`dwise_d32`) calls it with its input's memory.
"""

from __future__ import annotations

from dataclasses import replace

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, Shared, data_of, scalar_f
from hexscope.engine.ops.conv.depthwise import dwise_windows
from hexscope.engine.ops.conv.dwise_asm_quirks import (
    add_first_group,
    first_group_terms,
    shift_twice_kept,
)
from hexscope.engine.ops.conv.dwise_reads import read_memory
from hexscope.engine.ops.conv.dwise_scaling import DwiseRange, retry
from hexscope.engine.ops.conv.dwise_setup import (
    check_shapes,
    filter_terms,
    kept_scaling,
    range_outputs,
    starting_range,
)
from hexscope.engine.ops.conv.dwise_shifts import vasl_sums
from hexscope.engine.ops.kernels.depthwise import (
    depthwise_requantized,
    depthwise_sums,
    numba_kernels,
)
from hexscope.engine.ops.kernels.dwise_requant import dwise_requantize
from hexscope.engine.tensor import Tensor

_MAX_RETRIES = 4          # dwise_supernode_execute: "if( ++loopcount > 4)" fails the node


def depthwise_supernode(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                        x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                        bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                        o_max: Tensor, *channel_scale: Tensor, wide: tuple[int, int] = (0, 0),
                        d32: Tensor | None = None, first_try: int = 0
                        ) -> tuple[Tensor, Tensor, Tensor]:
    """Both names: the bias dtype tells them apart (quint8 codes or int32 values). ``wide``
    (columns before, after) computes that many more output columns each side, as the d32
    op's asm does for the output's width padding (:func:`~dwise_d32.depthwise_d32`); their
    codes count in the range search. ``d32``: the d32 input ``x`` came from, whose memory the
    windows read past the data as the asm does (:func:`~dwise_reads.read_memory`); without it
    they read zx.
    ``first_try``: 1 when the fused d32 pass made the first try (:mod:`dwise_d32`)."""
    key = (x.shape, x.dtype, ctx.padding, wide, filt, f_min, f_max, stride, bias, b_min,
           b_max, *channel_scale)
    kept = ctx.state.get("dwise_steady")
    if isinstance(kept, Shared) and kept.key == key:
        rows, data_cols, cols, consts, bias32, bmn, bmx, kernels = \
            kept.value  # type: ignore[misc]
    else:
        for name, t in (("input x", x), ("filter", filt)):
            if t.dtype is not DType.QUINT8:
                raise KernelError(f"{name} is {t.dtype.name.lower()}; the Supernode reads "
                                  "quint8")
        bias32 = bias.dtype is not DType.QUINT8
        check_shapes(filt, stride)
        rows, cols = dwise_windows(ctx, x, filt, stride)
        data_cols = cols
        if wide != (0, 0):
            cols = replace(cols, before=cols.before + wide[0] * cols.s,
                           out=cols.out + sum(wide))
        consts = filter_terms(ctx, filt, f_min, f_max, channel_scale)
        bmn, bmx = scalar_f(b_min), scalar_f(b_max)
        kernels = numba_kernels()
        # kept while the same read-only Consts and an input of the same shape come in: the
        # checks passed, the windows, the filter terms and the bias range (a run's steady
        # state; the ranges of x come from the node before and are read at every run)
        if all(not t.has_data or not t.raw.flags.writeable
               for t in (filt, f_min, f_max, stride, bias, b_min, b_max, *channel_scale)):
            ctx.state["dwise_steady"] = Shared(key, (rows, data_cols, cols, consts, bias32,
                                                     bmn, bmx, kernels))
    state = ctx.state.get("dwise_range")
    if not isinstance(state, DwiseRange):
        state = starting_range(scalar_f(o_min), scalar_f(o_max))
        ctx.state["dwise_range"] = state
    xmn, xmx = scalar_f(x_min), scalar_f(x_max)
    sums = first = None
    twice = vector = False
    data, rbefore, cbefore = data_of(x, "input x"), rows.before, cols.before
    for attempt in range(first_try, _MAX_RETRIES + 1):
        sc, folded = kept_scaling(ctx, state, bias, bias32, xmn, xmx, bmn, bmx, consts)
        if d32 is not None and attempt == first_try:     # zx is the same every run
            data, rbefore, cbefore = read_memory(ctx, d32, data, rows, data_cols, cols,
                                                  sc.in_offset)
            first = first_group_terms(d32, filt, channel_scale, consts, rows, data_cols, cols,
                                 sc.in_offset)
            twice = filt.shape[1] == 5 and cols.s == 2 and cols.out % 4 == 1 and not wide[0]
            # the MxN kernels shift by a splatted vector; the 3x3 ones by a scalar (& 31)
            vector = filt.shape[:2] != (3, 3) or bool(channel_scale)
        right = vector and bool(sc.shamt & 32)
        fused = None if sums is not None or first is not None or twice or right \
            else depthwise_requantized(
            data, consts.w, sc.in_offset, consts.zf, rows.s, cols.s,
            rbefore, cbefore, rows.out, cols.out, folded, sc.recip, sc.shamt & 31, kernels)
        if fused is not None:
            # one pass; a retry (rare: a free bound moved) takes the two steps below
            out, lo, hi = fused
            sums = (None, None)
        elif sums is None or sums[0] != sc.in_offset:
            sums = (sc.in_offset, add_first_group(
                depthwise_sums(data, consts.w, sc.in_offset, consts.zf, rows.s, cols.s,
                               rbefore, cbefore, rows.out, cols.out), first))
        if fused is None and right:
            out, lo, hi = dwise_requantize(vasl_sums(sums[1], folded, sc.shamt), folded,
                                           sc.recip, 0)
        elif fused is None:
            out, lo, hi = dwise_requantize(sums[1], folded, sc.recip, sc.shamt & 31)
        if twice:
            lo, hi = shift_twice_kept(ctx, sums[1], folded, sc, lo, hi)
        if ctx.debug_level >= 2:
            ctx.log(2, f"dwise supernode try {attempt}: range [{state.mn}, {state.mx}] "
                       f"recip_shamt={sc.shamt} out {lo}..{hi}")
        if not retry(state, sc, lo, hi):
            # read by depthwise_d32 right after this call; Shared: a snapshot of the node's
            # state takes it as it is (never changed, only replaced) rather than deep-copying
            # the scaling's arrays at every run's start
            ctx.state["dwise_last"] = Shared(None, (sc, float(state.mn), consts.k is None))
            y = Tensor(out.shape, DType.QUINT8, out.reshape(-1))     # a new array of ours
            return (y, *range_outputs(ctx, state))
    raise KernelError(f"can't find range for depthwise (device's message): still "
                      f"[{state.mn}, {state.mx}] after {_MAX_RETRIES} retries")
