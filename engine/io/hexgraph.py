"""``.hexgraph`` files: a zip holding ``graph.json`` (versioned) and const data as ``.npy``.

The JSON lists nodes in append order with their inputs, padding, output definitions, labels
and editor positions; ``meta`` keeps what the app saves with a graph (input choices). Saving
is atomic; loading reports any damage as a :class:`GraphFileError` naming the file.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from os import PathLike
from typing import Any

import numpy as np

from hexscope.engine.errors import EngineError, GraphFileError
from hexscope.engine.graph import Graph
from hexscope.engine.io.atomic import atomic_write
from hexscope.engine.nodes import Node, OutputDef, Padding
from hexscope.engine.tensor import Tensor

FORMAT = "hexscope-graph"
VERSION = 1


def graph_document(graph: Graph) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The JSON document of a graph and the const arrays it refers to."""
    arrays: dict[str, np.ndarray] = {}
    nodes = []
    for node in graph:
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
                name = f"consts/{node.node_id:08x}.npy"
                arrays[name] = np.ascontiguousarray(node.const.array)
                entry["const"]["file"] = name
        nodes.append(entry)
    meta = {k: v for k, v in graph.meta.items() if k != "duplicates"}
    return {"format": FORMAT, "version": VERSION, "nodes": nodes, "meta": meta}, arrays


def save_graph(graph: Graph, path: str | PathLike[str]) -> None:
    """Write ``graph`` to ``path`` atomically (a temporary file renamed over the target)."""
    document, arrays = graph_document(graph)
    with atomic_write(path) as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("graph.json", json.dumps(document, indent=1))
        for name, array in arrays.items():
            buf = io.BytesIO()
            np.save(buf, array, allow_pickle=False)
            zf.writestr(name, buf.getvalue())


def load_graph(path: str | PathLike[str]) -> Graph:
    """Read a ``.hexgraph`` file; damage gives a GraphFileError, never a deep traceback."""
    name = os.fspath(path)
    try:
        with zipfile.ZipFile(name) as zf:
            try:
                document = json.loads(zf.read("graph.json").decode("utf-8"))
            except KeyError:
                raise GraphFileError(f"{name}: no graph.json inside; not a Hexscope graph") \
                    from None
            return graph_from_document(document, lambda member: _read_array(zf, member),
                                       name)
    except FileNotFoundError:
        raise GraphFileError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise GraphFileError(f"{name}: is a directory, not a graph file") from None
    except zipfile.BadZipFile:
        raise GraphFileError(f"{name}: not a Hexscope graph file, or truncated "
                             "(it is not a readable zip archive)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GraphFileError(f"{name}: graph.json is not valid JSON ({exc})") from None
    except (zipfile.LargeZipFile, OSError, EOFError) as exc:
        raise GraphFileError(f"{name}: cannot be read: {exc}") from None


def _read_array(zf: zipfile.ZipFile, member: str) -> np.ndarray:
    try:
        data = zf.read(member)
    except KeyError:
        raise GraphFileError(f"const data {member} is missing") from None
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise GraphFileError(f"const data {member} is damaged: {exc}") from None


def graph_from_document(document: Any, read_array: Any, name: str = "<document>") -> Graph:
    """Build a graph from a parsed document; ``read_array(member)`` returns const arrays."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise GraphFileError(f"{name}: not a Hexscope graph (format tag missing)")
    version = document.get("version")
    if not isinstance(version, int):
        raise GraphFileError(f"{name}: the format version is missing")
    if version > VERSION:
        raise GraphFileError(f"{name}: written by a newer Hexscope (format version {version}; "
                             f"this version reads up to {VERSION})")
    graph = Graph()
    nodes = document.get("nodes")
    if not isinstance(nodes, list):
        raise GraphFileError(f"{name}: 'nodes' must be a list")
    for k, entry in enumerate(nodes):
        try:
            node = _node_from_entry(entry, read_array)
        except GraphFileError as exc:
            raise GraphFileError(f"{name}: node #{k}: {exc}") from None
        except (KeyError, TypeError, ValueError, EngineError) as exc:
            detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise GraphFileError(f"{name}: node #{k}: {detail}") from None
        graph._append(node)  # noqa: SLF001 - loading restores the append order as saved
    meta = document.get("meta", {})
    graph.meta.update(meta if isinstance(meta, dict) else {})
    return graph


def _node_from_entry(entry: dict[str, Any], read_array: Any) -> Node:
    node_id = int(entry["id"], 0) if isinstance(entry["id"], str) else int(entry["id"])
    outputs = tuple(OutputDef(tuple(int(v) for v in o["max_sizes"]), int(o["elementsize"]),
                              int(o.get("zero_offset", 0)), float(o.get("stepsize", 0.0)))
                    for o in entry.get("outputs", []))
    inputs = tuple((int(s, 0) if isinstance(s, str) else int(s), int(i))
                   for s, i in entry.get("inputs", []))
    const = None
    if "const" in entry and entry["const"] is not None:
        spec = entry["const"]
        if "file" in spec:
            const = Tensor.from_array(read_array(spec["file"])).readonly()
            if list(const.shape) != [int(v) for v in spec["shape"]]:
                raise GraphFileError(f"const data has shape {const.shape}, "
                                     f"the graph says {spec['shape']}")
        else:
            const = Tensor.shape_only(spec["shape"])
    position = entry.get("position")
    from hexscope.engine.graph import check_node_id

    return Node(check_node_id(node_id), str(entry["op"]), inputs, outputs,
                Padding.parse(entry.get("padding", "NA")), const, str(entry.get("label", "")),
                (float(position[0]), float(position[1])) if position else None)
