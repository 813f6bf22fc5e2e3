"""QuantizedTransposeConv2d_8x8p32to8 (nnlib ``op_transpose_conv.c``), the TFLite Hexagon
delegate's TRANSPOSE_CONV.

In nnlib the op has no arithmetic of its own: its ``execute`` returns without writing, and
prepare replaces every such node by a sub-graph (``expand_transpose_conv_nodes.c``), as
Hexscope's prepare does (``engine/prepare/transpose_conv.py``). What runs is the expansion;
the op's kernel only meets the nodes prepare leaves (the forms Hexscope does not expand), and
refuses them.
"""

from __future__ import annotations

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.reference import NoReference
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

_F32, _I32 = DType.FLOAT32, DType.INT32


@op(
    "QuantizedTransposeConv2d_8x8p32to8", Category.MATH,
    reference=NoReference("prepare expands the op into a sub-graph (expand_transpose_conv_"
                          "nodes.c) whose nodes have their own references; it never runs"),
    uses_padding=True,
    inputs=(Port("x", DType.QUINT8), Port("filter", DType.QUINT8), Port("x_min", _F32),
            Port("x_max", _F32), Port("filter_min", _F32), Port("filter_max", _F32),
            Port("pad", _I32), Port("stride", None, shape_only=True), Port("bias", DType.QINT32),
            Port("bias_min", _F32), Port("bias_max", _F32), Port("out_min", _F32),
            Port("out_max", _F32), Port("channel_scale", _F32, optional=True),
            Port("groups", _I32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", _F32), Port("y_max", _F32)))
def quantized_transpose_conv2d_8x8p32to8(ctx: KernelContext, *inputs: Tensor) -> tuple:
    """Transposed convolution of quint8 data to quint8 (prepare expands it into a convolution).

    Filters [N,fh,fw,D] quint8, a qint32 bias, the output in a given range.

    Semantics (nnlib ``expand_transpose_conv_nodes.c``, for facts): inputs 0-5 are the data,
    the filter (batches = output channels N, then height, width, input depth) and their
    ranges; 6 the paddings [top, bottom, left, right] (int32 Const); 7 the strides (a shape
    [1, sh, sw, 1]); 8-10 the qint32 bias and its range; 11-12 the output range; 13 an
    optional per-channel scale; 14 the optional number of groups. Prepare rewrites the node
    as a QuantizedPad_8 (r-1 rows, s-1 columns each side; r x s the sub-filter size), a
    QuantizedConv2d_8x8to32 (VALID, stride 1) on the filter padded to multiples of the
    strides, split space-to-batch into sh x sw sub-filters and rotated 180 degrees
    (``process_transpose_conv_filter``), a QuantizedBiasAdd_32p32to32 (the bias once per
    sub-filter) and a Requantize_32to8 into inputs 11-12, then, for a stride above 1, a
    DepthToSpace_8 that crops to the output size. Prepare's Supernode fusion then makes the
    convolution chain one Supernode_8x8p32to8; the node's own ``execute`` does nothing.

    Fidelity: the expansion is Hexscope's prepare (``engine/prepare/transpose_conv.py``),
    checked on hand vectors and against the exact integer transposed convolution
    (TFLite's reference scatter form) for strides 1-3; each op it makes is byte-exact with
    nnlib's C (docs/oracle-conv.md). Where the stride width is 2, 3, 4 or 8 the library pads
    N to a multiple of 32 and crops the depth back in DepthToSpace_8_d32 (a 5th crop value),
    as Hexscope's prepare does; run as authored (no d32 conversion), DepthToSpace_8 and a
    QuantizedSlice_8 of the first N channels (the same bytes). With a ChannelScale the
    library's chain has a QuantizedChannelScale_32xf that its fusion takes into the
    Supernode: Hexscope writes the 13-input Supernode directly.
    Not expanded (the node fails as not simulated, with a prepare note): groups > 1 and the
    depthwise forms (subkernels, channel multiplier 2).

    Errors: validation checks the 13 to 15 inputs and their types; prepare fails naming the
    node when the filter, its range, the paddings, the stride, the bias or its range is not
    a Const, or a stride is below 1 ("Bad strides"); at stride 1 a padding past the filter
    wraps in the library's uint32 arithmetic and QuantizedPad_8 refuses it ("pad bad
    tensor").

    Only a node prepare did not expand reaches this kernel, which refuses it.
    """
    groups = inputs[14].array.reshape(-1).view("int32")[0] if len(inputs) > 14 else 1
    raise KernelError(f"not simulated: Hexscope's prepare expands a transpose convolution "
                      f"without groups only (this one has {groups} groups; the library splits "
                      "it per group or runs it depthwise)")
