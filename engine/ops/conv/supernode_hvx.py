"""What nnlib's HVX Supernodes compute: Supernode_8x8p8to8_d32 / _8x8p32to8_d32
(op_supernode_new.c ``supernode_execute_hvx``, the V60 code path: ``gvconv2dbbb_v60_asm``)
and InputSupernode_8x8p8to8_outd32 / _8x8p32to8_outd32 (``shortin_supernode_execute_call``,
``inconv2dbbb*_v60_asm``), checked against nnlib's HVX build under qemu-hexagon
(docs/oracle-hvx.md).

They share the depthwise Supernode's set-up (:mod:`dwise_scaling`: supernode_utils.h's
``setup_initial_output_range``, ``fill_info_minmax_basics``, ``fill_bias_buf``, the range
retry); what differs from the flat ``_ref`` (Hexscope's flat ops):

- the output range: a fixed min < 0 is moved so that 0 is a code; an open end starts at 0
  and 0.5 (the input Supernode: -1/128, 1/128), may be widened on the first run (a gain over
  1.75) and grows by quarter octaves past what a run overflowed, run again at most twice;
- the window's padding before is the input size's (``nn_pad_compute_outsize_and_pad``; the
  ``_ref`` takes the output size's), which moves the window at strides above 1;
- requantization in fixed point: s = sum + bias buffer, (s << shamt) x recip rounded at bit
  31, saturated (:mod:`hexscope.engine.ops.kernels.supernode_requant`);
- the d32 input's padding must serve the filter, and nnlib refuses what it does not handle;
- the output's width padding (up to a multiple of 4 columns) and depth padding lanes are
  computed as the next columns and channels (a filter of zero weights, the bias's zero).

On a device with VTCM (``nn->vtcm_size`` > 0) nnlib takes ``supernode_recalculate_strategy
_v66`` with signed weights, possibly halved; the HVX oracle has no VTCM and so runs the V60
path modelled here: the V66 path is not modelled (docs/oracle-hvx.md).
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import level_size_zero
from hexscope.engine.ops.context import KernelContext, data_of, scalar_f
from hexscope.engine.ops.conv.common import f32_output, f32_word, filter_rhs
from hexscope.engine.ops.conv.conv2d import conv_sums, output_window
from hexscope.engine.ops.conv.dwise_scaling import (
    DwiseRange,
    Scaling,
    bias_buffer,
    channel_scales,
    initial_range,
    minmax_basics,
    retry,
)
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.ops.kernels.supernode_requant import (
    Extremes,
    scale,
    supernode_requantize,
    wrap32,
)
from hexscope.engine.tensor import Tensor

_RUNS = 3           # supernode_execute_hvx: recursion_depth < 3; shortin: count < 3
_FREE = (0.0, 0.5)                  # supernode_check's open-end defaults
_SHORT_FREE = (-1.0 / 128, 1.0 / 128)     # shortin_supernode_check's
_SHORT_DEPTH = 4    # shortin: the input is re-laid 4 deep (filter_count = 4 fh fw)


def _check_types(x: Tensor, filt: Tensor, bias: Tensor, stride: Tensor, bias32: bool) -> None:
    for name, t in (("input x", x), ("filter", filt)) + (() if bias32 else (("bias", bias),)):
        if t.dtype is not DType.QUINT8:
            raise KernelError(f"{name} is {t.dtype.name.lower()}; the Supernode reads quint8 "
                              "codes")
    if bias32 and bias.dtype not in (DType.INT32, DType.QINT32):
        raise KernelError(f"bias is {bias.dtype.name.lower()}; the 32-bit-bias Supernode reads "
                          "32-bit integers")
    if x.shape[3] != filt.shape[2]:
        raise KernelError(f"input depth {x.shape[3]} differs from the filter's input depth "
                          f"{filt.shape[2]}")
    sb, sh, sw, sd = stride.shape
    if sb != 1 or sd != 1 or sh < 1 or sw < 1:
        raise KernelError(f"stride tensor must have shape [1,SH,SW,1] with SH, SW >= 1, got "
                          f"{list(stride.shape)}")


def check_d32_padding(x: Tensor, rows: Window, cols: Window) -> None:
    """``supernode_recalculate_strategy``'s refusals of the d32 input's padding
    (op_supernode_new.c:2975-3026): depth padding before, or too little width / height
    padding for the filter (the right side may use the next row's left padding; the last
    row then needs one more row below, unless a vertical stride skips the last input row)."""
    p = x.padding
    if p.d_before != 0:
        raise KernelError(f"the input's depth padding before is {p.d_before} (device: 'depth "
                          "before pad not supported')")
    h = x.shape[1]
    extra = 0
    if cols.after > p.w_after:
        extra = 1
        if rows.s > 1 and rows.after == 0 and rows.f + (rows.out - 1) * rows.s \
                < rows.before + h:
            extra = 0
    if cols.before > p.w_before or cols.after > p.w_after + p.w_before:
        raise KernelError(f"insufficient W padding: {p.w_before}({x.shape[2]}){p.w_after}, "
                          f"filter needs {cols.before}(){cols.after} (device's message)")
    if rows.before > p.h_before or rows.after + extra > p.h_after:
        raise KernelError(f"insufficient H padding: {p.h_before}({h}){p.h_after}, filter "
                          f"needs {rows.before}(){rows.after}+{extra} (device's message)")


def _gemsumb(w: np.ndarray, zf: int, depth_padded: int, channels: int) -> np.ndarray:
    """The filter sums the bias buffer takes off (``repack_filter_for_d32`` unsigned; the
    input Supernode's ``shortin_filt_sumb``): each channel's raw codes over the filter
    padded in depth with zf, and the padding channels' (all zf)."""
    fh, fw, din, cout = w.shape
    taps = fh * fw * depth_padded
    sums = np.full(channels, taps * zf, np.int64)
    sums[:cout] = w.reshape(-1, cout).astype(np.int64).sum(0) + (taps - fh * fw * din) * zf
    return sums


def _padded_scales(channel_scale: tuple[Tensor, ...], cout: int, channels: int
                   ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """k and 1/k per channel, the padding channels' 1.0 (``load_channel_scales``)."""
    k, kinv = channel_scales(channel_scale, cout)
    if k is None or kinv is None:
        return None, None
    pad = np.ones(channels - cout, np.float32)
    return np.concatenate([k, pad]), np.concatenate([kinv, pad])


def _extremes(ext: Extremes, recip: np.ndarray, shamt: int, short: bool) -> tuple[int, int]:
    """The run's min and max in output codes, as the asm reduces them: the 32-bit op
    requantizes each channel's smallest and largest s (shifted then), the input Supernode
    its smallest and largest shifted t; the node starts from 1 << 24 / -(1 << 24) (the input
    Supernode: 0 / 0)."""
    if short:
        lo, hi = scale(ext.t_lo, recip), scale(ext.t_hi, recip)
        return min(0, int(lo.min())), max(0, int(hi.max()))
    lo = scale(wrap32(ext.s_lo << shamt), recip)
    hi = scale(wrap32(ext.s_hi << shamt), recip)
    return (min(1 << 24, int(np.minimum(lo, hi).min())),
            max(-(1 << 24), int(np.maximum(lo, hi).max())))


def _sums(ctx: KernelContext, x: Tensor, filt: Tensor, rows: Window, cols: Window, zx: int,
          zf: int) -> np.ndarray:
    """Exact int32 sums of (x - zx)(w - zf), (B, OH, columns of ``cols``, Cout)."""
    b, cout = x.shape[0], filt.shape[3]
    if rows.out == 0 or cols.out == 0:
        return np.zeros((b, rows.out, cols.out, cout), np.int32)
    s = conv_sums(data_of(x, "input x") if x.layout is Layout.FLAT else x.array,
                  filter_rhs(ctx, filt, zf), rows, cols, zx, zf)
    return s.reshape(b, rows.out, cols.out, cout)


def _width_padding_sums(ctx: KernelContext, x: Tensor, filt: Tensor, rows: Window,
                        cols: Window, zx: int, zf: int) -> np.ndarray:
    """The sums of the output columns past the data up to a multiple of 4, which the asm
    writes into the output's width padding: the windows continue to the right over zx."""
    extra = (-cols.out) & 3
    if not extra or cols.out == 0:
        return np.zeros((x.shape[0], rows.out, 0, filt.shape[3]), np.int32)
    start = cols.out * cols.s - cols.before     # first input column of the next window
    data = x.array if x.layout is Layout.D32 else data_of(x, "input x")
    if start >= data.shape[2]:          # windows over padding only: sums of zero
        return np.zeros((x.shape[0], rows.out, extra, filt.shape[3]), np.int32)
    cut = max(0, start)
    part = data[:, :, cut:, :]
    win = Window(part.shape[2], cols.f, cols.s, extra, cut - start)
    return _sums(ctx, Tensor.from_array(np.ascontiguousarray(part), DType.QUINT8), filt, rows,
                 win, zx, zf)


def run_hvx(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor, x_max: Tensor,
            f_min: Tensor, f_max: Tensor, stride: Tensor, bias: Tensor, b_min: Tensor,
            b_max: Tensor, o_min: Tensor, o_max: Tensor, *channel_scale: Tensor, bias32: bool,
            short: bool) -> tuple[Tensor, Tensor, Tensor]:
    """The HVX op on ``x`` (d32, or flat for the input Supernode ``short``): its d32 output
    (padding as the op writes it) and range. ``channel_scale``: the optional 13th input
    (``load_channel_scales``: k in each channel's multiplier, 1/k in its bias; the input
    Supernode ignores it, as its code says prepare has dealt with it)."""
    state = ctx.state.get("hvx_range")
    if not isinstance(state, DwiseRange):      # supernode_check, at prepare
        state = initial_range(scalar_f(o_min), scalar_f(o_max),
                              *(_SHORT_FREE if short else _FREE))
        ctx.state["hvx_range"] = state
    _check_types(x, filt, bias, stride, bias32)
    sh, sw = stride.shape[1], stride.shape[2]
    rows = output_window(x.shape[1], filt.shape[0], sh, ctx.padding)
    cols = output_window(x.shape[2], filt.shape[1], sw, ctx.padding)
    if not short:
        check_d32_padding(x, rows, cols)
    fmn, fmx = scalar_f(f_min), scalar_f(f_max)
    zf, w_level = level_size_zero(fmn, fmx)
    w = data_of(filt, "filter")
    cout = w.shape[3]
    channels = (cout + 31) & ~31
    gemsumb = _gemsumb(w, zf, _SHORT_DEPTH if short else (w.shape[2] + 31) & ~31, channels)
    k, kinv = (None, None) if short else _padded_scales(channel_scale, cout, channels)
    xmn, xmx, bmn, bmx = scalar_f(x_min), scalar_f(x_max), scalar_f(b_min), scalar_f(b_max)
    sums = None
    for run in range(_RUNS):
        sc: Scaling = minmax_basics(state, xmn, xmx, w_level, k, channels)
        if short and x.shape[3] > _SHORT_DEPTH:
            raise KernelError("Make this code work for input depth > 4: the input Supernode "
                              f"takes depths up to 4, this input has {x.shape[3]}")
        if short and sw > 4:
            raise KernelError(f"Add support for stride > 4: stride width {sw}")
        biasbuf = bias_buffer(np.asarray(bias.array), bias32, bmn, bmx, state, sc, gemsumb,
                              kinv)
        folded = biasbuf + gemsumb * sc.in_offset
        if sums is None:
            sums = np.concatenate([_sums(ctx, x, filt, rows, cols, sc.in_offset, zf),
                                   _width_padding_sums(ctx, x, filt, rows, cols,
                                                       sc.in_offset, zf)], axis=2)
        codes, ext = _requantize(sums, folded, sc, cout, cols.out, short)
        lo, hi = _extremes(ext, sc.recip, sc.shamt, short)
        if ctx.debug_level >= 2:
            ctx.log(2, f"hvx supernode run {run}: range [{state.mn}, {state.mx}] "
                       f"recip_shamt={sc.shamt} out {lo}..{hi}")
        if not retry(state, sc, lo, hi):
            break
        if run == _RUNS - 1 and short:
            raise KernelError("Extreme recursion detected in shortin_supernode, problem "
                              "finding min/max? (device's message: 3 runs and the range "
                              "still moves)")
    # a 32-bit op still moving after 3 runs keeps the third's codes and reports the moved
    # range ("Extreme recursion detected", logged only)
    y = _d32_output(ctx, codes, x.shape[0], rows.out, cols.out, cout)
    return y, f32_output(f32_word(state.mn)), f32_output(f32_word(state.mx))


def _requantize(sums: np.ndarray, folded: np.ndarray, sc: Scaling, cout: int, width: int,
                short: bool) -> tuple[np.ndarray, Extremes]:
    """Codes (B, OH, columns, channels padded to 32) and per-channel extremes: over every
    column for the input Supernode, the data columns only for the other (``gvconv2dbbb``
    leaves the padding columns out of its min/max)."""
    b, oh, ow, _ = sums.shape
    channels = folded.size
    data = np.ascontiguousarray(sums[:, :, :width]).reshape(-1, cout) if not short else \
        sums.reshape(-1, cout)
    codes, ext = supernode_requantize(data, folded[:cout], sc.recip[:cout], sc.shamt,
                                      data.shape[0])
    out = np.empty((b, oh, ow, channels), np.uint8)
    if short:
        out[..., :cout] = codes.reshape(b, oh, ow, cout)
    else:
        out[:, :, :width, :cout] = codes.reshape(b, oh, width, cout)
        if ow > width:
            pad = np.ascontiguousarray(sums[:, :, width:]).reshape(-1, cout)
            out[:, :, width:, :cout] = supernode_requantize(
                pad, folded[:cout], sc.recip[:cout], sc.shamt, 0)[0].reshape(
                    b, oh, ow - width, cout)
    if channels > cout:     # padding lanes: zero weights, the bias's zero
        lanes, pext = supernode_requantize(np.zeros((1, channels - cout), np.int32),
                                           folded[cout:], sc.recip[cout:], sc.shamt, 1)
        out[..., cout:] = lanes.reshape(-1)
        ext = Extremes(*(np.concatenate([a, p]) for a, p in zip(ext, pext, strict=True)))
    return out, ext


def _d32_output(ctx: KernelContext, codes: np.ndarray, b: int, oh: int, ow: int, cout: int
                ) -> Tensor:
    """The d32 output (``supernode_recalculate_strategy``'s padding: 4 rows above and
    below, 4 columns left, to a multiple of 4 right, depth to a multiple of 32) with the
    computed columns and lanes written and the rest left as the fill."""
    pad = D32Padding(4, 4, 4, (-ow) & 3, 0, (-cout) & 31)
    w_total, d_total = 4 + ow + pad.w_after, cout + pad.d_after
    y = np.full((b, oh + 8, w_total, d_total), ctx.padding_fill, np.uint8)
    y[:, 4:4 + oh, 4:4 + codes.shape[2], :] = codes
    mem = y.reshape(b, oh + 8, w_total, d_total // 32, 32).transpose(0, 1, 3, 2, 4)
    return Tensor((b, oh, ow, cout), DType.QUINT8, np.ascontiguousarray(mem).reshape(-1),
                  Layout.D32, pad)


__all__ = ["check_d32_padding", "run_hvx"]
