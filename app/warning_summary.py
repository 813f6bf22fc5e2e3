"""Repeated warnings summarised: one line per distinct message, with how many more nodes
said the same (a 10,000-node run printed 1,386 lines of one warning before its verdict)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class WarningGroup:
    """One warning text and the nodes that gave it, in the order they ran."""

    text: str
    nodes: list[int] = field(default_factory=list)

    @property
    def first(self) -> int:
        return self.nodes[0]

    def line(self, shown_ids: int = 3) -> str:
        """``node 0x…: text``, then ``… and N more like it (nodes 0x…, …)``."""
        head = f"node 0x{self.first:x}: {self.text}"
        rest = self.nodes[1:]
        if not rest:
            return head
        ids = ", ".join(f"0x{n:x}" for n in rest[:shown_ids]) + (", …" if len(rest) > shown_ids
                                                                  else "")
        return f"{head} … and {len(rest)} more like it (nodes {ids})"


def group_warnings(pairs: Iterable[tuple[int, str]]) -> list[WarningGroup]:
    """(node id, text) pairs grouped by text in first-seen order; a node repeating a text
    counts once."""
    groups: dict[str, WarningGroup] = {}
    for node_id, text in pairs:
        group = groups.setdefault(text, WarningGroup(text))
        if node_id not in group.nodes:
            group.nodes.append(node_id)
    return list(groups.values())


__all__ = ["WarningGroup", "group_warnings"]
