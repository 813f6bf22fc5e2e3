"""Validation: every problem of a graph at once, each naming the node (in hex) and the input.

The same rules serve the editor while the user drags a connection (:func:`can_connect`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from hexscope.engine.cooperate import EVERY, paced, pause
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.gc_pause import gc_paused
from hexscope.engine.graph import Graph
from hexscope.engine.nodes import RESERVED_ID_START, Node
from hexscope.engine.ops.registry import REGISTRY, OpRegistry, Port


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Issue:
    node_id: int
    code: str
    message: str
    port: int | None = None
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        where = f"node 0x{self.node_id:x}" + (f" input {self.port}" if self.port is not None
                                              else "")
        kind = "" if self.severity is Severity.ERROR else "warning: "
        return f"{where}: {kind}{self.message}"


def output_port(graph: Graph, ref: tuple[int, int], registry: OpRegistry = REGISTRY
                ) -> Port | None:
    """The declared port behind output ``ref`` (a Const's comes from its data)."""
    src, idx = ref
    if src not in graph:
        return None
    node = graph.node(src)
    if node.is_const:
        if node.const is None or not node.const.has_data:
            return Port("shape", None)
        return Port("data", node.const.dtype)
    key = (id(registry), node.op, idx, len(node.outputs))
    if key not in _OUTPUT_PORTS:
        # Asked once per edge; the answer depends only on the op and the counts.
        if node.op not in registry:
            return None
        _OUTPUT_PORTS[key] = registry.get(node.op).outputs.port(idx, len(node.outputs))
    return _OUTPUT_PORTS[key]


_OUTPUT_PORTS: dict[tuple[int, str, int, int], Port | None] = {}


def _type_problem(src: Port | None, dst: Port | None) -> str | None:
    if src is None or dst is None or dst.shape_only:
        return None
    if src.dtype and dst.dtype and src.dtype is not DType.VOID and not dst.dtype.compatible(
            src.dtype):
        return f"expects {dst.type_text} on '{dst.name}', gets {src.type_text}"
    if src.layout and dst.layout and src.layout is not dst.layout:
        return (f"expects a {dst.layout.name.lower()} tensor on '{dst.name}', "
                f"gets {src.layout.name.lower()}")
    return None


def can_connect(graph: Graph, src: tuple[int, int], dst: int, port: int,
                registry: OpRegistry = REGISTRY) -> Issue | None:
    """Why output ``src`` may not feed input ``port`` of node ``dst`` (None if it may)."""
    if src[0] == dst:
        return Issue(dst, "cycle", "a node cannot read its own output", port)
    if src[0] not in graph or dst not in graph:
        return Issue(dst, "dangling", f"node 0x{src[0]:x} does not exist", port)
    producer, consumer = graph.node(src[0]), graph.node(dst)
    if not 0 <= src[1] < len(producer.outputs):
        return Issue(dst, "bad-output", f"0x{src[0]:x} has no output {src[1]}", port)
    if src[0] in graph.downstream([dst]):
        return Issue(dst, "cycle", f"0x{src[0]:x} already reads from 0x{dst:x}: that would "
                     "make a cycle", port)
    if consumer.op not in registry:
        return None
    ports = registry.get(consumer.op).inputs
    count = max(len(consumer.inputs), port + 1)
    if not ports.allows(count) and ports.arity[1] is not None and count > ports.arity[1]:
        return Issue(dst, "arity", f"{consumer.op} takes {ports.arity_text()} inputs", port)
    problem = _type_problem(output_port(graph, src, registry), ports.port(port, count))
    return Issue(dst, "type", problem, port) if problem else None


def validate(graph: Graph, registry: OpRegistry = REGISTRY) -> list[Issue]:
    """All problems of ``graph``: errors first in node order, then warnings."""
    return Validator(registry).validate(graph)


class Validator:
    """:func:`validate` that keeps each node's problems and checks again only the nodes an
    edit changed or whose producers it changed (nodes are immutable, so identity tells).

    The editor validates after every edit; at 10,000 nodes the per-node checks are most of
    the time, and an edit touches a handful. A change of execution order checks all again,
    unless it only removed or added nodes (the others keep their relative order).
    ``checked`` counts the nodes checked by the last call.
    """

    def __init__(self, registry: OpRegistry = REGISTRY) -> None:
        self.registry = registry
        self._order: tuple[int, ...] = ()
        self._cache: dict[int, tuple[tuple[Node | None, ...], list[Issue]]] = {}
        self._cycles: list[list[int]] | None = None   # while no node's inputs change
        self._flagged: set[int] = set()               # nodes with problems in the cache
        self._graph: Graph | None = None
        self._readers: dict[int, set[int]] | None = None   # kept by add/remove revalidations
        self.checked = 0

    def validate(self, graph: Graph, changed: Iterable[int] | None = None) -> list[Issue]:
        """The problems of ``graph``. ``changed``: every node id edited since this
        validator's last call on the same graph (the ``GraphEdited.changed`` of the edits
        between), so only they and their consumers are visited, not the whole graph (a
        key per node: 40 ms of 10,000 nodes per edit). None visits every node."""
        with gc_paused():     # a key per node: a collection would walk the whole heap
            if changed is not None and graph is self._graph and self._cycles is not None:
                order = graph.order
                if order == self._order:
                    return self._revalidate(graph, set(changed))
                if _same_relative_order(self._order, order):
                    return self._revalidate_reordered(graph, set(changed), order)
            self._graph = graph
            self._readers = None
            return self._validate(graph)

    def _revalidate_reordered(self, graph: Graph, changed: set[int],
                              order: tuple[int, ...]) -> list[Issue]:
        """After nodes were only added or removed (a palette add, a delete, their undo):
        the nodes ``changed``, those that came or went, and their readers before and after
        are checked again; the others keep their relative order, so their results stand
        (a whole pass was 60-80 ms at 20,000 nodes on the GUI thread). The cycle search is
        made again only if an input came that could close one (then whole, so the cycle
        named is the one a whole validation names) or a known cycle may have gone."""
        old, new = set(self._order), set(order)
        gone, came = old - new, new - old
        readers = self._readers_of()
        visit = changed | came
        for node_id in changed | gone | came:
            visit.update(readers.get(node_id, ()))
        for node_id in gone:
            hit = self._cache.pop(node_id, None)
            self._flagged.discard(node_id)
            if hit is not None and hit[0][0] is not None:
                for src, _ in hit[0][0].inputs:
                    readers.get(src, set()).discard(node_id)
        visit -= gone
        self._order = order
        nodes = graph.nx.nodes
        position = {n: k for k, n in enumerate(order)}
        rewired: list[int] = []
        self.checked = 0
        for node_id in visit:
            if node_id not in nodes:
                continue
            node = nodes[node_id]["node"]
            key = (node, *(nodes[s]["node"] if s in nodes else None for s, _ in node.inputs))
            hit = self._cache.get(node_id)
            if hit is not None and len(hit[0]) == len(key) and all(
                    a is b for a, b in zip(hit[0], key, strict=True)):
                continue
            before = hit[0][0] if hit is not None else None
            if before is None or before.inputs != node.inputs:
                rewired.append(node_id)
                for src, _ in before.inputs if before is not None else ():
                    readers.get(src, set()).discard(node_id)
                for src, _ in node.inputs:
                    readers.setdefault(src, set()).add(node_id)
            found = _node_issues(graph, node, position, self.registry)
            self.checked += 1
            self._cache[node_id] = (key, found)
            if found:
                self._flagged.add(node_id)
            else:
                self._flagged.discard(node_id)
        if (self._cycles and gone) or (rewired and (
                self._cycles or find_cycle(rewired, lambda n: graph.nx.succ[n]))):
            self._cycles = _cycles(graph)
        issues = _duplicate_issues(graph)
        for node_id in self._flagged:
            issues.extend(self._cache[node_id][1])
        return _finish(issues, self._cycles, position)

    def _readers_of(self) -> dict[int, set[int]]:
        """Who reads each node id (dangling references too), from the checked nodes; made
        at the first add or removal after a whole pass, then kept up to date."""
        if self._readers is None:
            readers: dict[int, set[int]] = {}
            for node_id, (key, _) in self._cache.items():
                for src, _ in key[0].inputs if key[0] is not None else ():
                    readers.setdefault(src, set()).add(node_id)
            self._readers = readers
        return self._readers

    def _revalidate(self, graph: Graph, changed: set[int]) -> list[Issue]:
        """:meth:`_validate` of the nodes ``changed`` and their consumers; the order is the
        same, so every other node's key (itself and its producers) is unchanged."""
        nodes, succ = graph.nx.nodes, graph.nx.succ
        visit = set(changed)
        for node_id in changed:
            if node_id in succ:
                visit.update(succ[node_id])
        position: dict[int, int] | None = None
        rewired = False
        self.checked = 0
        for node_id in visit:
            if node_id not in nodes:
                continue
            node = nodes[node_id]["node"]
            key = (node, *(nodes[s]["node"] if s in nodes else None for s, _ in node.inputs))
            hit = self._cache.get(node_id)
            if hit is not None and len(hit[0]) == len(key) and all(
                    a is b for a, b in zip(hit[0], key, strict=True)):
                continue
            if hit is None or hit[0][0] is None or hit[0][0].inputs != node.inputs:
                rewired = True
            if position is None:
                position = {n: k for k, n in enumerate(self._order)}
            found = _node_issues(graph, node, position, self.registry)
            self.checked += 1
            self._cache[node_id] = (key, found)
            if found:
                self._flagged.add(node_id)
            else:
                self._flagged.discard(node_id)
        if rewired:
            self._cycles = _cycles(graph)
            self._readers = None
        issues = _duplicate_issues(graph)
        for node_id in self._flagged:
            issues.extend(self._cache[node_id][1])
        if position is None:
            position = {n: k for k, n in enumerate(self._order)} if issues else {}
        return _finish(issues, self._cycles, position)

    def _validate(self, graph: Graph) -> list[Issue]:
        order = graph.order
        # a cycle needs a changed wiring: a const or padding edit keeps the last search's
        # result (the search walks every node and edge: 40 ms of 10,000 nodes per edit)
        rewired = self._cycles is None
        if order != self._order:
            rewired = True
            if not _same_relative_order(self._order, order):
                self._cache.clear()
            self._order = order
        position = {node_id: k for k, node_id in enumerate(order)}
        nodes = graph.nx.nodes
        self.checked = 0
        issues = _duplicate_issues(graph)
        cache: dict[int, tuple[tuple[Node | None, ...], list[Issue]]] = {}
        for node in paced(graph):   # 7 us a node checked: an app's threads take turns
            key = (node, *(nodes[s]["node"] if s in nodes else None for s, _ in node.inputs))
            hit = self._cache.get(node.node_id)
            if hit is not None and len(hit[0]) == len(key) and all(
                    a is b for a, b in zip(hit[0], key, strict=True)):
                found = hit[1]
            else:
                if hit is None or hit[0][0] is None or hit[0][0].inputs != node.inputs:
                    rewired = True
                found = _node_issues(graph, node, position, self.registry)
                self.checked += 1
            cache[node.node_id] = (key, found)
            issues.extend(found)
        self._cache = cache
        self._flagged = {node_id for node_id, (_, found) in cache.items() if found}
        if rewired:
            self._cycles = _cycles(graph)
        return _finish(issues, self._cycles, position)


def _duplicate_issues(graph: Graph) -> list[Issue]:
    return [Issue(dup.node_id, "duplicate-id", f"id 0x{dup.node_id:x} is used by more than "
                  f"one node ({graph.node(dup.node_id).op} and {dup.op})")
            for dup in graph.duplicates]


def _same_relative_order(old: tuple[int, ...], new: tuple[int, ...]) -> bool:
    """Whether the nodes in both orders keep their order: true after removing or re-adding
    nodes (a delete, its undo). A node's checks compare positions only between it and its
    producers, so their cached results stay right; a node whose producer came or went has
    a new key and is checked again."""
    new_set, old_set = set(new), set(old)
    return [n for n in old if n in new_set] == [n for n in new if n in old_set]


def _finish(issues: list[Issue], cycles: list[list[int]], position: dict[int, int]
            ) -> list[Issue]:
    for cycle in cycles:
        issues.append(Issue(cycle[0], "cycle", "cycle through " +
                            " -> ".join(f"0x{i:x}" for i in cycle + [cycle[0]])))
    return sorted(issues, key=lambda i: (i.severity is Severity.WARNING,
                                         position.get(i.node_id, -1)))


def _node_issues(graph: Graph, node: Node, position: dict[int, int],
                 registry: OpRegistry) -> list[Issue]:
    found: list[Issue] = []
    nid = node.node_id
    if nid > RESERVED_ID_START:
        found.append(Issue(nid, "reserved-id", "id lies in hexagon_nn's internal range "
                           "(above 0xf0000000); prepare may create a node with the same id",
                           severity=Severity.WARNING))
    if node.is_const:
        if node.const is None:
            found.append(Issue(nid, "missing-const", "Const node has no data or shape"))
        return found
    if node.op not in registry:
        found.append(Issue(nid, "unknown-op", registry.unknown_message(node.op)))
        return found + _reference_issues(graph, node, position, None)
    spec = registry.get(node.op)
    if not spec.inputs.allows(len(node.inputs)):
        found.append(Issue(nid, "arity", f"{spec.name} takes {spec.inputs.arity_text()} "
                           f"inputs, has {len(node.inputs)}"))
    if not spec.outputs.allows(len(node.outputs)):
        found.append(Issue(nid, "arity", f"{spec.name} has {spec.outputs.arity_text()} "
                           f"outputs, declares {len(node.outputs)}"))
    ports = spec.inputs.ports_for(len(node.inputs))
    return found + _reference_issues(graph, node, position, ports, registry)


def _reference_issues(graph: Graph, node: Node, position: dict[int, int],
                      ports: tuple[Port, ...] | None,
                      registry: OpRegistry = REGISTRY) -> list[Issue]:
    found: list[Issue] = []
    nid = node.node_id
    for k, (src, out) in enumerate(node.inputs):
        if src not in graph:
            found.append(Issue(nid, "dangling", f"refers to node 0x{src:x}, which does not "
                               "exist", k))
            continue
        producer = graph.node(src)
        # A negative index would count from the end (Python's indexing) and silently read
        # another output; hexagon_nn's output_idx is unsigned.
        if not 0 <= out < len(producer.outputs):
            found.append(Issue(nid, "bad-output", f"refers to output {out} of 0x{src:x}, "
                               f"which has {len(producer.outputs)} outputs", k))
            continue
        if src == nid or position[src] > position[nid]:
            if src != nid:
                found.append(Issue(nid, "forward-ref", f"refers to 0x{src:x}, which is "
                                   "appended later (hexagon_nn runs nodes in append order)",
                                   k))
            continue
        dst_port = ports[k] if ports and k < len(ports) else None
        if (producer.is_const and producer.const is not None and not producer.const.has_data
                and dst_port is not None and not dst_port.shape_only):
            found.append(Issue(nid, "missing-const", f"reads the data of shape-only const "
                               f"0x{src:x} on '{dst_port.name}'", k))
        problem = _type_problem(output_port(graph, (src, out), registry), dst_port)
        if problem:
            found.append(Issue(nid, "type", problem, k))
    return found


def _cycles(graph: Graph) -> list[list[int]]:
    succ = graph.nx.succ
    cycle = find_cycle(graph.order, lambda node_id: succ[node_id])
    return [cycle] if cycle else []


def find_cycle(nodes: Iterable[int], successors: Callable[[int], Iterable[int]]
               ) -> list[int] | None:
    """One cycle (its nodes in edge order) or None; each node is expanded once.

    An iterative three-colour depth-first search: linear in nodes + edges, where networkx's
    ``find_cycle`` on a multigraph walks edges again from every start (minutes at 5,000
    nodes). Iterative so a chain of 20,000 nodes does not hit Python's recursion limit.
    """
    done: set[int] = set()
    on_path: dict[int, int] = {}          # node -> its index in ``path``
    path: list[int] = []
    for start in nodes:
        if start in done:
            continue
        stack = [(start, iter(successors(start)))]
        on_path[start] = 0
        path.append(start)
        while stack:
            node_id, it = stack[-1]
            for nxt in it:
                if nxt in on_path:
                    return path[on_path[nxt]:]
                if nxt not in done:
                    on_path[nxt] = len(path)
                    path.append(nxt)
                    stack.append((nxt, iter(successors(nxt))))
                    break
            else:
                stack.pop()
                path.pop()
                del on_path[node_id]
                done.add(node_id)
                if not len(done) % EVERY:
                    pause()
    return None


def errors(issues: list[Issue]) -> list[Issue]:
    return [i for i in issues if i.severity is Severity.ERROR]


__all__ = ["Issue", "Severity", "Validator", "validate", "can_connect", "errors", "output_port",
           "Layout"]
