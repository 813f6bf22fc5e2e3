"""DepthwiseSupernode_8x8p8to8 / _8x8p32to8: the depthwise convolution chain as one op, what
TFLite's Hexagon delegate makes of every DEPTHWISE_CONV_2D. nnlib's flat op only refuses to
run ("Non-D32 supernode not supported"); prepare turns it into its d32 form
(hexagon/ops/src/op_dwise_snode_8bit.c), which is what this simulates: the C set-up
(:mod:`dwise_scaling`), the exact sums of QuantizedDepthwiseConv2d_8x8to32 (numba), and the
HVX requantization as its C model writes it (:mod:`hexscope.engine.ops.kernels.dwise_requant`).

This module declares the two flat ops; their run is :mod:`dwise_range_search` (with
:mod:`dwise_setup`, :mod:`dwise_reads` and :mod:`dwise_asm_quirks`), the d32 form's
:mod:`dwise_d32` (declared in :mod:`supernode_d32`).
"""

from __future__ import annotations

from hexscope.engine.dtypes import DType
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.common import CONV_IN, range_ports
from hexscope.engine.ops.conv.depthwise import depthwise_supernode_reference
from hexscope.engine.ops.conv.dwise_range_search import depthwise_supernode
from hexscope.engine.ops.conv.supernode import CHANNEL_SCALE, SUPERNODE_OUT
from hexscope.engine.ops.reference import ZeroCode, zero_za_low, zero_za_u8, zero_zb
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

_DOC = """A depthwise convolution, bias and requantization to quint8 in one op ({bias}).

**Semantics.** Inputs 0-6 are QuantizedDepthwiseConv2d_8x8to32's (filter [FH,FW,C,1]), 7 the
bias ({bias}, one per channel; missing values count as zero), 8-9 its range, 10-11 the
output range (±inf: found at run time; a Relu's 0, a ReluX's or Clamp's bounds), 12
(optional) the delegate's per-channel scales k (each in [1/2048, 1]; a single 1.0 means
none). As nnlib's ``dwise_supernode_check`` and ``fill_info_minmax_basics`` (float32
throughout): zx, the input's ``get_qu8_level_size_zero`` zero code, zf = quantize_uint8(0)
of the filter range, s the exact depthwise sum of (x - zx)(w - zf) (padding taps add
nothing), a free output bound starting at ∓0.125 (a first gain over 1.75 widens it), the
gain g = data step x filter step / output step, shamt = 0 if g <= 1 else frexp exponent,
recip = round(g k 2**(31-shamt)); the bias folded as ``fill_bias_buf`` does,
B = round((bias in sum steps - out_min / sum step) / k); then, as the HVX kernel's C model
(``dwconv2dbbb_MxN_cn``), v = ((s + B) << shamt) x recip + 2**30 >> 31, code =
clamp(v, 0, 255). Where v leaves 0..255 at a free bound, that bound moves to the next
quarter octave past the extreme (``round_up_quarter_octave``), the range is nudged to a
proper zero and the node runs again, at most 4 times; the range stays in the node for
later runs, as on the device. An output range without 0 or with min >= max, which
``setup_initial_output_range`` refuses but ``dwise_supernode_check`` runs anyway
(op_dwise_snode_8bit.c:860), starts from [0, 0] with both ends free (shamt & 31: the
asm's shift of a NaN gain's 129 is 1). Its float meaning (the reference Compare uses): the
depthwise convolution of the dequantized data and filter, times each channel's scale,
plus the bias, clamped to the finite output bounds.

**Fidelity.** The set-up (zero codes, steps, multipliers, bias buffer, range growth) is
nnlib's C read line by line (op_dwise_snode_8bit.c, supernode_utils.h); the sums are
QuantizedDepthwiseConv2d_8x8to32's (oracle-exact, docs/oracle-conv.md). The device runs
the requantization in HVX assembly (hexagon/asm_src/dwconv2dbbb_s1_3x3_h.S and its
siblings), which the host oracle cannot run: its rounding follows the C model
hexagon/asm_ref/dwconv2dbbb_c.c (``sum <<= recip_shift; lsum = sum * recip + 0x40000000
>> 31``), and ``fast_i64_roundf`` of the bias buffer is read as Hexagon's convert_sf2d
(round half to even): both unconfirmed on the device. The 3x3 kernels' padding columns,
which the device also computes and counts in its range search, belong to the d32 form
nnlib runs (DepthwiseSupernode_*_d32 models them, checked under qemu-hexagon,
docs/oracle-hvx.md); this flat form has no padding. The integer path (sums, bias buffer,
shift, multiplier, rounding, clamp, min/max) is bit for bit with ``dwconv2dbbb_MxN_cn``
in the host oracle (300/300, golden file dwconv2dbbb_mxn_cn.json); the float set-up is
tested against a float64 formula (docs/oracle-dwise.md).

**Errors** (KernelError): data or filter not quint8; input depth differs from the filter's;
a bad stride tensor; filter width over 7, not 3/5/7, or stride width not 1 or 2 (no device
kernel); filter height under 2; depth multiplier not 1; a channel-scale input of the wrong
size or a scale outside [1/2048, 1]; a
non-finite input range; a bias beyond int32 in steps of the sums ('Final too big'); no
range found after 4 retries ("can't find range for depthwise")."""

_IN8 = (*CONV_IN, Port("bias", DType.QUINT8), *range_ports("bias_min", "bias_max"),
        *range_ports("out_low", "out_high"), CHANNEL_SCALE)
_IN32 = (*CONV_IN, Port("bias", DType.QINT32), *range_ports("bias_min", "bias_max"),
         *range_ports("out_low", "out_high"), CHANNEL_SCALE)


def depthwise_supernode_8x8p8to8(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                                 x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                                 bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                                 o_max: Tensor, *channel_scale: Tensor
                                 ) -> tuple[Tensor, Tensor, Tensor]:
    return depthwise_supernode(ctx, x, filt, x_min, x_max, f_min, f_max, stride, bias, b_min,
                               b_max, o_min, o_max, *channel_scale)


def depthwise_supernode_8x8p32to8(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                                  x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                                  bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                                  o_max: Tensor, *channel_scale: Tensor
                                  ) -> tuple[Tensor, Tensor, Tensor]:
    return depthwise_supernode(ctx, x, filt, x_min, x_max, f_min, f_max, stride, bias, b_min,
                               b_max, o_min, o_max, *channel_scale)


depthwise_supernode_8x8p8to8.__doc__ = _DOC.format(bias="8-bit bias")
depthwise_supernode_8x8p32to8.__doc__ = _DOC.format(bias="32-bit bias")
for _name, _inputs, _kernel in (("DepthwiseSupernode_8x8p8to8", _IN8, depthwise_supernode_8x8p8to8),
                                ("DepthwiseSupernode_8x8p32to8", _IN32,
                                 depthwise_supernode_8x8p32to8)):
    # data: rule ZB (fill_info_minmax_basics), filter: ZA, an 8-bit bias: ZA''
    op(_name, Category.MATH, reference=depthwise_supernode_reference, uses_padding=True,
       zero_codes=(ZeroCode(0, 2, 3, zero_zb), ZeroCode(1, 4, 5, zero_za_u8),
                   *((ZeroCode(7, 8, 9, zero_za_low),) if _inputs is _IN8 else ())),
       inputs=_inputs, outputs=SUPERNODE_OUT)(_kernel)
