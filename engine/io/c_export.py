"""Export a :class:`Graph` as a hexagon_nn graph-init C file (graph spec §3.2).

The file has the form of the library's own ``graphinit_med.c``: typedefs, ``ALIGNED`` const
data arrays, ``hexagon_nn_input``/``hexagon_nn_output`` arrays (``OUTPUT_4D`` where it fits),
and ``void init_graph(int nn_id)`` with one ``APPEND_*`` statement per node in append order.
``APPEND_NODE`` always takes the node's label as its first argument (the med form). Const
labels, which hexagon_nn's macro has no place for, use the same leading-name form of
``APPEND_CONST_NODE``; the macro is defined in the file itself, so it still compiles.

Values are written so that :func:`hexscope.engine.io.c_import.import_c` gives back the same
graph, const bytes included: float32 data is written as the exact decimal of its double
value; NaN and infinities use ``NAN``/``INFINITY`` from ``<math.h>`` (a NaN's payload bits
are not kept: C has no literal for them). Editor positions and ``graph.meta`` are not part
of hexagon_nn's world and are not written.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from os import PathLike
from pathlib import Path

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import GraphError
from hexscope.engine.graph import Graph
from hexscope.engine.io.atomic import atomic_write
from hexscope.engine.nodes import Node, OutputDef
from hexscope.engine.ops.op_ids import OP_IDS

C_TYPES = {DType.QUINT8: "quint8", DType.UINT8: "uint8_t", DType.INT8: "int8_t",
           DType.QUINT16: "uint16_t", DType.QINT16: "int16_t", DType.INT32: "int32",
           DType.QINT32: "qint32", DType.FLOAT32: "float32"}
PER_LINE = 16
_C_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_PRELUDE = """\
#include <hexagon_nn.h>
#include <stdio.h>
#include <math.h>
#include "hexagon_nn_ops.h"
typedef int32_t qint32;
typedef int32_t int32;
typedef float float32;
typedef uint8_t quint8;
#define ALIGNED __attribute__((aligned(128)))

#define NN_PAD_ANY NN_PAD_NA

#define OUTPUT_4D(B,H,W,D,ES) \\
\t{ .rank = 4, .max_sizes = {B,H,W,D}, .elementsize = ES, \\
\t.zero_offset = 0, .stepsize = 0.0f, }
"""
_CONST_MACRO = {
    False: "#define APPEND_CONST_NODE(ID,...) \\\n"
           "\tif (hexagon_nn_append_const_node(nn_id,ID,__VA_ARGS__) != 0) \\\n"
           "\tprintf(\"const node %x returned nonzero\\n\",ID)\n",
    True: "#define APPEND_CONST_NODE(NAME,ID,...) \\\n"
          "\tif (hexagon_nn_append_const_node(nn_id,ID,__VA_ARGS__) != 0) \\\n"
          "\tprintf(\"const node %x <%s> returned nonzero\\n\",ID,NAME)\n",
}
_NODE_MACRO = ("#define APPEND_NODE(NAME,ID,OP,...) \\\n"
               "\tif (hexagon_nn_append_node(nn_id,ID,OP,__VA_ARGS__) != 0) \\\n"
               "\tprintf(\"node %x <%s/%s> returned nonzero\\n\",ID,NAME,#OP)\n")


def export_c(graph: Graph, path: str | PathLike[str], title: str = "", *,
             user_ops: Collection[str] = ()) -> None:
    """Write ``graph`` as a graph-init C file, atomically (``user_ops``: see
    :func:`export_c_text`)."""
    text = export_c_text(graph, title or Path(path).stem, user_ops=user_ops)
    with atomic_write(path, "w", encoding="ascii", newline="\n") as handle:
        handle.write(text)


def export_c_text(graph: Graph, title: str = "graph", *, user_ops: Collection[str] = ()) -> str:
    """The C text of ``graph``; raises GraphError for what hexagon_nn cannot express.

    ``user_ops`` are ops outside hexagon_nn's op table that the user's own hexagon_nn build
    defines (in its ops.def, as a Hexscope plugin op models them): they are written as
    ``OP_<name>`` and the file's first comment says which ops the build must define."""
    used = sorted({n.op for n in graph if n.op in user_ops and n.op not in OP_IDS})
    _check_exportable(graph, used)
    named_consts = any(n.is_const and n.label for n in graph)
    needs = ("".join(f" * This graph uses ops that hexagon_nn's own op table does not have:\n"
                     f" * {', '.join(used)}. The hexagon_nn build it runs on must define\n"
                     f" * them (in its ops.def, which makes {', '.join('OP_' + o for o in used)}\n"
                     " * in hexagon_nn_ops.h); it does not compile without them.\n")
             if used else "")
    parts = [f"/*\n * {_comment(title)}: hexagon_nn graph-init file written by Hexscope,\n"
             f" * {len(graph)} nodes. Compile it with the application that calls "
             f"init_graph(nn_id).\n{needs} */\n\n", _PRELUDE, "\n"]
    for node in graph:
        parts.extend(_arrays_of(node))
    parts += ["\n", _CONST_MACRO[named_consts], _NODE_MACRO, "void init_graph(int nn_id) {\n"]
    parts.extend(f"  {_append_statement(node, named_consts)}\n" for node in graph)
    parts.append("}\n")
    return "".join(parts)


def _check_exportable(graph: Graph, user_ops: Collection[str] = ()) -> None:
    if graph.duplicates:
        ids = ", ".join(f"0x{n.node_id:x}" for n in graph.duplicates)
        raise GraphError(f"cannot export: node ids used twice ({ids})")
    bad = [o for o in user_ops if not _C_NAME.fullmatch(o)]
    if bad:
        raise GraphError(f"cannot export op {bad[0]!r}: OP_{bad[0]} is no C identifier, so "
                         "no hexagon_nn build can define it")
    unknown = sorted({n.op for n in graph if n.op not in OP_IDS and n.op not in user_ops})
    if unknown:
        raise GraphError("cannot export ops that hexagon_nn's op table does not have "
                         f"(user ops?): {', '.join(unknown)}")
    for node in graph:
        if node.is_const and node.const is None:
            raise GraphError(f"const 0x{node.node_id:x} has neither data nor a shape "
                             "(hexagon_nn appends Consts with append_const_node only)")
        if node.is_const and node.const is not None and node.const.has_data:
            if node.const.dtype not in C_TYPES:
                raise GraphError(f"const 0x{node.node_id:x}: {node.const.dtype.c_name} data "
                                 "has no C element type")


def _arrays_of(node: Node) -> Iterable[str]:
    hexid = f"{node.node_id:x}"
    if node.is_const:
        if node.const is not None and node.const.has_data and node.const.elements:
            ctype = C_TYPES[node.const.dtype]
            yield (f"static {ctype} data_for_op_{hexid}[] ALIGNED = {{\n"
                   f"{_values(node.const.array)}\n}};\n\n")
        return
    if node.inputs:
        rows = "".join(f" {{ .src_id = 0x{src:x}, .output_idx = {idx}, }},\n"
                       for src, idx in node.inputs)
        yield f"static hexagon_nn_input inputs_for_{hexid}[] = {{\n{rows}}};\n"
    if node.outputs:
        rows = "".join(f" {_output(o)},\n" for o in node.outputs)
        yield f"static hexagon_nn_output outputs_for_{hexid}[] = {{\n{rows}}};\n"
    if node.inputs or node.outputs:
        yield "\n"


def _output(o: OutputDef) -> str:
    if o.rank == 4 and o.zero_offset == 0 and o.stepsize == 0.0 and not _negative_zero(
            o.stepsize):
        return f"OUTPUT_4D({','.join(map(str, o.max_sizes))},{o.elementsize})"
    sizes = ", ".join(map(str, o.max_sizes)) if o.max_sizes else "0"
    return (f"{{ .rank = {o.rank}, .max_sizes = {{ {sizes} }}, .elementsize = {o.elementsize}, "
            f".zero_offset = {o.zero_offset}, .stepsize = {_float(o.stepsize)}, }}")


def _negative_zero(x: float) -> bool:
    return x == 0.0 and np.signbit(x)


def _append_statement(node: Node, named_consts: bool) -> str:
    hexid = f"0x{node.node_id:x}"
    if node.is_const:
        assert node.const is not None
        b, h, w, d = node.const.shape
        if node.const.has_data and node.const.elements:
            data = f"(const uint8_t *)data_for_op_{node.node_id:x}"
            size = node.const.nbytes
        else:
            data, size = "(const uint8_t *)NULL", 0
        name = f"{_string(node.label)}," if named_consts else ""
        return f"APPEND_CONST_NODE({name}{hexid},{b},{h},{w},{d},{data},{size});"
    inputs = (f"inputs_for_{node.node_id:x},{len(node.inputs)}" if node.inputs else "NULL,0")
    outputs = (f"outputs_for_{node.node_id:x},{len(node.outputs)}" if node.outputs
               else "NULL,0")
    return (f"APPEND_NODE({_string(node.label)},{hexid},OP_{node.op},NN_PAD_{node.padding.name},"
            f"{inputs},{outputs});")


def _values(array: np.ndarray) -> str:
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.dtype.kind == "f":
        texts = [_float(v) for v in flat.astype(np.float64).tolist()]
    else:
        texts = list(map(str, flat.tolist()))
    return "\n".join("  " + ",".join(texts[i:i + PER_LINE]) + ","
                     for i in range(0, len(texts), PER_LINE))


def _float(value: float) -> str:
    # repr of the double is exact for a float32 value, so C and the importer read it back
    # to the same bits.
    if value != value:
        return "NAN"
    if value in (float("inf"), float("-inf")):
        return "INFINITY" if value > 0 else "-INFINITY"
    return repr(float(value))


def _string(text: str) -> str:
    """A C string literal; non-ASCII as octal escapes of its UTF-8 bytes."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\?':
            out.append("\\" + ch)
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _comment(text: str) -> str:
    return "".join(c if 32 <= ord(c) < 127 else "?" for c in text).replace("*/", "*?")
