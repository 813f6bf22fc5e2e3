"""A user op that passes its input through and warns, the same words on every node: the
tests of summarised warnings (issue 32: one warning on 1,386 nodes)."""

from __future__ import annotations

from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

WARNING = "the data are all zero (a test warning)"


@op("WarnNop", Category.USER, user=True,
    inputs=(Port("x", None, layout=None),), outputs=(Port("y", None, layout=None),))
def warn_nop(ctx: KernelContext, x: Tensor) -> tuple[Tensor, ...]:
    """Passes x through and warns."""
    ctx.warn(WARNING)
    return (x,)
