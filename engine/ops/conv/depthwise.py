"""QuantizedDepthwiseConv2d_8x8to32: the depthwise convolution into qint32 sums, after nnlib's
plain-C ``depthwiseconv2d_execute_ref`` (hexagon/ops/src/op_depthwiseconv.c), which both
names run; the sums come from :mod:`hexscope.engine.ops.kernels.depthwise` (numba).
Prepare fuses its chain into a DepthwiseSupernode (:mod:`depthwise_supernode`), whose float
meaning is here too.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, data_of, scalar_f
from hexscope.engine.ops.conv.common import CONV_IN, f32_output
from hexscope.engine.ops.conv.conv2d import (
    CONV_ZERO_CODES,
    RANGE_OUT,
    conv_scalars,
    output_window,
    qint32_tensor,
    warn_inexact,
)
from hexscope.engine.ops.conv.supernode import bias_clamp_reference
from hexscope.engine.ops.kernels.depthwise import depthwise_sums
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, op
from hexscope.engine.tensor import Tensor


def dwise_windows(ctx: KernelContext, x: Tensor, filt: Tensor, stride: Tensor
             ) -> tuple[Window, Window]:
    """The rows' and columns' windows, after the C's checks (in its order)."""
    _, h, w, cin = x.shape
    fh, fw, fdin, _ = filt.shape
    if cin != fdin:
        raise KernelError(f"input depth {cin} differs from the filter's depth {fdin} (filter "
                          f"{list(filt.shape)} is [FH,FW,depth,multiplier]; device: 'oops, "
                          "depth != depth')")
    sb, sh, sw, sd = stride.shape
    if sb != 1 or sd != 1:
        raise KernelError(f"stride tensor must have shape [1,SH,SW,1], got {list(stride.shape)} "
                          "(device: 'bad stride batch' / 'bad stride depth')")
    if sh < 1 or sw < 1:
        raise KernelError(f"stride {sh}x{sw} has a zero dimension; the device divides by zero")
    return output_window(h, fh, sh, ctx.padding), output_window(w, fw, sw, ctx.padding)


def quantized_depthwiseconv2d_8x8to32(ctx: KernelContext, x: Tensor, filt: Tensor,
                                      x_min: Tensor, x_max: Tensor, f_min: Tensor,
                                      f_max: Tensor, stride: Tensor
                                      ) -> tuple[Tensor, Tensor, Tensor]:
    """Depthwise 2-D convolution of quint8 data with a quint8 filter into qint32 sums.

    **Semantics.** x is [B,H,W,C]; the filter is [FH,FW,C,M] (M the depth multiplier, in
    the filter's batches field); the stride is the SHAPE [1,SH,SW,1] of input 6. The output
    is [B,OH,OW,C*M], channel c*M + m from input channel c and multiplier m, with OH, OW and
    the padding before from the node's padding mode (quantized-ops spec §1.7). Each output
    is sum (x - zx)(w - zf) over the taps inside the image (taps in the padding are
    skipped), in int32 with wrap-around (§1.3); zx and zf are ``quantize_int`` zero codes
    (not clamped, as Conv2d's). Outputs 1 and 2 are ±f32(2**31 * lx * lf), l the ranges'
    steps (max - min) / 255.

    **Fidelity.** Bit for bit with nnlib's ``depthwiseconv2d_execute_ref`` (the only code
    either name runs) in the host oracle: campaign QuantizedDepthwiseConv2d_8x8to32
    (docs/oracle-conv.md). A zero code from an out-of-range conversion is unconfirmed
    (§1.6; a warning is shown).

    **Errors** (KernelError): the input depth differs from the filter's; a stride tensor
    with batches or depth != 1; a stride of 0 (the device divides by zero).
    """
    rows, cols = dwise_windows(ctx, x, filt, stride)
    zx, ok_x, zf, ok_f, y_min, y_max = conv_scalars(scalar_f(x_min), scalar_f(x_max),
                                                    scalar_f(f_min), scalar_f(f_max))
    warn_inexact(ctx, "input", ok_x)
    warn_inexact(ctx, "filter", ok_f)
    sums = depthwise_sums(data_of(x, "input x"), data_of(filt, "filter"), zx, zf, rows.s,
                          cols.s, rows.before, cols.before, rows.out, cols.out)
    return qint32_tensor(sums.shape, sums), f32_output(y_min), f32_output(y_max)


def depthwise_reference(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                        x_max: Tensor, f_min: Tensor, f_max: Tensor,
                        stride: Tensor) -> tuple[np.ndarray, ...]:
    """the float depthwise convolution of the dequantized data and filter (same padding and
    stride; taps in the padding add nothing)."""
    rows, cols = dwise_windows(ctx, x, filt, stride)
    xs = real(x, x_min, x_max, np.float64)
    ws = real(filt, f_min, f_max, np.float64)
    nb, h, w, c = xs.shape
    fh, fw, _, m = ws.shape
    out = np.zeros((nb, rows.out, cols.out, c, m))
    ys = np.arange(rows.out) * rows.s - rows.before
    xs_ = np.arange(cols.out) * cols.s - cols.before
    for fy in range(fh):                     # a loop over the taps; each a pass over pixels
        yok = (ys + fy >= 0) & (ys + fy < h)
        for fx in range(fw):
            xok = (xs_ + fx >= 0) & (xs_ + fx < w)
            if not yok.any() or not xok.any():
                continue
            tap = xs[:, np.clip(ys + fy, 0, h - 1)][:, :, np.clip(xs_ + fx, 0, w - 1)]
            tap = tap * (yok[None, :, None, None] & xok[None, None, :, None])
            out += tap[..., None] * ws[fy, fx]
    return ranged(out.reshape(nb, rows.out, cols.out, c * m))


for _name in ("QuantizedDepthwiseConv2d_8x8to32", "QuantizedDepthwiseConv2d_8x8to32_ref"):
    op(_name, Category.MATH, reference=depthwise_reference, zero_codes=CONV_ZERO_CODES,
       inputs=CONV_IN, outputs=RANGE_OUT, uses_padding=True)(quantized_depthwiseconv2d_8x8to32)


def depthwise_supernode_reference(ctx: KernelContext, x: Tensor, filt: Tensor,
                                  x_min: Tensor, x_max: Tensor, f_min: Tensor, f_max: Tensor,
                                  stride: Tensor, bias: Tensor, b_min: Tensor, b_max: Tensor,
                                  o_min: Tensor, o_max: Tensor, *channel_scale: Tensor
                                  ) -> tuple[np.ndarray, ...]:
    """the float depthwise convolution, times the per-channel scales if given, plus the
    dequantized bias (8-bit codes, or int32 values in steps of range / 2**32), clamped to the
    finite bounds of the output range."""
    y = np.asarray(depthwise_reference(ctx, x, filt, x_min, x_max, f_min, f_max, stride)[0])
    if channel_scale and channel_scale[0].has_data:
        scales = np.asarray(channel_scale[0].array, np.float64).reshape(-1)
        y = y * (scales if scales.size == y.shape[-1] else scales[0])
    if bias.dtype is DType.QUINT8:
        b = real(bias, b_min, b_max, np.float64)
    else:
        b = np.asarray(bias.array, np.float64) * ((scalar_f(b_max) - scalar_f(b_min)) / 2.0**32)
    return bias_clamp_reference(y.astype(np.float32), b.astype(np.float32), o_min, o_max)
