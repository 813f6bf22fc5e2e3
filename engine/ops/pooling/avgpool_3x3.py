"""The HVX 3x3 stride-1 handler of QuantizedAvgPool_8_d32 (nnlib ``op_avgpool_d32.c``
``avgpool_process_slice_special``, ``setup_avgpool_asm_parms``; the assembly
``avgpool_slice_hvx_3x3_stride1`` and ``avgpool_zap_lr`` of ``asm_src/avgpool_d32.S``).

The handler pads by "zapping" the input's own padding (a row above is the rounded average
of rows 0 and 1, a row below that of the last two, a column left of column 0 that of
columns 0 and 1, right of the last that of the last two), then sums every 3x3 window in
16 bits and scales by 3641 (32768/9) with a rounding multiply. It works on the flat
memory: each job (a batch and a depth slice, in order) zaps, then stores whole vectors.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry
from hexscope.engine.tensor import Tensor

I64 = np.int64
RECIP9 = 0x0E39           # 32768/9 rounded, the assembly's ``recip9``


def zap_possible(x: Tensor, pads: tuple[int, int, int, int]) -> bool:
    """``padding_is_enough_to_zap``: the input's padding holds the zapped rows and
    columns (one more row below when the right padding is short)."""
    top, bottom, left, right = pads
    if not any(pads):
        return True
    p = x.padding
    lr = max(left, right)
    below = bottom + (lr > p.w_after)
    return not (top > p.h_before or below > p.h_after or lr > p.w_before
                or 2 * lr > p.w_before + p.w_after)


def _avg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``vavg(Vu.ub, Vv.ub):rnd``."""
    return (a + b + 1) >> 1


def pool_3x3(x: Tensor, g: D32Geometry, out_hw: tuple[int, int],
             pads: tuple[int, int, int, int], row0: int, fill: int) -> np.ndarray:
    """The output buffer the handler leaves (``g``: the output's geometry, ``row0`` its
    first data row). ``pads``: the plan's (top, bottom, left, right) padding."""
    gi, p = x.geometry, x.padding
    b, h, w, _ = x.shape
    oh, ow = out_hw
    top, bottom, left, right = pads
    mem = np.array(x.buffer, I64)
    out = np.full(g.elements, fill, np.uint8)
    lanes = np.arange(32)
    in_lpad = (p.w_before - left) & 3
    lshift = -in_lpad
    j0 = -4 if lshift < 0 else 0                    # first stored output column
    shift = lshift & 3                              # stored columns of zeros first
    vecs = (ow - 1 - j0) // 4 + 1
    cols = np.arange(j0, j0 + 4 * vecs)
    starts = -left - in_lpad + (cols - j0 - shift)  # each column's window: first input column
    rows = np.arange(2 * ((oh + 1) // 2))           # the assembly makes rows in pairs
    zcols = np.arange(0, -(p.w_before & 3) + 4 * (((p.w_before & 3) + w + 3) >> 2))
    for bi in range(b):
        for k in range(gi.n_data_slices):
            base = (bi * gi.batch_stride + k * gi.d32_stride + p.h_before * gi.row_stride
                    + p.w_before * 32)

            def at(r: np.ndarray, c: np.ndarray, base: int = base) -> np.ndarray:
                """Addresses [len(r), len(c), 32] of rows r, columns c (1-D)."""
                return (base + r[:, None, None] * gi.row_stride + c[None, :, None] * 32
                        + lanes)

            one = np.array
            if top:
                mem[at(one([-1]), zcols)] = _avg(mem[at(one([0]), zcols)],
                                                 mem[at(one([1]), zcols)])
            if bottom:
                mem[at(one([h]), zcols)] = _avg(mem[at(one([h - 2]), zcols)],
                                                mem[at(one([h - 1]), zcols)])
            if left or right:
                zr = np.arange(-1 if top else 0, h + (1 if bottom else 0))
                mem[at(zr, one([-1]))] = _avg(mem[at(zr, one([0]))], mem[at(zr, one([1]))])
                mem[at(zr, one([w]))] = _avg(mem[at(zr, one([w - 1]))],
                                             mem[at(zr, one([w - 2]))])
            total = np.zeros((len(rows), len(cols), 32), I64)
            for dy in range(3):
                for dx in range(3):
                    a = at(rows - top + dy, starts + dx)
                    total += mem[np.clip(a, 0, mem.size - 1)]
            codes = (((total * RECIP9 + 0x4000) >> 15) & 0xFF).astype(np.uint8)
            if shift:
                codes[:, :shift] = 0
            dst = (bi * g.batch_stride + (rows + row0)[:, None, None] * g.row_stride
                   + k * g.d32_stride + (g.padding.w_before + cols)[None, :, None] * 32
                   + lanes)
            keep = (dst >= 0) & (dst < g.elements)
            out[dst[keep]] = codes[keep]
    return out
