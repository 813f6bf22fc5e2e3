"""DepthwiseSupernode_8x8p8to8 / _8x8p32to8: the depthwise convolution chain as one op, what
TFLite's Hexagon delegate makes of every DEPTHWISE_CONV_2D. nnlib's flat op only refuses to
run ("Non-D32 supernode not supported"); prepare turns it into its d32 form
(hexagon/ops/src/op_dwise_snode_8bit.c), which is what this simulates: the C set-up
(:mod:`dwise_scaling`), the exact sums of QuantizedDepthwiseConv2d_8x8to32 (numba), and the
HVX requantization as its C model writes it (:mod:`hexscope.engine.ops.kernels.dwise_requant`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import quantize_uint8
from hexscope.engine.ops.context import KernelContext, Shared, data_of, scalar_f
from hexscope.engine.ops.conv.common import CONV_IN, f32_output, f32_word, range_ports
from hexscope.engine.ops.conv.d32_input_reads import Zaps, kept_border, window_input
from hexscope.engine.ops.conv.depthwise import depthwise_supernode_reference, dwise_windows
from hexscope.engine.ops.conv.dwise_d32_pad import fill_pad_lanes, spill_last_group
from hexscope.engine.ops.conv.dwise_s2_3x3 import first_group_delta
from hexscope.engine.ops.conv.dwise_scaling import (
    DwiseRange,
    Scaling,
    bias_buffer,
    channel_scales,
    initial_range,
    minmax_basics,
    retry,
)
from hexscope.engine.ops.conv.dwise_shifts import shift_twice, vasl_sums, vasl_words, write_twice
from hexscope.engine.ops.conv.supernode import CHANNEL_SCALE, SUPERNODE_OUT
from hexscope.engine.ops.kernels.d32_layout import packer, unpacker
from hexscope.engine.ops.kernels.depthwise import (
    depthwise_requantized,
    depthwise_sums,
    numba_kernels,
)
from hexscope.engine.ops.kernels.dwise_fused import chunk_of, lane_terms, prepare_dwise_d32
from hexscope.engine.ops.kernels.dwise_requant import dwise_requantize
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.ops.reference import ZeroCode, zero_za_low, zero_za_u8, zero_zb
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_MAX_RETRIES = 4          # dwise_supernode_execute: "if( ++loopcount > 4)" fails the node


def _check_shapes(filt: Tensor, stride: Tensor) -> None:
    """The refusals of dwise_supernode_check / _recalculate_strategy, in their order."""
    fh, fw, _, m = filt.shape
    if fw > 7:
        raise KernelError(f"filter width {fw} > 7 (device: 'Oops: implement depthwise support "
                          "for filt width > 7')")
    if m != 1:
        raise KernelError(f"depth multiplier {m}: the device's depthwise Supernode writes its "
                          "channels out of the standard order ('needs shuffling'); nnlib's "
                          "prepare only fuses multiplier 1")
    if fh < 2:
        raise KernelError(f"filter height {fh} (device: 'Only currently support filter "
                          "height >= 2')")
    sw = stride.shape[2]
    if sw not in (1, 2) or fw not in (3, 5, 7):
        raise KernelError(f"stride width {sw} with filter width {fw}: the device has kernels "
                          "for stride width 1 or 2 and filter width 3, 5 or 7 only ('sorry, "
                          "horizontal stride currently only 1 or 2' / 'filter width currently "
                          "only 3, 5, 7')")


class _FilterTerms(NamedTuple):
    """What the filter, its range and the channel scales fix (the same every run)."""

    zf: int
    w: np.ndarray
    gemsumb: np.ndarray
    k: np.ndarray | None
    kinv: np.ndarray | None
    w_level: np.float32


def _filter_terms(ctx: KernelContext, filt: Tensor, f_min: Tensor, f_max: Tensor,
                  channel_scale: tuple[Tensor, ...]) -> _FilterTerms:
    """The filter's zero code, codes, tap sums less zf (``dwise_sumb``: width padding adds
    zeros) and channel scales; kept in the node while its inputs are the same Consts (a
    tenth of a MobileNetV2 run was this set-up, redone every run)."""
    fmn, fmx = scalar_f(f_min), scalar_f(f_max)
    key = (filt, *channel_scale, fmn, fmx)
    kept = ctx.state.get("dwise_filter")
    # Tensors compare by identity, the range values by value
    if isinstance(kept, Shared) and kept.key == key:
        return kept.value  # type: ignore[no-any-return]
    channels = filt.shape[2]
    zf = quantize_uint8(0.0, fmn, fmx)
    with np.errstate(all="ignore"):
        w_level = f32(f32(f32(fmx) - f32(fmn)) / f32(255.0))
    w = data_of(filt, "filter")
    gemsumb = w.reshape(-1, channels).astype(np.int64).sum(0) - zf * w.shape[0] * w.shape[1]
    k, kinv = channel_scales(channel_scale, channels)
    terms = _FilterTerms(zf, w, gemsumb, k, kinv, w_level)
    ctx.state["dwise_filter"] = Shared(key, terms)
    return terms


def _scaling(ctx: KernelContext, state: DwiseRange, bias: Tensor, bias32: bool, xmn: float,
             xmx: float, bmn: float, bmx: float, consts: _FilterTerms
             ) -> tuple[Scaling, np.ndarray]:
    """``fill_info_minmax_basics`` and ``fill_bias_buf`` for the node's range now, with the
    bias buffer plus zx * gemsumb: the HVX kernel sums x (w - zf) with padding taps reading
    zx, that is the exact sum plus zx * gemsumb, which the bias buffer takes off again (in
    float32). Kept in the node for the same inputs and range (the first guess, which moves
    the range, is never kept)."""
    key = (bias, xmn, xmx, bmn, bmx, float(state.mn), float(state.mx), state.flags)
    kept = ctx.state.get("dwise_scaling")
    if not state.first_guess and isinstance(kept, Shared) and kept.key[0] is bias \
            and kept.key[1:] == key[1:] and kept.value[2] is consts:
        return kept.value[0], kept.value[1]  # type: ignore[no-any-return]
    first = state.first_guess
    sc = minmax_basics(state, xmn, xmx, consts.w_level, consts.k, consts.gemsumb.size)
    biasbuf = bias_buffer(np.asarray(bias.array), bias32, bmn, bmx, state, sc, consts.gemsumb,
                          consts.kinv)
    folded = biasbuf + consts.gemsumb * sc.in_offset
    folded.flags.writeable = False
    if not first:
        ctx.state["dwise_scaling"] = Shared(key, (sc, folded, consts))
    return sc, folded


def depthwise_supernode(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                        x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                        bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                        o_max: Tensor, *channel_scale: Tensor, wide: tuple[int, int] = (0, 0),
                        d32: Tensor | None = None, first_try: int = 0
                        ) -> tuple[Tensor, Tensor, Tensor]:
    """Both names: the bias dtype tells them apart (quint8 codes or int32 values). ``wide``
    (columns before, after) computes that many more output columns each side, as the d32
    op's asm does for the output's width padding (:func:`depthwise_d32`); their codes count
    in the range search. ``d32``: the d32 input ``x`` came from, whose memory the windows
    read past the data as the asm does (:func:`_read_memory`); without it they read zx.
    ``first_try``: 1 when the fused d32 pass made the first try (:func:`_fused`)."""
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
        _check_shapes(filt, stride)
        rows, cols = dwise_windows(ctx, x, filt, stride)
        data_cols = cols
        if wide != (0, 0):
            cols = replace(cols, before=cols.before + wide[0] * cols.s,
                           out=cols.out + sum(wide))
        consts = _filter_terms(ctx, filt, f_min, f_max, channel_scale)
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
        state = _initial_range(scalar_f(o_min), scalar_f(o_max))
        ctx.state["dwise_range"] = state
    xmn, xmx = scalar_f(x_min), scalar_f(x_max)
    sums = first = None
    twice = vector = False
    data, rbefore, cbefore = data_of(x, "input x"), rows.before, cols.before
    for attempt in range(first_try, _MAX_RETRIES + 1):
        sc, folded = _scaling(ctx, state, bias, bias32, xmn, xmx, bmn, bmx, consts)
        if d32 is not None and attempt == first_try:     # zx is the same every run
            data, rbefore, cbefore = _read_memory(ctx, d32, data, rows, data_cols, cols,
                                                  sc.in_offset)
            first = _first_group(d32, filt, channel_scale, consts, rows, data_cols, cols,
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
            sums = (sc.in_offset, _add_first_group(
                depthwise_sums(data, consts.w, sc.in_offset, consts.zf, rows.s, cols.s,
                               rbefore, cbefore, rows.out, cols.out), first))
        if fused is None and right:
            out, lo, hi = dwise_requantize(vasl_sums(sums[1], folded, sc.shamt), folded,
                                           sc.recip, 0)
        elif fused is None:
            out, lo, hi = dwise_requantize(sums[1], folded, sc.recip, sc.shamt & 31)
        if twice:
            lo, hi = _shift_twice(ctx, sums[1], folded, sc, lo, hi)
        if ctx.debug_level >= 2:
            ctx.log(2, f"dwise supernode try {attempt}: range [{state.mn}, {state.mx}] "
                       f"recip_shamt={sc.shamt} out {lo}..{hi}")
        if not retry(state, sc, lo, hi):
            # read by depthwise_d32 right after this call; Shared: a snapshot of the node's
            # state takes it as it is (never changed, only replaced) rather than deep-copying
            # the scaling's arrays at every run's start
            ctx.state["dwise_last"] = Shared(None, (sc, float(state.mn), consts.k is None))
            y = Tensor(out.shape, DType.QUINT8, out.reshape(-1))     # a new array of ours
            return (y, *_range_outputs(ctx, state))
    raise KernelError(f"can't find range for depthwise (device's message): still "
                      f"[{state.mn}, {state.mx}] after {_MAX_RETRIES} retries")


def _range_outputs(ctx: KernelContext, state: DwiseRange) -> tuple[Tensor, Tensor]:
    """The range's outputs, its words kept while the range holds the same objects (their
    bits)."""
    words = ctx.state.get("dwise_words")
    if not isinstance(words, Shared) or words.key[0] is not state.mn \
            or words.key[1] is not state.mx:  # type: ignore[index]
        words = Shared((state.mn, state.mx), (f32_word(state.mn), f32_word(state.mx)))
        ctx.state["dwise_words"] = words
    return f32_output(words.value[0]), f32_output(words.value[1])  # type: ignore[index]


def _initial_range(o_min: float, o_max: float) -> DwiseRange:
    """``setup_initial_output_range(.., -0.125, 0.125)``, whose refusal of a range without 0
    or with min >= max ("supernode: invalid input min/max") ``dwise_supernode_check``
    ignores (op_dwise_snode_8bit.c:860): the node then keeps what ``nn_calloc`` left in its
    info, a range [0, 0] with both ends free and no first guess."""
    mn, mx = f32(o_min), f32(o_max)
    if mn > 0 or mx < 0 or not mn < mx:
        zero = f32(0.0)
        return DwiseRange(zero, zero, 0, zero, zero, False)
    return initial_range(o_min, o_max)


def _read_memory(ctx: KernelContext, x: Tensor, data: np.ndarray, rows: Window,
                 data_cols: Window, cols: Window, zx: int) -> tuple[np.ndarray, int, int]:
    """The codes the windows ``rows`` x ``cols`` read and their padding before (rows,
    columns): the d32 input's memory as the asm reads it (:mod:`d32_input_reads`, zapped as
    ``dwise_supernode_execute`` asks, op_dwise_snode_8bit.c:579-611: the rows the data
    windows reach above and below plus the extra bottom row, the whole width padding), or
    ``data`` itself when every code read outside it is zx."""
    zaps = _zaps(x, rows, data_cols)
    if not 0 <= zx <= 255:
        return data, rows.before, cols.before
    full, plain = window_input(x, zaps, zx, rows, cols,
                               kept_border(ctx.state, x, zaps, rows, cols))
    if plain or full is None:
        return data, rows.before, cols.before
    return full, 0, 0


def _zaps(x: Tensor, rows: Window, data_cols: Window) -> Zaps:
    """What ``dwise_supernode_execute`` zaps (op_dwise_snode_8bit.c:579-611)."""
    p = x.padding
    return Zaps(rows.before, rows.after + _extra_bottom_row(x, rows, data_cols), p.w_before,
                p.w_after)


def _first_group(x: Tensor, filt: Tensor, channel_scale: tuple[Tensor, ...],
                 consts: _FilterTerms, rows: Window, data_cols: Window, cols: Window, zx: int
                 ) -> np.ndarray | None:
    """``dwconv2dbbb_s2_3x3_asm``'s first group of each row and slice (taken for a 3x3
    filter at stride width 2 without ChannelScale; ``cols`` the padded width it computes):
    what its sums gain from the bytes it reads there (:mod:`dwise_s2_3x3`), None if
    nothing."""
    if filt.shape[:2] != (3, 3) or channel_scale or cols.s != 2:
        return None
    return first_group_delta(x, consts.w, consts.zf, zx, _zaps(x, rows, data_cols), rows,
                             x.padding.w_before - cols.before)


def _shift_twice(ctx: KernelContext, sums: np.ndarray, folded: np.ndarray, sc: Scaling,
                 lo: int, hi: int) -> tuple[int, int]:
    """:func:`~dwise_shifts.shift_twice`, its codes kept for :func:`_write_twice`; the
    run's (min, max) with them."""
    codes, lo2, hi2 = shift_twice(sums, folded, sc.shamt, sc.recip)
    ctx.state["dwise_twice"] = codes
    return min(lo, lo2), max(hi, hi2)


def _write_twice(ctx: KernelContext, out: Tensor) -> None:
    """:func:`~dwise_shifts.write_twice` of the last run's codes, the depth padding lanes
    their bias shifted twice (left as they are with channel scales)."""
    codes = ctx.state.pop("dwise_twice", None)
    if not isinstance(codes, np.ndarray):
        return
    kept = ctx.state.get("dwise_last")
    lane = _lane_code(*kept.value[:2], twice=True) \
        if isinstance(kept, Shared) and kept.value[2] else None  # type: ignore[index, misc]
    write_twice(out, codes, lane)


def _add_first_group(sums: np.ndarray, first: np.ndarray | None) -> np.ndarray:
    """``sums`` with :func:`_first_group`'s terms added to output columns 0 and 1 (int32
    wrapping, as the asm's words)."""
    if first is not None:
        sums[:, :, :2] = (sums[:, :, :2].astype(np.int64) + first).astype(np.int32)
    return sums


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
    (:func:`_read_memory`); their codes count in the range search, as the asm's min/max do.
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


def _extra_bottom_row(x: Tensor, rows: Window, cols: Window) -> int:
    """1 when the last row's windows reach past its right padding into the row below
    (op_dwise_snode_8bit.c:580-593), unless a vertical stride leaves the last rows unused."""
    if cols.after <= x.padding.w_after:
        return 0
    if rows.s > 1 and rows.after == 0 and rows.f + (rows.out - 1) * rows.s \
            < rows.before + x.shape[1]:
        return 0
    return 1


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
        fill_pad_lanes(out, _pad_lane_code(ctx), slice(None))
        return out, lo, hi
    y, lo, hi = depthwise_supernode(ctx, flat, *rest, d32=x, first_try=done)
    out = (Tensor(shape, DType.QUINT8, lay.pack(y.array).reshape(-1), Layout.D32, pad)
           if lay.pack is not None and y.shape == lay.wide else y.to_d32(pad, fill))
    fill_pad_lanes(out, _pad_lane_code(ctx), slice(pad.w_before, pad.w_before + ow))
    extra = (-ow) & 3
    if extra and y.array.size:
        spill_last_group(out, extra)
        _write_twice(ctx, out)
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
    sc, folded = _scaling(ctx, state, rest[6], bias32, scalar_f(rest[1]), scalar_f(rest[2]),
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
        code = _kept_lane_code(ctx, sc, mn) if consts.k is None else None
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
    ctx.state["dwise_last"] = Shared(None, (sc, float(state.mn), consts.k is None))
    out = Tensor(lay.shape, DType.QUINT8, mem.reshape(-1), Layout.D32, lay.pad)
    return (out, *_range_outputs(ctx, state))


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
    # not where the asm's quirks apply (see depthwise_supernode): the s2 3x3 kernel's first
    # group over a left padding not zapped whole, the 5xN s2 kernel's column shifted twice
    quirk = (wide and cols.s == 2 and not (p.w_before >= 4 and p.w_before % 4 == 0)) \
        or (filt.shape[1] == 5 and cols.s == 2 and cols.out % 4 == 1)
    if kernels is not None and lay.pack is not None and lay.unpack is not None \
            and not pad.d_before and 0 <= ctx.padding_fill <= 255 and not quirk:
        zaps = Zaps(rows.before, rows.after + _extra_bottom_row(x, rows, data_cols),
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
    if rows.after + _extra_bottom_row(x, rows, cols) > p.h_after or rows.before > p.h_before:
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


def _pad_lane_code(ctx: KernelContext) -> int | None:
    """The code of the output's depth padding lanes: the asm computes every lane of a
    slice (``out_depth_valid = out_depth_total``), whose padded weights are the filter's zero
    code (``dwise_rearrange_weights``), so the sum is 0 whatever the input holds there, and
    whose bias is 0: ``fill_bias_buf``'s round(-out_min / product step) requantized. None
    with channel scales (the padding lanes' k is not modelled)."""
    kept = ctx.state.get("dwise_last")
    if not isinstance(kept, Shared) or not kept.value[2]:  # type: ignore[index]
        return None
    sc, mn, _ = kept.value  # type: ignore[misc]
    return _kept_lane_code(ctx, sc, mn)


def _kept_lane_code(ctx: KernelContext, sc: Scaling, mn: float) -> int | None:
    """:func:`_lane_code`, kept in the node: the same scaling and range as the last run's
    give the same code (a run's steady state)."""
    lane = ctx.state.get("dwise_lane")
    if isinstance(lane, Shared) and lane.key[0] is sc and lane.key[1] == mn:  # type: ignore[index]
        return lane.value  # type: ignore[no-any-return]
    code = _lane_code(sc, mn)
    ctx.state["dwise_lane"] = Shared((sc, mn), code)
    return code


def _lane_code(sc: Scaling, mn: float, twice: bool = False) -> int | None:
    with np.errstate(all="ignore"):
        off = np.float32(np.float32(-mn) / sc.prod_level)
    if not np.isfinite(off) or abs(float(off)) >= 2.0**31:
        return None
    bias = np.rint([float(off)]).astype(np.int64)
    if twice:           # :func:`_shift_twice`: the bias (sum 0) shifted twice, shift 0 after
        start, shift = vasl_words(vasl_words(bias, sc.shamt), sc.shamt) - bias, 0
    else:
        start, shift = 0 * bias, sc.shamt & 31
    code, _, _ = dwise_requantize(start.reshape(1, 1).astype(np.int32), bias,
                                  np.asarray(sc.recip).reshape(-1)[:1], shift)
    return int(code[0, 0])


_DOC = """A depthwise convolution, bias and requantization to quint8 in one op ({bias}).

**Semantics.** Inputs 0-6 are QuantizedDepthwiseConv2d_8x8to32's (filter [FH,FW,C,1]), 7 the
bias ({bias}, one per channel; missing values count as zero), 8-9 its range, 10-11 the
output range (±inf: found at run time; a Relu's 0, a ReluX's or Clamp's bounds), 12
(optional) the delegate's per-channel scales k (each in [1/2048, 1]; a single 1.0 means
none). As nnlib's ``dwise_supernode_check`` and ``fill_info_minmax_basics`` (float32
throughout): zx, the input's ``get_qu8_level_size_zero`` zero code, zf = quantize_uint8(0)
of the filter range, s the exact depthwise sum of (x - zx)(w - zf) (padding taps add
nothing), a free output bound starting at ∓0.125 (a first gain over 1.75 widens it), the
gain g = data step x filter step / output step, shamt = 0 if g <= 1 else frexp exponent,
recip = round(g k 2**(31-shamt)); the bias folded as ``fill_bias_buf`` does,
B = round((bias in sum steps - out_min / sum step) / k); then, as the HVX kernel's C model
(``dwconv2dbbb_MxN_cn``), v = ((s + B) << shamt) x recip + 2**30 >> 31, code =
clamp(v, 0, 255). Where v leaves 0..255 at a free bound, that bound moves to the next
quarter octave past the extreme (``round_up_quarter_octave``), the range is nudged to a
proper zero and the node runs again, at most 4 times; the range stays in the node for
later runs, as on the device. An output range without 0 or with min >= max, which
``setup_initial_output_range`` refuses but ``dwise_supernode_check`` runs anyway
(op_dwise_snode_8bit.c:860), starts from [0, 0] with both ends free (shamt & 31: the
asm's shift of a NaN gain's 129 is 1). Its float meaning (the reference Compare uses): the
depthwise convolution of the dequantized data and filter, times each channel's scale,
plus the bias, clamped to the finite output bounds.

**Fidelity.** The set-up (zero codes, steps, multipliers, bias buffer, range growth) is
nnlib's C read line by line (op_dwise_snode_8bit.c, supernode_utils.h); the sums are
QuantizedDepthwiseConv2d_8x8to32's (oracle-exact, docs/oracle-conv.md). The device runs
the requantization in HVX assembly (hexagon/asm_src/dwconv2dbbb_s1_3x3_h.S and its
siblings), which the host oracle cannot run: its rounding follows the C model
hexagon/asm_ref/dwconv2dbbb_c.c (``sum <<= recip_shift; lsum = sum * recip + 0x40000000
>> 31``), and ``fast_i64_roundf`` of the bias buffer is read as Hexagon's convert_sf2d
(round half to even): both unconfirmed on the device. The 3x3 kernels' padding columns,
which the device also computes and counts in its range search, belong to the d32 form
nnlib runs (DepthwiseSupernode_*_d32 models them, checked under qemu-hexagon,
docs/oracle-hvx.md); this flat form has no padding. The integer path (sums, bias buffer,
shift, multiplier, rounding, clamp, min/max) is bit for bit with ``dwconv2dbbb_MxN_cn``
in the host oracle (300/300, golden file dwconv2dbbb_mxn_cn.json); the float set-up is
tested against a float64 formula (docs/oracle-dwise.md).

**Errors** (KernelError): data or filter not quint8; input depth differs from the filter's;
a bad stride tensor; filter width over 7, not 3/5/7, or stride width not 1 or 2 (no device
kernel); filter height under 2; depth multiplier not 1; a channel-scale input of the wrong
size or a scale outside [1/2048, 1]; a
non-finite input range; a bias beyond int32 in steps of the sums ('Final too big'); no
range found after 4 retries ("can't find range for depthwise")."""

_IN8 = (*CONV_IN, Port("bias", DType.QUINT8), *range_ports("bias_min", "bias_max"),
        *range_ports("out_low", "out_high"), CHANNEL_SCALE)
_IN32 = (*CONV_IN, Port("bias", DType.QINT32), *range_ports("bias_min", "bias_max"),
         *range_ports("out_low", "out_high"), CHANNEL_SCALE)


def depthwise_supernode_8x8p8to8(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                                 x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                                 bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                                 o_max: Tensor, *channel_scale: Tensor
                                 ) -> tuple[Tensor, Tensor, Tensor]:
    return depthwise_supernode(ctx, x, filt, x_min, x_max, f_min, f_max, stride, bias, b_min,
                               b_max, o_min, o_max, *channel_scale)


def depthwise_supernode_8x8p32to8(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                                  x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                                  bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                                  o_max: Tensor, *channel_scale: Tensor
                                  ) -> tuple[Tensor, Tensor, Tensor]:
    return depthwise_supernode(ctx, x, filt, x_min, x_max, f_min, f_max, stride, bias, b_min,
                               b_max, o_min, o_max, *channel_scale)


depthwise_supernode_8x8p8to8.__doc__ = _DOC.format(bias="8-bit bias")
depthwise_supernode_8x8p32to8.__doc__ = _DOC.format(bias="32-bit bias")
for _name, _inputs, _kernel in (("DepthwiseSupernode_8x8p8to8", _IN8, depthwise_supernode_8x8p8to8),
                                ("DepthwiseSupernode_8x8p32to8", _IN32,
                                 depthwise_supernode_8x8p32to8)):
    # data: rule ZB (fill_info_minmax_basics), filter: ZA, an 8-bit bias: ZA''
    op(_name, Category.MATH, reference=depthwise_supernode_reference, uses_padding=True,
       zero_codes=(ZeroCode(0, 2, 3, zero_zb), ZeroCode(1, 4, 5, zero_za_u8),
                   *((ZeroCode(7, 8, 9, zero_za_low),) if _inputs is _IN8 else ())),
       inputs=_inputs, outputs=SUPERNODE_OUT)(_kernel)
