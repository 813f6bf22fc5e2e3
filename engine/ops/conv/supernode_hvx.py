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
- requantization in fixed point: s = sum + bias buffer, (s << (shamt & 31)) x recip rounded
  at bit 31, saturated (:mod:`hexscope.engine.ops.kernels.supernode_requant`); the run's
  min/max from the lanes' extremes of the shifted sums, as the asm reduces them;
- the d32 input's padding must serve the filter, and nnlib refuses what it does not handle;
- the output's depth padding lanes are computed as channels of zero weights, and its width
  padding (up to a multiple of 4 columns; one group of 4 for an output of width 0) as the
  next windows over the input's memory; the windows read the input's padding as the asm
  does, zapped to the input zero only where nnlib zaps it (:mod:`d32_input_reads`). The
  asm's window sums of x (GEMSUMA) for the width padding columns come from its integral
  buffer past the convolution's inputs, which is not modelled: some of their bytes may
  differ (docs/oracle-hvx.md).

On a device with VTCM (``nn->vtcm_size`` > 0) nnlib takes ``supernode_recalculate_strategy
_v66`` with signed weights, possibly halved; the HVX oracle has no VTCM and so runs the V60
path modelled here: the V66 path is not modelled (docs/oracle-hvx.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import level_size_zero
from hexscope.engine.ops.context import KernelContext, Shared, data_of, scalar_f
from hexscope.engine.ops.conv.common import f32_output, f32_word, filter_rhs
from hexscope.engine.ops.conv.conv2d import conv_sums, output_window
from hexscope.engine.ops.conv.d32_input_reads import (
    Zaps,
    area_index,
    kept_border,
    read_at,
    window_input,
)
from hexscope.engine.ops.conv.dwise_scaling import (
    DwiseRange,
    Scaling,
    bias_buffer,
    channel_scales,
    initial_range,
    minmax_basics,
    retry,
)
from hexscope.engine.ops.conv.supernode_direct import direct_path
from hexscope.engine.ops.conv.supernode_fast import keep_fast, requant_of, steady_key
from hexscope.engine.ops.conv.supernode_patches import patch_path
from hexscope.engine.ops.conv.supernode_warnings import weights_overrun
from hexscope.engine.ops.kernels.d32_layout import unpacker
from hexscope.engine.ops.kernels.gemm import (
    CENTER,
    Window,
    gemm_into,
    is_plain,
    patch_dtype,
    prepared_gemm8,
)
from hexscope.engine.ops.kernels.gemm_requant import prepared_gemm_requant
from hexscope.engine.ops.kernels.supernode_requant import (
    requantize_into_d32,
    scale,
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


def _extremes(lo: np.ndarray, hi: np.ndarray, recip: np.ndarray, short: bool
              ) -> tuple[int, int]:
    """The run's min and max in output codes, as the asm reduces them: each lane's smallest
    and largest shifted sum t (``lo``, ``hi``; the vmin/vmax follow the ``vasl``,
    gvconv2dbbb_d32_v60_h.S ``.L_do_zshift``), multiplied by the lane's recip, min over the
    lanes' smallest and max over their largest (a run with no output row keeps the asm's
    initial 0x7FFFFFFF / 0x80000000, multiplied as well: no retry). The node starts from
    1 << 24 / -(1 << 24) (the input Supernode: 0 / 0)."""
    low, high = int(scale(lo, recip).min()), int(scale(hi, recip).max())
    if short:
        return min(0, low), max(0, high)
    return min(1 << 24, low), max(-(1 << 24), high)


def _sums(ctx: KernelContext, x: Tensor, filt: Tensor, rows: Window, cols: Window, zx: int,
          zf: int) -> np.ndarray:
    """Exact int32 sums of (x - zx)(w - zf), (B, OH, columns of ``cols``, Cout)."""
    b, cout = x.shape[0], filt.shape[3]
    if rows.out == 0 or cols.out == 0:
        return np.zeros((b, rows.out, cols.out, cout), np.int32)
    data = data_of(x, "input x") if x.layout is Layout.FLAT else x.array
    centred = None
    if x.layout is Layout.D32 and is_plain(rows, cols) and patch_dtype() is np.int8:
        # a d32 input's unpacked codes are a copy of our own: centred there (x - 128 is the
        # top bit flipped), the GEMM then reads them without its own centred copy
        np.bitwise_xor(data, np.uint8(CENTER), out=data)
        centred = data.view(np.int8).reshape(-1, data.shape[3])
    s = conv_sums(data, filter_rhs(ctx, filt, zf), rows, cols, zx, zf, centred=centred)
    return s.reshape(b, rows.out, cols.out, cout)


def _right_zap(x: Tensor, cols: Window) -> int:
    """How many of the input's right padding columns nnlib sets to the input's zero code
    before the run (``supernode_execute_strategy``'s zap set-up, op_supernode_new.c:3298-3325):
    the filter's reach after, or the whole right padding when the output has width padding,
    nothing is needed before and the right padding suffices."""
    p = x.padding
    out_right = (-cols.out) & 3
    if out_right > 0 and cols.before == 0 and _required_after(cols) <= p.w_after:
        return p.w_after
    return min(p.w_after, _required_after(cols))


def _required_after(win: Window) -> int:
    """nnlib's ``required_w_after`` / ``required_h_after``: the window's reach past the
    input, 0 for an empty output (VALID: ``nn_pad_compute_outsize_and_pad`` asks no padding;
    the window of a width-0 output reaching past the input is the asm's group of 4, whose
    reads nnlib does not zap for: seen under QEMU, its window sums of x taken over the
    memory as it is)."""
    return win.after if win.out else 0


def _zaps(x: Tensor, rows: Window, cols: Window) -> Zaps:
    """What ``supernode_recalculate_strategy`` asks zapped (op_supernode_new.c:3285-3331):
    the rows the windows reach above and below (plus the extra bottom row of
    :func:`check_d32_padding`), the whole left padding, the right padding of
    :func:`_right_zap`."""
    p = x.padding
    extra = 0
    after = _required_after(rows)
    if _required_after(cols) > p.w_after:
        extra = 1
        if rows.s > 1 and after == 0 and rows.f + (rows.out - 1) * rows.s \
                < rows.before + x.shape[1]:
            extra = 0
    return Zaps(rows.before, after + extra, p.w_before, _right_zap(x, cols))


def _flat_padding_sums(ctx: KernelContext, x: Tensor, filt: Tensor, rows: Window,
                       cols: Window, zx: int, zf: int) -> np.ndarray:
    """The input Supernode's width padding columns: windows continuing over zx."""
    extra = (-cols.out) & 3
    start = cols.out * cols.s - cols.before     # first input column of the next window
    data = data_of(x, "input x")
    if start >= data.shape[2]:          # windows over padding only: sums of zero
        return np.zeros((x.shape[0], rows.out, extra, filt.shape[3]), np.int32)
    cut = max(0, start)
    part = data[:, :, cut:, :]
    win = Window(part.shape[2], cols.f, cols.s, extra, cut - start)
    return _sums(ctx, Tensor.from_array(np.ascontiguousarray(part), DType.QUINT8), filt, rows,
                 win, zx, zf)


def _extra_columns(cols: Window, d32: bool) -> int:
    """How many columns past the data the asm computes: up to a multiple of 4, and for an
    output of width 0 on a d32 input one whole group of 4 (the column loop runs once, under
    QEMU, docs/oracle-hvx.md; :func:`_requantize_empty`)."""
    return 4 if cols.out == 0 and d32 else (-cols.out) & 3


def _all_sums(ctx: KernelContext, x: Tensor, filt: Tensor, rows: Window, cols: Window,
              zx: int, zf: int) -> np.ndarray:
    """The sums of the data columns and of the columns past them up to a multiple of 4,
    which the asm writes into the output's width padding, in one GEMM: the windows continue
    to the right over the input's memory as the asm reads it (:mod:`d32_input_reads`; the flat
    input Supernode's over zx, as the windows' padding after)."""
    extra = _extra_columns(cols, x.layout is Layout.D32)
    wide = Window(cols.n, cols.f, cols.s, cols.out + extra, cols.before)
    if not extra and (cols.out == 0 or x.layout is not Layout.D32):
        return _sums(ctx, x, filt, rows, cols, zx, zf)
    if x.layout is not Layout.D32:
        return np.concatenate([_sums(ctx, x, filt, rows, cols, zx, zf),
                               _flat_padding_sums(ctx, x, filt, rows, cols, zx, zf)], axis=2)
    # the windows read the padding nnlib zaps as zx (the GEMM's own padding) and the rest of
    # the memory as it is: the codes read are handed over as data when one differs
    zaps = _zaps(x, rows, cols)
    full, plain = window_input(x, zaps, zx, rows, wide,
                               kept_border(ctx.state, x, zaps, rows, wide))
    if plain and (not extra or wide.after == 0):
        return _sums(ctx, x, filt, rows, wide, zx, zf)
    if full is None:        # windows past the data over zx: handed over as data columns
        b, h, w, d = x.shape
        ext = np.concatenate([x.array, np.full((b, h, wide.after, d), zx & 0xFF, np.uint8)],
                             axis=2)
        return _sums(ctx, Tensor.from_array(ext, DType.QUINT8), filt, rows,
                     Window(w + wide.after, wide.f, wide.s, wide.out, wide.before), zx, zf)
    return _sums(ctx, Tensor.from_array(full, DType.QUINT8), filt,
                 Window(full.shape[1], rows.f, rows.s, rows.out, 0),
                 Window(full.shape[2], wide.f, wide.s, wide.out, 0), zx, zf)


class _FilterTerms(NamedTuple):
    """What the filter, its range and the channel scales fix (the same every run)."""

    zf: int
    w_level: np.float32
    cout: int
    gemsumb: np.ndarray             # one per channel of the depth padded to 32
    k: np.ndarray | None
    kinv: np.ndarray | None


def _same_key(kept: object, key: tuple) -> bool:
    """Scalars equal, everything else the same object."""
    return isinstance(kept, Shared) and isinstance(kept.key, tuple) \
        and len(kept.key) == len(key) and all(
            a == b if isinstance(b, (bool, int, float, np.number)) else a is b
            for a, b in zip(kept.key, key, strict=True))


def _filter_terms(ctx: KernelContext, filt: Tensor, f_min: Tensor, f_max: Tensor,
                  channel_scale: tuple[Tensor, ...], short: bool) -> _FilterTerms:
    """The filter's zero code, step, sums and channel scales, kept in the node while the
    same read-only tensors come in (MobileNetV2 redid this set-up at every run)."""
    fmn, fmx = scalar_f(f_min), scalar_f(f_max)
    key = (filt, *channel_scale, fmn, fmx, short)
    kept = ctx.state.get("hvx_filter")
    if _same_key(kept, key):
        return kept.value  # type: ignore[union-attr, no-any-return]
    zf, w_level = level_size_zero(fmn, fmx)
    w = data_of(filt, "filter")
    cout = w.shape[3]
    channels = (cout + 31) & ~31
    gemsumb = _gemsumb(w, zf, _SHORT_DEPTH if short else (w.shape[2] + 31) & ~31, channels)
    k, kinv = (None, None) if short else _padded_scales(channel_scale, cout, channels)
    terms = _FilterTerms(zf, w_level, cout, gemsumb, k, kinv)
    if all(not t.raw.flags.writeable for t in (filt, *channel_scale) if t.has_data):
        ctx.state["hvx_filter"] = Shared(key, terms)
    return terms


def _scaling(ctx: KernelContext, state: DwiseRange, xmn: float, xmx: float,
             terms: _FilterTerms, bias: Tensor, bmn: float, bmx: float, bias32: bool
             ) -> tuple[Scaling, np.ndarray]:
    """``fill_info_minmax_basics`` and ``fill_bias_buf`` for this run: the multipliers and
    the bias buffer with the filter sums x input zero folded in. Kept in the node while the
    ranges, the output range searched so far and the (read-only) bias are the same; the first
    guess, which may move the range, is never skipped."""
    scalars = (xmn, xmx, bmn, bmx, state.mn, state.mx, state.flags)
    kept = ctx.state.get("hvx_scaling")
    if not state.first_guess and isinstance(kept, Shared) and type(kept.key) is tuple \
            and len(kept.key) == 3 and kept.key[0] is terms and kept.key[1] is bias \
            and kept.key[2] == scalars:
        return kept.value  # type: ignore[no-any-return]
    sc = minmax_basics(state, xmn, xmx, terms.w_level, terms.k, terms.gemsumb.size)
    biasbuf = bias_buffer(np.asarray(bias.array), bias32, bmn, bmx, state, sc,
                          terms.gemsumb, terms.kinv)
    folded = biasbuf + terms.gemsumb * sc.in_offset
    if not bias.raw.flags.writeable:
        after = (xmn, xmx, bmn, bmx, state.mn, state.mx, state.flags)
        ctx.state["hvx_scaling"] = Shared((terms, bias, after), (sc, folded))
    return sc, folded


class _Steady(NamedTuple):
    """What a d32 Supernode's inputs fix while the same read-only Consts and an input of the
    same shape and padding come in (a run's steady state): the geometry, its checks passed,
    the filter terms, the bias range, and for a 1x1 convolution the sums' whole path."""

    rows: Window
    cols: Window
    terms: _FilterTerms
    bmn: float
    bmx: float
    mem_shape: tuple[int, int, int, int, int]
    shape: tuple[int, int, int, int]
    pad: D32Padding
    sums: Callable[[Tensor, int], np.ndarray] | None     # None: _all_sums
    # requantize_into_d32 then _extremes, the kernel found once; None: those two
    requant: Callable[..., tuple[int, int]] | None
    # a first try's sums and requant in one pass, (x, zx, folded, recip, shift, mem, fill)
    # -> (lo, hi), or None (nothing written) for a run it does not serve: supernode_direct's,
    # or the GEMM's (gemm_requant, supernode_patches); a retry takes ``sums``
    fused: tuple[Callable[..., tuple[int, int] | None], ...]
    overrun: str | None         # supernode_warnings' weights_overrun


def _steady(ctx: KernelContext, x: Tensor, filt: Tensor, f_min: Tensor, f_max: Tensor,
            stride: Tensor, bias: Tensor, b_min: Tensor, b_max: Tensor,
            channel_scale: tuple[Tensor, ...], bias32: bool, short: bool) -> _Steady:
    """The node's :class:`_Steady`, kept in its state (as ``Shared``) while the key holds:
    the input's shape, padding, layout and type by value, every other input the same object
    (Tensors compare by identity), all of them read-only. Building it runs every check the
    op makes of those inputs, so a kept one stands for them passed."""
    key = (x.shape, x.padding, x.layout, x.dtype, ctx.padding, bias32, short, filt, f_min,
           f_max, stride, bias, b_min, b_max, *channel_scale)
    kept = ctx.state.get("hvx_steady")
    if isinstance(kept, Shared) and kept.key == key:
        return kept.value  # type: ignore[no-any-return]
    _check_types(x, filt, bias, stride, bias32)
    sh, sw = stride.shape[1], stride.shape[2]
    rows = output_window(x.shape[1], filt.shape[0], sh, ctx.padding)
    cols = output_window(x.shape[2], filt.shape[1], sw, ctx.padding)
    if not short:
        check_d32_padding(x, rows, cols)
    terms = _filter_terms(ctx, filt, f_min, f_max, channel_scale, short)
    b, cout, channels = x.shape[0], terms.cout, terms.gemsumb.size
    w_total = 4 + cols.out + ((-cols.out) & 3)
    direct = None
    if not short and cols.out:
        zaps, extra = _zaps(x, rows, cols), _extra_columns(cols, True)
        direct = direct_path(x, filt, terms.zf, rows, cols, extra, channels, zaps)
    # the GEMM's fused passes serve no run the direct kernel does not (a plain 1x1 one it
    # serves whole; the patch pass, like it, only a zx that is a code): made only without it
    sums, fused = _plain_paths(ctx, x, filt, rows, cols, terms.zf, short,
                               channels if direct is None else 0)
    if fused is None and direct is None and not short and cols.out:
        fused = patch_path(ctx, x, filt, rows, cols, terms.zf, channels, zaps, extra)
    steady = _Steady(rows, cols, terms, scalar_f(b_min), scalar_f(b_max),
                     (b, rows.out + 8, channels // 32, w_total, 32), (b, rows.out, cols.out, cout),
                     D32Padding(4, 4, 4, (-cols.out) & 3, 0, (-cout) & 31), sums,
                     requant_of(cols.out, channels, short),
                     tuple(f for f in (direct, fused) if f is not None),
                     None if short else weights_overrun(x, filt))
    consts = (filt, f_min, f_max, stride, bias, b_min, b_max, *channel_scale)
    if all(not t.has_data or not t.raw.flags.writeable for t in consts):
        ctx.state["hvx_steady"] = Shared(key, steady)
    return steady


def _plain_sums(ctx: KernelContext, x: Tensor, filt: Tensor, rows: Window, cols: Window,
                zf: int, short: bool) -> Callable[[Tensor, int], np.ndarray] | None:
    """:func:`_plain_paths`' sums alone."""
    return _plain_paths(ctx, x, filt, rows, cols, zf, short, 0)[0]


def _plain_paths(ctx: KernelContext, x: Tensor, filt: Tensor, rows: Window, cols: Window,
                 zf: int, short: bool, channels: int
                 ) -> tuple[Callable[[Tensor, int], np.ndarray] | None,
                            Callable[..., tuple[int, int]] | None]:
    """:func:`_all_sums` of a 1x1 stride-1 convolution of a d32 input, for inputs of ``x``'s
    geometry, as one unpack (centred as it is copied, the columns past the data written
    after it as the asm reads them), one GEMM: the same sums, the set-up done once; and,
    with ``channels`` (the output depth padded to 32), the same GEMM with the
    requantization of :func:`supernode_fast.requant_of` in its output blocks
    (:mod:`gemm_requant`). None for either where it does not apply (the general path)."""
    if short or x.layout is not Layout.D32 or not is_plain(rows, cols) \
            or patch_dtype() is not np.int8 or not (rows.out and cols.out and x.shape[0]):
        return None, None
    extra = (-cols.out) & 3
    w, depth = x.shape[2], x.shape[3]
    count = max(0, cols.out + extra - w) if extra else 0
    # centred as it is unpacked (x - 128 is the top bit flipped: the GEMM's rows), into rows
    # wide enough for the columns past the data: no pass of its own, no concatenated copy
    unpack = unpacker(x.geometry.memory_shape, x.shape, x.padding, centre=True,
                      width=w + count)
    if unpack is None:
        return None, None
    rhs = filter_rhs(ctx, filt, zf)
    c = rhs.zero - zf
    shape = (x.shape[0], rows.out, cols.out + extra, rhs.n)
    gemm = prepared_gemm8(rhs, shape[0] * shape[1] * shape[2], c)
    centre = np.uint8(CENTER)
    # where the columns past the data are read, as the asm reads them (the padding nnlib
    # zaps as zx); the fused pass reads those codes itself
    index = area_index(x, _zaps(x, rows, cols), (0, x.shape[1]), (w, count)) if count else None

    def rows_of(x: Tensor, zx: int) -> np.ndarray:
        data = unpack(x.raw)
        if index is not None:
            np.bitwise_xor(read_at(x.raw, index, zx), centre, out=data[:, :, w:])
        return data.view(np.int8).reshape(-1, depth)

    def sums(x: Tensor, zx: int) -> np.ndarray:
        lhs = rows_of(x, zx)
        if gemm is not None:
            return gemm(lhs, rhs.offsets(CENTER - zx, c)).reshape(shape)
        out = np.empty((lhs.shape[0], rhs.n), np.int32)
        gemm_into(out, lhs, rhs, rhs.offsets(CENTER - zx, c), c)
        return out.reshape(shape)

    # the fused pass reads the d32 memory itself, block by block (no whole unpacked copy)
    both = prepared_gemm_requant(rhs, c, shape[:3], cols.out, channels,
                                 (x.geometry.memory_shape, x.shape, x.padding)) \
        if channels else None
    if both is None:
        return sums, None
    start = (1 << 24, -(1 << 24))

    def fused(x: Tensor, zx: int, folded: np.ndarray, recip: np.ndarray, shift: int,
              mem: np.ndarray, fill: int) -> tuple[int, int]:
        _, _, lo, hi = both(x.raw, rhs.offsets(CENTER - zx, c), folded, recip, shift, False,
                            True, mem, fill, index, zx)
        return min(start[0], lo), max(start[1], hi)

    return sums, fused


def _requantize_empty(sums: np.ndarray, folded: np.ndarray, recip: np.ndarray, shift: int,
                      mem: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An output of width 0 (``mem`` 4 columns wide: its left padding): the asm still
    computes one group of 4 columns, counts the first in its min/max (seen under QEMU: an
    open maximum grows from that column alone) and stores them at the row's data start,
    which is the next memory line's left padding (the next depth slice's, or after the last
    slice the next row's: the last row's land in the first bottom padding row)."""
    b, rows, slices = mem.shape[0], mem.shape[1] - 8, mem.shape[2]
    wide = np.empty((b, rows + 8, slices, 8, 32), np.uint8)
    ext = requantize_into_d32(sums, 1, folded, recip, shift, False, True, wide)
    lines = mem.reshape(b, -1, 4, 32)
    first = 4 * slices + 1          # the line after the first data row's first slice's
    lines[:, first:first + rows * slices] = wide[:, 4:4 + rows, :, 4:8].reshape(b, -1, 4, 32)
    return ext


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
    steady = _steady(ctx, x, filt, f_min, f_max, stride, bias, b_min, b_max, channel_scale,
                     bias32, short)
    rows, cols, terms = steady.rows, steady.cols, steady.terms
    if steady.overrun is not None:
        ctx.warn(steady.overrun)
    xmn, xmx = scalar_f(x_min), scalar_f(x_max)
    sums = None
    # the requantization writes every lane of rows 4.. and columns 4..: only the 4 rows
    # above and below and the 4 columns left take the fill (no memset of the whole output)
    mem = np.empty(steady.mem_shape, np.uint8)
    fill = ctx.padding_fill
    fused = bool(steady.fused) and 0 <= fill <= 255
    if not fused:               # else the fused pass fills them
        mem[:, :4] = fill
        mem[:, -4:] = fill
        mem[:, 4:-4, :, :4] = fill
    for run in range(_RUNS):
        sc, folded = _scaling(ctx, state, xmn, xmx, terms, bias, steady.bmn, steady.bmx,
                              bias32)
        if short and x.shape[3] > _SHORT_DEPTH:
            raise KernelError("Make this code work for input depth > 4: the input Supernode "
                              f"takes depths up to 4, this input has {x.shape[3]}")
        if short and stride.shape[2] > 4:
            raise KernelError(f"Add support for stride > 4: stride width {stride.shape[2]}")
        shift = sc.shamt & 31      # vasl(Vw, Rt) shifts by Rt & 31 (an infinite gain: 129 -> 1)
        got = served = None     # the first try's fused paths in order (a retry: the rest)
        for path in steady.fused if run == 0 and fused else ():
            got = path(x, sc.in_offset, folded, sc.recip, shift, mem, fill)
            if got is not None:
                served = path
                break
        if got is not None:
            lo, hi = got
        else:
            if fused:
                fused = False
                mem[:, :4] = fill
                mem[:, -4:] = fill
                mem[:, 4:-4, :, :4] = fill
            if sums is None:
                sums = (steady.sums(x, sc.in_offset) if steady.sums is not None
                        else _all_sums(ctx, x, filt, rows, cols, sc.in_offset, terms.zf))
            if not (cols.out or short):
                lo, hi = _extremes(*_requantize_empty(sums, folded, sc.recip, shift, mem),
                                   sc.recip, short)
            elif steady.requant is not None:
                lo, hi = steady.requant(sums, folded, sc.recip, shift, mem)
            else:
                lo, hi = _extremes(*requantize_into_d32(sums, cols.out, folded, sc.recip,
                                                        shift, short, True, mem),
                                   sc.recip, short)
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
    y = Tensor(steady.shape, DType.QUINT8, mem.reshape(-1), Layout.D32, steady.pad)
    # the range's tensors (read-only), kept while the range holds the same objects
    words = ctx.state.get("hvx_words")
    if not isinstance(words, Shared) or words.key[0] is not state.mn \
            or words.key[1] is not state.mx:  # type: ignore[index]
        words = Shared((state.mn, state.mx), (f32_output(f32_word(state.mn)).readonly(),
                                              f32_output(f32_word(state.mx)).readonly()))
        ctx.state["hvx_words"] = words
    if served is not None and run == 0 and steady.overrun is None \
            and getattr(ctx.state.get("hvx_steady"), "value", None) is steady \
            and not bias.raw.flags.writeable:
        key = steady_key(ctx, x, (filt, x_min, x_max, f_min, f_max, stride, bias, b_min,
                                  b_max, o_min, o_max, *channel_scale))
        keep_fast(ctx, key, (xmn, xmx, state.mn, state.mx, state.flags), sc.in_offset, folded,
                  sc.recip, shift, served, steady.mem_shape, y, words.value)  # type: ignore[arg-type]
    return y, words.value[0], words.value[1]  # type: ignore[index]


__all__ = ["check_d32_padding", "run_hvx"]
