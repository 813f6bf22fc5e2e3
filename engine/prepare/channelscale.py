"""Prepare's folding of a flat Supernode's ChannelScale input into its weights (nnlib
prepare.c ``remove_unimplemented_channelscale`` → prepare_utils.c
``handle_channelscaled_supernode``).

TFLite's Hexagon delegate gives a Supernode with per-channel int8 weights a 13th input: one
float scale per output channel (conv_2d_builder.cc). The d32 Supernodes apply it; the flat
ones (Supernode_8x8p8to8, Supernode_8x8p32to8 and their ``_ref``) and the input Supernodes
(InputSupernode_*_outd32) ignore it, so a late prepare pass, after the d32 conversion
(prepare.c:4926-4930), rescales their weights instead and replaces input 12 with a scalar 1.0
(``try_unimplemented_channelscale``, prepare.c:1422-1446: exactly 13 inputs; the d32
Supernodes and the depthwise ones are commented out of its list):

- one scale: the weight range's min and max are multiplied by it (new scalar Consts);
  a scale of 1.0 changes nothing, one outside (1e-6, 1e6) fails prepare;
- per channel (weights [..., d] or [..., d, 1]): with z = round(-min * 255 / (max - min))
  (saturated to 0..255) and q = 32768 - round(scale * 32768) (clamped to 0..32767), every
  weight code w becomes sat_u8(w - (((w - z) * q + 16384) >> 15)). The weights are rewritten
  in place when this Supernode is their only reader, into a new Const otherwise.

A Supernode that becomes Supernode_*_d32 therefore keeps its scales, as per-channel
multipliers in its requantization (op_supernode_new.c ``load_channel_scales``): folded, a
channel whose scale is 1/100 of the largest kept one or two bits of weight (BlazeFace's
1x1 convolutions were up to 13 codes from TFLite on TFLite's own inputs, docs/tflite.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.errors import GraphError
from hexscope.engine.hexmath import c_roundf_int, c_roundf_int1
from hexscope.engine.nodes import Node, OutputDef, const_tensor

FLAT_SUPERNODES = ("Supernode_8x8p8to8", "Supernode_8x8p32to8", "Supernode_8x8p8to8_ref",
                   "Supernode_8x8p32to8_ref")
# what try_unimplemented_channelscale folds (of the ops Hexscope has)
FOLDED_SUPERNODES = (*FLAT_SUPERNODES, "InputSupernode_8x8p8to8_outd32",
                     "InputSupernode_8x8p32to8_outd32")
WHERE = "hexagon_nn prepare: remove_unimplemented_channelscale"
_F = np.float32


@dataclass(frozen=True, slots=True)
class Fold:
    """One Supernode whose ChannelScale was folded: its new form and the Consts made."""

    supernode: Node
    consts: tuple[Node, ...]       # new or rewritten Consts (a rewritten one keeps its id)
    reason: str


@dataclass
class _Ids:
    """Internal ids counting down from 0xFFFFFFFF (``nn_graph_new_internal_node_id``)."""

    taken: set[int]
    next_id: int = 0xFFFFFFFF
    made: list[Node] = field(default_factory=list)

    def const(self, data: np.ndarray, label: str) -> Node:
        while self.next_id in self.taken:
            self.next_id -= 1
        arr = np.ascontiguousarray(data)
        node = Node(self.next_id, "Const", outputs=(OutputDef(arr.shape, arr.itemsize),),
                    const=const_tensor(arr), label=f"prepare: {label}")
        self.taken.add(self.next_id)
        self.made.append(node)
        return node


def fold_channel_scales(nodes: dict[int, Node], order: list[int]) -> list[Fold]:
    """The folds of every Supernode of :data:`FOLDED_SUPERNODES` with 13 inputs in
    ``nodes`` (not applied).

    Raises GraphError naming the node where the library's prepare fails: a non-const
    weight, range or scale, a bad weight range, a scale shape that does not match."""
    readers: dict[int, int] = {}
    for node_id in order:
        for src, _ in nodes[node_id].inputs:
            readers[src] = readers.get(src, 0) + 1
    ids = _Ids(set(nodes))
    folds = []
    for node_id in order:
        node = nodes[node_id]
        if node.op in FOLDED_SUPERNODES and len(node.inputs) == 13:
            fold = _fold(node, nodes, readers, ids)
            if fold is not None:
                folds.append(fold)
    return folds


def _const(node: Node, k: int, nodes: dict[int, Node]) -> Node:
    src, idx = node.inputs[k]
    found = nodes.get(src)
    if found is None or not found.is_const or idx != 0 or found.const is None \
            or not found.const.has_data:
        raise GraphError(f"node 0x{node.node_id:x} ({node.op}) has a ChannelScale but input "
                         f"{k} is not a Const with data: the device's prepare fails "
                         "(handle_channelscaled_supernode)")
    return found


def _fold(node: Node, nodes: dict[int, Node], readers: dict[int, int], ids: _Ids
          ) -> Fold | None:
    wts, lo, hi, scale = (_const(node, k, nodes) for k in (1, 4, 5, 12))
    wmin, wmax = _F(lo.const.array.reshape(-1)[0]), _F(hi.const.array.reshape(-1)[0])
    if not (wmin <= 0 and wmin < wmax and wmax >= 0):
        raise GraphError(f"node 0x{node.node_id:x} ({node.op}) has a ChannelScale but a bad "
                         f"weight range {wmin:.6g} .. {wmax:.6g} (the device's prepare fails)")
    scales = np.asarray(scale.const.array, _F)
    depth = scales.size
    if scales.shape[-1] != depth:
        raise GraphError(f"node 0x{node.node_id:x}: bad ChannelScale shape "
                         f"{list(scales.shape)} (one float per channel, [1,1,1,d])")
    inputs = list(node.inputs)
    if depth == 1:
        value = _F(scales.reshape(-1)[0])
        if value == 1.0:
            return None
        if not (1e-6 < value < 1e6):
            raise GraphError(f"node 0x{node.node_id:x}: the device's prepare won't scale the "
                             f"weights by {value:.8g}")
        for k, bound in ((4, wmin), (5, wmax)):
            inputs[k] = (ids.const(np.full((1, 1, 1, 1), _F(value * bound)),
                                   "scaled weight range").node_id, 0)
        return _result(node, inputs, ids, [], f"the weight range scaled by {value:.6g}")
    codes = np.asarray(wts.const.array)
    shape = codes.shape
    if shape[-1] != depth and not (shape[-1] == 1 and shape[-2] == depth):
        raise GraphError(f"node 0x{node.node_id:x}: weight shape {list(shape)} does not match "
                         f"the ChannelScale depth {depth}")
    new = rescale_weights(codes, scales, float(wmin), float(wmax))
    if readers.get(wts.node_id, 0) > 1:        # another reader keeps the old weights
        made = ids.const(new, "channel-scaled weights")
        inputs[1] = (made.node_id, 0)
        rewritten: list[Node] = []
    else:
        rewritten = [wts.with_(const=const_tensor(new))]
    return _result(node, inputs, ids, rewritten, f"{depth} channel scales")


def _result(node: Node, inputs: list, ids: _Ids, rewritten: list[Node], what: str) -> Fold:
    inputs[12] = (ids.const(np.ones((1, 1, 1, 1), _F), "1.0").node_id, 0)
    made, ids.made = ids.made, []
    return Fold(node.with_(inputs=tuple(inputs)), (*rewritten, *made),
                f"ChannelScale folded into the weights ({what}; {WHERE}: "
                f"{node.op} ignores input 12)")


def rescale_weights(codes: np.ndarray, scales: np.ndarray, wmin: float, wmax: float
                    ) -> np.ndarray:
    """``handle_channelscaled_supernode``'s per-channel weight rescaling (module doc)."""
    with np.errstate(all="ignore"):
        zero = min(255, max(0, c_roundf_int1(_F(_F(-_F(wmin) * _F(255.0)) /
                                                 _F(_F(wmax) - _F(wmin))))))
        q = 32768 - c_roundf_int((scales.reshape(-1).astype(_F) * _F(32768.0)).astype(_F))
    q = np.clip(q, 0, 32767)        # the library logs "bad value for channelscale" and clamps
    depth = q.size
    flat = codes.astype(np.int64).reshape(-1, depth)
    delta = ((flat - zero) * q + 16384) >> 15
    return np.clip(flat - delta, 0, 255).astype(np.uint8).reshape(codes.shape)


def apply_channel_scales(nodes: dict[int, Node], order: list[int]
                         ) -> tuple[list[int], list[tuple[int, str]]]:
    """Apply :func:`fold_channel_scales` to ``nodes`` in place: the new order (new Consts
    first) and (node id, reason) for each Supernode rewritten."""
    folds = fold_channel_scales(nodes, order)
    new_ids: list[int] = []
    for fold in folds:
        nodes[fold.supernode.node_id] = fold.supernode
        for const in fold.consts:
            if const.node_id not in nodes:
                new_ids.append(const.node_id)
            nodes[const.node_id] = const
    return new_ids + order, [(f.supernode.node_id, f.reason) for f in folds]
