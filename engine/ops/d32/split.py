"""QuantizedSplit_8_d32: a depth split of a d32 tensor (``op_chanshuffle_d32.c``, the
channel shuffle with k = 1 that ``split_d32_execute`` runs)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import (
    KernelContext,
    f32_scalar,
    output_fits,
    require_d32,
    scalar_f,
)
from hexscope.engine.ops.reference import real
from hexscope.engine.ops.registry import Category, Port, Repeat, op
from hexscope.engine.ops.shape.slice import split_array, split_axis
from hexscope.engine.tensor import Tensor

f32 = np.float32


def split_d32_depth(ctx: KernelContext, axis: Tensor, x: Tensor, n: int) -> int:
    """``split_d32_execute``'s checks; the depth of each part."""
    if split_axis(ctx, axis) != 3:
        raise KernelError("split_d32 must be on dim 3")
    d = x.shape[3]
    if d % n:
        raise KernelError(f"bad split_d32 parms: can't divide {d} by {n}")
    if x.padding.d_before:
        raise KernelError("channelshuf input #1 has nonzero depth_before padding")
    return d // n


def _lane_offsets(g: D32Geometry, dpos: int, d0: int, units: np.ndarray) -> np.ndarray:
    """Offsets in one input row (from its slice 0, width unit 0) of the bytes the k = 1
    loop stores into (output slice, width unit, lane), ``channelshuf_d32_k1_template``."""
    r, s0, nd = dpos % 32, dpos // 32, -(-d0 // 32)
    lane = np.arange(32)
    if 0 < r <= 32 - d0:
        # alignment mode 1: one vror of the whole 128-byte vector (4 width units) by r, so
        # a lane past 31 - r takes the next width unit's channels (the 4th unit wraps to
        # the vector's first)
        base = units - units % 4
        pos = (32 * (units % 4))[:, None] + lane[None, :] + r
        return (s0 * g.d32_stride + (base[:, None] + (pos // 32) % 4) * 32 + pos % 32)[None]
    # mode 0 (r = 0) and mode 2 (vmux + vdelta of two slices): lane j of output slice s is
    # input channel dpos + 32 s + j, read from whichever slice holds it, past the input's
    # last slice included (whole aligned vectors: the next row's memory)
    chans = dpos + 32 * np.arange(nd)[:, None] + lane[None, :]
    return ((chans // 32) * g.d32_stride)[:, None, :] + (units * 32)[None, :, None] \
        + (chans % 32)[:, None, :]


def split_d32_part(ctx: KernelContext, x: Tensor, dpos: int, d0: int) -> Tensor:
    """One part as the HVX loop leaves it: the rows of every output slice written as whole
    vectors over the width units [w_before & ~3, ...) that cover the data, everything else
    (height padding rows, width units outside those vectors) left holding the fill byte."""
    b, h, w, _ = x.shape
    p, g = x.padding, x.geometry
    pad = D32Padding(p.h_before, p.h_after, p.w_before, p.w_after, 0, -d0 % 32)
    og = D32Geometry((b, h, w, d0), pad)
    w0 = p.w_before & ~3
    units = w0 + np.arange(4 * ((w + (p.w_before & 3) + 3) // 4))
    lanes = _lane_offsets(g, dpos, d0, units)                    # (nd, units, 32)
    rows = (np.arange(b)[:, None] * g.batch_stride
            + (np.arange(h)[None, :] + p.h_before) * g.row_stride)
    src_off = rows[:, :, None, None, None] + lanes[None, None]
    src = np.asarray(x.raw).reshape(-1)
    inside = src_off < src.size
    values = np.where(inside, src[np.minimum(src_off, src.size - 1)], ctx.padding_fill)
    mem = np.full(og.memory_shape, ctx.padding_fill, np.uint8)
    mem[:, p.h_before:p.h_before + h, :, units[0]:units[-1] + 1, :] = values
    if not inside.all():
        ctx.warn(f"QuantizedSplit_8_d32: the part at depth {dpos} reads past the input's "
                 "buffer (whole vectors); those padding bytes hold the fill byte")
    return Tensor(og.shape, DType.QUINT8, mem.reshape(-1), Layout.D32, pad)


def split_8_d32_reference(ctx: KernelContext, axis: Tensor, x: Tensor, x_min: Tensor,
                          x_max: Tensor) -> tuple[np.ndarray | None, ...]:
    """the real input cut into equal parts along depth."""
    n = max(1, ctx.n_outputs - 2)
    return (*split_array(ctx, real(x, x_min, x_max), 3, n), None, None)


@op("QuantizedSplit_8_d32", Category.D32,
    reference=split_8_d32_reference, d32_output=True,
    inputs=(Port("axis", DType.INT32), Port("x", DType.QUINT8, layout=Layout.D32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32)),
    outputs=(Repeat((Port("y", DType.QUINT8, layout=Layout.D32),), min=2),
             Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def quantized_split_8_d32(ctx: KernelContext, axis: Tensor, x: Tensor, x_min: Tensor,
                          x_max: Tensor) -> tuple[Tensor, ...]:
    """Cuts a d32 quint8 tensor into N equal parts along depth (QuantizedSplit_8's d32 form).

    Semantics (``op_chanshuffle_d32.c``, ``split_d32_execute`` and
    ``common_chanshuffle_split_d32_execute`` with k = 1): N is the output count minus 2 (at
    least 2). The axis must be 3 (-1), or inputs 0 and 1 wired to the same output. Each part
    keeps the input's height and width paddings, no depth-before padding, depth-after up to
    a multiple of 32. The output range is [fminf(0, min), max] (the flat op copies the
    input's min unchanged).

    Fidelity: byte-exact, padding included, against nnlib's HVX k = 1 loop
    (``channelshuf_d32_k1_template``) under QEMU 7.2's Hexagon v66 emulation (tests/oracle/
    hvx, 300 cases: 121 run, 179 errors, docs/oracle-hvx.md; QEMU is an emulator, not a
    device). The logical values equal QuantizedSplit_8's. The padding follows the loop's
    whole-vector stores: every real row of every output slice is written over the width
    vectors that cover the data (so the width padding inside those vectors holds the input's
    bytes at the same places); a part starting inside a slice (depth offset r = dpos % 32)
    takes lanes past its depth from the input's next channels (``vmux`` + ``vdelta``: the
    next slice, past the input's last slice the next row's memory), or, when r <= 32 - depth
    (alignment mode 1, one ``vror`` of 128 bytes), from the next width unit's channels. The
    height padding rows and the width units outside those vectors are never written: they
    hold the session's fill byte, as do bytes read past the input's buffer (with a warning).
    The x86 oracle checks what nnlib decides in C: part shapes, padding amounts and every
    error (400 of 400 cases, tests/oracle/py/campaigns_d32ops26.py).

    Errors, as nnlib raises them: "split dimension out of range"; "split_d32 must be on dim
    3"; "bad split_d32 parms: can't divide D by N"; "channelshuf input #1 has nonzero
    depth_before padding"; "failed to allocate channelshuf output #k" when part k exceeds
    its declared size.
    """
    require_d32(x, "input 1")
    n = max(1, ctx.n_outputs - 2)
    d0 = split_d32_depth(ctx, axis, x, n)
    p = x.padding
    pad = D32Padding(p.h_before, p.h_after, p.w_before, p.w_after, 0, -d0 % 32)
    size = D32Geometry((*x.shape[:3], d0), pad).elements
    for k in range(n):
        output_fits(ctx, k, size, f"part {k} {(*x.shape[:3], d0)} with d32 padding "
                    f"{tuple(pad)}", d32_output=True,
                    reason=f"failed to allocate channelshuf output #{k}")
    parts = [split_d32_part(ctx, x, k * d0, d0) for k in range(n)]
    mn = np.fmin(f32(0.0), f32(scalar_f(x_min)))
    return (*parts, f32_scalar(float(mn)), f32_scalar(scalar_f(x_max)))
