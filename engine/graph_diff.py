"""What differs between two versions of a graph, node by node (ids matched), in one pass.

Used to tell a user what an autosave holds that the file on disk does not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hexscope.engine.nodes import Node


@dataclass(frozen=True, slots=True)
class GraphDiff:
    """Ids added, removed, changed (anything but the position) and only moved."""

    added: tuple[int, ...]
    removed: tuple[int, ...]
    changed: tuple[int, ...]
    moved: tuple[int, ...]

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.changed or self.moved)

    def summary(self, show: int = 4) -> str:
        """One line a person reads: counts, with the first few ids of each kind."""
        if self.same:
            return "no difference"
        parts = []
        for name, ids in (("added", self.added), ("removed", self.removed),
                          ("changed", self.changed), ("moved", self.moved)):
            if ids:
                listed = ", ".join(f"0x{i:x}" for i in ids[:show])
                more = f", … {len(ids) - show} more" if len(ids) > show else ""
                parts.append(f"{len(ids)} node(s) {name} ({listed}{more})")
        return "; ".join(parts)


def diff_graphs(old: Iterable[Node], new: Iterable[Node]) -> GraphDiff:
    """Compare two node sequences (a Graph iterates its nodes) by id, in ``new``'s order."""
    before = {n.node_id: n for n in old}
    after = {n.node_id: n for n in new}
    added, changed, moved = [], [], []
    for node_id, node in after.items():
        prev = before.get(node_id)
        if prev is None:
            added.append(node_id)
        elif not _same(prev, node):
            (moved if _same(prev.with_(position=node.position), node) else changed).append(
                node_id)
    removed = [i for i in before if i not in after]
    return GraphDiff(tuple(added), tuple(removed), tuple(changed), tuple(moved))


def _same(a: Node, b: Node) -> bool:
    # Tensors compare by identity, so const data is compared by value here.
    if (a.const is None) != (b.const is None):
        return False
    if a.const is not None and not a.const.same_as(b.const):  # type: ignore[arg-type]
        return False
    return a.with_(const=None) == b.with_(const=None)


__all__ = ["GraphDiff", "diff_graphs"]
