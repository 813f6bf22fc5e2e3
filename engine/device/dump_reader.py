"""Read what hexagon_nn dumps with ``NN_OPTION_ENABLE_GRAPH_PRINT`` and
``NN_OPTION_ENABLE_TENSOR_PRINT``: ``<prefix>_graph.yaml`` (the graph after the device's own
prepare) and one ``<prefix>_<id>_<idx>.dat`` per node output (issue 30).

The yaml is the fixed text nnlib's ``print_graph_to_file`` prints with ``snprintf``, not
general YAML, and it is read line by line against those format strings rather than with a
YAML library: a dump cut short (the device ran out of space, a copy stopped) must still give
every node before the cut, with the line where it stops; PyYAML rejects such a file whole and
forgets line numbers, and its YAML 1.1 reads the ``0x..`` keys as ints where a YAML 1.2
parser keeps strings. Each ``.dat`` holds the output's raw elements in logical b,h,w,d order,
d32 padding dropped (``print_tensor_to_file``), so it is read as a flat array.

Nothing here raises for a bad dump: each problem is one message naming the file and the node,
kept in :attr:`DeviceDump.problems` (yaml) or raised as :class:`DumpProblem` for one output,
so that the rest can be compared.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import EngineError
from hexscope.engine.tensor import Tensor

__all__ = ["DeviceDump", "DumpNode", "DumpOutput", "DumpProblem", "ELTYPES", "read_dump"]

# nnlib's TypeStrings, in NN_TYPE_* order; "unk8/16/32" name a tensor whose type the
# device did not record (type 0): such a .dat cannot be read as numbers.
ELTYPES: dict[str, DType] = {
    "qint8": DType.QINT8, "quint8": DType.QUINT8, "int8": DType.INT8, "uint8": DType.UINT8,
    "qint16": DType.QINT16, "quint16": DType.QUINT16, "int32": DType.INT32,
    "float32": DType.FLOAT32,
}
UNTYPED = ("void", "unk", "unk8", "unk16", "unk32")

_NODE = re.compile(r"  0x([0-9a-fA-F]+):")
_OPTYPE = re.compile(r"    optype: (\S+)")
_INPUT = re.compile(r"      - \[0x([0-9a-fA-F]+),(\d+)\]")
_SIZE = re.compile(r"      - size: \[(.*)\]")
# whole numbers between commas (nnlib joins them with ", "), spaces around them allowed
_DIMS = re.compile(r" *(?:[0-9]+ *(?:, *[0-9]+ *)*)?")
_ELTYPE = re.compile(r"        eltype: (\S+)")
_FILE = re.compile(r"        file: (.+)")
_QUANTIZED = re.compile(r"    quantized_outputs: \[([0-9, ]*)\]")
_KNOWN = {"---", "nodes:", "    inputs:", "    outputs:"}


class DumpProblem(EngineError):
    """One output of a device dump cannot be read (the message names the file and node)."""


@dataclass(frozen=True, slots=True)
class DumpOutput:
    index: int
    dims: tuple[int, ...]       # b,h,w,d, as many as the output's rank
    eltype: str
    file: str                   # as the device wrote it (its own path prefix)

    @property
    def elements(self) -> int:
        return math.prod(self.dims)


@dataclass(frozen=True, slots=True)
class DumpNode:
    node_id: int
    op: str
    inputs: tuple[tuple[int, int], ...]
    outputs: tuple[DumpOutput, ...]
    line: int                   # where the node starts in the yaml

    @property
    def title(self) -> str:
        return f"0x{self.node_id:x} ({self.op})"


@dataclass
class DeviceDump:
    """The dump's graph, in the device's execution order, and what was wrong with its yaml."""

    path: Path
    nodes: dict[int, DumpNode] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def dat_path(self, out: DumpOutput) -> Path:
        """The ``.dat`` beside the yaml: the device's prefix is a path on the device, so
        only its file name is kept unless that full path exists here."""
        given = Path(out.file)
        if given.is_absolute() and given.is_file():
            return given
        return self.path.parent / given.name

    def load(self, node: DumpNode, out: DumpOutput,
             shape: tuple[int, int, int, int] | None = None) -> Tensor:
        """One output's data as a flat tensor of ``shape`` (when given and of the same
        element count) or of the yaml's dims; raises :class:`DumpProblem`."""
        path = self.dat_path(out)
        where = f"{path.name} (node {node.title}, output {out.index})"
        if out.eltype in UNTYPED or out.eltype not in ELTYPES:
            raise DumpProblem(f"{where}: element type '{out.eltype}' was not recorded by the "
                              "device, so its bytes cannot be read as numbers")
        dtype = ELTYPES[out.eltype]
        expected = out.elements * dtype.size
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise DumpProblem(f"{where}: missing (the yaml names it; was the dump copied "
                              "whole?)") from None
        except OSError as exc:
            raise DumpProblem(f"{where}: cannot read: {exc.strerror or exc}") from None
        if len(data) != expected:
            dims = "x".join(map(str, out.dims)) or "scalar"
            raise DumpProblem(f"{where}: {len(data)} bytes, but the yaml says {dims} "
                              f"{out.eltype} = {expected} bytes")
        array = np.frombuffer(data, dtype=dtype.numpy)
        if shape is not None and math.prod(shape) == out.elements:
            dims4 = shape
        else:
            dims4 = (tuple(out.dims) + (1, 1, 1, 1))[:4] if len(out.dims) <= 4 else None
            if dims4 is None or math.prod(dims4) != out.elements:
                raise DumpProblem(f"{where}: rank {len(out.dims)} is not a 4-D shape")
        return Tensor.from_array(array.reshape(dims4), dtype).readonly()


@dataclass
class _Pending:
    node_id: int
    line: int
    op: str = ""
    inputs: list[tuple[int, int]] = field(default_factory=list)
    outputs: list[dict] = field(default_factory=list)


def read_dump(path: str | Path) -> DeviceDump:
    """Read ``<prefix>_graph.yaml``; never raises for its content (see ``problems``)."""
    path = Path(path)
    dump = DeviceDump(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        dump.problems.append(f"{path}: cannot read: {exc.strerror or exc}")
        return dump
    if not text.strip():
        dump.problems.append(f"{path.name}: empty, no nodes (is this a hexagon_nn graph "
                             "dump?)")
        return dump
    lines = text.split("\n")
    cut = not text.endswith("\n")
    if cut:
        dump.problems.append(f"{path.name}: line {len(lines)} is cut short "
                             f"({lines[-1].strip()!r}): the file is truncated; the node "
                             "it belongs to is read up to the line before")
        lines = lines[:-1]
    pending: _Pending | None = None
    for number, line in enumerate(lines, 1):
        if not line or line in _KNOWN:
            continue
        if m := _NODE.fullmatch(line):
            _finish(dump, pending)
            pending = _Pending(int(m.group(1), 16), number)
            if pending.node_id in dump.nodes:
                dump.problems.append(f"{path.name} line {number}: node 0x{pending.node_id:x} "
                                     "appears twice; the second is kept")
            continue
        if pending is None:
            dump.problems.append(f"{path.name} line {number}: {line.strip()!r} is outside "
                                 "any node")
            continue
        if (m := _OPTYPE.fullmatch(line)) and pending.op:
            dump.problems.append(f"{path.name} line {number}: node 0x{pending.node_id:x}: a "
                                 f"second optype {m.group(1)!r} (a node line lost?); "
                                 f"{pending.op!r} is kept")
        elif m:
            pending.op = m.group(1)
        elif m := _INPUT.fullmatch(line):
            pending.inputs.append((int(m.group(1), 16), int(m.group(2))))
        elif m := _SIZE.fullmatch(line):
            pending.outputs.append(_output_size(m.group(1), number))
        elif (m := _ELTYPE.fullmatch(line)) and pending.outputs:
            pending.outputs[-1]["eltype"] = m.group(1)
        elif (m := _FILE.fullmatch(line)) and pending.outputs:
            pending.outputs[-1]["file"] = m.group(1).strip()
        elif _QUANTIZED.fullmatch(line):
            pass                # nnlib's guess that outputs 0-2 are a quantized triple
        else:
            dump.problems.append(f"{path.name} line {number}: node 0x{pending.node_id:x}: "
                                 f"{line.strip()!r} is not a line hexagon_nn writes")
    _finish(dump, pending)
    if not dump.nodes and not dump.problems:
        dump.problems.append(f"{path.name}: no nodes (is this a hexagon_nn graph dump?)")
    return dump


def _output_size(text: str, line: int) -> dict:
    """A ``size:`` line's output entry; a size that is not a list of whole numbers is
    kept as the entry's problem (the output keeps its index, and is not compared)."""
    if not _DIMS.fullmatch(text):
        return {"dims": (), "line": line,
                "bad": f"size [{text}] is not a list of whole numbers"}
    return {"dims": tuple(int(x) for x in text.split(",") if x.strip()), "line": line}


def _finish(dump: DeviceDump, pending: _Pending | None) -> None:
    if pending is None:
        return
    name = dump.path.name
    if not pending.op:
        dump.problems.append(f"{name} line {pending.line}: node 0x{pending.node_id:x} has no "
                             "optype; skipped")
        return
    outputs = []
    for k, out in enumerate(pending.outputs):
        if "bad" in out:
            dump.problems.append(f"{name} line {out['line']}: node 0x{pending.node_id:x} "
                                 f"output {k}: {out['bad']}; not compared")
            continue
        if "eltype" not in out or "file" not in out:
            dump.problems.append(f"{name} line {out['line']}: node 0x{pending.node_id:x} "
                                 f"output {k} is incomplete (no "
                                 f"{'eltype' if 'eltype' not in out else 'file'}); not compared")
            continue
        outputs.append(DumpOutput(k, out["dims"], out["eltype"], out["file"]))
    dump.nodes[pending.node_id] = DumpNode(pending.node_id, pending.op, tuple(pending.inputs),
                                           tuple(outputs), pending.line)
