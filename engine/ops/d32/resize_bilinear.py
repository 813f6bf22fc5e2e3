"""QuantizedResizeBilinear_8_d32: bilinear resize of a d32 tensor in nnlib's fixed point
(``op_resizebilinear_d32.c``, ``resize_bilinear_d32_execute``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, output_fits, require_d32, scalar_i
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.resize.bilinear import resize_bilinear_8_reference
from hexscope.engine.ops.shape.params import int_words
from hexscope.engine.tensor import Tensor

I64 = np.int64


def _step(n_in: int, n_out: int) -> int:
    """(n_in << 32) / n_out rounded to nearest (``obtain_scaling_plan``'s vscale, add_per)."""
    return ((n_in << 32) + (n_out >> 1)) // n_out


def v_taps(h_in: int, h_out: int, align: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per output row: the upper input row and its 7-bit weight beta of the next row
    (``do_bilin_interp_general_all_HVX``: acc = 2**24 + i vscale; a row at or past the last
    input row takes that row alone)."""
    n_in, n_out = (h_in - 1, h_out - 1) if align and h_out > 1 else (h_in, h_out)
    acc = (1 << 24) + np.arange(h_out, dtype=I64) * _step(n_in, n_out)
    row, beta = acc >> 32, (acc & 0xFFFFFFFF) >> 25
    last = row >= h_in - 1
    return np.where(last, h_in - 1, row), np.where(last, 0, beta)


def h_taps(w_in: int, w_out: int, align: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per output column, padded to a multiple of 4: the left input column and its 15-bit
    fraction (``obtain_scaling_plan``'s hcontrol table: acc = 2**16 + i add_per; the padding
    entries repeat the last column with fraction 0)."""
    n_in, n_out = (w_in - 1, w_out - 1) if align and w_out > 1 else (w_in, w_out)
    acc = (1 << 16) + np.arange(w_out, dtype=I64) * _step(n_in, n_out)
    col, frac = acc >> 32, (acc & 0xFFFFFFFF) >> 17
    last = col >= w_in - 1
    col, frac = np.where(last, w_in - 1, col), np.where(last, 0, frac)
    extra = -w_out % 4
    return (np.concatenate([col, np.full(extra, w_in - 1, I64)]),
            np.concatenate([frac, np.zeros(extra, I64)]))


def general_rows(mem: np.ndarray, rows: np.ndarray, beta: np.ndarray, cols: np.ndarray,
                 frac: np.ndarray) -> np.ndarray:
    """The HVX general path on (B, H, S, W, 32) input codes (real rows and columns):
    v = a (128 - beta) + b beta (``vmpa``, exact 16-bit), then per column
    h = v0 + ((2 (v1 - v0) frac + 0x8000) >> 16) (``vmpy:<<1:rnd:sat``), and the code
    sat_u8((h + 64) >> 7) (``vasr:rnd:sat`` by 7)."""
    # int32 holds every step: v <= 255 * 128, 2 |v1 - v0| f + 2**15 < 2**31
    h_in = mem.shape[1]
    a = mem[:, rows].astype(np.int32)
    b = mem[:, np.minimum(rows + 1, h_in - 1)].astype(np.int32)
    bt = beta.astype(np.int32)[None, :, None, None, None]
    v = a * (128 - bt) + b * bt                                      # (B, Ho, S, W, 32)
    f = frac.astype(np.int32)[None, None, None, :, None]
    v0 = v[:, :, :, cols]
    v1 = v[:, :, :, np.minimum(cols + 1, mem.shape[3] - 1)]
    h = v0 + ((2 * (v1 - v0) * f + 0x8000) >> 16)
    return np.clip((h + 64) >> 7, 0, 255).astype(np.uint8)


def x2_rows(mem: np.ndarray, width: int) -> np.ndarray:
    """The exact-2x path on (B, H, S, W, 32) codes, as nnlib's assembly
    ``do_bilin_interp_x2_single_slice_HVX`` (resizebilinear_d32_h.S) writes it, confirmed
    under QEMU: ``width`` columns are real (``mem`` may hold one more, the padding column its
    last vector loads). Even columns copy, odd ones are the truncating average of their
    neighbours (``vavg``), the last real column and any column past it twice. Odd rows
    average the rows around them, truncating (``vavg``) over the columns of the 4-column
    input vectors of the main loop (``.lpx``: the first 4 ((width - 1) >> 2)) and rounding
    (``vavg:rnd``) over the last vector (``.lpx_end``); the last row twice."""
    m = mem.astype(I64)
    b, h, s, w, _ = m.shape
    wide = np.empty((b, h, s, 2 * w, 32), I64)
    wide[:, :, :, 0::2] = m
    wide[:, :, :, 1::2] = m
    if width > 1:
        wide[:, :, :, 1:2 * width - 2:2] = (m[:, :, :, :width - 1] + m[:, :, :, 1:width]) >> 1
    out = np.empty((b, 2 * h, s, 2 * w, 32), I64)
    out[:, 0::2] = wide
    upper, lower = wide[:, :-1], wide[:, 1:]
    in_loop = (np.arange(2 * w) // 2 < 4 * ((width - 1) >> 2))[None, None, None, :, None]
    out[:, 1:-1:2] = np.where(in_loop, (upper + lower) >> 1, (upper + lower + 1) >> 1)
    out[:, -1] = wide[:, -1]
    return out.astype(np.uint8)


def _new_size(size: Tensor, align: tuple[Tensor, ...]) -> tuple[int, int, bool]:
    new_h, new_w = int_words(size, 2, "the new size")
    return new_h, new_w, bool(align) and scalar_i(align[0]) != 0


def resize_d32_memory(ctx: KernelContext, x: Tensor, new_h: int, new_w: int, align: bool
                      ) -> Tensor:
    """The output tensor as the path nnlib picks leaves it (every byte not written holds the
    session's fill byte)."""
    b, h, w, d = x.shape
    p, g = x.padding, x.geometry
    pad = D32Padding(p.h_before, p.h_after, 4, -(4 + new_w) & 3, p.d_before, p.d_after)
    out = (b, new_h, new_w, d)
    if min(out) < 0:
        raise KernelError(f"failure preparing output: new size {new_h}x{new_w}")
    og = D32Geometry(out, pad)
    output_fits(ctx, 0, og.elements, f"resized {out} with d32 padding {tuple(pad)}",
                d32_output=True, reason="failure preparing output")
    mem_in = x.memory
    nd = g.n_data_slices
    if not align and (new_h, new_w) == (2 * h, 2 * w) and p.w_before % 2 == 0:
        gutter = 2 if p.w_before & 2 else 0            # 2 input pixels of padding included
        # an odd width's last vector store also writes the padding column after it
        extra = (w + gutter) & 1
        src = mem_in[:, p.h_before:p.h_before + h, :nd,
                     p.w_before - gutter:p.w_before + w + extra]
        mem = np.full(og.memory_shape, ctx.padding_fill, np.uint8)
        mem[:, pad.h_before:pad.h_before + new_h, :nd,
            4 - 2 * gutter:4 + new_w + 2 * extra] = x2_rows(src, w + gutter)
        return Tensor(out, DType.QUINT8, mem.reshape(-1), Layout.D32, pad)
    if (new_h, new_w) == (h, w):
        # nn_mcmanager_tensor_copy: the input's bytes, shape and format (its padding); when
        # they exceed the output's max_size it returns -1 before copying, unchecked, and the
        # prepared output stays unwritten
        defs = ctx.output_defs
        if defs and defs[0].max_sizes and x.nbytes > defs[0].capacity(True, 0):
            ctx.warn("QuantizedResizeBilinear_8_d32: the same-size copy does not fit the "
                     "output (nnlib ignores the failed copy): the output is left unwritten")
            mem = np.full(og.elements, ctx.padding_fill, np.uint8)
            return Tensor(out, DType.QUINT8, mem, Layout.D32, pad)
        return Tensor(x.shape, DType.QUINT8, np.asarray(x.buffer).copy(), Layout.D32, p)
    if min(h, w, new_h, new_w) < 1:
        raise KernelError("didn't get scaling plan: a size below 1 "
                          f"({h}x{w} -> {new_h}x{new_w})")
    rows, beta = v_taps(h, new_h, align)
    cols, frac = h_taps(w, new_w, align)
    src = mem_in[:, p.h_before:p.h_before + h, :nd, p.w_before:p.w_before + w]
    mem = np.full(og.memory_shape, ctx.padding_fill, np.uint8)
    mem[:, pad.h_before:pad.h_before + new_h, :nd, 4:4 + cols.size] = general_rows(
        src, rows, beta, cols, frac)
    return Tensor(out, DType.QUINT8, mem.reshape(-1), Layout.D32, pad)


def resize_bilinear_8_d32_reference(ctx: KernelContext, x: Tensor, size: Tensor,
                                    x_min: Tensor, x_max: Tensor,
                                    *align: Tensor) -> tuple[np.ndarray, ...]:
    """the real input resized bilinearly (QuantizedResizeBilinear_8's float meaning)."""
    return resize_bilinear_8_reference(ctx, x, size, x_min, x_max, *align)


@op("QuantizedResizeBilinear_8_d32", Category.D32,
    reference=resize_bilinear_8_d32_reference, d32_output=True,
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("new_size", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32),
            Port("align_corners", DType.INT32, optional=True)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def quantized_resize_bilinear_8_d32(ctx: KernelContext, x: Tensor, size: Tensor,
                                    x_min: Tensor, x_max: Tensor,
                                    *align: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Bilinear resize of a d32 quint8 tensor in fixed point (QuantizedResizeBilinear_8's
    d32 form, which nnlib's prepare substitutes for an output depth > 2 or a width that is
    not a power of 2).

    Semantics (``op_resizebilinear_d32.c``): ``new_size`` is [new_h, new_w]; input 4
    non-zero is align_corners. Three paths, as nnlib picks them:
    exact 2x (no align_corners, an even input width-before padding): even columns copy the
    input, odd ones are (a + b) >> 1, the last column doubled; odd rows average the rows
    around them, (a + b) >> 1 over the input columns of the assembly's main loop (the first
    4 ((W - 1) >> 2), counted from the aligned start) and (a + b + 1) >> 1 over its last
    vector, the last row doubled (``do_bilin_interp_x2_single_slice_HVX``);
    the same size: a copy of the input's bytes, which keeps the input's own padding
    (``nn_mcmanager_tensor_copy``; bytes beyond the output's size fail the copy, unchecked:
    the output stays unwritten, with a warning); otherwise the general path
    (``do_bilin_interp_general_all_HVX``): row i reads rows r, r + 1 with weight
    beta = bits 31..25 of 2**24 + i round(2**32 H / new_h) (align_corners: (H-1)/(new_h-1)),
    v = a (128 - beta) + b beta; column j reads columns c, c + 1 of v with the 15-bit
    fraction f of 2**16 + j round(2**32 W / new_w), h = v0 + ((2 (v1 - v0) f + 2**15) >> 16),
    and the code is sat_u8((h + 64) >> 7); rows and columns at or past the last clamp to it
    with weight 0. The output keeps the input's height and depth paddings, 4 before in
    width and up to a multiple of 4 after. min and max are the input's.

    Fidelity: byte-exact, padding included, against nnlib's HVX code (the general path's
    intrinsics and the x2 assembly) under QEMU 7.2's Hexagon v66 emulation (tests/oracle/hvx,
    600 cases, docs/oracle-hvx.md; QEMU is an emulator, not a device); the x86 oracle checks
    the C decisions (shapes, padding amounts, errors) and the same-size copy (400 cases).
    It differs from QuantizedResizeBilinear_8
    (float32 taps, code = trunc(v + 0.5)):
    7-bit row weights and 15-bit column fractions from a rounded 32.32 step, and the 2x
    path's truncating then rounding averages; measured on 382 random cases (sizes 1..9 to
    1..17, both align_corners; 50 on the 2x path): at most 1 code apart on either path
    (docs/oracle-shape.md; a property test keeps it). The padding:
    every slice holding data is written over all 32 lanes (the depth padding lanes are
    interpolated from the input's), the width-after padding holds the last column repeated
    (general path) or, on the 2x path with an odd width, the input's padding column after
    the last one, twice; on the 2x path with a width-before padding of 2 mod 4, the 4 output
    width-before units hold the 2 input padding pixels interpolated; the height padding and
    anything else keeps the session's fill byte.

    Errors, as nnlib raises them: "failure preparing output" (a negative size, or the
    padded result larger than the output's declared size); "didn't get scaling plan" (a
    size below 1 on the general path).
    """
    require_d32(x)
    new_h, new_w, al = _new_size(size, align)
    y = resize_d32_memory(ctx, x, new_h, new_w, al)
    return y, x_min.copy(), x_max.copy()
