"""Device cycles attached to a graph's nodes, and where they are kept (issue 30).

A profile is stored beside the graph as ``<graph file>.cycles.json`` rather than in the
graph's meta: a profile belongs to one device run, not to the graph (editing or saving the
graph must not carry stale cycles along), it works for graph formats that hold no meta
(graph-init C files, .tflite models), and the app, ``hexscope run --trace`` and scripts all
find it by the graph's path.

Cycles are keyed by the prepared graph's node ids: the device reports a fused chain under
the surviving node's id (the Relu's, nnlib's ``docs/faq.txt``), which is the id of the node
Hexscope's prepare fuses the chain into, so each entry also names the authored nodes it
absorbed. Both prepares then make that node its d32 form under the same id (an
``InputSupernode_..._outd32``, a ``Supernode_..._d32``), which is the op the device names.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from hexscope.engine.d32_ops import flat_form
from hexscope.engine.device.perfdump import ProfileText
from hexscope.engine.errors import EngineError
from hexscope.engine.graph import Graph
from hexscope.engine.prepare import Prepared, prepare

__all__ = ["NodeCycles", "Profile", "ProfileError", "attach", "fused_into", "load_profile",
           "profile_path", "save_profile"]

FORMAT = "hexscope-cycles/1"


class ProfileError(EngineError):
    """A stored profile cannot be read (the message names the file)."""


@dataclass(frozen=True, slots=True)
class NodeCycles:
    node_id: int
    op: str
    cycles: int
    executions: int = 1
    absorbed: tuple[int, ...] = ()     # authored nodes prepare fused into this one
    note: str = ""


@dataclass
class Profile:
    source: str
    kind: str
    nodes: dict[int, NodeCycles] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)   # device rows with no node here
    problems: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(n.cycles for n in self.nodes.values())


def fused_into(prepared: Prepared) -> dict[int, tuple[int, ...]]:
    """Surviving node id -> the authored nodes prepare fused into it."""
    out: dict[int, list[int]] = {}
    for r in prepared.rewrites:
        if r.kind == "fused" and r.into is not None:
            out.setdefault(r.into, []).append(r.node_id)
    return {k: tuple(v) for k, v in out.items()}


def attach(graph: Graph, text: ProfileText, source: str) -> Profile:
    """The rows of ``text`` on the prepared ``graph``'s nodes."""
    prepared = prepare(graph)
    absorbed = fused_into(prepared)
    profile = Profile(source, text.kind, problems=list(text.problems))
    nodes = prepared.nodes
    for row in text.perf:
        node = nodes.get(row.node_id)
        if node is None:
            profile.unmatched.append(f"0x{row.node_id:x} ({row.op}, {row.cycles} cycles)")
            continue
        note = "" if node.op == row.op else f"the device ran {row.op} here" + (
            f" (Hexscope's prepare makes {node.op} of the same op)"
            if flat_form(node.op) == flat_form(row.op) else "")
        profile.nodes[row.node_id] = NodeCycles(row.node_id, node.op, row.cycles,
                                                row.executions,
                                                absorbed.get(row.node_id, ()), note)
    if text.delegate:
        _attach_delegate(graph, prepared, absorbed, text, profile)
    return profile


def _attach_delegate(graph: Graph, prepared: Prepared, absorbed: dict[int, tuple[int, ...]],
                     text: ProfileText, profile: Profile) -> None:
    """A TFLite operator's cycles go to its node of the row's op (else its last node in the
    plan), with a note of the operator's other nodes: the table cannot split them."""
    op_index = (graph.meta.get("tflite") or {}).get("op_index", {})
    if not op_index:
        profile.problems.append(f"{profile.source}: the delegate's table names TFLite "
                                "operators, but this graph was not imported from a .tflite "
                                "model (no operator map): nothing attached")
        profile.unmatched += [f"TFLite op {r.tflite_index} ({r.op}, {r.cycles} cycles)"
                              for r in text.delegate]
        return
    by_op: dict[int, list[int]] = {}
    for key, index in op_index.items():
        node_id = int(key, 16)
        if node_id in prepared.nodes:
            by_op.setdefault(int(index), []).append(node_id)
    order = {n: k for k, n in enumerate(prepared.plan)}
    for row in text.delegate:
        group = sorted(by_op.get(row.tflite_index, ()), key=lambda n: order.get(n, -1))
        if not group:
            profile.unmatched.append(f"TFLite op {row.tflite_index} ({row.op}, "
                                     f"{row.cycles} cycles)")
            continue
        # the row may name the op flat or in the d32 form either prepare makes of it
        same_op = [n for n in group if flat_form(prepared.nodes[n].op) == flat_form(row.op)]
        target = same_op[0] if len(same_op) == 1 else group[-1]
        note = f"TFLite op {row.tflite_index} ({row.name})"
        if row.calls > 1 or len(group) > 1:
            note += f": {row.calls} hexagon_nn node(s) together, not split"
        profile.nodes[target] = NodeCycles(target, prepared.nodes[target].op, row.cycles,
                                           1, absorbed.get(target, ()), note)


def profile_path(graph_path: str | os.PathLike[str]) -> Path:
    return Path(f"{os.fspath(graph_path)}.cycles.json")


def save_profile(profile: Profile, path: str | os.PathLike[str]) -> None:
    doc = {
        "format": FORMAT, "source": profile.source, "kind": profile.kind,
        "total_cycles": profile.total,
        "nodes": {f"0x{n.node_id:x}": {"op": n.op, "cycles": n.cycles,
                                       "executions": n.executions,
                                       "absorbed": [f"0x{a:x}" for a in n.absorbed],
                                       "note": n.note}
                  for n in profile.nodes.values()},
        "unmatched": profile.unmatched, "problems": profile.problems,
    }
    tmp = Path(f"{os.fspath(path)}.tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Read a ``.cycles.json``; raises :class:`ProfileError` naming the file."""
    try:
        doc = json.loads(Path(path).read_text())
        if doc.get("format") != FORMAT:
            raise ProfileError(f"{path}: not a Hexscope cycles file (format "
                               f"{doc.get('format')!r}, expected {FORMAT!r})")
        profile = Profile(doc["source"], doc["kind"], unmatched=list(doc["unmatched"]),
                          problems=list(doc["problems"]))
        for key, n in doc["nodes"].items():
            node_id = int(key, 16)
            profile.nodes[node_id] = NodeCycles(node_id, n["op"], int(n["cycles"]),
                                                int(n["executions"]),
                                                tuple(int(a, 16) for a in n["absorbed"]),
                                                n["note"])
    except ProfileError:
        raise
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ProfileError(f"{path}: not a valid cycles file ({exc})") from None
    return profile
