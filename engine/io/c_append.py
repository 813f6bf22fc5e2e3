"""The ``APPEND_CONST_NODE`` / ``APPEND_NODE`` calls of a graph-init file (graph spec §3.2).

Each call appends to the graph being imported, in file order (§2.13). The counts and the
const ``data_len`` are authoritative in C; they are checked against the arrays (§3.3).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from hexscope.engine.errors import GraphError
from hexscope.engine.io.c_lexer import Token
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops.op_ids import OP_IDS, OP_NAMES

if TYPE_CHECKING:
    from hexscope.engine.io.c_expr import Arg
    from hexscope.engine.io.c_import import Array, _Parser

UINT32_MAX = 0xFFFFFFFF
CONST_SIGNATURE = "APPEND_CONST_NODE([name,] ID, b, h, w, d, data, data_len)"
NODE_SIGNATURE = "APPEND_NODE([name,] ID, OP_<op>, NN_PAD_<mode>, inputs, n_inputs, " \
                 "outputs, n_outputs)"


def append_call(p: _Parser, tok: Token, args: list[Arg]) -> None:
    """Append the node one call describes; errors point at the call."""
    direct = tok.text.startswith("hexagon_nn_")
    if direct:
        if not args:
            raise p.lx.error(tok, f"{tok.text}: missing the graph id argument")
        args = args[1:]                     # the nn_id argument
    label = ""
    if args and isinstance(args[0].value, str) and not direct:
        label, args = str(args[0].value), args[1:]
    try:
        if "const" in tok.text.lower():
            _append_const(p, tok, args, label)
        else:
            _append_node(p, tok, args, label)
    except GraphError as exc:
        raise p.lx.error(tok, str(exc)) from None


def _append_const(p: _Parser, tok: Token, args: list[Arg], label: str) -> None:
    if len(args) != 7:
        raise p.lx.error(tok, f"{CONST_SIGNATURE} takes 7 arguments after the optional name, "
                         f"got {len(args)}")
    node_id = _node_id(p, args[0])
    dims = [_uint32(p, a, "dimension") for a in args[1:5]]
    data_len = _uint32(p, args[6], "data_len")
    array = _array(p, args[5], "data")
    if array is None:
        if data_len != 0:
            raise p.lx.error(args[6].pos, f"data is NULL but data_len is {data_len}")
        p.graph.append_const_node(node_id, shape=dims, label=label)
        return
    assert array.data is not None and array.dtype is not None
    count, size = int(array.data.size), array.dtype.size
    if data_len != count * size:
        raise p.lx.error(args[6].pos, f"data_len is {data_len}, but array {array.name} holds "
                         f"{count} {array.dtype.c_name} values ({count * size} bytes)")
    elements = dims[0] * dims[1] * dims[2] * dims[3]
    if count != elements:
        raise p.lx.error(args[5].pos, f"array {array.name} holds {count} values, the shape "
                         f"{'x'.join(map(str, dims))} has {elements}")
    p.graph.append_const_node(node_id, array.data.reshape(dims), label=label)


def _append_node(p: _Parser, tok: Token, args: list[Arg], label: str) -> None:
    if len(args) != 7:
        raise p.lx.error(tok, f"{NODE_SIGNATURE} takes 7 arguments after the optional name, "
                         f"got {len(args)}")
    node_id = _node_id(p, args[0])
    op = _op_name(p, args[1])
    padding = _padding(p, args[2])
    inputs = _items(p, args[3], args[4], "hexagon_nn_input")
    outputs = _items(p, args[5], args[6], "hexagon_nn_output")
    refs = [(_port_field(p, item, "src_id", node_id, f"input {k}"),
             _port_field(p, item, "output_idx", node_id, f"input {k}"))
            for k, item in enumerate(inputs)]
    defs = [_output_def(p, item, node_id, k) for k, item in enumerate(outputs)]
    p.graph.append_node(node_id, op, refs, defs, padding, label=label)


def _node_id(p: _Parser, arg: Arg) -> int:
    value = p.as_int(arg, "node id")
    if not 0 < value <= UINT32_MAX:
        raise p.lx.error(arg.pos, f"node id {value:#x} is invalid: ids are uint32 and 0 is "
                         "rejected (graph spec §2.3)")
    return value


def _uint32(p: _Parser, arg: Arg, what: str) -> int:
    value = p.as_int(arg, what)
    if not 0 <= value <= UINT32_MAX:
        raise p.lx.error(arg.pos, f"{what} {value} is outside uint32")
    return value


def _array(p: _Parser, arg: Arg, kind: str) -> Array | None:
    """The array an argument names, or None for NULL / 0."""
    from hexscope.engine.io.c_expr import Symbol

    value = arg.value
    if value == 0 and isinstance(value, int) or isinstance(value, Symbol) and value.name == "NULL":
        return None
    if not isinstance(value, Symbol):
        raise p.lx.error(arg.pos, f"expected an array name or NULL, found {value!r}")
    array = p.arrays.get(value.name)
    if array is None:
        raise p.lx.error(arg.pos, f"unknown array {value.name} (arrays must be defined before "
                         "the init function)")
    wanted = {"data": "a const data array", "hexagon_nn_input": "a hexagon_nn_input array",
              "hexagon_nn_output": "a hexagon_nn_output array"}
    if array.kind != kind:
        raise p.lx.error(arg.pos, f"{value.name} is not {wanted[kind]}")
    array.used = True
    return array


def _items(p: _Parser, array_arg: Arg, count_arg: Arg, kind: str) -> list[dict[str, object]]:
    count = _uint32(p, count_arg, "count")
    array = _array(p, array_arg, kind)
    if array is None:
        if count:
            raise p.lx.error(count_arg.pos, f"the array is NULL but the count is {count}")
        return []
    if count > len(array):
        raise p.lx.error(count_arg.pos, f"count {count} exceeds the {len(array)} entries of "
                         f"{array.name}")
    return list(array.items or [])[:count]


def _field(p: _Parser, item: dict[str, object], name: str) -> int:
    from hexscope.engine.io.c_expr import Arg

    value = item.get(name, 0)
    if isinstance(value, Arg):
        return p.as_int(value, f".{name}")
    return int(value)  # type: ignore[call-overload]


def _port_field(p: _Parser, item: dict[str, object], name: str, node_id: int,
                port: str) -> int:
    """A uint32 field of a hexagon_nn_input or hexagon_nn_output (graph spec §2.3)."""
    from hexscope.engine.io.c_expr import Arg

    value = _field(p, item, name)
    if not 0 <= value <= UINT32_MAX:
        arg = item.get(name)
        pos = arg.pos if isinstance(arg, Arg) else int(item.get("_pos", 0))  # type: ignore[call-overload]
        raise p.lx.error(pos, f"node {node_id:#x} {port}: .{name} is {value}, outside "
                         f"uint32 (0..{UINT32_MAX}, graph spec §2.3)")
    return value


def _output_def(p: _Parser, item: dict[str, object], node_id: int, k: int) -> OutputDef:
    from hexscope.engine.io.c_expr import Arg

    rank = _field(p, item, "rank")
    pos = int(item.get("_pos", 0))  # type: ignore[call-overload]
    if not 0 <= rank <= 8:
        raise p.lx.error(pos, f".rank is {rank}; hexagon_nn allows 0..8")
    sizes = list(item.get("max_sizes", []))  # type: ignore[call-overload]
    if any(not 0 <= s <= UINT32_MAX for s in sizes):
        raise p.lx.error(pos, "max_sizes entries must be uint32")
    # Entries at index >= rank are ignored, missing ones are zero, as in C (§2.3).
    max_sizes = tuple((sizes + [0] * 8)[:rank])
    stepsize = item.get("stepsize", 0.0)
    if isinstance(stepsize, Arg):
        if not isinstance(stepsize.value, int | float):
            raise p.lx.error(stepsize.pos, ".stepsize must be a number")
        # a float field: ints are at most 64 bits (c_expr), so float() cannot overflow
        value = float(stepsize.value)
        with np.errstate(over="ignore"):
            single = float(np.float32(value))
        if math.isfinite(value) and not math.isfinite(single):
            raise p.lx.error(stepsize.pos, f"node {node_id:#x} output {k}: .stepsize "
                             f"{value!r} overflows float32")
        stepsize = value
    zero_offset = _field(p, item, "zero_offset")
    if not -(1 << 31) <= zero_offset < (1 << 31):
        raise p.lx.error(pos, f".zero_offset {zero_offset} does not fit int32")
    elementsize = _port_field(p, item, "elementsize", node_id, f"output {k}")
    return OutputDef(max_sizes, elementsize, zero_offset,
                     float(stepsize))  # type: ignore[arg-type]


def _op_name(p: _Parser, arg: Arg) -> str:
    from hexscope.engine.io.c_expr import Symbol

    value = arg.value
    if isinstance(value, Symbol) and value.name.startswith("OP_"):
        name = value.name[3:]
        if name not in OP_IDS:
            raise p.lx.error(arg.pos, f"unknown op {value.name}: not in hexagon_nn's op table "
                             "(graph spec §2.14)")
        return name
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < len(OP_NAMES):
            raise p.lx.error(arg.pos, f"op id {value} is outside hexagon_nn's op table "
                             f"(0..{len(OP_NAMES) - 1})")
        return OP_NAMES[value]
    raise p.lx.error(arg.pos, f"expected an OP_<name>, found {_text(value)}")


def _padding(p: _Parser, arg: Arg) -> Padding:
    from hexscope.engine.io.c_expr import Symbol

    value = arg.value
    try:
        if isinstance(value, Symbol) and value.name.startswith("NN_PAD_"):
            return Padding.parse(value.name)
        if isinstance(value, int) and not isinstance(value, bool):
            return Padding(value)
    except ValueError:
        pass
    names = ", ".join(f"NN_PAD_{m.name}" for m in Padding)
    raise p.lx.error(arg.pos, f"expected a padding mode ({names} or NN_PAD_ANY), found "
                     f"{_text(value)}")


def _text(value: object) -> str:
    name = getattr(value, "name", None)
    return name if isinstance(name, str) else repr(value)
