"""Prepare's fully-connected fusion (nnlib prepare.c ``try_make_supernode_flavored`` with the
``ReplaceMatMult_Supernode`` description): the TFLite Hexagon delegate's FULLY_CONNECTED chain

QuantizedMatMul_8x8to32 → QuantizedBiasAdd_32p32to32 → (Requantize_32to8 |
QuantizeDownAndShrinkRange_32to8) [→ QuantizedRelu_8 | QuantizedReluX_8 | QuantizedClamp_8],

each the unique consumer of the one before (:mod:`consumers`), becomes one SuperFC_8x8p32to8
under the last node's id and output definitions, in the matmul's place. Its 11 inputs are the
matmul's 6, the bias add's bias and bias range, then the output range: a Requantize_32to8's
requested range, ±inf for a QuantizeDownAndShrinkRange, 0 (and a ReluX's max, or a Clamp's
range) from the activation.

What the library does and this pass follows:

- ``matmult_extrachecks``: the weights are a Const whose depth (K) is a multiple of 16 and
  whose batches (N) are a multiple of 16 and at least 32; otherwise nothing is fused;
- the 8-bit bias form (MatMul → QuantizeDown → QuantizedBiasAdd_8p8to32 → QuantizeDown) also
  becomes a SuperFC on the device, after ``convert_qu8_const_to_qint32`` rewrites the bias;
  that conversion is not modelled, so such a chain runs as authored, with a note;
- the new scalar Consts (0, -inf, +inf) get internal ids counting down from 0xFFFFFFFF; one of
  each is made at most, and one the Supernode fusion already made is reused (the library
  caches them). The library numbers them in graph order across both fusions, so when a
  graph has both the ids may be assigned in another order than on the device.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.nodes import Node, OutputDef, const_tensor
from hexscope.engine.prepare.consumers import Consumers

MATMUL = "QuantizedMatMul_8x8to32"
SUPERFC = "SuperFC_8x8p32to8"
BIAS32 = "QuantizedBiasAdd_32p32to32"
BIAS8 = "QuantizedBiasAdd_8p8to32"
QDOWN = "QuantizeDownAndShrinkRange_32to8"
REQUANT = "Requantize_32to8"
ACTIVATIONS = ("QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8")
WHERE = "hexagon_nn prepare: try_make_supernode_flavored, ReplaceMatMult_Supernode"
FIRST_INTERNAL_ID = 0xFFFFFFFF

#: (node id, kind, reason, into): the fields of passes.Rewrite, in its order.
RewriteFields = tuple[int, str, str, "int | None"]


def fuse_superfc(nodes: dict[int, Node], order: list[int]
                 ) -> tuple[list[int], list[RewriteFields], list[str]]:
    """Fuse every matching chain in place in ``nodes``: (new order, rewrites, notes)."""
    consumers = Consumers(nodes, order)
    made: dict[str, Node] = {}
    at_matmul: dict[int, int] = {}
    gone: set[int] = set()
    rewrites: list[RewriteFields] = []
    notes: list[str] = []
    for node_id in order:
        matmul = nodes.get(node_id)
        if matmul is None or matmul.op != MATMUL or not _weights_fit(matmul, nodes):
            continue
        found = _match(matmul, nodes, consumers, made, notes)
        if found is None:
            continue
        fused, chain = found
        sid = fused.node_id
        chain_ids = [n.node_id for n in chain if n.node_id != sid]
        at_matmul[node_id] = sid
        gone.update(chain_ids)
        gone.add(sid)          # it moves to the matmul's place
        for old in chain_ids:
            del nodes[old]
            rewrites.append((old, "fused", f"fused into {SUPERFC} 0x{sid:x} ({WHERE})", sid))
        nodes[sid] = fused
        rewrites.append((sid, "replaced", f"{' → '.join(n.op for n in chain)} becomes one "
                         f"{SUPERFC} under this id ({WHERE}); it runs in the matmul's place",
                         None))
    new_order = [c.node_id for c in made.values() if c.node_id not in order]
    for c in made.values():
        nodes[c.node_id] = c
    for node_id in order:
        if node_id in at_matmul:
            new_order.append(at_matmul[node_id])
        elif node_id not in gone:
            new_order.append(node_id)
    return new_order, rewrites, notes


def _weights_fit(matmul: Node, nodes: dict[int, Node]) -> bool:
    """``matmult_extrachecks``: Const weights, K % 16 == 0, N % 16 == 0 and N >= 32."""
    if len(matmul.inputs) < 2 or matmul.inputs[1][1] != 0:
        return False
    wts = nodes.get(matmul.inputs[1][0])
    if wts is None or wts.const is None or len(wts.const.shape) != 4:
        return False
    k, n = wts.const.shape[2], wts.const.shape[3]
    return k % 16 == 0 and n % 16 == 0 and n >= 32


def _match(matmul: Node, nodes: dict[int, Node], consumers: Consumers, made: dict[str, Node],
           notes: list[str]) -> tuple[Node, tuple[Node, ...]] | None:
    first = consumers.unique(matmul.node_id, (QDOWN, REQUANT, BIAS32))
    if first is None:
        return None
    if first.op != BIAS32:
        if consumers.unique(first.node_id, (BIAS8,)) is not None:
            notes.append(f"0x{matmul.node_id:x}: the chain {MATMUL} → {first.op} → {BIAS8} "
                         f"becomes {SUPERFC} on the device after prepare converts its 8-bit "
                         "bias to 32 bits (convert_qu8_const_to_qint32), which Hexscope does "
                         "not model; it runs as authored")
        return None
    requant = consumers.unique(first.node_id, (QDOWN, REQUANT))
    if requant is None:
        return None
    if requant.op == REQUANT:
        lo, hi = requant.inputs[3], requant.inputs[4]
    else:
        lo, hi = _scalar(made, nodes, "-inf", -np.inf), _scalar(made, nodes, "+inf", np.inf)
    chain: tuple[Node, ...] = (matmul, first, requant)
    act = consumers.unique(requant.node_id, ACTIVATIONS)
    if act is not None:
        chain += (act,)
        if act.op == "QuantizedClamp_8":
            lo, hi = act.inputs[3], act.inputs[4]
        else:
            lo = _scalar(made, nodes, "0", 0.0)
            if act.op == "QuantizedReluX_8":
                hi = act.inputs[3]
    last = chain[-1]
    inputs = (*matmul.inputs[:6], first.inputs[1], first.inputs[4], first.inputs[5], lo, hi)
    fused = Node(last.node_id, SUPERFC, inputs=inputs, outputs=last.outputs,
                 padding=matmul.padding, label=last.label, position=last.position)
    return fused, chain


def _scalar(made: dict[str, Node], nodes: dict[int, Node], name: str,
            value: float) -> tuple[int, int]:
    """A scalar Const of prepare's, made once (or the one the Supernode fusion made)."""
    label = f"prepare: {name}"
    if name not in made:
        existing = next((n for n in nodes.values() if n.is_const and n.label == label), None)
        if existing is not None:
            made[name] = existing
        else:
            taken = set(nodes) | {n.node_id for n in made.values()}
            node_id = FIRST_INTERNAL_ID
            while node_id in taken:
                node_id -= 1
            data = np.full((1, 1, 1, 1), value, np.float32)
            made[name] = Node(node_id, "Const", outputs=(OutputDef((1, 1, 1, 1), 4),),
                              const=const_tensor(data), label=label)
    return made[name].node_id, 0
