"""``.hexgraph`` files: a zip holding ``graph.json`` (versioned) and const data as ``.npy``.

The JSON lists nodes in append order with their inputs, padding, output definitions, labels
and editor positions; ``meta`` keeps what the app saves with a graph (input choices). Nodes
whose id is already taken (hexagon_nn keeps them until prepare) follow the graph's nodes, so
loading puts them back into ``graph.duplicates``. Saving is atomic; loading reports any
damage as a :class:`GraphFileError` naming the file and, inside a node, the node and field.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import tokenize
import zipfile
import zlib
from collections.abc import Callable
from os import PathLike
from typing import IO, Any

import numpy as np

from hexscope.engine.cooperate import EVERY, paced, pause
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import EngineError, GraphError, GraphFileError
from hexscope.engine.gc_pause import gc_paused
from hexscope.engine.graph import Graph, GraphSnapshot, check_node_id
from hexscope.engine.io.atomic import atomic_write
from hexscope.engine.io.json_paced import loads_paced
from hexscope.engine.nodes import MAX_NODE_ID, Node, OutputDef, Padding
from hexscope.engine.tensor import Tensor

FORMAT = "hexscope-graph"
VERSION = 1
# Meta keys the engine derives itself (Graph._append fills "duplicates" from the nodes): never
# written, and ignored when a file has them, so a file cannot hide or fake duplicate ids.
RESERVED_META = frozenset({"duplicates"})

_UINT32_MAX = 0xFFFFFFFF
_MAX_RANK = 8                     # hexagon_nn_output.max_sizes has 8 entries
_INT32 = (-(1 << 31), (1 << 31) - 1)

ArrayReader = Callable[[str], np.ndarray]


def graph_document(graph: Graph | GraphSnapshot) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The JSON document of a graph and the const arrays it refers to."""
    arrays: dict[str, np.ndarray] = {}
    nodes = [_node_entry(node, arrays, f"consts/{node.node_id:08x}.npy")
             for node in paced(graph)]
    # A duplicate's id is taken, so its const data needs a member name of its own.
    nodes += [_node_entry(node, arrays, f"consts/{node.node_id:08x}-duplicate{k}.npy")
              for k, node in enumerate(graph.duplicates, 1)]
    meta = {k: v for k, v in graph.meta.items() if k not in RESERVED_META}
    return {"format": FORMAT, "version": VERSION, "nodes": nodes, "meta": meta}, arrays


def _node_entry(node: Node, arrays: dict[str, np.ndarray], const_member: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": f"0x{node.node_id:x}", "op": node.op, "padding": node.padding.name,
        "inputs": [[f"0x{s:x}", i] for s, i in node.inputs],
        "outputs": [{"max_sizes": list(o.max_sizes), "elementsize": o.elementsize,
                     "zero_offset": o.zero_offset, "stepsize": o.stepsize}
                    for o in node.outputs],
    }
    if node.label:
        entry["label"] = node.label
    if node.position is not None:
        entry["position"] = list(node.position)
    if node.const is not None:
        entry["const"] = {"shape": list(node.const.shape), "dtype": node.const.dtype.name}
        if node.const.has_data:
            arrays[const_member] = np.ascontiguousarray(node.const.array)
            entry["const"]["file"] = const_member
    return entry


def save_graph(graph: Graph | GraphSnapshot, path: str | PathLike[str]) -> None:
    """Write ``graph`` to ``path`` atomically and durably (a temporary file, synced, renamed
    over the target, then the folder synced).

    Nodes with an already used id (``graph.duplicates``) are saved too, after the others.
    """
    with atomic_write(path) as handle:
        _write_zip(graph, handle)


def graph_bytes(graph: Graph | GraphSnapshot) -> bytes:
    """The bytes :func:`save_graph` writes: equal graphs give equal bytes."""
    buf = io.BytesIO()
    _write_zip(graph, buf)
    return buf.getvalue()


# A fixed member time keeps the same graph's file the same bytes (diffable, comparable).
_MEMBER_TIME = (1980, 1, 1, 0, 0, 0)


def _write_zip(graph: Graph | GraphSnapshot, handle: IO[bytes]) -> None:
    with gc_paused():
        document, arrays = graph_document(graph)
    with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as zf:
        members = [("graph.json", _json_text(document).encode())]
        for name, array in paced(arrays.items()):
            buf = io.BytesIO()
            np.save(buf, array, allow_pickle=False)
            members.append((name, buf.getvalue()))
        for name, data in paced(members):
            info = zipfile.ZipInfo(name, _MEMBER_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)


#: JSON pieces (tokens, mostly) between two pause points of the encoder
_JSON_PIECES = 4096


def _json_text(document: dict[str, Any]) -> str:
    """``json.dumps(document, indent=1)``, the same encoder (in Python, with an indent) a
    few thousand pieces at a time with a pause point between (0.2-0.3 s at 10,000 nodes,
    beside an app's window; engine/cooperate.py)."""
    pieces = json.JSONEncoder(indent=1).iterencode(document)
    parts = []
    while batch := list(itertools.islice(pieces, _JSON_PIECES)):
        parts.append("".join(batch))
        pause()
    return "".join(parts)


def load_graph(path: str | PathLike[str]) -> Graph:
    """Read a ``.hexgraph`` file.

    Raises
    ------
    GraphFileError
        For any damage, naming the file and, inside a node, the node and the field.
        ``meta`` keys in :data:`RESERVED_META` are ignored: the engine derives them.
    """
    name = os.fspath(path)
    try:
        with gc_paused(), zipfile.ZipFile(name) as zf:
            try:
                raw = _read_member(zf, "graph.json", "graph.json")
            except KeyError:
                raise GraphFileError(f"{name}: no graph.json inside; not a Hexscope graph") \
                    from None
            except GraphFileError as exc:
                raise GraphFileError(f"{name}: {exc}") from None
            document = _parse_json(raw, name)
            return graph_from_document(document, lambda member: _read_array(zf, member),
                                       name)
    except FileNotFoundError:
        raise GraphFileError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise GraphFileError(f"{name}: is a directory, not a graph file") from None
    except zipfile.BadZipFile:
        raise GraphFileError(f"{name}: not a Hexscope graph file, or truncated "
                             "(it is not a readable zip archive)") from None
    except (zipfile.LargeZipFile, OSError, EOFError) as exc:
        raise GraphFileError(f"{name}: cannot be read: {exc}") from None
    except NotImplementedError as exc:
        # zipfile raises it for a damaged header's version or compression method
        raise GraphFileError(f"{name}: not a readable Hexscope graph file: {exc}") from None


class _NumberTooLong(Exception):
    pass


def _parse_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # Python refuses ints of over 4300 digits, with advice for programmers
        raise _NumberTooLong(f"a number of {len(text.lstrip('-'))} digits") from None


def _parse_json(raw: bytes, name: str) -> object:
    try:
        # pause points between the nodes' entries: json.loads holds the GIL 0.1 s at 20,000
        return loads_paced(raw.decode("utf-8"), json.JSONDecoder(parse_int=_parse_int))
    except _NumberTooLong as exc:
        raise GraphFileError(f"{name}: graph.json holds {exc}; "
                             "no value in a graph is that long") from None
    except RecursionError:
        raise GraphFileError(f"{name}: graph.json is nested too deeply "
                             "to be a Hexscope graph") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise GraphFileError(f"{name}: graph.json is not valid JSON ({exc})") from None


def _read_member(zf: zipfile.ZipFile, member: str, what: str) -> bytes:
    """``zf.read(member)``; damage becomes a GraphFileError about ``what``, KeyError passes."""
    try:
        return zf.read(member)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise GraphFileError(f"{what} is damaged ({exc})") from None
    except NotImplementedError as exc:  # before RuntimeError, whose subclass it is
        raise GraphFileError(f"{what} uses a zip feature Hexscope cannot read ({exc}); "
                             "Hexscope saves with deflate") from None
    except RuntimeError as exc:  # zipfile's "encrypted, password required"
        raise GraphFileError(f"{what} is encrypted; Hexscope never encrypts graphs "
                             f"({exc})") from None


def _read_array(zf: zipfile.ZipFile, member: str) -> np.ndarray:
    what = f"const data {member}"
    try:
        data = _read_member(zf, member, what)
    except KeyError:
        raise GraphFileError(f"{what} is missing") from None
    try:
        shape, fortran, dtype, offset = _npy_header(data)
        if dtype.hasobject:
            raise ValueError("it holds Python objects, not numbers")
        # Checked before reading: a damaged shape would ask for terabytes.
        promised = math.prod(shape) * dtype.itemsize
        if len(data) - offset < promised:
            raise ValueError(f"the header promises {promised} bytes of data, "
                             f"it holds {len(data) - offset}")
        # The data follows the header we just parsed: a view on the bytes, not np.load,
        # which parses the header again (most of the time of loading 5,000 small consts).
        flat = np.frombuffer(data, dtype, math.prod(shape), offset)
        return flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)
    except tokenize.TokenError:  # numpy tokenizes the header dict; this is a cut-off one
        raise GraphFileError(f"{what} is damaged: its header is cut short") from None
    except (ValueError, TypeError, OverflowError, OSError, EOFError, SyntaxError) as exc:
        raise GraphFileError(f"{what} is damaged: {exc}") from None


_HEADERS: dict[bytes, tuple[tuple[int, ...], bool, np.dtype]] = {}


def _npy_header(data: bytes) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """(shape, fortran order, dtype, data offset) of a .npy member. Parsed headers are kept
    by their bytes: a graph's small consts share a few headers, and numpy parses each
    with ``ast.literal_eval`` (most of the time of loading thousands of consts)."""
    fp = io.BytesIO(data)
    version = np.lib.format.read_magic(fp)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f".npy version {version} is not one Hexscope writes")
    size_bytes = 2 if version == (1, 0) else 4
    start = fp.tell() + size_bytes
    length = int.from_bytes(data[fp.tell():start], "little")
    raw = data[start:start + length]
    if raw not in _HEADERS:
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        parsed = read_header(fp)
        if len(_HEADERS) < 4096:
            _HEADERS[raw] = parsed
        return (*parsed, fp.tell())
    return (*_HEADERS[raw], start + length)


def graph_from_document(document: object, read_array: ArrayReader,
                        name: str = "<document>") -> Graph:
    """Build a graph from a parsed document; ``read_array(member)`` returns const arrays.

    Raises
    ------
    GraphFileError
        Naming ``name`` and, for a bad node, its id (or its index if the id is unreadable)
        and the field. ``meta`` keys in :data:`RESERVED_META` are ignored.
    """
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise GraphFileError(f"{name}: not a Hexscope graph (format tag missing)")
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise GraphFileError(f"{name}: the format version is missing or invalid "
                             f"(found {_show(version)})")
    if version > VERSION:
        raise GraphFileError(f"{name}: written by a newer Hexscope (format version {version}; "
                             f"this version reads up to {VERSION})")
    graph = Graph()
    nodes = document.get("nodes")
    if not isinstance(nodes, list):
        raise GraphFileError(f"{name}: 'nodes' must be a list")
    for k, entry in enumerate(nodes):
        if not (k + 1) % EVERY:
            pause()         # 30-60 us a node: an app's threads take turns
        where = f"node #{k}"
        try:
            if not isinstance(entry, dict):
                raise GraphFileError(f"expected an object with 'id' and 'op', "
                                     f"found {_show(entry)}")
            node_id = _node_id(entry)
            where = f"node 0x{node_id:x} (#{k})"
            node = _node_from_entry(entry, node_id, read_array)
        except EngineError as exc:
            raise GraphFileError(f"{name}: {where}: {exc}") from None
        except (ValueError, TypeError, ArithmeticError, LookupError, AttributeError) as exc:
            # Backstop only: the field checks below are meant to catch every bad value.
            raise GraphFileError(f"{name}: {where}: cannot be read ({exc})") from None
        graph._append(node)  # noqa: SLF001 - loading restores the append order as saved
    meta = document.get("meta", {})
    if isinstance(meta, dict):
        graph.meta.update({k: v for k, v in meta.items() if k not in RESERVED_META})
    return graph


def _node_from_entry(entry: dict[str, Any], node_id: int, read_array: ArrayReader) -> Node:
    op = _text(_require(entry, "op"), "op")
    inputs = _inputs(entry.get("inputs", []))
    outputs = _outputs(entry.get("outputs", []))
    padding = _padding(entry.get("padding", "NA"))
    const = _const(entry.get("const"), read_array)
    label = _text(entry.get("label", ""), "label")
    return Node(node_id, op, inputs, outputs, padding, const, label,
                _position(entry.get("position")))


# field checks: each raises GraphFileError("field '<name>' ...: expected ..., found ...") ------

def _show(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _bad(field: str, expected: str, value: object, where: str = "") -> GraphFileError:
    return GraphFileError(f"field '{field}'{where}: expected {expected}, found {_show(value)}")


def _require(entry: dict[str, Any], field: str, where: str = "") -> Any:
    if field not in entry:
        raise GraphFileError(f"field '{field}'{where} is missing")
    return entry[field]


def _int(value: object, field: str, low: int, high: int, where: str = "") -> int:
    # bool is an int subclass; a file saying true means damage, not 1.
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _bad(field, f"a whole number from {low} to {high}", value, where)
    return value


def _number(value: object, field: str, where: str = "") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(field, "a number", value, where)
    try:
        return float(value)
    except OverflowError:
        raise _bad(field, "a number in float range", value, where) from None


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise _bad(field, "a string", value)
    return value


def _ref_id(value: object, field: str, where: str = "") -> int:
    """A node id: saved files write hex strings, hand-written ones may use numbers."""
    expected = "a node id (a number or a string such as '0x1001') in uint32 range"
    if isinstance(value, str):
        try:
            number = int(value, 0)
        except ValueError:
            raise _bad(field, expected, value, where) from None
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise _bad(field, expected, value, where)
    if not 0 <= number <= MAX_NODE_ID:
        raise _bad(field, expected, value, where)
    return number


def _node_id(entry: dict[str, Any]) -> int:
    node_id = _ref_id(_require(entry, "id"), "id")
    try:
        return check_node_id(node_id)
    except GraphError as exc:
        raise GraphFileError(f"field 'id': {exc}") from None


def _inputs(value: object) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, list):
        raise _bad("inputs", "a list of [source id, output index] pairs", value)
    refs = []
    for k, ref in enumerate(value):
        where = f", input {k}"
        if not isinstance(ref, list) or len(ref) != 2:
            raise _bad("inputs", "[source id, output index]", ref, where)
        refs.append((_ref_id(ref[0], "inputs", where),
                     _int(ref[1], "inputs", 0, _UINT32_MAX, where + " (output index)")))
    return tuple(refs)


def _outputs(value: object) -> tuple[OutputDef, ...]:
    if not isinstance(value, list):
        raise _bad("outputs", "a list of output definitions", value)
    return tuple(_output(item, f" of output {k}") for k, item in enumerate(value))


def _output(value: object, where: str) -> OutputDef:
    if not isinstance(value, dict):
        raise _bad("outputs", "an object with max_sizes and elementsize", value, where)
    sizes = _require(value, "max_sizes", where)
    if not isinstance(sizes, list) or len(sizes) > _MAX_RANK:
        raise _bad("max_sizes", f"a list of at most {_MAX_RANK} sizes", sizes, where)
    # Ranges as hexagon_nn_output's C fields, the same the C importer enforces.
    return OutputDef(tuple(_int(s, "max_sizes", 0, _UINT32_MAX, where) for s in sizes),
                     _int(_require(value, "elementsize", where), "elementsize", 0,
                          _UINT32_MAX, where),
                     _int(value.get("zero_offset", 0), "zero_offset", *_INT32, where),
                     _number(value.get("stepsize", 0.0), "stepsize", where))


def _padding(value: object) -> Padding:
    # Padding.parse takes true as SAME (bool is an int) and fails on null with AttributeError.
    expected = "a padding name (" + ", ".join(m.name for m in Padding) + ") or its number"
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _bad("padding", expected, value)
    try:
        return Padding.parse(value)
    except ValueError:
        raise _bad("padding", expected, value) from None


def _position(value: object) -> tuple[float, float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise _bad("position", "[x, y]", value)
    x, y = (_number(v, "position") for v in value)
    if not (math.isfinite(x) and math.isfinite(y)):
        raise _bad("position", "finite [x, y]", value)
    return (x, y)


def _const_dtype(value: dict[str, Any], array: np.ndarray, member: str) -> DType | None:
    """The const's type as saved: the array's numpy type alone cannot tell qint8 from int8,
    qint32 from int32 or uint8 from quint8 (a .tflite model saved and reopened had its
    qint8 weights come back int8: 37 problems). None (from the array) in files that do not
    say it."""
    name = value.get("dtype")
    if name is None:
        return None
    dtype = DType.__members__.get(name) if isinstance(name, str) else None
    if dtype is None:
        raise _bad("dtype", f"one of {', '.join(DType.__members__)}", name, " of const")
    if dtype.numpy != array.dtype:
        raise GraphFileError(f"field 'const': const data {member} holds {array.dtype}, the "
                             f"graph says {name} ({dtype.numpy})")
    return dtype


def _const(value: object, read_array: ArrayReader) -> Tensor | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _bad("const", "an object with the const's shape", value)
    shape = _require(value, "shape", " of const")
    if not isinstance(shape, list) or len(shape) > 4:
        raise _bad("shape", "a list of at most 4 sizes", shape, " of const")
    dims = [_int(v, "shape", 0, _UINT32_MAX, " of const") for v in shape]
    if "file" not in value:
        return Tensor.shape_only(dims)
    member = value["file"]
    if not isinstance(member, str):
        raise _bad("file", "the name of a .npy member", member, " of const")
    try:
        array = read_array(member)
        const = Tensor.from_array(array, _const_dtype(value, array, member)).readonly()
    except GraphFileError as exc:
        raise GraphFileError(f"field 'const': {exc}") from None
    except ValueError as exc:  # rank over 4, or a dtype hexagon_nn does not have
        raise GraphFileError(f"field 'const': const data {member}: {exc}") from None
    if list(const.shape) != dims:
        raise GraphFileError(f"field 'const': const data {member} has shape {const.shape}, "
                             f"the graph says {dims}")
    return const
