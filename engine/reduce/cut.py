"""Cut a graph down to some of its units, freezing every tensor they read from the rest.

A tensor a kept node reads from a dropped unit takes the value it had in the original
(failing) run: a tensor cut before the first kept unit becomes an output of the INPUT node
(a quantized tensor's min and max, float scalars, become Consts), one from a side branch
dropped between kept units becomes a Const. A d32 tensor always goes through the INPUT, which
passes its memory as it is, padding bytes included (a Const is flat). Kept nodes keep their
ids, so reports on the candidate line up with the original; the frozen Const of a dropped
node's first output takes that node's id too (its ranges get new ids). The outputs that
dropped nodes read are fed to one OUTPUT node, so prepare does not remove the kept nodes as
dead.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import GraphError
from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.nodes import Node, OutputDef
from hexscope.engine.reduce.state import Reads, StateCut, plan_state
from hexscope.engine.reduce.units import IO_OPS, Unit
from hexscope.engine.tensor import Tensor

Ref = tuple[int, int]
#: the value a tensor had in the original run (None: it was never computed)
ValueOf = Callable[[Ref], Tensor | None]


@dataclass(frozen=True, slots=True)
class Cut:
    """One frozen tensor: ``ref`` in the original, ``kind`` "input" or "const", and what
    the candidate reads instead (``into``)."""

    ref: Ref
    kind: str
    into: Ref


@dataclass(frozen=True)
class Candidate:
    """A cut graph with the inputs that reproduce the original run's values."""

    graph: Graph
    inputs: tuple[Tensor, ...]
    units: tuple[int, ...]          # the kept units' group ids, in plan order
    kept: frozenset[int]            # the kept authored nodes (Consts they read included)
    cuts: tuple[Cut, ...]

    @property
    def size(self) -> int:
        return len(self.graph)


def is_range_word(tensor: Tensor) -> bool:
    return tensor.dtype is DType.FLOAT32 and tensor.has_data and tensor.elements == 1


def cut_graph(graph: Graph, units: Sequence[Unit], kept: Collection[int],
              value_of: ValueOf, reads: Reads | None = None) -> Candidate:
    """The candidate that keeps the units at positions ``kept`` (indices into ``units``).
    ``reads``: what nodes read from Variables in the original run (see :mod:`state`).

    Raises
    ------
    GraphError
        A kept node reads a tensor the original run never computed.
    """
    if not kept:
        raise GraphError("a candidate keeps at least one unit")
    first = min(kept)
    kept_units = [units[k] for k in sorted(kept)]
    kept_ids = {m for u in kept_units for m in u.members}
    position = {m: k for k, u in enumerate(units) for m in u.members}
    state = _CutState(graph, first, position, value_of)
    held = plan_state(graph, position, kept_ids, reads or {})
    body: list[Node] = []
    for node in graph:
        if node.node_id in kept_ids or node.node_id in held.variables:
            refs = tuple(_input(state, held, kept_ids, node.node_id, j, r)
                         for j, r in enumerate(node.inputs))
            body.append(node if refs == node.inputs else node.with_(inputs=refs))
    needed = {src for n in body for src, _ in n.inputs}
    consts = [n for n in graph if n.is_const and n.node_id in needed]
    nodes = ([state.input_node()] if state.inputs else []) + state.consts + consts + body
    output = _output_node(graph, body, kept_ids | held.variables, state)
    if output is not None:
        nodes.append(output)
    meta = {k: v for k, v in graph.meta.items() if k not in ("inputs", "duplicates")}
    cut = Graph.from_snapshot(GraphSnapshot(tuple(nodes), (), meta))
    return Candidate(cut, tuple(state.inputs), tuple(u.group for u in kept_units),
                     frozenset(kept_ids | held.variables | {n.node_id for n in consts}),
                     tuple(state.cuts))


def _input(state: _CutState, held: StateCut, kept_ids: set[int], node_id: int, j: int,
           ref: Ref) -> Ref:
    """What input ``j`` of a kept node reads in the candidate."""
    if (node_id, j) in held.frozen:
        return state.freeze(ref, held.frozen[(node_id, j)])
    if node_id in held.variables and (node_id, j) in held.start:
        # a Variable starts from the state's value at the cut: a Const it copies
        return state.constant(ref, held.start[(node_id, j)], f"state 0x{node_id:x}:{j}")
    if ref[0] in held.variables or ref[0] in kept_ids or _is_const(state.graph, ref[0]):
        return ref
    return state.freeze(ref)


def _is_const(graph: Graph, node_id: int) -> bool:
    return node_id in graph and graph.node(node_id).is_const


class _CutState:
    """The frozen tensors of one cut, each made once."""

    def __init__(self, graph: Graph, first: int, position: dict[int, int],
                 value_of: ValueOf) -> None:
        self.graph = graph
        self.first = first
        self.position = position
        self.value_of = value_of
        self.inputs: list[Tensor] = []
        self.consts: list[Node] = []
        self.cuts: list[Cut] = []
        self._made: dict[object, Ref] = {}
        self._taken = set(graph.order)
        self._next = max(graph.order, default=0x1000) + 1
        originals = [n.node_id for n in graph if n.op == "INPUT"]
        self.input_id = originals[0] if originals else self.fresh()

    def fresh(self) -> int:
        while self._next in self._taken:
            self._next += 1
        self._taken.add(self._next)
        return self._next

    def freeze(self, ref: Ref, read: Tensor | None = None) -> Ref:
        """``ref`` frozen to its value in the original run, or to ``read``: what one node
        read from a Variable (readers of one output can read different values)."""
        key = (ref, id(read)) if read is not None else ref
        if key in self._made:
            return self._made[key]
        tensor = self.value_of(ref) if read is None else read
        if tensor is None or not tensor.has_data:
            raise GraphError(f"cannot cut at 0x{ref[0]:x}:{ref[1]}: the original run did not "
                             "compute this tensor")
        src = ref[0]
        before = self.position.get(src, -1) < self.first
        if tensor.layout is Layout.D32 or (before and not is_range_word(tensor)):
            into = (self.input_id, len(self.inputs))
            self.inputs.append(tensor)
            kind = "input"
        else:
            # a dropped node's data keeps its id (reports line up); its ranges get new ones
            fixed = ref[1] == 0 and read is None and self.graph.node(src).op not in IO_OPS
            into = self.constant(ref, tensor, f"frozen 0x{src:x}:{ref[1]}",
                                 src if fixed else None)
            kind = "const"
        self._made[key] = into
        self.cuts.append(Cut(ref, kind, into))
        return into

    def constant(self, ref: Ref, tensor: Tensor, label: str, node_id: int | None = None
                 ) -> Ref:
        node_id = self.fresh() if node_id is None else node_id
        data = Tensor.from_array(tensor.array, tensor.dtype).readonly()
        self.consts.append(Node(node_id, "Const", (), (OutputDef(data.shape, data.dtype.size),),
                                const=data, label=label))
        return (node_id, 0)

    def input_node(self) -> Node:
        outputs = tuple(OutputDef(t.shape, t.dtype.size) for t in self.inputs)
        label = self.graph.node(self.input_id).label if self.input_id in self.graph else ""
        return Node(self.input_id, "INPUT", (), outputs, label=label)


def _output_node(graph: Graph, body: list[Node], kept_ids: set[int],
                 state: _CutState) -> Node | None:
    """An OUTPUT reading every kept output that a dropped node (or an OUTPUT) read."""
    refs: list[Ref] = []
    for node in body:
        read = sorted({out for dst, _, out in graph.consumers(node.node_id)
                       if dst not in kept_ids})
        refs += [(node.node_id, out) for out in read]
    if not refs:
        return None
    originals = [n for n in graph if n.op == "OUTPUT"]
    node_id = originals[0].node_id if originals else state.fresh()
    return Node(node_id, "OUTPUT", tuple(refs), label=originals[0].label if originals else "")
