"""DepthwiseSupernode_*_d32's run (the op is declared in :mod:`supernode_d32`): nnlib's
checks of the input's padding, the output's layout, the flat range search
(:mod:`dwise_range_search`) over the input's memory with what the asm writes into the
output's padding, and the 3x3 path's first try in one compiled pass
(:mod:`hexscope.engine.ops.kernels.dwise_fused`) once the node's set-up is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import quantize_uint8
from hexscope.engine.ops.context import KernelContext, Shared, data_of, scalar_f
from hexscope.engine.ops.conv.d32_input_reads import Zaps
from hexscope.engine.ops.conv.depthwise import dwise_windows
from hexscope.engine.ops.conv.dwise_asm_quirks import write_kept_twice
from hexscope.engine.ops.conv.dwise_d32_pad import (
    fill_pad_lanes,
    kept_lane_code,
    pad_lane_code,
    spill_last_group,
)
from hexscope.engine.ops.conv.dwise_range_search import depthwise_supernode
from hexscope.engine.ops.conv.dwise_reads import extra_bottom_row
from hexscope.engine.ops.conv.dwise_scaling import DwiseRange, retry, would_retry
from hexscope.engine.ops.conv.dwise_setup import kept_scaling, range_outputs
from hexscope.engine.ops.conv.supernode_fast import kept_entry, steady_key
from hexscope.engine.ops.kernels.d32_layout import packer, unpacker
from hexscope.engine.ops.kernels.dwise_fused import chunk_of, lane_terms, prepare_dwise_d32
from hexscope.engine.tensor import Tensor, fresh


def depthwise_d32(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...],
                  pad_of: Callable[[tuple[int, int, int, int]], D32Padding]
                  ) -> tuple[Tensor, Tensor, Tensor]:
    """DepthwiseSupernode_*_d32: the flat op's codes laid out in d32 with what the asm writes
    into the output's width padding, after nnlib's checks of the input's padding
    (``dwise_supernode_execute``: "filter depth must match input depth", :713; the strategy's
    "inadequate top/bottom padding", :596).

    The asm works on memory lanes: lane p of the input (its depth padding included) with
    the filter's channel p (the filter's zero code past its depth,
    ``dwise_rearrange_weights``) and the bias's (0 past it, ``fill_bias_buf``), into lane p
    of the output, whose depth padding is the input's. With depth padding before, the
    channels are therefore not paired with their own filter: that case runs here on the
    lanes (:func:`_on_lanes`).

    The 3x3 kernels (``opt_3x3``: filter 3x3, no ChannelScale) compute the whole padded width
    from its left edge (``out_width_processed = out_width_total``, op_dwise_snode_8bit.c:482):
    here as data columns whose taps past the input read its memory as the asm does
    (:func:`~dwise_reads.read_memory`); their codes count in the range search, as the asm's
    min/max do.
    The other kernels compute the data width from its first column (:484) in groups of 4
    columns, and a last group's columns past the data repeat that group's first column (seen
    under QEMU, all cases); those past the row's right padding land in the next depth
    slice's (or row's, or the bottom padding's) left padding, where nothing else writes."""
    lay = _layout(ctx, x, rest, pad_of)         # nnlib's checks of the input's padding too
    if not x.padding.d_before or rest[11:]:
        return _d32_body(ctx, x, rest, lay)
    return _on_lanes(ctx, x, rest, lay)


def _on_lanes(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...], lay: _Layout
              ) -> tuple[Tensor, Tensor, Tensor]:
    """The op over every memory lane of an input with depth padding before: the input's
    lanes as its channels, the filter padded to as many with its zero code; the output's
    memory is then read with its real depth padding."""
    p, filt = x.padding, rest[0]
    lanes = p.d_before + x.shape[3] + p.d_after
    xl = Tensor((*x.shape[:3], lanes), x.dtype, x.raw, Layout.D32,
                p._replace(d_before=0, d_after=0))
    zf = quantize_uint8(0.0, scalar_f(rest[3]), scalar_f(rest[4]))
    w = np.full((*filt.shape[:2], lanes, filt.shape[3]), zf, np.uint8)
    w[:, :, :filt.shape[2]] = data_of(filt, "filter")
    lanes_rest = (Tensor.from_array(w, DType.QUINT8), *rest[1:])
    lanes_pad = lay.pad._replace(d_before=0, d_after=0)
    y, lo, hi = _d32_body(ctx, xl, lanes_rest,
                          _layout(ctx, xl, lanes_rest, lambda _shape: lanes_pad))
    return Tensor(lay.shape, DType.QUINT8, y.raw, Layout.D32, lay.pad), lo, hi


def _d32_body(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...], lay: _Layout
              ) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`depthwise_d32` once its checks are made and its layout known."""
    filt, scales = rest[0], rest[11:]
    shape, pad, fill = lay.shape, lay.pad, ctx.padding_fill
    ow = shape[2]
    done = _fused(ctx, x, rest, lay)
    if not isinstance(done, int):
        return done
    flat = Tensor(x.shape, x.dtype, lay.unpack(x.raw).reshape(-1)) if lay.unpack is not None \
        else Tensor.from_array(fresh(x.array), x.dtype)
    if filt.shape[:2] == (3, 3) and not scales:
        y, lo, hi = depthwise_supernode(ctx, flat, *rest, wide=(pad.w_before, pad.w_after),
                                        d32=x, first_try=done)
        mem = (lay.pack(y.array).reshape(-1) if lay.pack is not None and y.shape == lay.wide
               else y.to_d32(pad._replace(w_before=0, w_after=0), fill).raw)
        out = Tensor(shape, DType.QUINT8, mem, Layout.D32, pad)
        fill_pad_lanes(out, pad_lane_code(ctx), slice(None))
        return out, lo, hi
    y, lo, hi = depthwise_supernode(ctx, flat, *rest, d32=x, first_try=done)
    out = (Tensor(shape, DType.QUINT8, lay.pack(y.array).reshape(-1), Layout.D32, pad)
           if lay.pack is not None and y.shape == lay.wide else y.to_d32(pad, fill))
    fill_pad_lanes(out, pad_lane_code(ctx), slice(pad.w_before, pad.w_before + ow))
    extra = (-ow) & 3
    if extra and y.array.size:
        spill_last_group(out, extra)
        write_kept_twice(ctx, out)
    return out, lo, hi


def _fused(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...], lay: _Layout
           ) -> tuple[Tensor, Tensor, Tensor] | int:
    """The 3x3 path's first try in one compiled pass (:mod:`dwise_fused`: no unpack, window
    read, flat sums or pack) once the node's set-up is kept (from its second run): the same
    output and range bytes as the flat path's first try. 0 where it does not apply (the
    flat path makes every try), 1 when the first try's range must be searched again (the
    flat path goes on from its second try)."""
    steady, state = ctx.state.get("dwise_steady"), ctx.state.get("dwise_range")
    if not isinstance(steady, Shared) or not isinstance(state, DwiseRange) \
            or state.first_guess:
        return 0
    plan = ctx.state.get("dwise_fused")
    if not isinstance(plan, Shared) or plan.key[0] is not lay \
            or plan.key[1] is not steady or plan.key[2] is not rest[3] \
            or plan.key[3] is not rest[4]:  # type: ignore[index]
        plan = _fused_plan(ctx, x, rest, lay, steady)
        if plan is None:
            return 0
    run = plan.value
    if run is None:
        return 0
    _, _, _, consts, bias32, bmn, bmx, _ = steady.value  # type: ignore[misc]
    sc, folded = kept_scaling(ctx, state, rest[6], bias32, scalar_f(rest[1]), scalar_f(rest[2]),
                          bmn, bmx, consts)
    zx = sc.in_offset
    # the MxN kernels' vector shift of 32 or more (dwise_shifts.vasl_words)
    vector = rest[0].shape[:2] != (3, 3) or bool(rest[11:])
    if not 0 <= zx <= 255 or (vector and sc.shamt & 32):
        return 0
    mn = float(state.mn)
    terms = ctx.state.get("dwise_lanes")
    # the tiles are the plan's (its chunk of pixels): a new plan makes new ones
    if not isinstance(terms, Shared) or terms.key[0] is not sc \
            or terms.key[1] is not folded or terms.key[2] != mn \
            or terms.key[3] is not run:  # type: ignore[index]
        code = kept_lane_code(ctx, sc, mn) if consts.k is None else None
        lane = lane_terms(folded, consts.gemsumb, zx, sc.recip, (lay.shape[3] + 31) & ~31,
                          chunk_of(steady.value[2].out))  # type: ignore[index]
        if lane is None:
            return 0
        terms = Shared((sc, folded, mn, run), (*lane, code))
        ctx.state["dwise_lanes"] = terms
    bias_l, rec_l, code = terms.value  # type: ignore[misc]
    fill = ctx.padding_fill
    mem, lo, hi = run(x.raw, bias_l, rec_l, sc.shamt & 31, zx, fill if code is None else code,
                      fill)
    if ctx.debug_level >= 2:
        ctx.log(2, f"dwise supernode try 0: range [{state.mn}, {state.mx}] "
                   f"recip_shamt={sc.shamt} out {lo}..{hi}")
    if retry(state, sc, lo, hi):
        return 1
    last = Shared(None, (sc, float(state.mn), consts.k is None))
    ctx.state["dwise_last"] = last
    out = Tensor(lay.shape, DType.QUINT8, mem.reshape(-1), Layout.D32, lay.pad)
    lo_t, hi_t = range_outputs(ctx, state)
    if ctx.debug_level < 2:
        words = (lo_t.copy().readonly(), hi_t.copy().readonly())
        ctx.state[_FAST] = Shared(steady_key(ctx, x, rest), _FastRun(
            (scalar_f(rest[1]), scalar_f(rest[2]), mn, float(state.mx), state.flags),
            run.bind(bias_l, rec_l, sc.shamt & 31, zx, fill if code is None else code, fill),
            last, Tensor(lay.shape, DType.QUINT8, None, Layout.D32, lay.pad), words))
    return out, lo_t, hi_t


#: The node-state entry of a steady run (:func:`kept_run`).
_FAST = "dwise_fast"


class _FastRun(NamedTuple):
    """What a run of the fused pass that did not move the range fixed, for the next runs
    while the same read-only Consts and an input of the same geometry come in and the input
    range and the node's range (``scaling``: x min, max, mn, mx, flags) are the same."""

    scaling: tuple
    run: Callable[[np.ndarray], tuple[np.ndarray, int, int]]   # the pass, its terms bound
    last: Shared                # the "dwise_last" entry such a run leaves
    template: Tensor            # shape-only: the output's shape and padding
    words: tuple[Tensor, Tensor]


def kept_run(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...]
             ) -> tuple[Tensor, Tensor, Tensor] | None:
    """The node's kept run's pass straight away (the same bytes as :func:`depthwise_d32`
    gives), or None with nothing changed when the key (:func:`supernode_fast.steady_key`)
    or the ranges do not hold or the run would move the range (:func:`depthwise_d32` then
    makes it)."""
    found = kept_entry(ctx, x, rest, _FAST, "dwise_range")
    if found is None:
        return None
    run: _FastRun = found[0]  # type: ignore[assignment]
    state = found[1]
    if (scalar_f(rest[1]), scalar_f(rest[2]), float(state.mn), float(state.mx),
            state.flags) != run.scaling:
        return None
    mem, lo, hi = run.run(x.raw)
    if would_retry(state.flags, lo, hi):
        return None
    ctx.state["dwise_last"] = run.last
    return run.template.alike(mem.reshape(-1)), run.words[0], run.words[1]


def _fused_plan(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...], lay: _Layout,
                steady: Shared) -> Shared | None:
    """The fused pass for this node's geometry (None in the entry where it does not
    apply), kept while the layout, the flat path's kept set-up and the filter range are
    the same objects; None (nothing kept) where they are not kept themselves or are not
    this call's."""
    filt, pad = rest[0], lay.pad
    wide = filt.shape[:2] == (3, 3) and not rest[11:]       # as _d32_body's paths
    key = (x.shape, x.dtype, ctx.padding, (pad.w_before, pad.w_after) if wide else (0, 0), filt,
           *rest[3:9], *rest[11:])
    kept_layout = ctx.state.get("dwise_layout")
    if not isinstance(kept_layout, Shared) or kept_layout.value is not lay \
            or steady.key != key:
        return None
    rows, data_cols, cols, consts, _, _, _, kernels = steady.value  # type: ignore[misc]
    run = None
    p, (_, h, w, _) = x.padding, x.shape
    # not where the asm's quirks apply (see dwise_range_search): the s2 3x3 kernel's first
    # group over a left padding not zapped whole, the 5xN s2 kernel's column shifted twice
    quirk = (wide and cols.s == 2 and not (p.w_before >= 4 and p.w_before % 4 == 0)) \
        or (filt.shape[1] == 5 and cols.s == 2 and cols.out % 4 == 1)
    if kernels is not None and lay.pack is not None and lay.unpack is not None \
            and not pad.d_before and 0 <= ctx.padding_fill <= 255 and not quirk:
        zaps = Zaps(rows.before, rows.after + extra_bottom_row(x, rows, data_cols),
                    p.w_before, p.w_after)
        run = prepare_dwise_d32(
            x, zaps, (-rows.before, rows.before + h + rows.after),
            (-cols.before, cols.before + w + cols.after), consts.w, consts.zf,
            (rows.s, cols.s), (rows.out, cols.out), D32Geometry(lay.shape, pad).memory_shape,
            (pad.h_before, 0 if wide else pad.w_before), 0 if wide else (-cols.out) & 3)
    plan = Shared((lay, steady, rest[3], rest[4]), run)
    ctx.state["dwise_fused"] = plan
    return plan


class _Layout(NamedTuple):
    """What the d32 form's layout changes need, fixed by the input's geometry, the Consts and
    the fill (kept in the node while they are the same): the output's shape and padding, the
    input's unpacking and the flat result's packing (None: the general path)."""

    shape: tuple[int, int, int, int]
    pad: D32Padding
    wide: tuple[int, int, int, int]      # the flat result's shape the packing takes
    unpack: Callable[[np.ndarray], np.ndarray] | None
    pack: Callable[[np.ndarray], np.ndarray] | None


def _layout(ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...],
            pad_of: Callable[[tuple[int, int, int, int]], D32Padding]) -> _Layout:
    consts = (rest[0], *rest[5:])       # the filter, stride, bias and ranges, channel scales
    key = (x.shape, x.padding, x.dtype, x.layout, ctx.padding, ctx.padding_fill, *consts)
    kept = ctx.state.get("dwise_layout")
    if isinstance(kept, Shared) and kept.key == key:
        return kept.value  # type: ignore[no-any-return]
    filt, stride, scales = rest[0], rest[5], rest[11:]
    p = x.padding
    lanes = p.d_before + x.shape[3] + p.d_after
    if lanes != (filt.shape[2] + 31) & ~31:
        raise KernelError(f"filter depth must match input depth ({lanes} != "
                          f"{(filt.shape[2] + 31) & ~31}) (device's message: the input's "
                          "padded depth against the filter's rounded up to 32)")
    rows, cols = dwise_windows(ctx, x, filt, stride)
    shape = (x.shape[0], rows.out, cols.out, x.shape[3] * filt.shape[3])
    pad = pad_of(shape)
    if rows.after + extra_bottom_row(x, rows, cols) > p.h_after or rows.before > p.h_before:
        raise KernelError(f"inadequate top/bottom padding (device's message): the input has "
                          f"{p.h_before} rows above and {p.h_after} below, the filter reaches "
                          f"{rows.before} above and {rows.after} below")
    fill = ctx.padding_fill
    wide, packed = shape, pad
    if filt.shape[:2] == (3, 3) and not scales:
        wide = (shape[0], shape[1], shape[2] + pad.w_before + pad.w_after, shape[3])
        packed = pad._replace(w_before=0, w_after=0)
    quint8 = x.dtype is DType.QUINT8 and x.layout is Layout.D32 and x.has_data
    pack = packer(D32Geometry(wide, packed).memory_shape, wide, packed, fill) \
        if quint8 and 0 <= fill <= 255 else None
    unpack = unpacker(x.geometry.memory_shape, x.shape, x.padding) if quint8 else None
    layout = _Layout(shape, pad, wide, unpack, pack)
    if all(not t.has_data or not t.raw.flags.writeable for t in consts):
        ctx.state["dwise_layout"] = Shared(key, layout)
    return layout
