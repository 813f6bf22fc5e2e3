"""QuantizedPad_8 and MirrorPad_8: constant and mirror padding (op_pad.c, op_mirrorpad.c)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import rndi1
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, data_of, output_fits, scalar_f, scalar_i
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.ops.shape.params import MAX_DIM, element_count_sat, int_words
from hexscope.engine.tensor import Shape, Tensor, fresh

f32 = np.float32
_NAMES = ("batches", "height", "width", "depth")


def _pad_rows(paddings: Tensor) -> tuple[int, list[int]]:
    """The [n, 2] pads tensor: its row count (capped at 4, as the library reads it) and the
    2n words; "bad pad tensor" unless its depth is 2, "pad bad tensor" on a negative pad."""
    if paddings.shape[3] != 2:
        raise KernelError(f"bad pad tensor: the paddings {paddings.describe()} must have "
                          "depth 2 (pad before, pad after)")
    rows = min(paddings.shape[2], 4)
    words = int_words(paddings, 2 * rows, "the paddings")
    bad = [p for p in words if p < 0]
    if bad:
        raise KernelError(f"pad bad tensor: negative pad {bad[0]} in {words}")
    return rows, words


def padded_shape(shape: Shape, pads: list[int]) -> Shape:
    """``shape`` grown by ``pads`` (before, after per dimension, B,H,W,D); "padded size
    overflow" past 0x7FFFFFFF per dimension, on an empty result or a 32-bit byte count."""
    out = tuple(n + pads[2 * i] + pads[2 * i + 1] for i, n in enumerate(shape))
    count = element_count_sat(out)
    if max(out) > MAX_DIM or count in (0, 0xFFFFFFFF):
        raise KernelError(f"padded size overflow: {shape} padded by {pads} gives {out}")
    return out  # type: ignore[return-value]


def pad_value_code(value: float, mn: float, mx: float, check: bool) -> int:
    """The quint8 code of the pad value: sat_u8(roundf_i32(255 (v - min) / (max - min))) in
    float32; -inf/+inf give 0/255; a code below -2 or above 257 fails (rounding leeway)."""
    v, lo, hi = f32(value), f32(mn), f32(mx)
    if check and (v < lo or v > hi):
        raise KernelError(f"Pad value ({float(v):f}) is outside the range of inputs "
                          f"({float(lo):f},{float(hi):f})")
    if np.isinf(v):
        return 0 if v < 0 else 255
    with np.errstate(all="ignore"):
        code = rndi1(f32(f32(f32(255.0) * f32(v - lo)) / f32(hi - lo)))
    if code < -2 or code > 257:
        raise KernelError(f"Pad value outside the range of inputs: {float(v)!r} in "
                          f"[{float(lo)!r}, {float(hi)!r}] is code {code}")
    return min(max(code, 0), 255)


def constant_pad(x: np.ndarray, pads: list[int], fill: float | int, shape: Shape) -> np.ndarray:
    """``x`` placed inside a ``shape`` array of ``fill`` at the before-pads."""
    y = np.full(shape, fill, x.dtype)
    b, h, w, d = x.shape
    b0, h0, w0, d0 = pads[0::2]
    y[b0:b0 + b, h0:h0 + h, w0:w0 + w, d0:d0 + d] = x
    return y


def _const_pads(ctx: KernelContext, x: Tensor, paddings: Tensor) -> tuple[list[int], Shape]:
    rows, words = _pad_rows(paddings)
    # Fewer than 4 rows pad the last dimensions (the library back-fills them).
    pads = [0] * (8 - 2 * rows) + words
    shape = padded_shape(x.shape, pads)
    output_fits(ctx, 0, int(np.prod(shape)), f"padded {shape}")
    return pads, shape


def pad_8_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                    paddings: Tensor, *options: Tensor) -> tuple[np.ndarray, ...]:
    """the real input surrounded by the real pad value."""
    pads, shape = _const_pads(ctx, x, paddings)
    value = scalar_f(options[0]) if options else 0.0
    return ranged(constant_pad(real(x, x_min, x_max), pads, f32(value), shape))


@op("QuantizedPad_8", Category.PLUMBING,
    reference=pad_8_reference,
    inputs=(Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32),
            Port("paddings", DType.INT32), Port("pad_value", DType.FLOAT32, optional=True),
            Port("check_range", DType.INT32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def quantized_pad_8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                    paddings: Tensor, *options: Tensor) -> tuple[np.ndarray, Tensor, Tensor]:
    """Pads a quint8 tensor with a constant (by default the real value 0); min/max pass through.

    Semantics (``op_pad.c``, ``pad_q_execute``): ``paddings`` is an [n, 2] int32 tensor of
    (before, after) rows, n <= 4 (rows past the 4th are ignored); fewer than 4 rows pad the
    last dimensions, so [[1, 1], [2, 2]] pads width by 1 and depth by 2. The pad value is the
    real ``pad_value`` (default 0.0) quantized in float32 as
    sat_u8(roundf_i32(255 (v - min) / (max - min))); -inf and +inf give codes 0 and 255.

    Fidelity: byte-exact with nnlib's plain op (its copy and fill loops run as C in the oracle,
    ``tests/oracle``): data, min and max, 300+ cases in ``tests/data/oracle/QuantizedPad_8.json``.

    Errors, as nnlib raises them: "bad pad tensor" (paddings depth not 2); "pad bad tensor" (a
    negative pad); "padded size overflow" (a padded dimension past 0x7FFFFFFF, or an empty
    result); "Pad value outside the range of inputs" (a code below -2 or above 257); with
    ``check_range`` non-zero, a pad value outside [min, max]; "out too small" when the padded
    tensor exceeds the output's declared size.
    """
    value = scalar_f(options[0]) if options else 0.0
    check = len(options) > 1 and scalar_i(options[1]) != 0
    code = pad_value_code(value, scalar_f(x_min), scalar_f(x_max), check)
    pads, shape = _const_pads(ctx, x, paddings)
    y = constant_pad(data_of(x, "the input"), pads, code, shape)
    return fresh(y), x_min.copy(), x_max.copy()


def _mirror_pads(ctx: KernelContext, x: Tensor, paddings: Tensor) -> tuple[list[int], Shape]:
    if ctx.padding not in (Padding.MIRROR_REFLECT, Padding.MIRROR_SYMMETRIC):
        raise KernelError(f"bad mirror pad type: padding {ctx.padding.name}, expected "
                          "MIRROR_REFLECT or MIRROR_SYMMETRIC")
    rows, words = _pad_rows(paddings)
    # Unlike QuantizedPad_8, the rows are read from the first dimension (no back-fill)...
    pads = words + [0] * (8 - 2 * rows)
    shape = padded_shape(x.shape, pads)
    if paddings.shape[2] != 4:      # ...but the op then needs exactly 4 rows anyway
        raise KernelError(f"bad pad shape: the paddings {paddings.describe()} must be 4x2")
    for i, name in enumerate(_NAMES):
        for p in pads[2 * i:2 * i + 2]:
            if p >= x.shape[i]:
                raise KernelError(f"{name} too small ({p}>={x.shape[i]}): a mirror pad must "
                                  f"be smaller than the dimension")
    output_fits(ctx, 0, int(np.prod(shape)), f"padded {shape}")
    return pads, shape


def mirror_pad(x: np.ndarray, width: list[tuple[int, int]], reflect: bool) -> np.ndarray:
    """``x`` mirrored into its pads, (before, after) per axis (the edge repeated if not
    ``reflect``)."""
    return np.pad(x, width, mode="reflect" if reflect else "symmetric")


def pad_pairs(pads: list[int]) -> list[tuple[int, int]]:
    """(before, after) per dimension from the flat list of 8."""
    return [(pads[2 * i], pads[2 * i + 1]) for i in range(4)]


def mirror_pad_8_reference(ctx: KernelContext, x: Tensor, paddings: Tensor, x_min: Tensor,
                           x_max: Tensor) -> tuple[np.ndarray, ...]:
    """the real input mirrored into its pads."""
    pads, _ = _mirror_pads(ctx, x, paddings)
    return ranged(mirror_pad(real(x, x_min, x_max), pad_pairs(pads),
                             ctx.padding is Padding.MIRROR_REFLECT))


@op("MirrorPad_8", Category.PLUMBING,
    reference=mirror_pad_8_reference, uses_padding=True,
    inputs=(Port("x", DType.QUINT8), Port("paddings", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def mirror_pad_8(ctx: KernelContext, x: Tensor, paddings: Tensor, x_min: Tensor,
                 x_max: Tensor) -> tuple[np.ndarray, Tensor, Tensor]:
    """Pads a quint8 tensor with its own mirror image; min/max pass through.

    Semantics (``op_mirrorpad.c``): the node's padding field picks the mode: MIRROR_REFLECT
    mirrors around the edge element (1 2 3 -> 3 2 | 1 2 3 | 2 1), MIRROR_SYMMETRIC repeats it
    (2 1 | 1 2 3 | 3 2). ``paddings`` is a 4x2 int32 tensor of (before, after) per dimension
    B, H, W, D; every pad must be smaller than its dimension (in both modes).

    Fidelity: byte-exact with nnlib's op run as C in the oracle (``tests/oracle``): data,
    min and max, 300+ cases in ``tests/data/oracle/MirrorPad_8.json``.

    Errors, as nnlib raises them: "bad mirror pad type" (another padding); "bad pad tensor"
    (depth not 2); "pad bad tensor" (a negative pad); "padded size overflow"; "bad pad shape"
    (not 4 rows); "<dimension> too small (p>=n)" (a pad not smaller than its dimension); "out
    too small" when the result exceeds the output's declared size.
    """
    pads, _ = _mirror_pads(ctx, x, paddings)
    y = mirror_pad(data_of(x, "the input"), pad_pairs(pads),
                   ctx.padding is Padding.MIRROR_REFLECT)
    return fresh(np.ascontiguousarray(y)), x_min.copy(), x_max.copy()
