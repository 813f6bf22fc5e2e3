"""Supernode_8x8p32to8: the convolution Supernode with a 32-bit bias, what TFLite's Hexagon
delegate makes of every CONV_2D (tensorflow/lite/delegates/hexagon/builders/conv_2d_builder.cc,
``BuildStandardConv``), simulated after nnlib's plain-C ``supernode_execute_ref``
(hexagon/ops/src/op_supernode.c, its ``is_bias32`` branch).

It shares everything but the bias with Supernode_8x8p8to8 (:mod:`supernode`): the sums, the
range search that widens a free bound and keeps it in the node, and the requantization.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.conv.common import CONV_IN, range_ports
from hexscope.engine.ops.conv.conv2d import SUPERNODE_ZERO_CODES, conv2d_reals
from hexscope.engine.ops.conv.supernode import (
    CHANNEL_SCALE,
    SUPERNODE_OUT,
    bias_clamp_reference,
    run_supernode,
    times_channel_scales,
)
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

SUPERNODE32_IN = (*CONV_IN, Port("bias", DType.QINT32, doc="int32 bias, one per output channel"),
                  *range_ports("bias_min", "bias_max"),
                  *range_ports("out_low", "out_high"),   # not *_min/_max: +-inf is meant
                  CHANNEL_SCALE)


def supernode_8x8p32to8(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                        x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                        bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                        o_max: Tensor, *channel_scale: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Convolution, 32-bit bias and requantization to quint8 in one op (TFLite's CONV_2D).

    **Semantics.** Inputs 0-6 are QuantizedConv2d_8x8to32's (quint8 data and filter, their
    ranges, the stride as a shape), 7 the bias (int32, one value per output channel), 8-9
    its range, 10-11 the output range: ±inf for "find it", 0 for a fused Relu's minimum, a
    ReluX's maximum (the delegate passes the activation's bounds; prepare's Relu folding
    sets the same inputs). Input 12, optional, is the delegate's ChannelScale (per-channel
    int8 weights): ``supernode_check_ref`` ignores it ("it should end up being just a
    scalar [1.0] if the supernode doesn't convert to d32"), and so does this op: prepare
    folds the scales into the weights first (:mod:`hexscope.engine.prepare.channelscale`,
    nnlib's ``handle_channelscaled_supernode``) and leaves 1.0 here.

    The bias b counts steps of (bias max - bias min) / 2**32 with no zero code: in steps of
    the sums (data step x filter step) it is round_even(float32(b) * bias step / sum step).
    The rest is Supernode_8x8p8to8's: sums over the taps inside the image (padding before
    from the output size, as the C's ``nn_pad_compute_before(out_width, ...)``), a free
    output bound starting at 1/128 (max) or -max (min) and doubled, the node run again,
    while the sums do not fit (kept in the node for later runs), and
    out = clamp((int32(s + bias + offset) * recip + 2**15) >> 16, 0, 255).

    **Fidelity.** Bit for bit with nnlib's ``Supernode_8x8p32to8_ref`` (the plain-C twin)
    in the host oracle: campaign Supernode_8x8p32to8 (docs/oracle-conv.md). On the device
    prepare makes it Supernode_8x8p32to8_d32 or InputSupernode_8x8p32to8_outd32, as
    Hexscope's prepare does (their values are this op's; their HVX requantization, range
    search and per-channel scales are not visible to the oracle: unconfirmed on hardware);
    only an input depth <= 4 with an odd stride width above 1 stays flat, run by
    ``supernode_execute_hvx`` (its "Batch size > 1 not supported with odd in depth" is not
    applied here: unconfirmed on the device).

    **Errors** (KernelError): data or filter not quint8, a bias not int32; input depth
    differs from the filter's; a bad stride tensor; fewer bias values than output channels;
    an output range under half a step of the sums (the device divides by zero).
    """
    return run_supernode(ctx, x, filt, x_min, x_max, f_min, f_max, stride, bias, b_min, b_max,
                         o_min, o_max, bias32=True)


def supernode32_reference(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                          x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                          bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                          o_max: Tensor, *channel_scale: Tensor) -> tuple[np.ndarray, ...]:
    """the float convolution, times the per-channel scales if given, plus the bias
    (b x range / 2**32), clamped to the finite bounds of the output range (a Relu's 0, a
    ReluX's maximum)."""
    y = conv2d_reals(ctx, x, filt, x_min, x_max, f_min, f_max, stride, precise=False)
    step = (scalar_f(b_max) - scalar_f(b_min)) / 2.0**32
    b = (np.asarray(bias.array, np.float64) * step).astype(np.float32)
    return bias_clamp_reference(times_channel_scales(y, channel_scale), b, o_min, o_max)


for _name in ("Supernode_8x8p32to8", "Supernode_8x8p32to8_ref"):
    op(_name, Category.MATH, reference=supernode32_reference, inputs=SUPERNODE32_IN,
       zero_codes=SUPERNODE_ZERO_CODES,
       outputs=SUPERNODE_OUT, uses_padding=True)(supernode_8x8p32to8)
