"""QuantizedPad_8_d32: constant padding of a d32 tensor (``op_pad_d32.c``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import rndi1
from hexscope.engine.ops.context import (
    KernelContext,
    f32_scalar,
    output_fits,
    require_d32,
    scalar_f,
    scalar_i,
)
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.shape.pad import constant_pad
from hexscope.engine.ops.shape.params import MAX_DIM, int_words
from hexscope.engine.tensor import Shape, Tensor

f32 = np.float32


def d32_pads(x: Tensor, paddings: Tensor) -> tuple[list[int], Shape]:
    """``pad32_build_strategy``: [rank, 2] pads (rank 1..4, the last dimensions), none on
    depth; the padded shape."""
    rank = paddings.shape[2]
    if not 1 <= rank <= 4 or paddings.shape[3] != 2 or paddings.nbytes < 8 * rank:
        raise KernelError(f"bad shape for dims tensor: {paddings.describe()} must be [n, 2] "
                          "int32 with n in 1..4")
    words = int_words(paddings, 2 * rank, "the paddings")
    if any(p < 0 for p in words):
        raise KernelError(f"negative value in pads tensor: {words}")
    pads = [0] * (8 - 2 * rank) + words
    shape = tuple(n + pads[2 * i] + pads[2 * i + 1] for i, n in enumerate(x.shape))
    if max(shape) > MAX_DIM:
        raise KernelError(f"overflow in pad dimension: {x.shape} padded by {pads}")
    if pads[6] or pads[7]:
        raise KernelError(f"can't pad in depth dimension: depth pads {pads[6:]}")
    if int(np.prod(shape)) >= 0x80000000:
        raise KernelError(f"insanely large padded size (>=2GB): {shape}")
    return pads, shape  # type: ignore[return-value]


def pad_word(value: float, mn: float, mx: float, check: bool) -> int:
    """``pad32_setup_scaling``: sat_u8(roundf_i32((v - min) 255 / (max - min))) in float32,
    with no failure outside the range (nnlib only logs it); -inf/+inf give 0/255."""
    v, lo, hi = f32(value), f32(mn), f32(mx)
    if check and (v < lo or v > hi):
        raise KernelError(f"Pad value ({float(v):f}) is outside the range of inputs "
                          f"({float(lo):f},{float(hi):f})")
    if np.isinf(v):
        return 0 if v < 0 else 255
    with np.errstate(all="ignore"):
        code = rndi1(f32(f32(f32(v - lo) * f32(255.0)) / f32(hi - lo)))
    return min(max(code, 0), 255)


def _rows(buf: np.ndarray, start: int, width: int, rows: int, stride: int) -> np.ndarray:
    """A view of ``rows`` rows of ``width`` bytes of ``buf``, ``stride`` apart; KernelError
    where they would leave the buffer."""
    end = start + (rows - 1) * stride + width
    if rows and (start < 0 or end > buf.size):
        raise KernelError(f"the d32 pad would touch bytes {start}..{end} of a "
                          f"{buf.size}-byte buffer")
    return np.lib.stride_tricks.as_strided(buf[start:], (rows, width), (stride, 1))


def output_padding(shape: Shape) -> D32Padding:
    """4/4 in height, 4 before in width and up to a multiple of 4 after, none before in
    depth and up to a multiple of 32 after."""
    return D32Padding(4, 4, 4, -(shape[2] + 4) % 4, 0, -shape[3] % 32)


def pad_d32_memory(ctx: KernelContext, x: Tensor, pads: list[int], shape: Shape,
                   code: int) -> Tensor:
    """The output buffer as ``pad32_execute`` writes it: padding 4/4 in height, 4 before in
    width (and up to a multiple of 4 after), none before in depth; the core copied as whole
    32-byte lanes row by row, the pads filled, and every byte nnlib leaves alone holding the
    session's fill byte."""
    b_out, h_out, w_out, d = shape
    pad = output_padding(shape)
    og, ig = D32Geometry(shape, pad), x.geometry
    mem = np.full(og.elements, ctx.padding_fill, np.uint8)
    src = np.asarray(x.raw).reshape(-1)
    _, h_in, w_in, _ = x.shape
    nd32 = -(-d // 32)
    o_row, i_row = og.d32_stride, ig.d32_stride
    o_data = 4 * og.row_stride + 4 * 32
    i_data = x.padding.h_before * ig.row_stride + x.padding.w_before * 32
    core = w_out * 32
    hb, ha, wb, wa = pads[2:6]
    for ob in range(b_out):
        base = o_data + ob * og.batch_stride
        ib = ob - pads[0]
        if not 0 <= ib < x.shape[0]:
            mem[base:base + core + (h_out * nd32 - 1) * o_row] = code
            continue
        if hb:
            mem[base:base + core + (nd32 * hb - 1) * o_row] = code
            base += o_row * nd32 * hb
        if ha:
            after = base + o_row * nd32 * h_in
            mem[after:after + core + (nd32 * ha - 1) * o_row] = code
        rows = nd32 * h_in
        _rows(mem, base + wb * 32, w_in * 32, rows, o_row)[...] = _rows(
            src, i_data + ib * ig.batch_stride, w_in * 32, rows, i_row)
        if wb:
            _rows(mem, base, wb * 32, rows, o_row)[...] = code
        if wa:
            _rows(mem, base + (wb + w_in) * 32, wa * 32, rows, o_row)[...] = code
    return Tensor(shape, DType.QUINT8, mem, Layout.D32, pad)


def pad_8_d32_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                        paddings: Tensor, *options: Tensor) -> tuple[np.ndarray, ...]:
    """the real input surrounded by the real pad value (on the logical tensors)."""
    pads, shape = d32_pads(x, paddings)
    value = scalar_f(options[0]) if options else 0.0
    return ranged(constant_pad(real(x, x_min, x_max), pads, f32(value), shape))


@op("QuantizedPad_8_d32", Category.D32,
    reference=pad_8_d32_reference, d32_output=True,
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32), Port("paddings", DType.INT32),
            Port("pad_value", DType.FLOAT32, optional=True),
            Port("check_range", DType.INT32, optional=True)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def quantized_pad_8_d32(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                        paddings: Tensor, *options: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Pads a d32 quint8 tensor in batches, height and width with a constant (QuantizedPad_8's
    d32 form, which nnlib's prepare substitutes when the input is d32 and no depth is padded).

    Semantics (``op_pad_d32.c``): ``paddings`` is [n, 2] int32, n = 1..4 rows for the last
    dimensions; depth may not be padded. The pad value is quantized as in QuantizedPad_8,
    but a code outside -2..257 only saturates (nnlib logs it). The output has d32 padding
    4/4 in height, 4 before in width and up to a multiple of 4 after, no depth-before and
    depth-after up to a multiple of 32.

    Fidelity: byte-exact with nnlib's op run as C in the oracle (``tests/oracle``), padding
    included: the core rows are copied as whole 32-byte lanes from the input's rows (so an
    input with depth-before padding, or another slice count, moves its bytes as they lie:
    its padding lanes land in the output), the pad rows are filled as contiguous spans (the
    width padding between rows too), and every other byte keeps the session's fill byte.
    300+ cases in ``tests/data/oracle/QuantizedPad_8_d32.json``. min and max are the input's.

    Errors, as nnlib raises them: "bad shape for dims tensor"; "negative value in pads
    tensor"; "overflow in pad dimension"; "can't pad in depth dimension"; "insanely large
    padded size"; "output too small" when the padded d32 tensor exceeds the output's
    declared size; with ``check_range`` non-zero, a pad value outside [min, max].
    """
    require_d32(x)
    pads, shape = d32_pads(x, paddings)
    value = scalar_f(options[0]) if options else 0.0
    check = len(options) > 1 and scalar_i(options[1]) != 0
    mn, mx = scalar_f(x_min), scalar_f(x_max)
    if not np.prod(shape):
        # nnlib's fill lengths go negative (simulator's choice: fail, not garbage)
        raise KernelError(f"the padded shape {shape} is empty")
    pad = output_padding(shape)
    output_fits(ctx, 0, D32Geometry(shape, pad).elements,
                f"padded {shape} with d32 padding {tuple(pad)}", d32_output=True,
                reason="output too small")
    # nnlib sizes the output before it quantizes the pad value (pad32_setup_scaling)
    code = pad_word(value, mn, mx, check)
    return pad_d32_memory(ctx, x, pads, shape, code), f32_scalar(mn), f32_scalar(mx)
