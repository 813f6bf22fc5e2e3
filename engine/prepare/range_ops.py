"""Two prepare rewrites of range ops (nnlib prepare.c), which a graph with ranges written
into it (``hexscope apply-ranges``) depends on:

* ``try_fuse_requantization_range``: a RequantizationRange_32 whose unique consumer is a
  Requantize_32to8 reading the same three inputs becomes, with it, one
  QuantizeDownAndShrinkRange_32to8 under the Requantize's id (run first in prepare, when the
  graph has a RequantizationRange_32);
* ``try_make_reluX``: a Requantize_32to8 whose output max (input 4) is a Const's output 0,
  followed by a QuantizedRelu_8 as its unique consumer, makes that Relu a QuantizedReluX_8
  (same id and outputs) whose X is that const max (run after dead-node removal, before the
  Supernode fusion, which then takes 0 and X as the Supernode's output range).
"""

from __future__ import annotations

from hexscope.engine.nodes import Node
from hexscope.engine.prepare.consumers import Consumers

RANGE = "RequantizationRange_32"
REQUANT = "Requantize_32to8"
QDOWN = "QuantizeDownAndShrinkRange_32to8"


def fuse_requantization_ranges(nodes: dict[int, Node], order: list[int]
                               ) -> list[tuple[int, str, str, int | None]]:
    """Apply ``try_fuse_requantization_range`` in place; (node id, kind, reason, into) of
    each rewrite."""
    consumers = Consumers(nodes, order)
    done: list[tuple[int, str, str, int | None]] = []
    for node_id in list(order):
        rr = nodes.get(node_id)
        if rr is None or rr.op != RANGE:
            continue
        req = consumers.unique(node_id, (REQUANT,), consts_only=False)
        if req is None or req.inputs[:3] != rr.inputs[:3]:
            continue
        nodes[req.node_id] = req.with_(op=QDOWN, inputs=rr.inputs[:3])
        del nodes[node_id]
        order.remove(node_id)
        done.append((node_id, "fused", f"fused with Requantize_32to8 0x{req.node_id:x} into "
                     "QuantizeDownAndShrinkRange_32to8 (hexagon_nn prepare: "
                     "try_fuse_requantization_range)", req.node_id))
        done.append((req.node_id, "replaced", "RequantizationRange_32 → Requantize_32to8 "
                     "becomes one QuantizeDownAndShrinkRange_32to8 under this id (hexagon_nn "
                     "prepare: try_fuse_requantization_range)", None))
    return done


def make_relux(nodes: dict[int, Node], order: list[int]) -> list[tuple[int, str]]:
    """Apply ``try_make_reluX`` in place; (relu id, reason) of each rewrite."""
    consumers = Consumers(nodes, order)
    done: list[tuple[int, str]] = []
    for node_id in order:
        req = nodes[node_id]
        if req.op != REQUANT or len(req.inputs) < 5 or req.inputs[4][1] != 0:
            continue
        if not consumers.is_const(req.inputs[4][0]):
            continue
        relu = consumers.unique(node_id, ("QuantizedRelu_8",))
        if relu is None:
            continue
        nodes[relu.node_id] = relu.with_(op="QuantizedReluX_8",
                                         inputs=(*relu.inputs[:3], req.inputs[4]),
                                         padding=req.padding)
        done.append((relu.node_id, f"Relu after Requantize_32to8 0x{node_id:x} with a const "
                     "max becomes QuantizedReluX_8 with that max (hexagon_nn prepare: "
                     "try_make_reluX)"))
    return done
