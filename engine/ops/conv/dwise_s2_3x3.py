"""What ``dwconv2dbbb_s2_3x3_asm`` (the d32 depthwise Supernode's kernel for a 3x3 filter at
stride width 2, without ChannelScale) reads for the first group of 4 output columns of each
output row and depth slice, which differs from the window's codes.

The kernel loads each filter row's first 4 input columns (one 128-byte vector: 4 columns x
32 lanes) and byte-shuffles it twice (``vshuff``) into one 32-bit word per lane holding
its 4 columns. For the third filter row the once-shuffled vector sits in the register
that the loop also names ``x2_ba98`` (v13, dwconv2dbbb_s2_3x3_h.S: ``x2`` and ``x2_ba98``);
the loop sets ``x2_3210 = x2_ba98`` (the previous group's columns 8..11, shuffled twice)
before its first use, so the first group's third-row word is the once-shuffled vector:
lane l's 4 bytes are memory bytes 2l, 2l + 64, 2l + 1, 2l + 65 of the vector (the column
(2l) // 32 and that + 2, lanes 2l and 2l + 1 mod 32). Output 0 takes its three taps from
that word (bytes skip .. skip + 2, skip = the odd left skip, op_dwise_snode_8bit.c passes
``(in_left_skip & 1)*8`` and the kernel shifts the weights by it); output 1 its word's
first two bytes from the word's bytes 2 and 3 (``x2_3232``, made after the same
assignment). The kernel's zero-code term is computed from the same bytes, so a sum is
sum (byte - zx)(w - zf) over the bytes read. Found under qemu-hexagon: golden case 20 of
``DepthwiseSupernode_8x8p32to8_d32.hvx.json.gz`` (left padding 5: column 0 zapped,
1..3 read as they are) gives the first run's maximum 29676 of nnlib's log only so.

Where the 4 columns' 128 bytes are all the same (a left padding of 4 or 8, zapped to zx)
the shuffle changes nothing: every graph Hexscope and the converters build.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import Layout
from hexscope.engine.ops.conv.d32_input_reads import Zaps, area_index, read_at
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.tensor import Tensor


def first_group_delta(x: Tensor, w: np.ndarray, zf: int, zx: int, zaps: Zaps, rows: Window,
                      skip: int) -> np.ndarray | None:
    """What to add to the int32 sums of output columns 0 and 1 (the padded width's first
    two, where the kernel starts) for the bytes the kernel reads there: (B, OH, 2, C)
    int64, or None when it adds nothing. ``x``: the d32 input (no depth padding before);
    ``w``: the 3x3 filter codes (3, 3, C, 1); ``zaps``: what nnlib zaps before the run;
    ``skip``: the first window's column in the row's memory line (0 or 1)."""
    p = x.padding
    if (p.w_before >= 4 and p.w_before % 4 == 0 and zaps.left == p.w_before) \
            or skip not in (0, 1) or rows.out == 0 or p.d_before:
        return None         # the 4 columns are zapped to zx (or not this kernel's layout)
    b, _, _, depth = x.shape
    lanes = depth + p.d_after
    # every lane of each slice: the shuffle pairs a lane with its neighbours, padding too
    xl = Tensor((*x.shape[:3], lanes), x.dtype, x.raw, Layout.D32, p._replace(d_after=0))
    first = 2 - rows.before          # the third filter row of output row 0
    index = area_index(xl, zaps, (first, (rows.out - 1) * rows.s + 1), (-p.w_before, 4))
    v = read_at(xl.raw, index, zx)[:, ::rows.s].astype(np.int64)    # (B, OH, 4, lanes)
    oh, slices = v.shape[1], lanes // 32
    vec = v.reshape(b, oh, 4, slices, 32).transpose(0, 1, 3, 2, 4).reshape(b, oh, slices, 128)
    once = np.empty_like(vec)
    once[..., 0::2], once[..., 1::2] = vec[..., :64], vec[..., 64:]
    wrong = once.reshape(b, oh, slices, 32, 4)                      # lane, byte
    right = vec.reshape(b, oh, slices, 4, 32).swapaxes(-1, -2)      # lane, column
    diff = (wrong - right).reshape(b, oh, lanes, 4)[:, :, :depth]
    taps = w[2, :, :, 0].astype(np.int64).T - zf                   # (C, 3)
    out = np.zeros((b, oh, 2, depth), np.int64)
    out[:, :, 0] = (diff[..., skip:skip + 3] * taps).sum(-1)
    near = 2 - skip                  # output 1's taps on the word's bytes 2 and 3
    out[:, :, 1] = (diff[..., 2 + skip:4] * taps[:, :near]).sum(-1)
    return out if out.any() else None


__all__ = ["first_group_delta"]
