"""DepthToSpace_8_d32: depth moved into pixel blocks on d32 tensors (``op_depthspace_d32.c``,
``depthspace_d32_execute`` and its plan ``setup_x2s_plan``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, output_fits, require_d32
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.shape.depthspace import depth_to_space_array
from hexscope.engine.ops.shape.params import int_words
from hexscope.engine.tensor import Shape, Tensor

_MAX = 65535


def d2s_params(block: Tensor, crop: tuple[Tensor, ...]
               ) -> tuple[int, int, tuple[int, int, int, int], int]:
    """``get_d2s_dims``: (bh, bw, (top, bottom, left, right), requested depth or 0)."""
    n = block.shape[3]
    words = int_words(block, min(max(n, 1), 2), "the block size") if block.nbytes >= 4 else []
    if not 1 <= n <= 2 or block.nbytes != 4 * n or not all(1 <= v <= _MAX for v in words):
        raise KernelError(f"bad blocksize tensor: {block.describe()} must hold 1 or 2 int32 "
                          "values in 1..65535")
    bh, bw = words[0], words[-1]
    if not crop:
        return bh, bw, (0, 0, 0, 0), 0
    t = crop[0]
    m = t.shape[3]
    if not 4 <= m <= 5 or t.nbytes != 4 * m:
        raise KernelError(f"Bad crop-descriptor tensor: {t.describe()} must hold 4 or 5 int32 "
                          "values")
    c = int_words(t, m, "the crop tensor")
    for i, v in enumerate(c[:4]):
        if not 0 <= v <= _MAX:
            raise KernelError(f"bad crop element[{i}]= {v}: must be >=0)")
    if m == 5 and c[4] < 0:
        raise KernelError(f"bad depth crop value {c[4]}")
    return bh, bw, (c[0], c[1], c[2], c[3]), c[4] if m == 5 else 0


def d2s_plan(shape: Shape, bh: int, bw: int, crop: tuple[int, int, int, int], req: int
             ) -> tuple[Shape, D32Padding, int]:
    """``setup_x2s_plan``'s checks, the output shape and padding, and the uncropped depth."""
    b, h, w, d = shape
    prod = min(bh * bw, 2**32 - 1)
    od = d // prod
    if od < 1 or od * prod != d:
        raise KernelError(f"block shape does not divide input depth: {d} by {bh}x{bw}")
    if od % 32 and (od != 16 or bw != 2):
        raise KernelError(f"limitation: output depth {od} not valid (must be a multiple of 32 "
                          "(or exactly 16, for bsw=2)")
    if bw > 4 and bw != 8:
        raise KernelError("limitation: blocksize <= 4 or blocksize = 8 in width direction")
    if req > 0 and (req > od or req + 31 < od):
        raise KernelError(f"can't crop output depth {od} to {req}")
    top, bottom, left, right = crop
    oh, ow = h * bh - top - bottom, w * bw - left - right
    if oh < 1 or ow < 1:
        raise KernelError(f"cropping leaves no output: {h * bh}x{w * bw} cropped by {crop}")
    depth = req or od
    hp = 1 if oh == 1 else 4
    return (b, oh, ow, depth), D32Padding(hp, hp, 4, -ow & 3, 0, -depth & 31), od


def _stale_from(bw: int, x: Tensor, crop: tuple[int, int, int, int], ow: int) -> int:
    """The first output unit that the width-interleave loops (bw 2..4) build from data they
    did not read. ``setup_x2s_plan`` sets ``wunit_v_at_end`` to -1 when one output vector
    remains and the input read so far covers the width: that vector is then aligned out of
    the previous group's interleave (``outv[0] = vlalign(lo(result), prevout)`` with a stale
    ``result``), so its units past the data read hold the columns 4 x bw to their left."""
    wpad = x.padding.w_before & 3
    need, left = x.shape[2], crop[2]
    if left >= bw:
        n = left // bw
        left -= n * bw
        wpad = (wpad + n) & 3
        need -= n
    if crop[3] >= bw:
        need -= crop[3] // bw
    discard = bw * wpad + left
    vecs = (discard >> 2) + (1 if discard & 3 else 0)
    remain = max((ow + 3) // 4 + vecs - bw, 0)
    loops, remain = divmod(remain, bw)
    if remain != 1 or 4 - wpad + 4 * loops < need:
        return 1 << 30                  # every stored unit was read
    return 4 * bw * (1 + loops) - discard


def d2s_d32_memory(ctx: KernelContext, x: Tensor, bh: int, bw: int,
                   crop: tuple[int, int, int, int], out: Shape, pad: D32Padding, od: int
                   ) -> Tensor:
    """The output as the width-interleave loops leave it: every real row, every output
    slice, the vectors from width 0 up to the next multiple of 4 written (for bw = 1 the
    output width exactly). Addressed as
    ``setup_x2s_plan`` does: full-resolution row R starts R ``input_wunit_stride`` (the
    d32 stride x output slices x bw; x 1 for a 16-deep output) after the input's first
    element, block column i a further i x output slices d32 strides (16 lanes for a
    16-deep output), then column C / bw and the lane (from lane 0 of the slice: depth-before
    padding is read as it lies). With no depth-before padding this is
    channel (R % bh bw + C % bw) od + 32 s + c of pixel (R / bh, C / bw); a column past the
    input width reads its width padding and on, as whole vector loads do."""
    b, oh, ow, _ = out
    og, g, p = D32Geometry(out, pad), x.geometry, x.padding
    nd = og.n_slices
    # bw = 1 is one 2-D memcpy of exactly the output width (width_interleave_1_loop), and so
    # is bw = 8's copy out of its intermediate buffer (width_interleave_8_loop's
    # vmemcpy_2d_asm of output width x 32 bytes); the other widths store whole 4-unit vectors
    units = ow if bw in (1, 8) else 4 * ((ow + 3) // 4)
    rows = crop[0] + np.arange(oh)
    cols = crop[2] + np.arange(units)
    if bw not in (1, 8):
        cols = np.where(np.arange(units) >= _stale_from(bw, x, crop, ow), cols - 4 * bw, cols)
    lane = np.arange(32)
    slices = np.arange(nd)
    # the first real pixel's slice 0, lane 0: depth-before padding is read as it lies
    first = p.h_before * g.row_stride + p.w_before * 32
    half = od == 16                     # bw = 2: both block columns share one input slice
    wunit = g.d32_stride * nd * (1 if half else bw)
    col_of = (cols % bw) * (16 if half else nd * g.d32_stride) + (cols // bw) * 32
    # a 16-deep output's column is its 16 bytes twice (width_interleave_2_to16_loop shuffles
    # the input vector with itself in 16-byte units): lanes 16..31 repeat lanes 0..15
    src_lane = lane % 16 if half else lane
    off = (first + (rows * wunit)[:, None, None, None]
           + (slices * g.d32_stride)[None, :, None, None]
           + col_of[None, None, :, None] + src_lane[None, None, None, :])  # (oh, s, units, 32)
    off = (np.arange(b) * g.batch_stride)[:, None, None, None, None] + off[None]
    src = np.asarray(x.raw).reshape(-1)
    known = (off >= 0) & (off < src.size)
    values = np.where(known, src[np.clip(off, 0, src.size - 1)], ctx.padding_fill)
    mem = np.full(og.memory_shape, ctx.padding_fill, np.uint8)
    mem[:, pad.h_before:pad.h_before + oh, :, 4:4 + units, :] = values
    if not known.all():
        ctx.warn("DepthToSpace_8_d32: the width padding reads past the input's buffer "
                 "(whole vectors); those bytes hold the fill byte")
    return Tensor(out, DType.QUINT8, mem.reshape(-1), Layout.D32, pad)


def depth_to_space_8_d32_reference(ctx: KernelContext, x: Tensor, block: Tensor,
                                   x_min: Tensor, x_max: Tensor,
                                   *crop: Tensor) -> tuple[np.ndarray, ...]:
    """the real input's depth moved into pixel blocks, cropped (and depth-cropped)."""
    bh, bw, c, req = d2s_params(block, crop)
    y = depth_to_space_array(real(x, x_min, x_max), bh, bw, c)
    return ranged(y[..., :req] if req else y)


@op("DepthToSpace_8_d32", Category.D32,
    reference=depth_to_space_8_d32_reference, d32_output=True,
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("block_size", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32),
            Port("crop", DType.INT32, optional=True)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def depth_to_space_8_d32(ctx: KernelContext, x: Tensor, block: Tensor, x_min: Tensor,
                         x_max: Tensor, *crop: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Moves depth into bh x bw pixel blocks of a d32 tensor, then crops (DepthToSpace_8's
    d32 form, which nnlib's prepare substitutes when the depths suit it).

    Semantics (``op_depthspace_d32.c``, ``setup_x2s_plan``): as DepthToSpace_8, with
    ``crop`` [top, bottom, left, right] or [top, bottom, left, right, depth]: a fifth value
    above 0 keeps only that many output channels (at most 31 fewer). The output depth
    D/(bh bw) must be a multiple of 32, or 16 with bw = 2; bw is 1..4 or 8. The output has
    d32 padding 4/4 in height (1/1 for a height of 1), 4 before in width and up to a
    multiple of 4 after, none before in depth and up to a multiple of 32 after. min and max
    are the input's.

    Fidelity: byte-exact, padding included, against nnlib's HVX code under QEMU 7.2's
    Hexagon v66 emulation (tests/oracle/hvx, 600 cases, docs/oracle-hvx.md; QEMU is an
    emulator, not a device); bw = 1 is also byte-exact in the x86 oracle (400 cases). The
    logical values equal DepthToSpace_8's; an input with depth-before padding is read from
    lane 0 of its slices as nnlib's addressing does (the values come out shifted, with a
    warning). The padding: for bw 2..4 every real row of every output slice is written over
    width 0 up to the next multiple of 4, so the width-after padding holds the next
    full-resolution columns (cropped columns, or the input's width padding and the memory
    after it, read as whole vectors), except in a last vector that the loops align out of
    data they did not read (``wunit_v_at_end`` -1): its units past that data hold the
    columns 4 x bw to their left. bw = 1 and bw = 8 write exactly the output width. A
    16-deep output repeats each column's 16 bytes in lanes 16..31. A depth crop leaves the
    cropped channels in the depth padding (whole slices are interleaved). The height padding
    rows and the 4 width-before units are never written (the session's fill byte).

    Errors, as nnlib raises them: "bad blocksize tensor"; "Bad crop-descriptor tensor";
    "bad crop element"; "bad depth crop value"; "block shape does not divide input depth";
    "limitation: output depth ... not valid"; "limitation: blocksize <= 4 or blocksize = 8
    in width direction"; "can't crop output depth"; "cropping leaves no output"; "failed to
    prepare output" when the padded result exceeds the output's declared size.
    """
    require_d32(x)
    bh, bw, c, req = d2s_params(block, crop)
    out, pad, od = d2s_plan(x.shape, bh, bw, c, req)
    output_fits(ctx, 0, D32Geometry(out, pad).elements,
                f"result {out} with d32 padding {tuple(pad)}", d32_output=True,
                reason="failed to prepare output")
    if x.padding.d_before:
        ctx.warn("DepthToSpace_8_d32: the input has depth-before padding; nnlib's addressing "
                 "assumes none (its rows are taken bh x bw x output slices apart): the values "
                 "are shifted as the device's would be")
    y = d2s_d32_memory(ctx, x, bh, bw, c, out, pad, od)
    return y, x_min.copy(), x_max.copy()
