"""What the canvas draws for a node, computed from the graph and the registry (no Qt).

Tiny const nodes (ranges, stride and window shapes) are *folded*: drawn as a compact value
on the one input port that reads them instead of as nodes of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexscope.engine.graph import Graph
from hexscope.engine.nodes import Node
from hexscope.engine.ops.registry import REGISTRY, OpRegistry

FOLD_MAX_ELEMENTS = 4


@dataclass(frozen=True, slots=True)
class PortInfo:
    """One port as drawn: name, type text, and the folded const's value text, if any."""

    name: str
    type_text: str
    folded: str = ""
    connected: bool = True


def is_tiny_const(node: Node) -> bool:
    """A const small enough to show as a value: shape-only, or at most 4 elements."""
    if not node.is_const or node.const is None:
        return False
    return not node.const.has_data or node.const.elements <= FOLD_MAX_ELEMENTS


def folded_consts(graph: Graph) -> dict[int, int]:
    """Tiny consts read by exactly one node: const id -> the consumer it folds into.

    A const shared by several nodes stays a node of its own, where the user put it.
    """
    folded: dict[int, int] = {}
    for node in graph:
        consumer = fold_target(graph, node)
        if consumer is not None:
            folded[node.node_id] = consumer
    return folded


def fold_target(graph: Graph, node: Node) -> int | None:
    """The one consumer a tiny const folds into (None: drawn as a node of its own)."""
    if not is_tiny_const(node):
        return None
    consumers = set(graph.nx.successors(node.node_id))
    return consumers.pop() if len(consumers) == 1 else None


def const_text(node: Node) -> str:
    """A compact text for a const's value: ``-1.5``, ``[1 2 2 1]`` or ``shape 1x3x3x1``."""
    tensor = node.const
    if tensor is None:
        return "?"
    if not tensor.has_data:
        return "shape " + "x".join(map(str, tensor.shape))
    values = np.asarray(tensor.array).reshape(-1)
    if values.size > FOLD_MAX_ELEMENTS:
        return f"{tensor.device_dtype.c_name} " + "x".join(map(str, tensor.shape))
    items = [_number(v) for v in values]
    return items[0] if len(items) == 1 else "[" + " ".join(items) + "]"


def _number(value: object) -> str:
    if isinstance(value, np.floating):
        return f"{float(value):.6g}"
    return str(value)


def input_ports(graph: Graph, node: Node, folded: dict[int, int],
                registry: OpRegistry = REGISTRY) -> tuple[list[PortInfo], bool]:
    """The input ports as drawn, and whether one more input may be appended."""
    spec = registry.get(node.op) if node.op in registry else None
    count = len(node.inputs)
    shown = count
    if spec is not None:
        # An unconnected node still shows the ports it needs (the fixed ones).
        shown = max(count, len(spec.inputs.head) + len(spec.inputs.tail))
        ports = spec.inputs.ports_for(shown)
    else:
        ports = ()
    infos = []
    for k in range(shown):
        port = ports[k] if k < len(ports) else None
        name = port.name if port else f"in{k}"
        type_text = port.type_text if port else "?"
        text = ""
        if k < count:
            src = node.inputs[k][0]
            if folded.get(src) == node.node_id:
                text = const_text(graph.node(src))
        infos.append(PortInfo(name, type_text, text, k < count))
    # The append slot appears once the declared ports are all connected.
    can_append = count >= shown and (spec is None or spec.inputs.arity[1] is None
                                     or count < spec.inputs.arity[1])
    return infos, can_append


def output_ports(node: Node, registry: OpRegistry = REGISTRY) -> list[PortInfo]:
    """The output ports as drawn (names and types from the op declaration)."""
    n = len(node.outputs)
    if node.is_const:
        kind = node.const.dtype.c_name if node.const is not None and node.const.has_data \
            else "shape"
        return [PortInfo("data", kind)]
    if node.op not in registry:
        return [PortInfo(f"out{k}", "?") for k in range(n)]
    ports = registry.get(node.op).outputs.ports_for(n)
    return [PortInfo(ports[k].name if k < len(ports) else f"out{k}",
                     ports[k].type_text if k < len(ports) else "?") for k in range(n)]


def match_text(node: Node, query: str) -> bool:
    """Whether a search query finds ``node``: by hex or decimal id, label or op."""
    q = query.strip().lower()
    if not q:
        return False
    if q in (f"0x{node.node_id:x}", f"{node.node_id:x}", str(node.node_id)):
        return True
    return q in node.label.lower() or q in node.op.lower()
