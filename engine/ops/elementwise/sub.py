"""QuantizedSub_8p8to8: the flat quantized subtraction, which nnlib only runs in d32 form
(op_add.c ``qsub_reject``; prepare.c ``depth32_replacement_op``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

#: the d32 op prepare puts in its place (with a Convert_to_d32 per input and a
#: Convert_from_d32 after it)
SUB_D32 = "QuantizedSub_8p8to8_d32"


def sub_reference(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor, a_max: Tensor,
                  b_min: Tensor, b_max: Tensor, *out_range: Tensor) -> tuple[np.ndarray, ...]:
    """a - b of the dequantized inputs (broadcast)."""
    return ranged(real(a, a_min, a_max) - real(b, b_min, b_max))


@op("QuantizedSub_8p8to8", Category.ELEMENTWISE, reference=sub_reference,
    inputs=(Port("a", DType.QUINT8), Port("b", DType.QUINT8), Port("a_min", DType.FLOAT32),
            Port("a_max", DType.FLOAT32), Port("b_min", DType.FLOAT32),
            Port("b_max", DType.FLOAT32), Port("out_min", DType.FLOAT32, optional=True),
            Port("out_max", DType.FLOAT32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def quantized_sub_8p8to8(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor,
                         a_max: Tensor, b_min: Tensor, b_max: Tensor,
                         *out_range: Tensor) -> tuple[np.ndarray, ...]:
    """a - b of two quint8 tensors; runs as QuantizedSub_8p8to8_d32 after prepare.

    Semantics: nnlib has no flat subtraction. Its prepare always replaces this node
    (``depth32_replacement_op``: "this op is currently not supported in non-d32") by
    QuantizedSub_8p8to8_d32 under the same id, with a Convert_to_d32 on each data input
    and a Convert_from_d32 after it; the prepared view shows that rewrite and the d32 op
    computes the result (quantized-ops spec §16, adaptive range, inputs 6 and 7 fix its
    ends).

    Fidelity: exact with nnlib's flat op, which refuses to run: its check is
    ``qsub_reject`` (op_add.c), so a graph run as authored (no prepare rewrites) stops here
    as the library would if the rewrite were disabled for the node.

    Errors: "non d32 sub not supported" when the node is run as authored.
    """
    raise KernelError("non d32 sub not supported (nnlib's prepare runs it as "
                      f"{SUB_D32}; this node was not rewritten)")
