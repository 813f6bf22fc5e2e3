"""Graph I/O and plumbing every graph needs: INPUT, OUTPUT, Nop, Const (graph spec §4.1-4.4)."""

from __future__ import annotations

from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.reference import SELF
from hexscope.engine.ops.registry import Category, Port, Repeat, op
from hexscope.engine.tensor import Tensor

_ANY = Port("x", None, layout=None)


@op("INPUT", Category.IO,
    reference=SELF, outputs=(Repeat((Port("out", None, layout=None),)),))
def input_(ctx: KernelContext) -> tuple[Tensor, ...]:
    """Graph input: output k is input k given to execute.

    The shape is not checked against the declared output sizes; only the byte count matters
    (§4.1), and a larger input than the declared size is reported as a warning.
    """
    if len(ctx.graph_inputs) != ctx.n_outputs:
        raise KernelError(f"Expected {ctx.n_outputs}, got {len(ctx.graph_inputs)} inputs")
    return ctx.graph_inputs


@op("OUTPUT", Category.IO,
    reference=SELF, inputs=(Repeat((Port("x", None, layout=None),)),))
def output(ctx: KernelContext, *xs: Tensor) -> tuple[()]:
    """Graph output: input k is returned as output k of execute.

    A d32 tensor would be copied raw, padding included; graphs convert it first.
    """
    return ()


@op("Nop", Category.PLUMBING,
    reference=SELF, inputs=(Repeat((_ANY,)),),
    outputs=(Repeat((Port("y", None, layout=None),)),))
def nop(ctx: KernelContext, *xs: Tensor) -> tuple[Tensor, ...]:
    """Copies each input to the output of the same index (shape, format and bytes).

    Prepare requires as many inputs as outputs ("inputs != outputs").
    """
    if len(xs) != ctx.n_outputs:
        raise KernelError("inputs != outputs")
    return tuple(x.copy() for x in xs)


@op("Const", Category.IO,
    reference=SELF, outputs=(Port("data", None),))
def const(ctx: KernelContext) -> tuple[Tensor, ...]:
    """Constant data, fixed when the node is appended; it never runs.

    Appended with ``append_const_node``; a const with no data is shape-only (strides,
    windows).
    """
    raise KernelError("Const nodes do not run; their data is fixed at append")
