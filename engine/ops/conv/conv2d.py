"""Quantized convolution into qint32 (quantized-ops spec §2), and the rules it shares with
MatMul and BiasAdd (:mod:`matmul`): zero codes, level sizes, the product range.

The integer sums are exact (see :mod:`kernels.gemm`); the ranges are evaluated in
float32 in the library's order. Conv2d's ``_ref`` twin runs the same code.
"""

from __future__ import annotations

import functools

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import c_roundf_int1, exact_memo, za_scaled
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, data_of, scalar_f
from hexscope.engine.ops.conv.common import (
    CONV_IN,
    centred_input,
    f32_output,
    f32_word,
    filter_rhs,
    filter_winograd,
)
from hexscope.engine.ops.conv.common import range_ports as range_ports  # re-exported
from hexscope.engine.ops.kernels import gemm, winograd
from hexscope.engine.ops.kernels.code_bounds import Span, note
from hexscope.engine.ops.kernels.float_conv import float_conv2d
from hexscope.engine.ops.kernels.gemm import Rhs, Window, conv_gemm, im2col, offset_gemm, wrap32
from hexscope.engine.ops.reference import ZeroCode, ranged, real, zero_za, zero_za_u8
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_U8, _F32 = DType.QUINT8, DType.FLOAT32
RANGE_OUT = (Port("y", DType.QINT32), Port("y_min", _F32), Port("y_max", _F32))
#: the zero codes Conv2d and the depthwise convolution subtract from data and filter (ZA')
CONV_ZERO_CODES = (ZeroCode(0, 2, 3, zero_za), ZeroCode(1, 4, 5, zero_za))
#: the Supernodes' (ZA, saturated: quantize_uint8)
SUPERNODE_ZERO_CODES = (ZeroCode(0, 2, 3, zero_za_u8), ZeroCode(1, 4, 5, zero_za_u8))


# shared rules --------------------------------------------------------------------------------

def zero_code(mn: float, mx: float, clamp: str = "u8") -> tuple[int, bool]:
    """The code of 0.0 in (mn, mx): ``quantize_uint8`` / ``quantize_int`` / ``quantize_uint``.

    ``clamp`` is "u8" (rule ZA, saturate to 0..255), "none" (ZA', Conv2d) or "low" (ZA'',
    clamped below at 0; BiasAdd's bias), quantized-ops spec §1.4. Returns (code, exact);
    ``exact`` is False when the float was out of int32 range or NaN, where the device's
    float-to-int conversion is unconfirmed (§1.6, §23 item 4): the project's convention
    (:mod:`hexscope.engine.hexmath`) saturates and gives -1 for NaN.
    """
    z = za_scaled(0.0, mn, mx)
    exact = bool(np.isfinite(z)) and -2.0**31 <= float(z) < 2.0**31
    code = c_roundf_int1(z)
    if clamp == "u8":
        code = min(255, max(0, code))
    elif clamp == "low":
        code = max(0, code)
    return code, exact


def level_size(mn: float, mx: float) -> np.float32:
    """``(max - min) / 255`` in float32, as Conv2d, MatMul and BiasAdd write it."""
    with np.errstate(all="ignore"):
        return f32(f32(f32(mx) - f32(mn)) / f32(255.0))


def product_range(lx: np.float32, lw: np.float32) -> tuple[np.float32, np.float32]:
    """(out_min, out_max) = ±2**31 * lx * lw in float32 (§2 output range)."""
    with np.errstate(all="ignore"):
        step = f32(lx * lw)
        return f32(f32(-2.0**31) * step), f32(f32(2.0**31) * step)


@functools.lru_cache(maxsize=1024)
def output_window(n: int, f: int, s: int, padding: Padding) -> Window:
    """Output size and padding before for one dimension (quantized-ops spec §1.7).

    As ``nn_pad_compute_outsize_padding`` (nnlib nn_graph_padding.h): where the output is
    empty the padding before is 0 too. That matters to callers that pass an *output* size
    as ``n`` (the Supernode's ``nn_pad_compute_before(out_width, ...)``): NA padding with
    ``n`` below the stride pads nothing.

    Cached: a pure function of its arguments, and a Window is immutable."""
    if padding is Padding.VALID:
        return Window(n, f, s, (n - f) // s + 1 if n >= f else 0, 0)
    if padding in (Padding.SAME, Padding.SAME_CAFFE):
        out = (n + s - 1) // s
    elif padding is Padding.NA:
        out = n // s if n >= s else 0
    else:
        return Window(n, f, s, 0, 0)     # MIRROR_*: out size 0 (unconfirmed downstream)
    total = (out - 1) * s - (n - f)
    if out == 0 or total <= 0:
        return Window(n, f, s, out, 0)
    before = (total + 1) // 2 if padding is Padding.SAME_CAFFE else total // 2
    return Window(n, f, s, out, before)


def qint32_tensor(shape: tuple[int, ...], values: np.ndarray) -> Tensor:
    """A qint32 tensor over ``values`` without a copy (they are fresh and contiguous)."""
    return Tensor.from_array(fresh(np.ascontiguousarray(values, dtype=np.int32)
                                   .reshape(shape)), DType.QINT32)


def warn_inexact(ctx: KernelContext, what: str, exact: bool) -> None:
    if not exact:
        ctx.warn(f"{what} range gives a zero code outside int32 (or NaN); the device's "
                 "float-to-int conversion is unconfirmed, saturation assumed (spec §1.6)")


# QuantizedConv2d_8x8to32 ------------------------------------------------------------------------

def quantized_conv2d_8x8to32(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                             x_max: Tensor, f_min: Tensor, f_max: Tensor,
                             stride: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """2-D convolution of quint8 data with a quint8 filter into qint32 sums.

    Quantized-ops spec §2. x is [B,H,W,Cin]; the filter is [FH,FW,Cin,Cout], stored in the
    batches/height/width/depth fields (hexagon_nn's HWIO order); the stride comes from the
    SHAPE [1,SH,SW,1] of input 6. The output is [B,OH,OW,Cout], with OH, OW and the padding
    from the node's padding mode by §1.7 (SAME, SAME_CAFFE, VALID and NA are accepted; VALID
    with FH > H gives an empty output; MIRROR_* gives size 0).

    Each output is sum (x - zx)(w - zf) over the taps inside the image (taps in the padding
    are skipped), accumulated in int32 with wrap-around (§1.3, assumed). zx and zf are
    ``quantize_int`` zero codes (ZA', §1.4), not clamped: improper ranges (min > 0) give
    codes outside 0..255 and are computed as the device does. The sums are exact for every
    input (an int16 x int16 -> int32 kernel where the processor has AVX2; elsewhere float32
    GEMM on offset codes in K chunks bounded by the filter's own values, and F(2,3) along
    the rows for 3-row filters at row stride 1; see ``igemm``, ``gemm`` and ``winograd``).

    Outputs 1 and 2 are min and max (the code's order; the seed list says max, min):
    ±f32(2**31 * f32(lx * lf)) with l = f32((max - min) / 255). A min == max range gives
    [-0.0, 0.0] and a zero code from an out-of-range conversion (unconfirmed, §1.6; a
    warning is shown).

    Errors (KernelError): Cin of x differs from the filter's ("oops, depth != depth" on the
    device); stride tensor with batches or depth != 1; a stride of 0 (the device divides by
    zero).
    """
    b, h, w, cin = x.shape
    fh, fw, fdin, cout = filt.shape
    if cin != fdin:
        raise KernelError(f"input depth {cin} differs from the filter's input depth {fdin} "
                          f"(filter {fh}x{fw}x{fdin}x{cout}; device: 'oops, depth != depth')")
    sb, sh, sw, sd = stride.shape
    if sb != 1 or sd != 1:
        raise KernelError(f"stride tensor must have shape [1,SH,SW,1], got {list(stride.shape)} "
                          "(device: 'bad stride batch' / 'bad stride depth')")
    if sh < 1 or sw < 1:
        raise KernelError(f"stride {sh}x{sw} has a zero dimension; the device divides by zero")
    zx, ok_x, zf, ok_f, y_min, y_max = conv_scalars(scalar_f(x_min), scalar_f(x_max),
                                                    scalar_f(f_min), scalar_f(f_max))
    warn_inexact(ctx, "input", ok_x)
    warn_inexact(ctx, "filter", ok_f)
    rows, cols = output_window(h, fh, sh, ctx.padding), output_window(w, fw, sw, ctx.padding)
    if ctx.debug_level >= 2:
        ctx.log(2, f"conv2d {b}x{h}x{w}x{cin} * {fh}x{fw}x{fdin}x{cout} stride {sh}x{sw} "
                   f"pad {ctx.padding.name} -> {b}x{rows.out}x{cols.out}x{cout}; zx={zx} zf={zf}")
    data = data_of(x, "input x")
    rhs = filter_rhs(ctx, filt, zf)
    # F(2,3) saves a third of the products of float32 BLAS; the integer kernel does twice
    # the products per instruction and beats it without the transforms (bench/README.md).
    wrhs = filter_winograd(ctx, filt, rhs.zero) \
        if rhs.zero == zf and winograd.applies(rows) \
        and gemm.patch_dtype() is np.float32 else None
    span = Span()
    out = conv_sums(data, rhs, rows, cols, zx, zf, centred_input(x, rows, cols), wrhs, span)
    y = qint32_tensor((b, rows.out, cols.out, cout), out)
    note(y.raw, span)               # for the requantize that usually follows
    return y, f32_output(y_min), f32_output(y_max)


@exact_memo
def conv_scalars(xmn: float, xmx: float, fmn: float, fmx: float
                 ) -> tuple[int, bool, int, bool, np.ndarray, np.ndarray]:
    """(zx, exact_x, zf, exact_f, y_min, y_max) of Conv2d's ranges (§1.4 ZA', §2); y_min
    and y_max as read-only one-element float32 arrays (for :meth:`Tensor.scalar_of`).

    Memoised on the exact bits of the four range values: the network's ranges repeat from
    run to run, and this scalar maths (numpy float32 steps) cost ~40 us per call."""
    zx, ok_x = zero_code(xmn, xmx, "none")
    zf, ok_f = zero_code(fmn, fmx, "none")
    y_min, y_max = product_range(level_size(xmn, xmx), level_size(fmn, fmx))
    return zx, ok_x, zf, ok_f, f32_word(y_min), f32_word(y_max)


def conv_sums(x: np.ndarray, rhs: Rhs, rows: Window, cols: Window, zx: int, zf: int,
              centred: np.ndarray | None = None,
              wrhs: winograd.WinogradRhs | None = None, span: Span | None = None
              ) -> np.ndarray:
    """int32 (B*OH*OW, Cout): sums of (x - zx)(w - zf) over the taps inside the image.

    ``centred`` may give x - 128 (B*H*W, C) for a 1x1 convolution; ``wrhs`` the
    filter transformed for F(2,3) along the rows (same sums, a third fewer products);
    ``span`` takes the sums' min and max on the fast paths (it stays empty otherwise)."""
    b, cout = x.shape[0], rhs.n
    if rows.out == 0 or cols.out == 0 or b == 0:
        return np.zeros((0, cout), np.int32)
    a, c = gemm.CENTER - zx, rhs.zero - zf
    padded = rows.before or cols.before or rows.after or cols.after
    if 0 <= zx <= 255 or not padded:
        # Padding taps read zx, so (x - zx) is 0 there: the same as skipping them.
        if wrhs is not None and c == 0 and winograd.applies(rows):
            return winograd.winograd_conv(x, rows, cols, zx if padded else 0, wrhs,
                                           rhs.offsets(a, 0), span)
        return conv_gemm(x, rows, cols, zx if padded else 0, rhs, a, c, centred, span)
    # zx outside 0..255 cannot be stored as a pad code: pad with 128 (centred 0) and take
    # the padding taps' share a * sum (w - zf) back out with a 0/1 mask of padding taps.
    # (int16 at least: the mask's 128 below is not an int8)
    dtype = np.int16 if gemm.patch_dtype() is np.int8 else None
    total = offset_gemm(im2col(x, rows, cols, gemm.CENTER, dtype), rhs, a, c)
    mask = im2col(np.zeros(x.shape, np.uint8), rows, cols, 1, dtype)
    mask += mask.dtype.type(gemm.CENTER)
    return total - offset_gemm(mask, rhs, 0, c) * np.int32(wrap32(a))


def conv2d_reference(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                     x_max: Tensor, f_min: Tensor, f_max: Tensor,
                     stride: Tensor, *, precise: bool | None = None) -> tuple[np.ndarray, ...]:
    """the float convolution of the dequantized data and filter (same padding and stride)."""
    return ranged(conv2d_reals(ctx, x, filt, x_min, x_max, f_min, f_max, stride,
                               precise=precise))


def conv2d_reals(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor, x_max: Tensor,
                 f_min: Tensor, f_max: Tensor, stride: Tensor, *,
                 precise: bool | None = None) -> np.ndarray:
    """:func:`conv2d_reference`'s values, without their range (the Supernode's takes it
    after its bias and clamp)."""
    # float32 GEMMs: 8-bit data and weights are exact in float32; the sums carry ~1e-7
    # relative error, far below an 8-bit output's LSB. The 32-bit output's LSB is the data
    # step times the filter step: where the data are the run's own codes (the isolated
    # analysis) the quantized sums are exact and only the reference's rounding shows, so it
    # takes the float forms that round no more than the direct one
    if precise is None:
        precise = x.dtype is not _F32
    xs = real(x, x_min, x_max, np.float32)
    w = real(filt, f_min, f_max, np.float32)
    fh, fw, _, _ = filt.shape
    rows = output_window(x.shape[1], fh, stride.shape[1], ctx.padding)
    cols = output_window(x.shape[2], fw, stride.shape[2], ctx.padding)
    # zero padding: taps outside the image add nothing, as in the quantized kernel
    return float_conv2d(xs, w, rows, cols, precise)


for _name in ("QuantizedConv2d_8x8to32", "QuantizedConv2d_8x8to32_ref"):
    op(_name, Category.MATH,
       reference=conv2d_reference, zero_codes=CONV_ZERO_CODES, inputs=CONV_IN,
       outputs=RANGE_OUT, uses_padding=True)(quantized_conv2d_8x8to32)
