"""The consumer test prepare's fusions share (nnlib ``find_unique_consumer``, graphops.c).

A producer's unique consumer is the first node after it that reads its output 0, if it is of
an accepted op, if no later node reads the producer, and (unless told otherwise) if its other
inputs all come from Consts. Hexscope is stricter in one corner: a node that reads the
producer's outputs 1 or 2 *before* that consumer also blocks the fusion (the library would
fuse and leave that reader pointing at a removed node).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from hexscope.engine.nodes import Node


class Consumers:
    """Who reads each node, built once over the prepared order (linear in the edges)."""

    def __init__(self, nodes: Mapping[int, Node], order: Sequence[int]) -> None:
        self.nodes = nodes
        self.position = {node_id: k for k, node_id in enumerate(order)}
        self.readers: dict[int, list[tuple[int, int]]] = {}   # src -> [(reader, out_idx)]
        for node_id in order:
            for src, out in nodes[node_id].inputs:
                self.readers.setdefault(src, []).append((node_id, out))

    def unique(self, producer: int, ops: Collection[str], *, consts_only: bool = True
               ) -> Node | None:
        readers = self.readers.get(producer, [])
        if not readers:
            return None
        after = self.position[producer]
        first = min((r for r, out in readers if out == 0 and self.position[r] > after),
                    key=self.position.__getitem__, default=None)
        if first is None or self.nodes[first].op not in ops:
            return None
        if any(r != first for r, _ in readers):
            return None
        consumer = self.nodes[first]
        if consts_only and not all(src == producer or self.is_const(src)
                                   for src, _ in consumer.inputs):
            return None
        return consumer

    def is_const(self, node_id: int) -> bool:
        node = self.nodes.get(node_id)
        return node is not None and node.is_const
