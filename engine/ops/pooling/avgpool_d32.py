"""QuantizedAvgPool_8_d32 and its ``_ref``: average pooling on d32 tensors with 32-bit window
sums (nnlib ``op_avgpool_d32.c``, plan ``setup_integral_buffer_plan`` in
``hexagon/src/integral_buffer.c``).

nnlib's prepare turns every QuantizedAvgPool_8 into QuantizedAvgPool_8_d32. Unlike the flat
HVX op, whose 16-bit window sums wrap past 32767, the d32 op never loses a window sum; and
for a 1x1 output (a global pool) its HVX form picks a new output range from the sums.

Simulated: the plan (trimming of the input and window), the reduce-to-1x1 handler of the
HVX op, and the integral-image path with its edge padding (padding rows and columns of the
integral image extrapolated by ``edgepad_scales``). Not simulated (the node fails saying
so): an edge window of more than 128 valid cells (the C reads past its reciprocal table).
The HVX op's 2x2 stride-2 handler is here, its 3x3 stride-1 assembly handler in
:mod:`avgpool_3x3`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import fmaxf, fminf, getexp, rndi1
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import (
    KernelContext,
    f32_scalar,
    output_fits,
    require_d32,
    scalar_f,
)
from hexscope.engine.ops.pooling.avgpool_3x3 import pool_3x3, zap_possible
from hexscope.engine.ops.pooling.pool import avg_pool_reference, out_size_and_pad
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

f32 = np.float32
I64 = np.int64


@dataclass(frozen=True, slots=True)
class AxisPlan:
    """One spatial axis of ``setup_integral_buffer_plan``: output size, the input length
    actually read (trimmed), window and stride after simplification, padding before/after."""

    out: int
    n: int
    win: int
    stride: int
    before: int
    after: int
    infeas: int = 0      # padding cells beyond what any window can hold (window > input + 1)


def axis_plan(n: int, f: int, s: int, padding: Padding) -> AxisPlan:
    """The plan of one axis, as ``setup_integral_buffer_plan`` makes it: the input is
    trimmed to what the windows cover when nothing pads after it and the stride is > 1; a
    single output takes the whole (trimmed) input as its window, with stride 1 and no
    padding; a window more than twice the input is shrunk evenly ("infeasible" padding).
    Raises KernelError("input too small for filter") when the output would be empty."""
    span = out_size_and_pad(n, f, s, padding)
    out, before = span.out, span.pad_before
    if out < 1:
        raise KernelError(f"input too small for filter: {n} with window {f} stride {s} "
                          f"({padding.name}) gives no output")
    after = max(0, (out - 1) * s + f - n - before) if padding is not Padding.VALID else 0
    if after == 0 and s > 1:
        n = min(n, f + (out - 1) * s)
    if out == 1:
        return AxisPlan(1, n, n, 1, 0, 0)
    infeas = max(0, f - 1 - n)
    if infeas:
        # a window over twice the input: shrunk evenly, which changes no result
        shrink = f - max(before, after) - n
        if shrink > 0:
            f -= 2 * shrink
            infeas -= 2 * shrink
            before -= shrink
            after -= shrink
    return AxisPlan(out, n, f, s, before, after, infeas)


def edge_scales(ap: AxisPlan, n: int) -> list[int]:
    """``integ_buf_find_padding_scales``: for pad index i = 1..n, -p/(w-p) with 15
    fractional bits, p = max(i, infeas + 1): -0x8000 when w - p <= p, else
    -((round(2**31 / (w-p)) * p mod 2**32 + 0x8000) >> 16) (``lut_reciprocal_i32``, whose
    128 entries are round(2**31/k), 1/1 as 0x7FFFFFFF). A w - p past the table's 128
    entries reads past it in the C: KernelError."""
    out = []
    for i in range(1, n + 1):
        p = max(i, ap.infeas + 1)
        wmp = ap.win - p
        if wmp <= p:
            out.append(-0x8000)
            continue
        if wmp > 128:
            raise KernelError(f"not simulated: an edge window of {wmp} cells reads past "
                              "nnlib's 128-entry reciprocal table")
        recip = min((2**32 // wmp + 1) >> 1, 0x7FFFFFFF)
        v = -(((recip * p) & 0xFFFFFFFF) + 0x8000 >> 16)
        out.append(((v + 0x8000) & 0xFFFF) - 0x8000)          # stored as int16
    return out


def _mul_frac(v: np.ndarray, scale: int) -> np.ndarray:
    """``mul_frac_i32xi16``: (v scale + 0x4000) >> 15."""
    return (v * scale + 0x4000) >> 15


def _integral(codes: np.ndarray, hp: AxisPlan, wp: AxisPlan) -> np.ndarray:
    """The integral image of [B,H,W,L] codes times 256 as the producer builds it, with its
    edge padding: [B, top + 1 + H + bottom, left + 1 + W + right, L], row and column ``top``
    and ``left`` the zero ones. Padding columns of the loaded rows extrapolate the window's
    valid part (left col -p: I[w-p] scaled by -p/(w-p); right col W+i: I[W] plus the last
    w-p cells' sum scaled by p/(w-p)); then the top rows from the rows below and the
    bottom rows from row H (``producer_load_rows``, ``producer_add_bottom_padding``).
    ``infeasible'' pads (past what a window can hold) are zero on the left and top."""
    b, h, w, lanes = codes.shape
    t, bt, lf, rt = hp.before, hp.after, wp.before, wp.after
    big = np.zeros((b, t + 1 + h + bt, lf + 1 + w + rt, lanes), I64)
    rows, c0 = slice(t + 1, t + 1 + h), lf      # loaded rows; column 0
    big[:, rows, c0 + 1:c0 + 1 + w] = np.cumsum(np.cumsum(codes.astype(I64), 1), 2) * 256
    sw = edge_scales(wp, max(lf, rt)) if lf or rt else []
    sh = edge_scales(hp, max(t, bt)) if t or bt else []
    for p in range(min(lf, wp.infeas) + 1, lf + 1):
        big[:, rows, c0 - p] = _mul_frac(big[:, rows, c0 + wp.win - p], sw[p - 1])
    for i in range(1, rt + 1):
        wmp = wp.win - max(i, wp.infeas + 1)
        full = big[:, rows, c0 + w]
        big[:, rows, c0 + w + i] = full - _mul_frac(full - big[:, rows, c0 + w - wmp],
                                                    sw[i - 1])
    r0 = t                                      # the zero row
    for p in range(min(t, hp.infeas) + 1, t + 1):
        big[:, r0 - p] = _mul_frac(big[:, r0 + hp.win - p], sh[p - 1])
    backup = min(hp.win - 1, h)
    for j in range(1, bt + 1):
        full = big[:, r0 + h]
        ref = big[:, r0 + h - backup + max(0, j - 1 - hp.infeas)]
        big[:, r0 + h + j] = full - _mul_frac(full - ref, sh[j - 1])
    return big


def recip_parms(winsize: int) -> tuple[int, int]:
    """(mantissa, shift) of 1 / (winsize 256): shift = ceil(log2 winsize) + 1 and the
    mantissa 2**(13+shift) / winsize rounded half up (16384..32767)."""
    rsh = (winsize - 1).bit_length() + 1
    frac = ((16384 << rsh) & 0xFFFFFFFF) // winsize
    return (frac + 1) >> 1, rsh


def _window_sums(codes: np.ndarray, hp: AxisPlan, wp: AxisPlan) -> np.ndarray:
    """The consumer's window sums (times 256) from the padded integral image, int32."""
    c = _integral(codes, hp, wp)
    ys = np.arange(hp.out) * hp.stride
    xs = np.arange(wp.out) * wp.stride
    y0, y1 = ys[:, None], ys[:, None] + hp.win
    x0, x1 = xs[None, :], xs[None, :] + wp.win
    sums = (c[:, y1, x1] - c[:, y0, x1]) - (c[:, y1, x0] - c[:, y0, x0])
    return ((sums + 2**31) & 0xFFFFFFFF) - 2**31


def scale_sums(sums: np.ndarray, winsize: int, hvx: bool) -> np.ndarray:
    """The integral path's scaling of window sums to codes (``consumer_run_row_ref`` /
    ``consumer_run_row_hvx``): a = sat16((256 sum + 2**(r-1)) >> r); then
    (a m + 0x8000) >> 15 in C, or sat16((2 a m + 0x8000) >> 16) with HVX's rounding
    multiply; the code is sat_u8((that + 32) >> 6). ``sums`` are the window sums times 256."""
    mant, rsh = recip_parms(winsize)
    a = np.clip((sums + ((1 << rsh) >> 1)) >> rsh, -32768, 32767)
    if hvx:
        scaled = np.clip((2 * a * mant + 0x8000) >> 16, -32768, 32767)
    else:
        scaled = (a * mant + 0x8000) >> 15
    return np.clip((scaled + 32) >> 6, 0, 255).astype(np.uint8)


def _adjust_range(lo: np.float32, hi: np.float32) -> tuple[np.float32, np.float32, np.float32]:
    """``quantize_adjust_range``: (min, max, 255/range) in float32."""
    mn, mx = fminf(0.0, lo), fmaxf(0.0, hi)
    rng = fmaxf(f32(1e-18), f32(mx - mn))
    recip = f32(f32(255.0) / rng)
    if mn < 0:
        z = f32(-mn * recip)
        zi = f32(np.floor(z))
        zf = f32(z - zi)
        if f32(6.1035156e-05) < zf < f32(0.999938965):
            if zi > 0 and (zi > 253 or f32((zf - f32(1.0)) * mn) >= f32(zf * mx)):
                rng = f32(f32(f32(-255.0) * mn) / zi)
                mx = f32(mn + rng)
            else:
                mn = f32(f32(mx * f32(zi + f32(1.0))) / f32(zi - f32(254.0)))
                rng = f32(mx - mn)
            recip = f32(f32(255.0) / rng)
    return mn, mx, recip


def _ldexp(x: np.float32, e: int) -> np.float32:
    """``flt_ldexp``: x times the float whose exponent field is sat_u8(e + 127)."""
    field = min(max(e + 127, 0), 255)
    return f32(x * np.array(field << 23, np.uint32).view(f32)[()])


def reduce_to_1x1(sums: np.ndarray, real: np.ndarray, winsize: int, x_min: float,
                  x_max: float) -> tuple[np.ndarray, float, float]:
    """The HVX op's handler for a 1x1 output (``avgpool_reduce_to_1x1_worker_thread`` and
    ``..._post_worker_thread``): int32 sums of every lane; the output range from the
    smallest and largest sum of the lanes (a padding lane's low byte replaced by the zero
    sum's);
    codes = sat_u8((((2 sum + offset) s + 0x4000) >> 15 >> r + 1) >> 1)."""
    with np.errstate(all="ignore"):
        rdiff = f32(f32(f32(x_max) - f32(x_min)) / f32(f32(255.0) * f32(winsize)))
        in_zero = f32(-f32(x_min) / rdiff)
        # Matches device: the padding lanes are to count as the zero sum, but the mask
        # (Q6_V_vand_QR / Q6_Q_vand_VR on word flags) selects only byte 0 of each word, so
        # vmux replaces only the low byte of their sums (op_avgpool_d32.c
        # avgpool_reduce_to_1x1_worker_thread)
        mixed = (sums & ~0xFF) | (rndi1(in_zero) & 0xFF)
        ranged = np.where(real, sums, mixed)
        g_min, g_max = int(ranged.min()), int(ranged.max())
        lo = f32(fminf(0.0, f32(f32(g_min) - in_zero)) * rdiff)
        hi = fmaxf(f32(fmaxf(0.0, f32(f32(g_max) - in_zero)) * rdiff), f32(lo + f32(0.001)))
        out_range = f32(hi - lo)
        if f32(f32(255.1) * rdiff) >= out_range:
            expfac = f32(f32(f32(255.1) * rdiff) / out_range)
            lo, hi = f32(lo * expfac), f32(hi * expfac)
        out_min, out_max, recip = _adjust_range(lo, hi)
        target = f32(rdiff * recip)
        rsh = min(31, max(0, -getexp(target)))
        fac = min(max(rndi1(_ldexp(target, rsh + 15)), -32768), 32767)
        over = f32(0.0)
        if out_min < 0:
            actual = _ldexp(f32(fac), -(rsh + 15))
            over = f32(f32(-out_min * recip) / actual)
        offset = rndi1(f32(f32(2.0) * f32(over - in_zero)))
    delt = ((2 * sums + offset + 2**31) & 0xFFFFFFFF) - 2**31
    scaled = np.clip((delt * fac * 2 + 0x8000) >> 16, -2**31, 2**31 - 1) >> rsh
    codes = np.clip(np.clip((scaled + 1) >> 1, -32768, 32767), 0, 255).astype(np.uint8)
    return codes, float(out_min), float(out_max)


def _hbreaks(oht: int, batches: int, threads: int = 4) -> list[int]:
    """The 2x2 handler's jobs per batch: output rows split in 1, 2 or 4 (``hbreaks``, with
    AVGPOOL_MAX_THREADS = 4 on V66)."""
    shift = 1
    if oht < 2 or batches >= 4 * threads:
        shift = 0
    elif threads >= 4 and oht >= 4 and batches <= 3:
        shift = 2
    mid = (oht + 1) >> 1
    return {0: [0, oht], 1: [0, mid, oht], 2: [0, (mid + 1) >> 1, mid, (mid + oht + 1) >> 1,
                                               oht]}[shift]


def _sum4(mem: np.ndarray, gi: D32Geometry, base: int, rows: tuple[np.ndarray, np.ndarray],
          cols: tuple[np.ndarray, np.ndarray], k: np.ndarray) -> np.ndarray:
    """[rows, slices, columns, lanes] sums of the 4 cells (2 rows x 2 columns) read from the
    flat input memory ``mem`` at their addresses (a column past the row's end reads what
    follows it in memory)."""
    lanes = np.arange(32)
    total = np.zeros((len(rows[0]), len(k), len(cols[0]), 32), I64)
    for rr in rows:
        for cc in cols:
            at = (base + rr[:, None, None, None] * gi.row_stride
                  + k[None, :, None, None] * gi.d32_stride + cc[None, None, :, None] * 32
                  + lanes)
            total += mem[np.clip(at, 0, mem.size - 1)]
    return total


def _pool_2x2(x: Tensor, hp: AxisPlan, wp: AxisPlan, g: D32Geometry, hpad: int,
              fill: int) -> np.ndarray:
    """The HVX 2x2 handler (``avgpool_2x2_inner_func``, window 2x2, stride 2 across): per
    job (a batch, a band of output rows), in order: a right padding column is made by
    copying the last data column over the first padding one, block by block for nd32 x rows
    blocks of the input (the C writes into its input); then each output is (sum of the 4
    cells + 2) >> 2 saturated, a padding row or column above or left taking the first
    row's or column's bytes. Whole vectors of 4 outputs are stored: the columns past the
    data average the bytes that follow in memory, or repeat the two before them when the
    input vectors (2 outputs each) are odd in number."""
    gi = x.geometry
    mem = np.array(x.buffer, I64)
    p = x.padding
    b = x.shape[0]
    nd32 = gi.n_data_slices
    h, w, ml, mt = hp.n, wp.n, wp.before, hp.before
    wout = 4 * ((wp.out + 3) >> 2)
    out = np.full(g.elements, fill, np.uint8)
    lanes = np.arange(32)
    for bi in range(b):
        breaks = _hbreaks(hp.out, b)
        for h0, h1 in zip(breaks[:-1], breaks[1:], strict=False):
            if h1 <= h0:
                continue
            base = bi * gi.batch_stride + p.h_before * gi.row_stride + p.w_before * 32
            hbase = h0 * hp.stride - mt
            hb, he = max(hbase, 0), min(hbase + hp.stride * (h1 - h0 - 1) + 2, h)
            if wp.after > 0:
                start = base + w * 32 + hb * gi.row_stride
                at = start + np.arange(nd32 * (he - hb))[:, None] * gi.d32_stride + lanes
                mem[at] = mem[at - 32]
            ih = np.arange(h0, h1)
            r = ih * hp.stride - mt
            r0 = np.where(r < 0, r + 1, r)
            r1 = np.where(r + 1 > h - 1, r0, r + 1)
            c0 = 2 * np.arange(wout) - ml
            c1 = c0 + 1
            if ml:
                c0[0] = c1[0]
            k = np.arange(nd32)
            v = _sum4(mem, gi, base, (r0, r1), (c0, c1), k)
            codes = np.minimum((v + 2) >> 2, 255).astype(np.uint8)
            # with an odd count of input vectors (2 outputs each) the last output vector's
            # second half repeats its first (``vsumlast = vsum01``)
            if (wp.out + 1) >> 1 & 1:
                codes[:, :, wout - 2:] = codes[:, :, wout - 4:wout - 2]
            dst = (bi * g.batch_stride + (ih + hpad)[:, None, None, None] * g.row_stride
                   + k[None, :, None, None] * g.d32_stride
                   + (4 + np.arange(wout))[None, None, :, None] * 32 + lanes)
            dst = np.broadcast_to(dst, codes.shape)
            spill = np.broadcast_to(k[None, :, None, None] >= g.n_slices, codes.shape)
            # a slice past the output's lands on a later row, which its own store overwrites
            for sel in (spill, ~spill):
                keep = sel & (dst < g.elements)
                out[dst[keep]] = codes[keep]
    return out


def uses_3x3_handler(hp: AxisPlan, wp: AxisPlan) -> bool:
    """The HVX op picks its 3x3 stride-1 assembly for these plans (it falls back to the
    integral path when the input's padding cannot hold the zapped edges)."""
    return hp.win == wp.win == 3 and hp.stride == wp.stride == 1 and hp.n > 1 and wp.n > 1


def not_simulated(hp: AxisPlan, wp: AxisPlan, hvx: bool = True) -> str | None:
    """Why Hexscope cannot run this plan (None: it can): an edge window of over 128 cells.
    A 1x1 output always runs on the HVX op."""
    if hvx and hp.out == 1 and wp.out == 1:
        return None
    for ap in (hp, wp):
        try:
            edge_scales(ap, max(ap.before, ap.after))
        except KernelError as e:
            return str(e).removeprefix("not simulated: ")
    return None


def _plans(ctx: KernelContext, x: Tensor, window: Tensor, stride: Tensor
           ) -> tuple[AxisPlan, AxisPlan]:
    if window.shape[0] != 1 or window.shape[3] != 1:
        raise KernelError(f"bad window shape: {list(window.shape)} (batches and depth must be 1)")
    if stride.shape[0] != 1 or stride.shape[3] != 1:
        raise KernelError(f"bad stride shape: {list(stride.shape)} (batches and depth must be 1)")
    _, fh, fw, _ = window.shape
    _, sh, sw, _ = stride.shape
    if min(fh, fw, sh, sw) < 1:
        raise KernelError(f"window {fh}x{fw} and stride {sh}x{sw} must be at least 1x1")
    _, h, w, _ = x.shape
    return axis_plan(h, fh, sh, ctx.padding), axis_plan(w, fw, sw, ctx.padding)


def _write_jobs(g: D32Geometry, codes: np.ndarray, row0: int, cols: range, fill: int
                ) -> np.ndarray:
    """The output buffer as the jobs leave it: job (batch, slice k) stores the codes of the
    input's slice k at the output's slice k, in that order. Matches device: with depth-before
    padding on the input, the input has more slices than the output, and a slice k past the
    output's lands in the next row's first slices (the C indexes by the input's slice count,
    op_avgpool_d32.c ``avgpool_worker_thread``); stores past the buffer are dropped."""
    mem = np.full(g.elements, fill, np.uint8)
    b, oh, _, lanes = codes.shape
    r = (np.arange(oh) + row0)[:, None, None] * g.row_stride
    c = np.asarray(cols)[None, :, None] * 32 + np.arange(32)[None, None, :]
    for bi in range(b):
        for k in range(lanes // 32):
            at = (bi * g.batch_stride + k * g.d32_stride + r + c).reshape(-1)
            vals = codes[bi, :, :, 32 * k:32 * k + 32].reshape(-1)
            keep = at < g.elements
            mem[at[keep]] = vals[keep]
    return mem


def _run(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor, window: Tensor,
         stride: Tensor, hvx: bool) -> tuple[Tensor, Tensor, Tensor]:
    require_d32(x)
    hp, wp = _plans(ctx, x, window, stride)
    b, _, _, d = x.shape
    why = not_simulated(hp, wp, hvx)
    if why:
        raise KernelError(f"not simulated: {why}")
    one = hvx and hp.out == 1 and wp.out == 1
    three = hvx and not one and uses_3x3_handler(hp, wp)
    pads = (hp.before, hp.after, wp.before, wp.after)
    w_before = 2 if one else 4
    hpad = 1 if hp.out == 1 else 4
    pad = D32Padding(hpad, hpad, w_before, (-(w_before + wp.out)) & 3, 0, (-d) & 31)
    shape = (b, hp.out, wp.out, d)
    g = D32Geometry(shape, pad)
    output_fits(ctx, 0, g.elements, f"{shape} with d32 padding {tuple(pad)}",
                d32_output=True, reason="output tensor prep fail")
    xp = x.padded_array()
    p = x.padding
    lanes = 32 * x.geometry.n_data_slices     # the slices the jobs run (``tin.nd32``)
    # every lane of those slices is summed, the input's depth padding included
    data = xp[:, p.h_before:p.h_before + hp.n, p.w_before:p.w_before + wp.n, :lanes]
    lo, hi = f32(scalar_f(x_min)), f32(scalar_f(x_max))
    if one:
        real = np.zeros(lanes, bool)
        real[p.d_before:p.d_before + d] = True
        sums = data.sum(axis=(1, 2), dtype=I64)[:, None, None, :]
        codes, lo, hi = reduce_to_1x1(sums, real, hp.win * wp.win, lo, hi)
        # one vector per slice: the 4 width units of the row (the padding units too)
        codes, rows, cols = np.repeat(codes, 4, axis=2), 1, range(4)
    elif three and zap_possible(x, pads):
        mem = pool_3x3(x, g, (hp.out, wp.out), pads, hpad, ctx.padding_fill)
        out = Tensor(shape, DType.QUINT8, mem, Layout.D32, pad)
        return out, f32_scalar(lo), f32_scalar(hi)
    elif hvx and hp.win == wp.win == 2 and wp.stride == 2:
        mem = _pool_2x2(x, hp, wp, g, hpad, ctx.padding_fill)
        out = Tensor(shape, DType.QUINT8, mem, Layout.D32, pad)
        return out, f32_scalar(lo), f32_scalar(hi)
    else:
        codes = scale_sums(_window_sums(data, hp, wp), hp.win * wp.win, hvx)
        rows, cols = hpad, range(4, 4 + wp.out)
        if hvx:
            # whole vectors of 4 outputs; the units past the data get sums of 0
            extra = ((wp.out + 3) & ~3) - wp.out
            codes = np.concatenate([codes, np.zeros((*codes.shape[:2], extra, lanes),
                                                    np.uint8)], axis=2)
            cols = range(4, 4 + wp.out + extra)
    mem = _write_jobs(g, codes, rows, cols, ctx.padding_fill)
    out = Tensor(shape, DType.QUINT8, mem, Layout.D32, pad)
    return out, f32_scalar(lo), f32_scalar(hi)


_PORTS = dict(
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32), Port("window", None, shape_only=True),
            Port("stride", None, shape_only=True)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))


@op("QuantizedAvgPool_8_d32", Category.POOLING, reference=avg_pool_reference,
    uses_padding=True, d32_output=True, **_PORTS)
def quantized_avg_pool_8_d32(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                             window: Tensor, stride: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Average pooling of a d32 quint8 tensor with 32-bit window sums; a global pool picks
    its own output range (QuantizedAvgPool_8's d32 form, which nnlib's prepare always uses).

    Semantics (``op_avgpool_d32.c``, plan ``setup_integral_buffer_plan``): shapes as
    QuantizedAvgPool_8 (quantized-ops spec §1.7). The plan trims the input to what the
    windows cover (nothing padded after it and a stride > 1), and an axis with one output
    takes its whole trimmed input as the window. A 1x1 output (a global pool) runs
    ``avgpool_reduce_to_1x1``: the int32 sum S of each lane over the window; with
    rdiff = (max - min) / (255 cells) and z = -min / rdiff, the output range is
    ``quantize_adjust_range`` of [min(0, Smin - z), max(0, Smax - z)] rdiff (widened to
    255.1 rdiff when narrower; a depth padding lane's S enters with its low byte replaced
    by round(z)'s), and each code is
    sat_u8(((((2 S + offset) s + 0x4000) >> 15) >> r + 1) >> 1) with s, r the 15-bit
    scale of rdiff 255 / range and offset placing the new zero. Any other output runs the
    integral path, an integral image of the codes times 256 whose padding rows and columns
    extrapolate each edge window's valid cells to the whole window (left column -p:
    I[w-p] times -p/(w-p) in 15 bits; right column W+i: I[W] plus p/(w-p) of the last w-p
    cells; then the top rows from the rows below, the bottom ones from row H; pads no
    window can hold are zero), so S is about the valid cells' mean times the window's
    cells; a = sat16((S + 2**(r-1)) >> r), r = ceil(log2 cells) + 1, then
    sat16((2 a m + 0x8000) >> 16) (HVX's rounding multiply) with m = 2**(13+r) / cells,
    and the code sat_u8((that + 32) >> 6); the range passes through. A 2x2 window at
    stride 2 across runs the 2x2 handler instead: (sum of the 4 codes + 2) >> 2, a padding
    row or column taking a copy of the edge one (the right one written into the input's
    first padding column). A 3x3 window at stride 1 runs the assembly handler when the
    input's padding can hold its edges: rows and columns past the input are "zapped" into
    that padding as rounded averages of the two nearest (``vavg:rnd``), then each output is
    (sum of 9 * 3641 + 0x4000) >> 15 (engine/ops/pooling/avgpool_3x3.py). Output padding: 1
    row above and below for one output row (else 4), 2 columns before for the 1x1 handler
    (else 4), the width rounded to 4, depth to 32.

    Fidelity: byte-exact with nnlib's own op built for Hexagon v66 with its HVX intrinsics
    and assembly, under QEMU 7.2 (tests/oracle/hvx; QEMU is an emulator, not a device): 393
    of 400 random and edge cases, every byte of the output buffer (campaigns_avgpool26_hvx.py:
    global pools, windows inside and past the input, the 2x2 and 3x3 stride-1 handlers,
    strides 1-3, depth-before padding; golden file ``QuantizedAvgPool_8_d32.hvx.json.gz``,
    docs/oracle-shape.md). The 7 others differ only in output padding fed by reads past the
    end of the input buffer (an input with no or one row of bottom padding: the handlers'
    whole vectors and the 3x3 handler's extra row for an odd output height; Hexscope reads
    the buffer's last byte there). The written padding: the 1x1 handler stores whole
    128-byte vectors, so the 2 columns before and 1 after the output hold the same codes;
    the integral path writes whole vectors of 4 outputs, zeros past the data; the handlers
    whole vectors of what follows in memory (the 3x3 one also an extra row when the output
    height is odd, and zeros before the data when the input is less aligned). Depth padding
    lanes get the average of the input's padding bytes; other padding is never written (fill
    byte). With depth-before padding on the input, the jobs run over the input's slice count
    and a slice past the output's lands in the next row (as the C does). The 2x2 and 3x3
    handlers write into the input's padding (Hexscope works on a copy). Not simulated (the
    node fails): an edge window of more than 128 valid cells.

    Errors, as nnlib raises them: "bad window shape", "bad stride shape" (batches or depth
    not 1), "input too small for filter", "output tensor prep fail".
    """
    return _run(ctx, x, x_min, x_max, window, stride, hvx=True)


@op("QuantizedAvgPool_8_d32_ref", Category.POOLING, reference=avg_pool_reference,
    uses_padding=True, d32_output=True, **_PORTS)
def quantized_avg_pool_8_d32_ref(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                                 window: Tensor, stride: Tensor
                                 ) -> tuple[Tensor, Tensor, Tensor]:
    """QuantizedAvgPool_8_d32 on nnlib's plain-C path: the integral image for every shape,
    the range passing through.

    Semantics: as QuantizedAvgPool_8_d32's integral path, with the C's scaling
    (a m + 0x8000) >> 15 (``consumer_run_row_ref``), for a 1x1 output too (no
    reduce-to-1x1 handler, so no new range).

    Fidelity: byte-exact with nnlib's x86 build through the host oracle (tests/oracle,
    800 of 800 cases (400 with windows inside the input or global, 400 with edge windows;
    golden file ``QuantizedAvgPool_8_d32_ref.json.gz``; docs/oracle-shape.md), and with
    nnlib's Hexagon build under QEMU, 400 of 400; the output buffer compared byte for byte
    (data, depth padding lanes, unwritten padding). The C and HVX scalings round
    differently ((a m + 0x8000) >> 15 against (a m + 0x4000) >> 15), so the two ops can be
    one code apart. Not simulated: an edge window of more than 128 valid cells.

    Errors: as QuantizedAvgPool_8_d32.
    """
    return _run(ctx, x, x_min, x_max, window, stride, hvx=False)
