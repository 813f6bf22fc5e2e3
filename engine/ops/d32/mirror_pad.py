"""MirrorPad_8_d32: mirror padding of a d32 tensor in height and width (``op_mirrorpad_d32.c``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, output_fits, require_d32
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.shape.pad import mirror_pad, pad_pairs, padded_shape
from hexscope.engine.ops.shape.params import int_words
from hexscope.engine.tensor import Shape, Tensor


def mirror_d32_pads(ctx: KernelContext, x: Tensor, paddings: Tensor) -> tuple[list[int], Shape]:
    """The checks of ``mirrorpad_execute`` (d32): as MirrorPad_8's, and no batch or depth
    padding."""
    if ctx.padding not in (Padding.MIRROR_REFLECT, Padding.MIRROR_SYMMETRIC):
        raise KernelError(f"bad mirror pad type: padding {ctx.padding.name}, expected "
                          "MIRROR_REFLECT or MIRROR_SYMMETRIC")
    if paddings.shape[3] != 2:
        raise KernelError(f"bad pad tensor: the paddings {paddings.describe()} must have depth 2")
    rows = min(paddings.shape[2], 4)
    words = int_words(paddings, 2 * rows, "the paddings")
    if any(p < 0 for p in words):
        raise KernelError(f"pad bad tensor: negative pad in {words}")
    pads = words + [0] * (8 - 2 * rows)
    shape = padded_shape(x.shape, pads)
    if paddings.shape[2] != 4:
        raise KernelError(f"bad pad shape: the paddings {paddings.describe()} must be 4x2")
    if pads[0] or pads[1]:
        raise KernelError(f"Can't pad batches: batch pads {pads[:2]}")
    if pads[6] or pads[7]:
        raise KernelError(f"Can't pad depth: depth pads {pads[6:]}")
    for i, name in ((1, "height"), (2, "width")):
        for p in pads[2 * i:2 * i + 2]:
            if p >= x.shape[i]:
                raise KernelError(f"{name} too small ({p}>={x.shape[i]}): a mirror pad must "
                                  "be smaller than the dimension")
    return pads, shape


def output_padding(x: Tensor, shape: Shape) -> D32Padding:
    """The input's height padding and width-before padding, width-after up to a multiple of
    4, no depth-before, depth-after up to a multiple of 32."""
    p = x.padding
    return D32Padding(p.h_before, p.h_after, p.w_before, -(shape[2] + p.w_before) % 4, 0,
                      -shape[3] % 32)


def mirror_pad_d32_memory(ctx: KernelContext, x: Tensor, pads: list[int], shape: Shape,
                          reflect: bool) -> Tensor:
    """The output buffer as ``do_mirrorpad`` writes it: whole 32-byte lanes of the input's
    first ceil(D/32) slices copied row by row, mirrored in width, then above, then below,
    every other byte left with the session's fill byte.

    Matches device: ``outp_post_h`` is set once, before the batch loop, and only advanced
    by one slice row per slice, so batch b mirrors its bottom rows at batch 0's bottom rows
    shifted down by b rows (its own stay unwritten); the row copies are replayed in order.
    """
    pad = output_padding(x, shape)
    og, ig = D32Geometry(shape, pad), x.geometry
    b_in, h_in, w_in, _ = x.shape
    pre_h, post_h, pre_w, post_w = pads[2:6]
    nd32 = -(-shape[3] // 32)
    src = np.asarray(x.raw).reshape(ig.memory_shape)
    ip = x.padding
    core = src[:, ip.h_before:ip.h_before + h_in, :nd32, ip.w_before:ip.w_before + w_in, :]
    width = [(0, 0), (pre_h, 0), (0, 0), (pre_w, post_w), (0, 0)]
    upper = mirror_pad(core, width, reflect) if pre_h or pre_w or post_w else core
    mem = np.full(og.elements, ctx.padding_fill, np.uint8)
    view = mem.reshape(og.memory_shape)
    w_out = shape[2]
    row, lane = og.row_stride, og.d32_stride
    start = pad.h_before * row + pad.w_before * 32 + (pre_h + h_in) * row
    step = 1 if reflect else 0
    for b in range(b_in):
        view[b, pad.h_before:pad.h_before + pre_h + h_in, :nd32,
             pad.w_before:pad.w_before + w_out] = upper[b]
        for d in range(post_h and nd32):
            at = start + (b * nd32 + d) * lane
            for i in range(post_h):
                dst, frm = at + i * row, at - (1 + step + i) * row
                if dst + w_out * 32 > mem.size or frm < 0:
                    raise KernelError("the bottom mirror rows of a later batch fall outside "
                                      "the output buffer (nnlib does not reset their "
                                      "pointer per batch)")
                mem[dst:dst + w_out * 32] = mem[frm:frm + w_out * 32]
    return Tensor(shape, DType.QUINT8, mem, Layout.D32, pad)


def mirror_pad_8_d32_reference(ctx: KernelContext, x: Tensor, paddings: Tensor, x_min: Tensor,
                               x_max: Tensor) -> tuple[np.ndarray, ...]:
    """the real input mirrored into its pads (on the logical tensor)."""
    pads, _ = mirror_d32_pads(ctx, x, paddings)
    return ranged(mirror_pad(real(x, x_min, x_max), pad_pairs(pads),
                             ctx.padding is Padding.MIRROR_REFLECT))


@op("MirrorPad_8_d32", Category.D32,
    reference=mirror_pad_8_d32_reference, uses_padding=True,
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("paddings", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def mirror_pad_8_d32(ctx: KernelContext, x: Tensor, paddings: Tensor, x_min: Tensor,
                     x_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Mirror-pads a d32 quint8 tensor in height and width (MirrorPad_8's d32 form).

    Semantics (``op_mirrorpad_d32.c``): as MirrorPad_8 (MIRROR_REFLECT or MIRROR_SYMMETRIC
    from the node's padding, a 4x2 int32 ``paddings``, each pad smaller than its dimension),
    but batches and depth may not be padded. The output keeps the input's height padding and
    width-before padding; width-after up to a multiple of 4, no depth-before, depth-after up
    to a multiple of 32. min/max pass through.

    Fidelity: byte-exact with nnlib's op run as C in the oracle (``tests/oracle``), every byte
    of the output buffer compared: nnlib moves whole 32-byte lanes, so an input's depth
    padding lanes (and, with depth-before padding, its shifted channels) travel with the
    data; bytes outside the valid rows, columns and slices keep the session's fill byte.
    nnlib's bottom-mirror pointer is not reset per batch (``do_mirrorpad``: ``outp_post_h``
    is set before the batch loop), so with more than one batch and a bottom pad, batch b's
    bottom rows are written at batch 0's shifted down by b rows, and its own stay unwritten:
    reproduced (the logical values of those batches are then not a mirror image).
    nnlib declares no d32-output flag for this op, so its output's declared size is not
    widened for d32 (a size declared as the logical shape is usually too small). nnlib's
    prepare would substitute this op for MirrorPad_8 fed from d32, but it reads the pads from
    input 3 (the max), so in practice it does not.

    Errors, as nnlib raises them: "bad mirror pad type"; "bad pad tensor"; "pad bad tensor";
    "padded size overflow"; "bad pad shape"; "Can't pad batches"; "Can't pad depth";
    "height/width too small (p>=n)"; "output too small" past the declared size.
    """
    require_d32(x)
    pads, shape = mirror_d32_pads(ctx, x, paddings)
    pad = output_padding(x, shape)
    output_fits(ctx, 0, D32Geometry(shape, pad).elements,
                f"padded {shape} with d32 padding {tuple(pad)}", reason="output too small")
    y = mirror_pad_d32_memory(ctx, x, pads, shape, ctx.padding is Padding.MIRROR_REFLECT)
    return y, x_min.copy(), x_max.copy()
