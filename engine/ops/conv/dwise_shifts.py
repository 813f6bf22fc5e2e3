"""How nnlib's depthwise MxN kernels (dwconv2dbbb_s{1,2}_{3,5,7}xN_h.S, taken for every
filter but a 3x3 one without ChannelScale) shift their sums, where that differs from the
C model (``sum <<= recip_shift``): the count of a vector shift, and the 5xN stride-2
kernel's second column shifted twice. Checked under qemu-hexagon (docs/oracle-hvx.md).
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry
from hexscope.engine.ops.kernels.dwise_requant import dwise_requantize
from hexscope.engine.tensor import Tensor


def vasl_words(t: np.ndarray, shamt: int) -> np.ndarray:
    """``vasl(Vu.w, Vv.w)`` of int32 values held in int64, as the MxN kernels shift by
    ``vsplat(recip_shift)``: the count's low 6 bits read as signed, 0..31 a left shift
    (wrapping), 32..63 an arithmetic right shift by 64 - count (every count 0..127 under
    qemu-hexagon: 99 shifts right by 29, 129 left by 1). The 3x3 kernels and the
    Supernodes' ``vasl(Vu.w, Rt)`` take Rt & 31 instead."""
    c = shamt & 63
    t = ((np.asarray(t, np.int64) + 2**31) & 0xFFFFFFFF) - 2**31
    if c >= 32:
        return t >> (64 - c)
    r = (t << c) & 0xFFFFFFFF
    return np.where(r >= 2**31, r - 2**32, r)


def vasl_sums(sums: np.ndarray, folded: np.ndarray, shamt: int) -> np.ndarray:
    """int32 sums that :func:`dwise_requantize` with shift 0 turns into the codes of the
    MxN kernels' vector shift (:func:`vasl_words`) of sums + folded."""
    return (vasl_words(sums.astype(np.int64) + folded, shamt) - folded).astype(np.int32)


def shift_twice(sums: np.ndarray, folded: np.ndarray, shamt: int, recip: np.ndarray
                ) -> tuple[np.ndarray, int, int]:
    """``dwconv2dbbb_s2_5xN_asm`` with a last group of one data column: the group's second
    column, past the data, copies the first one's sum after its shift (``if(p0) s1 = s0``
    follows ``s0.w = vasl(s0.w, vshamt_vec.w)``) and is shifted again (``s1.w = vasl(s1.w,
    vshamt_vec.w)`` after it; dwconv2dbbb_s2_5xN_h.S, the width loop's end). The codes of
    that column (B, OH, C) from ``sums`` (B, OH, OW, C), and their min and max, which count
    in the run's."""
    last = sums[:, :, -1].astype(np.int64) + folded
    shifted = vasl_words(vasl_words(last, shamt), shamt) - folded  # requantize adds it back
    return dwise_requantize(shifted.astype(np.int32), folded, recip, 0)


def write_twice(out: Tensor, codes: np.ndarray, lane: int | None) -> None:
    """Write :func:`shift_twice`'s ``codes`` where that column lands in ``out``'s memory:
    the first column after each row's data (past the right padding, the next line's left
    padding); its depth padding lanes ``lane`` (None: left as they are)."""
    pad = out.padding
    g = D32Geometry(out.shape, pad)
    nb, oh, _, depth = out.shape
    lanes = np.empty((nb, oh, g.n_slices * 32), np.uint8)
    lanes[..., :depth] = codes
    lines = np.asarray(out.raw).reshape(-1, g.w_total, 32)
    col = pad.w_before + out.shape[2]
    start = 1 if col >= g.w_total else 0        # past the right padding: the next line
    col %= g.w_total
    keep = (np.arange(g.n_slices * 32) >= depth).reshape(g.n_slices, 32)
    for b in range(nb):
        l0 = (b * g.h_total + pad.h_before) * g.n_slices + start
        got = lines[l0:l0 + oh * g.n_slices, col].reshape(oh, g.n_slices, 32)
        new = lanes[b].reshape(oh, g.n_slices, 32)
        if lane is None:
            new = np.where(keep, got, new)
        else:
            new[..., keep] = lane
        lines[l0:l0 + oh * g.n_slices, col] = new.reshape(-1, 32)


__all__ = ["shift_twice", "vasl_sums", "vasl_words", "write_twice"]
