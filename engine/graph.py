"""Graph: hexagon_nn nodes in append order, kept in a networkx multigraph.

Scripts append nodes as with hexagon_nn's C API, and a reference to a node appended later is
an error when the graph is validated, as in the library. The editor's edit methods keep the
order valid instead (a stable topological order that otherwise keeps the user's order), and
each returns an :class:`Edit` that an undo stack can invert.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from os import PathLike

import networkx as nx
import numpy as np

from hexscope.engine.cooperate import paced
from hexscope.engine.errors import GraphError
from hexscope.engine.events import Emitter, GraphEdited
from hexscope.engine.nodes import (
    MAX_NODE_ID,
    RESERVED_ID_START,
    Node,
    OutputDef,
    Padding,
    const_tensor,
)

Ref = tuple[int, int]


@dataclass(frozen=True)
class Edit:
    """A checked change: the nodes and order before and after. ``inverse()`` undoes it."""

    description: str
    before: tuple[tuple[int, Node | None], ...]
    after: tuple[tuple[int, Node | None], ...]
    order_before: tuple[int, ...]
    order_after: tuple[int, ...]

    def inverse(self) -> Edit:
        return Edit(f"undo {self.description}", self.after, self.before, self.order_after,
                    self.order_before)

    @property
    def affects_results(self) -> bool:
        """False when the edit only moves or relabels nodes: nothing needs to run again."""
        if self.order_before != self.order_after:
            return True
        after = dict(self.after)
        return any(node is None or after.get(i) is None or _cosmetic(node) != _cosmetic(after[i])
                   for i, node in self.before)

    @property
    def changed(self) -> frozenset[int]:
        """Ids whose node (or existence) changed; the roots of what an edit makes stale."""
        return frozenset(i for i, _ in self.before) | frozenset(i for i, _ in self.after)


def _cosmetic(node: Node) -> Node:
    return node.with_(position=None, label="")


def check_node_id(node_id: int) -> int:
    """Reject id 0 and ids beyond uint32; warn about hexagon_nn's internal range."""
    if not isinstance(node_id, int | np.integer) or not 0 < int(node_id) <= MAX_NODE_ID:
        raise GraphError(f"node id {node_id!r} is invalid: ids are uint32 and 0 is rejected")
    if node_id > RESERVED_ID_START:
        warnings.warn(f"node id 0x{node_id:x} lies in hexagon_nn's internal range "
                      f"(above 0xf0000000); prepare may create nodes with the same id",
                      stacklevel=3)
    return int(node_id)


@dataclass(frozen=True, slots=True)
class GraphSnapshot:
    """A graph's nodes, duplicates and meta at one moment; saves like the graph it copies."""

    nodes: tuple[Node, ...]
    duplicates: tuple[Node, ...]
    meta: dict[str, object]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def save(self, path: str | PathLike[str]) -> None:
        from hexscope.engine.io.hexgraph import save_graph

        save_graph(self, path)


def _forget_views(g: nx.MultiDiGraph) -> None:
    """Drop the views networkx caches on ``g`` (``nodes``, ``edges``, ``in_degree``...).

    Each holds ``g``: a cycle that made a dropped graph, its nodes and its consts garbage
    for the cyclic collector only (83,000 objects at 10,000 nodes), which the app's never
    walks once they are frozen (app/collector.py). Without the views, reference counting
    frees them at once. networkx makes them again when asked."""
    cached = [name for name in vars(g)
              if isinstance(getattr(type(g), name, None), functools.cached_property)]
    for name in cached:
        del g.__dict__[name]


class Graph:
    """A hexagon_nn graph. Iterating yields nodes in append (execution) order."""

    def __init__(self) -> None:
        self._g = nx.MultiDiGraph()
        weakref.finalize(self, _forget_views, self._g).atexit = False
        self._order: list[int] = []
        # consumers whose inputs name a node that does not exist (yet), by that node's id
        self._waiting: dict[int, set[int]] = {}
        self.edited: Emitter[GraphEdited] = Emitter()
        self.meta: dict[str, object] = {}

    # scripting API, as hexagon_nn's C calls ---------------------------------------------
    def append_node(self, node_id: int, op: str, inputs: Iterable[Ref] = (),
                    outputs: int | Sequence[OutputDef] = 0, padding: str | int | Padding = "NA",
                    label: str = "") -> Node:
        """Append a node, as ``hexagon_nn_append_node``.

        ``outputs`` is a count (outputs without declared sizes) or a list of OutputDefs.
        """
        if isinstance(outputs, int):
            defs = tuple(OutputDef(max_sizes=(), elementsize=0) for _ in range(outputs))
        else:
            defs = tuple(outputs)
        refs = tuple((int(s), int(i)) for s, i in inputs)
        for src, _ in refs:
            if src == 0:
                raise GraphError(f"node 0x{node_id:x}: input refers to node id 0 "
                                 "(hexagon_nn: 'const tensor in generic input')")
        node = Node(check_node_id(node_id), op, refs, defs, Padding.parse(padding), label=label)
        self._append(node)
        return node

    def append_const_node(self, node_id: int, data: np.ndarray | None = None,
                          shape: Sequence[int] | None = None, label: str = "") -> Node:
        """Append a Const, as ``hexagon_nn_append_const_node``: data up to 4-D, padded to
        4-D on the left. ``data=None`` with a ``shape`` is a shape-only const."""
        try:
            tensor = const_tensor(data, tuple(shape) if shape is not None else None)
        except ValueError as exc:
            raise GraphError(f"const node 0x{node_id:x}: {exc}") from None
        defs = (OutputDef(tensor.shape, tensor.dtype.size if tensor.has_data else 0),)
        node = Node(check_node_id(node_id), "Const", (), defs, const=tensor, label=label)
        self._append(node)
        return node

    def _append(self, node: Node) -> None:
        # A duplicate id is kept, as hexagon_nn does until prepare, so validation reports it.
        if node.node_id in self._g:
            self.meta.setdefault("duplicates", []).append(node)  # type: ignore[union-attr]
            return
        self._order.append(node.node_id)
        self._put(node)
        self._relink(frozenset({node.node_id}))
        self.edited.emit(GraphEdited(f"append 0x{node.node_id:x}", frozenset({node.node_id})))

    # reading --------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Node]:
        return (self._g.nodes[i]["node"] for i in self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._g

    def node(self, node_id: int) -> Node:
        try:
            return self._g.nodes[node_id]["node"]
        except KeyError:
            raise GraphError(f"node 0x{node_id:x} does not exist") from None

    @property
    def order(self) -> tuple[int, ...]:
        return tuple(self._order)

    @property
    def nx(self) -> nx.MultiDiGraph:
        """The networkx view: edges src -> dst keyed by the consumer's port index."""
        return self._g

    @property
    def duplicates(self) -> list[Node]:
        return list(self.meta.get("duplicates", []))  # type: ignore[arg-type]

    def consumers(self, node_id: int) -> list[tuple[int, int, int]]:
        """(consumer id, port, output index) for every input that reads ``node_id``."""
        return sorted((dst, port, data["out"])
                      for _, dst, port, data in self._g.out_edges(node_id, keys=True, data=True))

    def downstream(self, node_ids: Iterable[int]) -> set[int]:
        """The given nodes and every node that reads from them, directly or not."""
        seen: set[int] = set()
        stack = [i for i in node_ids if i in self._g]
        while stack:
            i = stack.pop()
            if i not in seen:
                seen.add(i)
                stack.extend(self._g.successors(i))
        return seen

    def free_id(self, start: int = 0x1000) -> int:
        """The smallest unused id at or above ``start``."""
        i = start
        while i in self._g:
            i += 1
        return i

    # editing --------------------------------------------------------------------------------
    def add_node(self, node: Node, index: int | None = None) -> Edit:
        if node.node_id in self._g:
            raise GraphError(f"node 0x{node.node_id:x} already exists")
        check_node_id(node.node_id)
        order = list(self._order)
        order.insert(len(order) if index is None else index, node.node_id)
        return self._commit(f"add {node.op} 0x{node.node_id:x}", {node.node_id: node}, order)

    def remove_node(self, node_id: int) -> Edit:
        """Remove a node; its consumers keep dangling references, which validation reports."""
        self.node(node_id)
        order = [i for i in self._order if i != node_id]
        # Dropping a node from an order keeps every other node after its producers.
        return self._commit(f"remove 0x{node_id:x}", {node_id: None}, order, reorder=False)

    def set_input(self, node_id: int, port: int, ref: Ref | None) -> Edit:
        """Rewire input ``port`` to ``ref``; None removes it (only the last input)."""
        node = self.node(node_id)
        inputs = list(node.inputs)
        if ref is None:
            if port != len(inputs) - 1:
                raise GraphError(f"node 0x{node_id:x}: only the last input can be removed")
            inputs.pop()
        elif port == len(inputs):
            inputs.append((int(ref[0]), int(ref[1])))
        elif 0 <= port < len(inputs):
            inputs[port] = (int(ref[0]), int(ref[1]))
        else:
            raise GraphError(f"node 0x{node_id:x} has no input {port}")
        return self.replace_node(node.with_(inputs=tuple(inputs)),
                                 f"wire input {port} of 0x{node_id:x}")

    def set_op(self, node_id: int, op: str) -> Edit:
        return self.replace_node(self.node(node_id).with_(op=op), f"op of 0x{node_id:x}")

    def set_padding(self, node_id: int, padding: str | int | Padding) -> Edit:
        node = self.node(node_id).with_(padding=Padding.parse(padding))
        return self.replace_node(node, f"padding of 0x{node_id:x}")

    def set_const(self, node_id: int, data: np.ndarray | None,
                  shape: Sequence[int] | None = None) -> Edit:
        node = self.node(node_id)
        if not node.is_const:
            raise GraphError(f"node 0x{node_id:x} is a {node.op}, not a Const")
        tensor = const_tensor(data, tuple(shape) if shape is not None else None)
        defs = (OutputDef(tensor.shape, tensor.dtype.size if tensor.has_data else 0),)
        return self.replace_node(node.with_(const=tensor, outputs=defs),
                                 f"data of const 0x{node_id:x}")

    def set_outputs(self, node_id: int, outputs: Sequence[OutputDef]) -> Edit:
        node = self.node(node_id).with_(outputs=tuple(outputs))
        return self.replace_node(node, f"outputs of 0x{node_id:x}")

    def set_label(self, node_id: int, label: str) -> Edit:
        return self.replace_node(self.node(node_id).with_(label=label), f"label of 0x{node_id:x}")

    def move(self, positions: dict[int, tuple[float, float]]) -> Edit:
        """Set editor positions (one undo step for a whole drag or layout)."""
        after = {i: self.node(i).with_(position=(float(x), float(y)))
                 for i, (x, y) in positions.items()}
        return self._commit("move", after, list(self._order), reorder=False)

    def renumber(self, old: int, new: int) -> Edit:
        """Give a node a new id and update every reference to it."""
        node = self.node(old)
        if new in self._g:
            raise GraphError(f"cannot renumber 0x{old:x}: 0x{new:x} already exists")
        check_node_id(new)
        after: dict[int, Node | None] = {old: None, new: node.with_(node_id=new)}
        for dst, _, _ in self.consumers(old):
            if dst == old:
                continue
            consumer = self.node(dst)
            refs = tuple((new if s == old else s, i) for s, i in consumer.inputs)
            after[dst] = consumer.with_(inputs=refs)
        order = [new if i == old else i for i in self._order]
        return self._commit(f"renumber 0x{old:x} to 0x{new:x}", after, order)

    def replace_node(self, node: Node, description: str = "") -> Edit:
        self.node(node.node_id)
        return self._commit(description or f"edit 0x{node.node_id:x}", {node.node_id: node},
                            list(self._order))

    def apply(self, edit: Edit) -> None:
        """Apply an edit (or its inverse) as recorded, without re-checking it."""
        for node_id, node in edit.after:
            if node is None:
                if node_id in self._g:
                    for consumer in self._g.successors(node_id):
                        self._waiting.setdefault(node_id, set()).add(consumer)
                    self._g.remove_node(node_id)
            else:
                self._put(node)
        self._order = list(edit.order_after)
        self._relink(edit.changed)
        self.edited.emit(GraphEdited(edit.description, edit.changed, edit.affects_results))

    def _commit(self, description: str, after: dict[int, Node | None], order: list[int],
                reorder: bool = True) -> Edit:
        before = tuple((i, self._g.nodes[i]["node"] if i in self._g else None) for i in after)
        if reorder and self._keeps_order(order, after):
            # a relabel, a rewire from an earlier node, a node added after its inputs: the
            # stable topological order is ``order`` itself (Kahn's pass took ~50 ms of a
            # palette add at 10,000 nodes)
            reorder = False
        if reorder:
            order = _stable_topological(order, {**self._nodes(), **after}, description)
        edit = Edit(description, before, tuple(after.items()), tuple(self._order), tuple(order))
        self.apply(edit)
        return edit

    def _keeps_order(self, order: list[int], after: dict[int, Node | None]) -> bool:
        """Whether ``order`` is already the stable topological order after the change: the
        nodes there before keep their order, no node waits for a new one (its reader would
        come first), and every changed node reads only nodes before it."""
        new = {i for i in after if i not in self._g}
        kept = [i for i in order if i not in new] if new else order
        return (kept == self._order and not any(i in self._waiting for i in new)
                and _still_ordered(order, after))

    def _nodes(self) -> dict[int, Node | None]:
        return {i: self._g.nodes[i]["node"] for i in self._order}

    def _put(self, node: Node) -> None:
        if node.node_id in self._g:
            old = self._g.nodes[node.node_id]["node"]
            if old.inputs == node.inputs and \
                    self._g.in_degree(node.node_id) == len(node.inputs):
                # Same wiring (a move, a relabel), all of it linked: the edges stay.
                self._g.nodes[node.node_id]["node"] = node
                return
            self._g.remove_edges_from(list(self._g.in_edges(node.node_id, keys=True)))
        self._g.add_node(node.node_id, node=node)
        for port, (src, out) in enumerate(node.inputs):
            if src in self._g:
                self._g.add_edge(src, node.node_id, key=port, out=out)
            else:
                self._waiting.setdefault(src, set()).add(node.node_id)

    def _relink(self, changed: frozenset[int]) -> None:
        """Reconnect consumers whose dangling references a change may have resolved."""
        for node_id in changed:
            for consumer in self._waiting.pop(node_id, set()):
                if consumer in self._g:
                    self._put(self._g.nodes[consumer]["node"])

    # files ----------------------------------------------------------------------------------
    def save(self, path: str | PathLike[str]) -> None:
        from hexscope.engine.io.hexgraph import save_graph

        save_graph(self, path)

    def snapshot(self) -> GraphSnapshot:
        """The graph as it is now, safe to save from another thread (nodes are immutable)."""
        return GraphSnapshot(tuple(self), tuple(self.duplicates), dict(self.meta))

    @classmethod
    def from_snapshot(cls, snapshot: GraphSnapshot) -> Graph:
        """A graph of its own with a snapshot's nodes, duplicates and meta, in its append
        order (the snapshot's nodes are immutable, so they are shared, not copied)."""
        graph = cls()
        for node in paced(snapshot.nodes):      # 5 us a node: an app's threads take turns
            graph._append(node)
        for node in snapshot.duplicates:
            graph._append(node)      # kept, so that validation reports them as the file did
        graph.meta.update({k: v for k, v in snapshot.meta.items() if k != "duplicates"})
        return graph

    def to_bytes(self) -> bytes:
        """The bytes :meth:`save` writes; equal graphs give equal bytes."""
        from hexscope.engine.io.hexgraph import graph_bytes

        return graph_bytes(self)

    @classmethod
    def load(cls, path: str | PathLike[str]) -> Graph:
        from hexscope.engine.io.hexgraph import load_graph

        return load_graph(path)


def _still_ordered(order: list[int], after: dict[int, Node | None]) -> bool:
    """Whether every changed node still reads only nodes before it in ``order`` (then the
    stable topological order is ``order`` itself; a self-reference is never in order)."""
    if any(node is None for node in after.values()):
        return False
    rank = {node_id: k for k, node_id in enumerate(order)}
    return all(node_id in rank and all(rank.get(src, -1) < rank[node_id]
                                       for src, _ in node.inputs)  # type: ignore[union-attr]
               for node_id, node in after.items())


def _stable_topological(order: list[int], nodes: dict[int, Node | None],
                        description: str) -> list[int]:
    """Kahn's algorithm that always takes the earliest node (in ``order``) that is ready."""
    import heapq

    rank = {node_id: k for k, node_id in enumerate(order)}
    preds: dict[int, set[int]] = {}
    succs: dict[int, list[int]] = {i: [] for i in order}
    for node_id in order:
        node = nodes[node_id]
        srcs = {s for s, _ in node.inputs if s in rank} if node else set()
        if node_id in srcs:
            raise GraphError(f"{description}: node 0x{node_id:x} would read its own output")
        preds[node_id] = srcs
        for s in srcs:
            succs[s].append(node_id)
    ready = [rank[i] for i in order if not preds[i]]
    heapq.heapify(ready)
    result: list[int] = []
    while ready:
        node_id = order[heapq.heappop(ready)]
        result.append(node_id)
        for nxt in succs[node_id]:
            preds[nxt].discard(node_id)
            if not preds[nxt]:
                heapq.heappush(ready, rank[nxt])
    if len(result) != len(order):
        stuck = sorted(set(order) - set(result))
        raise GraphError(f"{description}: the edit would make a cycle through "
                         + ", ".join(f"0x{i:x}" for i in stuck[:6]))
    return result
