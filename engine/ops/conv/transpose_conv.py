"""QuantizedTransposeConv2d_8x8p32to8 (nnlib ``op_transpose_conv.c``), the TFLite Hexagon
delegate's TRANSPOSE_CONV.

In nnlib the op has no arithmetic of its own: its ``execute`` returns without writing, and
prepare replaces every such node by a sub-graph (``expand_transpose_conv_nodes.c``). Until
Hexscope's prepare performs that expansion the op is declared without a kernel: it validates,
shows in the palette and fails a run as "not simulated" rather than guessing.
"""

from __future__ import annotations

from hexscope.engine.dtypes import DType
from hexscope.engine.ops.reference import NoReference
from hexscope.engine.ops.registry import Category, Port, declare_op

_F32, _I32 = DType.FLOAT32, DType.INT32

declare_op(
    "QuantizedTransposeConv2d_8x8p32to8", Category.MATH,
    reference=NoReference("prepare expands the op into a sub-graph (expand_transpose_conv_"
                          "nodes.c) that Hexscope does not build yet; the op is not simulated"),
    uses_padding=True,
    inputs=(Port("x", DType.QUINT8), Port("filter", DType.QUINT8), Port("x_min", _F32),
            Port("x_max", _F32), Port("filter_min", _F32), Port("filter_max", _F32),
            Port("pad", _I32), Port("stride", None, shape_only=True), Port("bias", DType.QINT32),
            Port("bias_min", _F32), Port("bias_max", _F32), Port("out_min", _F32),
            Port("out_max", _F32), Port("channel_scale", _F32, optional=True),
            Port("groups", _I32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", _F32), Port("y_max", _F32)),
    doc="""Transposed convolution of quint8 data to quint8 (not simulated yet: prepare expands it).

    Filters [N,fh,fw,D] quint8, a qint32 bias, the output in a given range.

    Semantics (nnlib ``expand_transpose_conv_nodes.c``, for facts): inputs 0-5 are the data,
    the filter (batches = output channels N, then height, width, input depth) and their
    ranges; 6 the paddings [top, bottom, left, right] (int32 Const); 7 the strides (a shape
    [1, sh, sw, 1]); 8-10 the qint32 bias and its range; 11-12 the output range; 13 an
    optional per-channel scale; 14 the optional number of groups. Prepare rewrites the node
    as a Pad, then per group (or per stride sub-kernel for depthwise) a
    QuantizedConv2d_8x8to32 on re-arranged filters (``process_transpose_conv_filter``), a
    QuantizedBiasAdd_32p32to32 and a Requantize_32to8 into inputs 11-12, then a
    DepthToSpace_8 with cropping and a concat; the node's own ``execute`` does nothing.

    Fidelity: not simulated. Hexscope's prepare does not expand the node yet (the sub-graph
    needs QuantizedPad_8, DepthToSpace_8 and the filter re-arrangement), so a run stops at
    this node with "not simulated"; no output is guessed.

    Errors: validation checks the 13 to 15 inputs and their types.""")
