"""A device dump as the B of a comparison: the simulator runs the graph on the dump's own
INPUT data and each node's outputs are compared with the device's ``.dat`` files, matched
by node id (issue 30).

Nodes that the device's prepare made and Hexscope's did not (new ids) are listed as
unmatched in B, never guessed at; nodes Hexscope made that the device did not are unmatched
in A. The layout conversions each prepare puts around a d32 node are the exception: their
ids are each prepare's own, and their values the d32 node's, compared under its id; those
without a twin (same id and op) on the other side are left out. A problem with one output
(a missing ``.dat``, a size the yaml disagrees with, an untyped tensor) is noted on that
output and the rest is compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hexscope.engine.analysis.compare import Comparison, Trace, compare_traces, run_trace
from hexscope.engine.d32_ops import CONVERSIONS
from hexscope.engine.device.dump_reader import ELTYPES, DeviceDump, DumpNode, DumpProblem
from hexscope.engine.graph import Graph
from hexscope.engine.inputs import input_node, make_inputs
from hexscope.engine.nodes import Node
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

__all__ = ["DumpComparison", "compare_dump_file", "compare_with_dump", "dump_inputs",
           "dump_trace"]

NOT_IN_DUMP_OPS = ("Const",)    # consts have nothing a run computes


@dataclass
class DumpComparison:
    comparison: Comparison
    problems: list[str] = field(default_factory=list)   # dump-wide and per output, in order


def dump_inputs(graph: Graph, dump: DeviceDump, problems: list[str]) -> list[Tensor] | None:
    """The INPUT node's tensors as the device received them, or None (with a problem) when
    the dump has none to give."""
    want = input_node(graph)
    node = dump.nodes.get(want) if want is not None else None
    if node is None:
        node = next((n for n in dump.nodes.values() if n.op == "INPUT"), None)
    if node is None:
        problems.append(f"{dump.path.name}: no INPUT node: the graph's own inputs are used, "
                        "so every node may differ")
        return None
    declared = graph.node(want).outputs if want is not None else ()
    tensors = []
    for out in node.outputs:
        shape = declared[out.index].shape if out.index < len(declared) else None
        try:
            tensors.append(dump.load(node, out, shape))
        except DumpProblem as exc:
            problems.append(f"{exc}: the graph's own inputs are used, so every node may "
                            "differ")
            return None
    if not tensors:
        problems.append(f"{dump.path.name}: the INPUT node 0x{node.node_id:x} has no complete "
                        "output: the graph's own inputs are used, so every node may differ")
        return None
    if declared and len(tensors) != len(declared):
        # a mangled yaml can hand the INPUT another node's outputs: never run on those
        problems.append(f"{dump.path.name} line {node.line}: the INPUT node "
                        f"0x{node.node_id:x} has {len(tensors)} output(s), the graph's "
                        f"declares {len(declared)}: the graph's own inputs are used, so every "
                        "node may differ")
        return None
    return tensors


def dump_trace(dump: DeviceDump, a: Trace, problems: list[str],
               notes: dict[tuple[int, int], str]) -> Trace:
    """The dump as a :class:`Trace`, each output shaped as A's output of the same node and
    index (the .dat is flat); an output that cannot be read is a shape-only placeholder
    and its problem goes to ``notes`` and ``problems``."""
    nodes: dict[int, Node] = {}
    outputs: dict[int, tuple[Tensor, ...]] = {}
    plan = []
    for node in dump.nodes.values():
        if node.op in NOT_IN_DUMP_OPS:
            continue
        if node.op not in REGISTRY:
            problems.append(f"{dump.path.name} line {node.line}: node 0x{node.node_id:x}: op "
                            f"'{node.op}' is not one Hexscope knows; compared by id only")
        nodes[node.node_id] = Node(node.node_id, node.op)
        plan.append(node.node_id)
        outputs[node.node_id] = _node_outputs(dump, node, a.outputs.get(node.node_id, ()),
                                              problems, notes)
    return Trace(f"device dump {dump.path.name}", tuple(plan), nodes, outputs)


def _node_outputs(dump: DeviceDump, node: DumpNode, a_out: tuple[Tensor, ...],
                  problems: list[str], notes: dict[tuple[int, int], str]
                  ) -> tuple[Tensor, ...]:
    count = max((o.index + 1 for o in node.outputs), default=0)
    tensors: list[Tensor] = [Tensor.shape_only((1, 1, 1, 1))] * count
    missing = set(range(count)) - {o.index for o in node.outputs}
    for k in missing:
        notes[(node.node_id, k)] = "incomplete in the dump's yaml"
    for out in node.outputs:
        ta = a_out[out.index] if out.index < len(a_out) else None
        try:
            tb = dump.load(node, out, tuple(ta.shape) if ta is not None else None)
        except DumpProblem as exc:
            problems.append(str(exc))
            notes[(node.node_id, out.index)] = str(exc)
            dtype = ELTYPES.get(out.eltype)
            tensors[out.index] = Tensor.shape_only((tuple(out.dims) + (1,) * 4)[:4]
                                                   if len(out.dims) <= 4 else (1, 1, 1, 1),
                                                   *(() if dtype is None else (dtype,)))
            continue
        # the device's type names cannot tell qint32 from int32: take A's where they agree
        if ta is not None and ta.dtype.numpy == tb.dtype.numpy and ta.dtype is not tb.dtype:
            tb = tb.with_dtype(ta.dtype)
        tensors[out.index] = tb
    return tuple(tensors)


def _without_own_conversions(trace: Trace, other: Trace) -> Trace:
    """``trace`` without the layout conversions the other side has no twin of (the same op
    under the same id). Each prepare gives its new Convert_to/from_d32 ids of its own,
    while the d32 node they serve keeps the authored id on both sides and is compared
    there: the conversions' values are its logical values, moved."""
    def own(node_id: int) -> bool:
        op = trace.nodes[node_id].op
        twin = other.nodes.get(node_id)
        return op in CONVERSIONS and (twin is None or twin.op != op)

    drop = {i for i in trace.plan if own(i)}
    if not drop:
        return trace
    return Trace(trace.name, tuple(i for i in trace.plan if i not in drop),
                 {i: n for i, n in trace.nodes.items() if i not in drop},
                 {i: t for i, t in trace.outputs.items() if i not in drop})


def compare_with_dump(graph: Graph, dump: DeviceDump, backend: str = "sim", seed: int = 0,
                      tolerance_lsb: float = 0.0) -> DumpComparison:
    """Run ``graph`` on the dump's inputs and compare every node with the dump."""
    problems = list(dump.problems)
    notes: dict[tuple[int, int], str] = {}
    session = Session(graph, backend, seed=seed)
    try:
        inputs = dump_inputs(graph, dump, problems)
        a = run_trace(session, inputs if inputs is not None else make_inputs(graph),
                      f"{backend} on the dump's inputs" if inputs is not None else backend)
    finally:
        session.close()
    b = dump_trace(dump, a, problems, notes)
    comparison = compare_traces(_without_own_conversions(a, b), _without_own_conversions(b, a),
                                tolerance_lsb)
    for d in comparison.outputs:
        note = notes.get((d.node_id, d.index))
        if note:
            d.note = f"{d.note}; {note}" if d.note and d.note != "shape-only output" else note
        elif d.differing is not None:
            # the dump holds the logical bytes only (no d32 padding): identical means those
            d.bit_identical = d.differing == 0
    return DumpComparison(comparison, problems)


def compare_dump_file(graph: Graph, yaml_path: str, tolerance_lsb: float = 0.0,
                      backend: str = "sim") -> tuple[Comparison, str]:
    """The comparison with the dump at ``yaml_path`` and one line of its problems ('' when
    none); raises :class:`EngineError` when the yaml gives no node at all."""
    from hexscope.engine.device.dump_reader import read_dump
    from hexscope.engine.errors import EngineError

    dump = read_dump(yaml_path)
    if not dump.nodes:
        raise EngineError("; ".join(dump.problems))
    found = compare_with_dump(graph, dump, backend, tolerance_lsb=tolerance_lsb)
    note = (f"{len(found.problems)} problem(s) with the dump: " + "; ".join(found.problems)
            if found.problems else "")
    return found.comparison, note
