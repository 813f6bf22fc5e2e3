"""Which kept results an edit makes stale, followed through the prepared graph.

An edit names authored nodes, and the authored graph's downstream set is what it reaches
there. Prepare adds nodes of its own, with ids the authored graph does not have: the d32
conversions around a d32 op, the Consts it folds or packs. A node that reads a stale result
is stale too, wherever prepare put it. Before this, the ``Convert_from_d32`` after an edited
Supernode kept its old output, and a run continued from a breakpoint after the edit read it
(found by issue 32's session machine: Ctrl+F10, a const edit, F5).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from hexscope.engine.nodes import Node
from hexscope.engine.prepare import Prepared


def _same_const(old: Node | None, new: Node) -> bool:
    if old is new:
        return True
    if old is None or not old.is_const:
        return False
    if old.const is new.const:
        return True
    a, b = old.const, new.const
    if a is None or b is None:
        return a is b
    return (a.shape, a.dtype, a.layout, a.padding) == (b.shape, b.dtype, b.layout, b.padding) \
        and a.has_data == b.has_data and (not a.has_data or np.array_equal(a.raw, b.raw))


def stale_in_prepared(new: Prepared, old: Prepared, stale: Collection[int]) -> set[int]:
    """``stale`` (node ids of ``new``) with every node of ``new``'s plan that reads one of
    them, directly or not, and with the Consts prepare made that are new or hold other data
    than ``old``'s under the same id, and their readers. One pass over the Consts and one
    over the plan, in its order (a node's producers run before it)."""
    changed = set(stale)
    for node_id, node in new.nodes.items():
        if node.is_const and node_id not in changed \
                and not _same_const(old.nodes.get(node_id), node):
            changed.add(node_id)
    nodes = new.nodes
    for node_id in new.plan:
        if node_id not in changed and any(src in changed for src, _ in nodes[node_id].inputs):
            changed.add(node_id)
    return changed
