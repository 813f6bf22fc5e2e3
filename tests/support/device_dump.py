"""Write a device dump as hexagon_nn does (``print_graph_to_file`` and
``print_tensor_to_file``), from a simulator run: the tests' stand-in for a phone.

The text follows nnlib's format strings exactly: ``"---\\nnodes:\\n"``, per node
``"  0x%x:\\n    optype: %s\\n"``, ``"    inputs:\\n"`` and ``"      - [0x%x,%u]\\n"`` per
input, ``"    outputs:\\n"`` and ``"      - size: [%s]\\n        eltype: %s\\n        file:
%s_%x_%u.dat\\n"`` per output (dims joined by ``", "``), then ``"    quantized_outputs:
[0,1,2]\\n"`` when the outputs look like a quantized triple.
"""

# ruff: noqa: UP031  (printf formats on purpose: they are nnlib's own, side by side)
from __future__ import annotations

from pathlib import Path

from hexscope.engine.dtypes import DType
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor


def _eltype(t: Tensor) -> str:
    dtype = t.device_dtype
    return "int32" if dtype is DType.QINT32 else dtype.c_name   # nnlib has no qint32 name


def _quant_triple(outs: tuple[Tensor, ...]) -> bool:
    return (len(outs) == 3 and outs[0].dtype.size == 1 and outs[1].dtype.size == 4
            and outs[2].dtype.size == 4 and tuple(outs[1].shape) == (1, 1, 1, 1)
            and tuple(outs[2].shape) == (1, 1, 1, 1))


def write_dump(session: Session, folder: Path, prefix: str = "foo",
               device_prefix: str | None = None) -> Path:
    """Write ``<prefix>_graph.yaml`` and every ``.dat`` of the session's last run (consts
    included, as the device lists them); ``device_prefix`` is the path the yaml names (a
    path on the phone), default the local one."""
    named = device_prefix or str(folder / prefix)
    text = ["---\nnodes:\n"]
    nodes = session.prepared.nodes
    for node_id in session.prepared.order:
        node = nodes[node_id]
        text.append("  0x%x:\n    optype: %s\n" % (node_id, node.op))
        if node.inputs:
            text.append("    inputs:\n")
            text += ["      - [0x%x,%u]\n" % ref for ref in node.inputs]
        if node.is_const:
            outs = (node.const,) if node.const is not None else ()
        else:
            result = session.result(node_id)
            outs = result.outputs if result is not None else ()
        if not outs:
            continue
        text.append("    outputs:\n")
        triple = _quant_triple(outs)
        for k, t in enumerate(outs):
            eltype = ("quint8", "float32", "float32")[k] if triple else _eltype(t)
            text.append("      - size: [%s]\n        eltype: %s\n        file: %s_%x_%u.dat\n"
                        % (", ".join("%u" % n for n in t.shape), eltype, named, node_id, k))
            if t.has_data and not node.is_const:
                (folder / f"{prefix}_{node_id:x}_{k}.dat").write_bytes(t.array.tobytes())
        if triple:
            text.append("    quantized_outputs: [0,1,2]\n")
    path = folder / f"{prefix}_graph.yaml"
    path.write_text("".join(text))
    return path
