"""Variable and Assign: graph state that persists across executions (graph spec §4.28-§4.29).

A Variable keeps its tensors in the graph-wide store, ``ctx.store[(variable id, output)]``.
The executor reads a producer's output from the store first, so every node that runs after
an Assign sees the new value, and later executions see the latest one. Restarting a run in
the debugger restores the store as it was when the run began; preparing again clears it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.reference import NoReference
from hexscope.engine.ops.registry import Category, Port, Repeat, op
from hexscope.engine.tensor import Tensor

#: The simulator's type for zero-initialised data of each element size (the library tags
#: it VOID; a sized type lets views show the values).
_ZERO_INIT_TYPES = {1: DType.QUINT8, 2: DType.QUINT16, 4: DType.FLOAT32}


class VariableTensor(Tensor):
    """A Variable's output: a tensor that also knows its storage capacity (``max_size``).

    ``capacity`` is None when the output definition declares no sizes: the simulator then
    does not check what an Assign writes, as the executor does not check undeclared outputs.
    """

    __slots__ = ("capacity",)

    def __init__(self, source: Tensor, capacity: int | None) -> None:
        raw = None
        if source.has_data:
            raw = np.zeros(max(capacity or 0, source.nbytes), np.uint8)
            raw[: source.nbytes] = source.buffer
        super().__init__(source.shape, source.dtype, raw, source.layout, source.padding)
        self.capacity = capacity


def _capacity(out_def: OutputDef, index: int) -> int | None:
    return out_def.capacity(False, index) if out_def.max_sizes else None


def _zero_init(shape: Sequence[int], out_def: OutputDef,
               capacity: int | None) -> Tensor:
    elsize = out_def.elementsize
    total = int(np.prod(shape, dtype=np.int64)) * elsize
    if total <= 0 or total >= 2**31:
        raise KernelError(f"bad shape/elsize for zero-init: shape {tuple(shape)} with "
                          f"elementsize {elsize} gives {total} bytes")
    if capacity is not None and total > capacity:
        raise KernelError(f"variable too small for zero-init: {total} bytes needed, the "
                          f"output holds {capacity}")
    dtype = _ZERO_INIT_TYPES.get(elsize)
    if dtype is None:
        raise KernelError(f"zero-init with elementsize {elsize}: the simulator supports "
                          "element sizes 1, 2 and 4")
    fill = out_def.zero_offset & 0xFF if elsize == 1 else 0
    return Tensor(shape, dtype, np.full(total, fill, np.uint8))


def _initial(ctx: KernelContext, k: int, init: Tensor | None) -> VariableTensor:
    """Output k's value after hexagon_nn's variable_check."""
    out_def = ctx.output_defs[k]
    capacity = _capacity(out_def, k)
    if init is None:
        return VariableTensor(Tensor.shape_only(out_def.shape), capacity)
    producer = ctx.input_ops[k] if k < len(ctx.input_ops) else "Const"
    # matches device: at prepare only a Const holds data; any other producer is empty.
    empty = not init.has_data or producer != "Const"
    if empty and out_def.elementsize > 0:
        return VariableTensor(_zero_init(init.shape, out_def, capacity), capacity)
    if empty:
        return VariableTensor(Tensor.shape_only(init.shape, init.dtype), capacity)
    if capacity is not None and init.nbytes > capacity:
        raise KernelError(f"out too small: initial value {init.describe()} needs "
                          f"{init.nbytes} bytes, output {k} holds {capacity}")
    return VariableTensor(init, capacity)


@op("Variable", Category.STATE,
    reference=NoReference("state kept from run to run; a float run has no earlier runs"),
    inputs=(Repeat((Port("init", None, layout=None, shape_only=True),), min=1),),
    outputs=(Repeat((Port("value", None, layout=None),), min=1),), retain=True)
def variable(ctx: KernelContext, *inits: Tensor) -> tuple[Tensor, ...]:
    """Graph state: outputs hold values that persist across executions; Assign changes them.

    Input i initialises output i; there must be at least one input and no more inputs than
    outputs ("too many inputs"). Outputs without an input stay empty. A shape-only const, or
    any producer other than a Const, zero-initialises the output with that input's shape
    when its definition has an element size: the fill byte is ``zero_offset`` for 1-byte
    elements, else 0 ("bad shape/elsize for zero-init", "variable too small for
    zero-init"). A Const with data is copied ("out too small" if it exceeds the output).

    Fidelity: hexagon_nn initialises at prepare; the simulator does it when the node first
    runs with no stored value, which is observably the same because Consts are fixed and
    other producers count as empty. For a non-Const producer the library uses the
    producer's declared output shape; the simulator uses the shape it produced. The library
    tags zero-initialised data VOID; the simulator tags it quint8/quint16/float32 by size.
    """
    if len(inits) > ctx.n_outputs:
        raise KernelError(f"too many inputs: {len(inits)} initial values for "
                          f"{ctx.n_outputs} outputs")
    keys = [(ctx.node_id, k) for k in range(ctx.n_outputs)]
    if not all(key in ctx.store for key in keys):
        for k, key in enumerate(keys):
            ctx.store[key] = _initial(ctx, k, inits[k] if k < len(inits) else None)
    ctx.log(2, f"variable execute. self=<node 0x{ctx.node_id:x}> ")
    return tuple(ctx.store[key] for key in keys)


def _check_wiring(ctx: KernelContext, n_pairs: int) -> None:
    """assign_check: every even input reads an output of a Variable."""
    for k in range(n_pairs):
        ref = tuple(ctx.input_refs[2 * k])
        is_variable = (ctx.input_ops[2 * k] == "Variable" if len(ctx.input_ops) > 2 * k
                       else isinstance(ctx.store.get(ref), VariableTensor))
        if not is_variable or ref not in ctx.store:
            raise KernelError(f"assign node id=0x{ctx.node_id:X}: input {2 * k} not "
                              "connected to valid Variable output")


@op("Assign", Category.STATE,
    reference=NoReference("state kept from run to run; a float run has no earlier runs"),
    inputs=(Repeat((Port("variable", None, layout=None, shape_only=True),
                    Port("value", None, layout=None)), min=1, interleaved=True),),
    outputs=(Repeat((Port("written", None, layout=None),)),), retain=True)
def assign(ctx: KernelContext, *xs: Tensor) -> tuple[Tensor, ...]:
    """Writes each value (odd input) into the Variable output wired to the even input before it.

    Nodes that run after the Assign, and later executions, see the new value; nodes that
    ran before it saw the old one (graph spec §4.29). Shape, format and bytes are copied.
    Checks: an even number of inputs, at least 2 ("bad # inputs (must be even, >=2)");
    outputs <= inputs/2 ("too many outs"); every even input wired to a Variable output;
    a value larger than the Variable's storage fails with "can't copy to input <2k>", and
    the pairs before it stay written. Output i is a copy of value i; an output declared
    with element size 0 is a placeholder and stays empty.
    """
    if len(xs) < 2 or len(xs) % 2:
        raise KernelError(f"bad # inputs (must be even, >=2): got {len(xs)}")
    if ctx.n_outputs > len(xs) // 2:
        raise KernelError(f"too many outs: {ctx.n_outputs} outputs for {len(xs) // 2} pairs")
    _check_wiring(ctx, len(xs) // 2)
    for k in range(len(xs) // 2):
        ref = tuple(ctx.input_refs[2 * k])
        target, value = ctx.store[ref], xs[2 * k + 1]
        capacity = target.capacity if isinstance(target, VariableTensor) else None
        if capacity is not None and value.has_data and value.nbytes > capacity:
            raise KernelError(f"can't copy to input {2 * k}: {value.describe()} needs "
                              f"{value.nbytes} bytes, Variable 0x{ref[0]:x} output {ref[1]} "
                              f"holds {capacity}")
        ctx.store[ref] = VariableTensor(value, capacity)
    return tuple(_output(ctx, i, xs[2 * i + 1]) for i in range(ctx.n_outputs))


def _output(ctx: KernelContext, index: int, value: Tensor) -> Tensor:
    out_def = ctx.output_defs[index]
    if out_def.max_sizes and out_def.elementsize == 0:
        return Tensor.shape_only(out_def.shape)
    if not value.has_data:
        return Tensor.shape_only(value.shape, value.dtype)
    return value.copy()


__all__ = ["VariableTensor", "variable", "assign"]
