"""A small registry of toy ops for graph, validation and session tests."""

from __future__ import annotations

import numpy as np

from hexscope.engine import ops as _builtin  # noqa: F401  (INPUT/OUTPUT/Nop/Const kernels)
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.ops.registry import REGISTRY, Category, OpRegistry, Port, declare_op, op


def make_registry() -> OpRegistry:
    reg = OpRegistry()
    for name in ("INPUT", "OUTPUT", "Nop", "Const"):
        reg.register(REGISTRY.get(name))

    @op("AddOne_f", Category.USER, registry=reg, user=True,
        inputs=(Port("x", DType.FLOAT32), Port("bias", DType.FLOAT32, optional=True)),
        outputs=(Port("y", DType.FLOAT32),))
    def add_one(ctx, x, bias=None):
        """Adds 1 (and an optional bias)."""
        extra = bias.array.reshape(-1)[0] if bias is not None else 0
        return [x.array + np.float32(1) + extra]

    @op("Counter", Category.USER, registry=reg, user=True,
        inputs=(Port("x", None, layout=None),), outputs=(Port("n", DType.INT32),))
    def counter(ctx, x):
        """Counts its executions in node state."""
        ctx.state["n"] = int(ctx.state.get("n", 0)) + 1
        return [np.array([ctx.state["n"]], np.int32)]

    @op("TakeU8d32", Category.USER, registry=reg, user=True,
        inputs=(Port("x", DType.QUINT8, layout=Layout.D32),), outputs=(Port("y", DType.QUINT8),))
    def take(ctx, x):
        """Takes a d32 quint8 tensor."""
        return [x.to_flat()]

    @op("Buggy", Category.USER, registry=reg, user=True, inputs=(Port("x", None),),
        outputs=(Port("y", None), Port("z", None)))
    def buggy(ctx, x):
        """Divides by zero when x is empty, else returns one output of two."""
        if x.array.size == 0:
            return [1 // 0]
        return [x.array]

    declare_op("Unsimulated", Category.USER, registry=reg, user=True,
               inputs=(Port("x", None),), outputs=(Port("y", None),), doc="No kernel.")
    for name in ("Quantize", "Min_f", "Max_f", "AutoQuantize"):
        declare_op(name, Category.QUANTIZE, registry=reg, user=True,
                   inputs=(Port("x", None), Port("a", None, optional=True),
                           Port("b", None, optional=True)),
                   outputs=(Port("y", None), Port("y_min", None, optional=True),
                            Port("y_max", None, optional=True)), doc=name)
    return reg
