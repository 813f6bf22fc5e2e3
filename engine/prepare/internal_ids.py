"""Ids for the nodes prepare makes: counting down from 0xFFFFFFFF past every id in use, as
``nn_graph_new_internal_node_id`` does."""

from __future__ import annotations

from dataclasses import dataclass

FIRST_INTERNAL = 0xFFFFFFFF


@dataclass
class InternalIds:
    """``taken``: every id in use (the graph's, and those earlier passes freed but a reader
    may still name); ``new`` takes the next free one below the last."""

    taken: set[int]
    next_id: int = FIRST_INTERNAL

    def new(self) -> int:
        while self.next_id in self.taken:
            self.next_id -= 1
        self.taken.add(self.next_id)
        return self.next_id
