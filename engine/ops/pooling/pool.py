"""Flat quantized pooling: QuantizedMaxPool_8 and QuantizedAvgPool_8 (quantized-ops spec §8, §9).

Both kernels are separable passes over window offsets (width first, then height), so the
cost is (window height + window width) vectorised passes, whatever the input size.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.elementwise.activation import range_words
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

_IN = (Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32),
       Port("window", None, shape_only=True), Port("stride", None, shape_only=True))
_OUT = (Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32))


class Span(NamedTuple):
    """One spatial dimension of a pooling: output size and the padding before the input."""

    out: int
    pad_before: int


def out_size_and_pad(n: int, f: int, s: int, padding: Padding) -> Span:
    """``nn_pad_compute_outsize_and_padbefore`` (quantized-ops spec §1.7).

    VALID: (n - f)/s + 1, or 0 when n < f. SAME and SAME_CAFFE: ceil(n/s), with total padding
    P = (out - 1)s - (n - f) split floor(P/2) before (SAME) or floor((P+1)/2) (SAME_CAFFE).
    NA: floor(n/s) with SAME's padding rule. MIRROR_* and unknown codes: 0.
    """
    if padding is Padding.VALID:
        return Span((n - f) // s + 1 if n >= f else 0, 0)
    if padding not in (Padding.NA, Padding.SAME, Padding.SAME_CAFFE):
        return Span(0, 0)
    m = n if padding is Padding.NA else n + s - 1
    if m < s:
        return Span(0, 0)
    out = m // s
    total = (out - 1) * s - (n - f)
    if total <= 0:
        return Span(out, 0)
    return Span(out, (total + (padding is Padding.SAME_CAFFE)) >> 1)


def _geometry(ctx: KernelContext, x: Tensor, window: Tensor,
              stride: Tensor) -> tuple[Span, Span, int, int, int, int]:
    """Checks of both pools, then (height span, width span, fh, fw, sh, sw)."""
    if window.shape[0] != 1 or window.shape[3] != 1 or stride.shape[0] != 1 \
            or stride.shape[3] != 1:
        raise KernelError(
            "bad window/stride shape: window and stride must be [1,h,w,1], got window "
            f"{list(window.shape)} and stride {list(stride.shape)}")
    if ctx.padding is Padding.NA:
        raise KernelError("This op might pad: padding NA is rejected; use SAME or VALID")
    _, fh, fw, _ = window.shape
    _, sh, sw, _ = stride.shape
    if min(fh, fw, sh, sw) < 1:
        # The device divides by the stride and by the window cell count: undefined there.
        raise KernelError(f"window {fh}x{fw} and stride {sh}x{sw} must be at least 1x1")
    _, h, w, _ = x.shape
    return (out_size_and_pad(h, fh, sh, ctx.padding), out_size_and_pad(w, fw, sw, ctx.padding),
            fh, fw, sh, sw)


def _pool(a: np.ndarray, hs: Span, ws: Span, fh: int, fw: int, sh: int, sw: int,
          dtype: type, reduce: np.ufunc) -> np.ndarray:
    """Reduce fh x fw windows at stride sh x sw of [B,H,W,D] ``a`` in ``dtype``: along the
    width first, then the height. Padding cells hold 0; the input is padded once."""
    b, h, w, d = a.shape
    after_h = max(0, (hs.out - 1) * sh + fh - hs.pad_before - h)
    after_w = max(0, (ws.out - 1) * sw + fw - ws.pad_before - w)
    if not (hs.pad_before or ws.pad_before or after_h or after_w) and a.dtype == dtype:
        p = a
    else:
        p = np.zeros((b, hs.pad_before + h + after_h, ws.pad_before + w + after_w, d), dtype)
        p[:, hs.pad_before:hs.pad_before + h, ws.pad_before:ws.pad_before + w] = a
    xe, ye = (ws.out - 1) * sw + 1, (hs.out - 1) * sh + 1
    rows = reduce(p[:, :, 0:xe:sw], p[:, :, 1:1 + xe:sw]) if fw > 1 else p[:, :, 0:xe:sw].copy()
    for k in range(2, fw):
        reduce(rows, p[:, :, k:k + xe:sw], out=rows)
    out = reduce(rows[:, 0:ye:sh], rows[:, 1:1 + ye:sh]) if fh > 1 else rows[:, 0:ye:sh].copy()
    for k in range(2, fh):
        reduce(out, rows[:, k:k + ye:sh], out=out)
    return out


def _compiled_pool(a: np.ndarray, hs: Span, ws: Span, fh: int, fw: int, sh: int, sw: int,
                   average: bool) -> np.ndarray | None:
    """Both pools in one compiled pass (engine/ops/kernels/compiled_defs.py), or None (numpy then):
    when numba is off, or some window would hold no input cell."""
    kernel = compiled.kernel("pool")
    if kernel is None or a.dtype != np.uint8:
        return None
    b, h, w, d = a.shape
    first_h, first_w = -hs.pad_before, -ws.pad_before
    last_h, last_w = (hs.out - 1) * sh - hs.pad_before, (ws.out - 1) * sw - ws.pad_before
    if first_h + fh <= 0 or first_w + fw <= 0 or last_h >= h or last_w >= w:
        return None
    out = np.empty((b, hs.out, ws.out, d), np.uint8)
    kernel(np.ascontiguousarray(a), fh, fw, sh, sw, hs.pad_before, ws.pad_before, average, out)
    return out


def _valid_counts(span: Span, f: int, s: int, n: int) -> np.ndarray:
    """Cells of each window that lie inside the input (the clipped window of §9)."""
    start = np.arange(span.out) * s - span.pad_before
    return np.minimum(start + f, n) - np.maximum(start, 0)


def _scale_sums(sums: np.ndarray, ch: np.ndarray, cw: np.ndarray) -> np.ndarray:
    """Each u16 window sum of [B,OH,OW,D] scaled by the reciprocal of its window's count
    ch[i] * cw[j] (§9): rc = sat_i16(floor(32768 / count)), (s16 * rc + 16384) >> 15.

    Matches device: the scaling multiply reads the u16 sum as signed 16-bit (int32 is exact:
    |s16 * rc| < 2**30). A window of at most 128 cells sums to at most 32640, so its s16 is
    the sum and the result lies in 0..255 without saturation; larger windows may give a
    negative s16, saturated to 0 (the result never exceeds 254 there).
    """
    count = np.outer(ch, cw)
    rc = np.minimum(32768 // count, 32767).astype(np.int32)[None, :, :, None]
    signed = sums.view(np.int16).astype(np.int32)
    signed *= rc
    signed += 16384
    signed >>= 15
    if count.max(initial=0) > 128:
        np.clip(signed, 0, 255, out=signed)
    return signed.astype(np.uint8)


def _range_copy(x_min: Tensor, x_max: Tensor) -> tuple[np.ndarray, np.ndarray]:
    w_min, w_max = range_words(scalar_f(x_min), scalar_f(x_max))
    return w_min.copy(), w_max.copy()


def _pool_reference(ctx: KernelContext, x: np.ndarray, window: Tensor, stride: Tensor,
                    average: bool) -> np.ndarray:
    """Pooling of real values; padding cells are ignored (not counted in an average).

    Vectorised: the input padded with -inf (max) or 0 (mean, divided by the count of cells
    inside the input), then one elementwise max or add per window cell over the strided
    view of that cell (numpy's reduction over the window axes of a sliding view was five
    times slower)."""
    _, fh, fw, _ = window.shape
    _, sh, sw, _ = stride.shape
    b, h, w, d = x.shape
    hs = out_size_and_pad(h, fh, sh, ctx.padding)
    ws = out_size_and_pad(w, fw, sw, ctx.padding)
    if hs.out == 0 or ws.out == 0 or b == 0 or d == 0:
        return np.zeros((b, hs.out, ws.out, d), np.float32)
    pads = ((0, 0), (hs.pad_before, max(0, (hs.out - 1) * sh + fh - h - hs.pad_before)),
            (ws.pad_before, max(0, (ws.out - 1) * sw + fw - w - ws.pad_before)), (0, 0))
    if x.dtype == np.float32 and x.flags.c_contiguous:
        kernel = compiled.kernel("pool_f32")
        if kernel is not None:      # no padded copy, one pass per output
            y = np.empty((b, hs.out, ws.out, d), np.float32)
            kernel(x, fh, fw, sh, sw, hs.pad_before, ws.pad_before, average, y)
            return y
    xp = np.pad(x, pads, constant_values=0.0 if average else -np.inf)
    y = np.empty((b, hs.out, ws.out, d), xp.dtype)
    combine = np.add if average else np.maximum
    for fy in range(fh):
        for fx in range(fw):
            cell = xp[:, fy:fy + (hs.out - 1) * sh + 1:sh, fx:fx + (ws.out - 1) * sw + 1:sw]
            if fy == fx == 0:
                y[...] = cell
            else:
                combine(y, cell, out=y)
    if not average:
        return y
    inside = np.pad(np.ones((h, w), np.float32), pads[1:3])
    cells = np.lib.stride_tricks.sliding_window_view(inside, (fh, fw))
    counts = cells[::sh, ::sw][:hs.out, :ws.out].sum(axis=(2, 3))
    y /= np.maximum(counts, 1.0)[None, :, :, None]
    return y


def max_pool_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                       window: Tensor, stride: Tensor) -> tuple[np.ndarray, ...]:
    """the largest dequantized value of each window (padding ignored)."""
    return ranged(_pool_reference(ctx, real(x, x_min, x_max), window, stride, False))


@op("QuantizedMaxPool_8", Category.POOLING,
    reference=max_pool_reference, inputs=_IN, outputs=_OUT, uses_padding=True)
def quantized_max_pool_8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                         window: Tensor, stride: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """Max pooling of quint8 codes over [1,h,w,1] windows; the range passes through.

    Semantics: window and stride are shape-only inputs ([1,WH,WW,1] and [1,SH,SW,1]). Output
    shape [B,OH,OW,D] per the padding mode (quantized-ops spec §1.7). Each output is the
    largest code among the window cells inside the input; padding cells are ignored. y_min
    and y_max are copies of x_min and x_max (§8).

    Fidelity: bit-exact (byte-wise max; padding never wins, §8). VALID with the window larger
    than the input, and the MIRROR_* modes, give an empty output without error (§1.7).

    Errors: window or stride with batches or depth != 1 ("bad window/stride shape");
    padding NA ("This op might pad"). Simulator guard: a window or stride dimension < 1
    (the device divides by it) is rejected.
    """
    hs, ws, fh, fw, sh, sw = _geometry(ctx, x, window, stride)
    b, _, _, d = x.shape
    if hs.out == 0 or ws.out == 0 or b == 0 or d == 0:
        return (np.zeros((b, hs.out, ws.out, d), np.uint8), *_range_copy(x_min, x_max))
    y = _compiled_pool(x.array, hs, ws, fh, fw, sh, sw, False)
    if y is None:
        y = _pool(x.array, hs, ws, fh, fw, sh, sw, np.uint8, np.maximum)
    return (fresh(y), *_range_copy(x_min, x_max))


def avg_pool_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                       window: Tensor, stride: Tensor) -> tuple[np.ndarray, ...]:
    """the mean dequantized value of each window's cells inside the input."""
    return ranged(_pool_reference(ctx, real(x, x_min, x_max), window, stride, True))


@op("QuantizedAvgPool_8", Category.POOLING,
    reference=avg_pool_reference, inputs=_IN, outputs=_OUT, uses_padding=True)
def quantized_avg_pool_8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                         window: Tensor, stride: Tensor) -> tuple[Tensor | np.ndarray, ...]:
    """Average pooling of quint8 codes, padding cells not counted; the range passes through.

    Semantics: shapes as QuantizedMaxPool_8 (quantized-ops spec §1.7, §8). For each output
    the clipped window has count valid cells; rc = sat_i16(floor(32768/count)) and
    y = (sum * rc + 16384) >> 15, a round-half-up average with a truncated reciprocal
    (count = 1 gives rc = 32767, still exact). y_min, y_max copy x_min, x_max (§9).

    Fidelity: this is the plain (HVX) op. Its window sum lives in an unsigned 16-bit lane
    that the scaling multiply reads as signed: a sum >= 32768 (only possible with >= 129
    cells of large codes) gives 0, and a sum >= 65536 wraps. Below 32768 it equals the
    ``_ref`` C formula (§9; read from the assembly, unconfirmed on hardware).

    Errors: as QuantizedMaxPool_8 ("bad window/stride shape", "This op might pad", and the
    simulator's guard against window or stride dimensions < 1).
    """
    hs, ws, fh, fw, sh, sw = _geometry(ctx, x, window, stride)
    b, h, w, d = x.shape
    if hs.out == 0 or ws.out == 0 or b == 0 or d == 0:
        return (np.zeros((b, hs.out, ws.out, d), np.uint8), *_range_copy(x_min, x_max))
    y = _compiled_pool(x.array, hs, ws, fh, fw, sh, sw, True)
    if y is None:
        # Matches device: the window sum is accumulated in an unsigned 16-bit lane (wraps).
        sums = _pool(x.array, hs, ws, fh, fw, sh, sw, np.uint16, np.add)
        y = _scale_sums(sums, _valid_counts(hs, fh, sh, h), _valid_counts(ws, fw, sw, w))
    return (fresh(y), *_range_copy(x_min, x_max))
