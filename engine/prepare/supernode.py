"""Prepare's convolution-chain fusion (nnlib ``try_make_supernode_flavored``, prepare.c).

QuantizedConv2d_8x8to32 → QuantizeDownAndShrinkRange_32to8 → QuantizedBiasAdd_8p8to32 →
QuantizeDownAndShrinkRange_32to8 [→ QuantizedRelu_8 | QuantizedReluX_8 | QuantizedClamp_8],
each the unique consumer of the one before (:mod:`consumers`), becomes one Supernode_8x8p8to8
under the last node's id, output definitions and place of the convolution; with a 32-bit bias
(QuantizedConv2d_8x8to32 → QuantizedBiasAdd_32p32to32 → requantize [→ relu]) it becomes a
Supernode_8x8p32to8. Either requantize may be a Requantize_32to8. After a
QuantizedDepthwiseConv2d_8x8to32 the same chain becomes a DepthwiseSupernode_8x8p8to8 or
_8x8p32to8 (``ReplaceConv_DwiseSuperNode`` with ``dwconv_extrachecks``). The output range inputs
(``requantize_op_minmax_inputs``, ``extract_min_max_from_relu``) are ±inf (find it) after a
QuantizeDownAndShrinkRange, a Requantize_32to8's own range inputs, then 0 from a Relu, 0 and
the maximum from a ReluX, a Clamp's two bounds.

What the library does and this pass follows:

- without a bias add nothing is fused (the library's "temporary" early return);
- a chain whose result is one pixel deep ([1,1,W?] with the filter covering the input) would
  become SuperFC_8x8p32to8, which is not simulated: it runs as authored, with a note;
- the new scalar Consts (0, -inf, +inf) get internal ids counting down from 0xFFFFFFFF, as
  ``nn_graph_new_internal_node_id`` numbers them, one of each at most (the library caches
  them).

The ChannelScale node and the matmul and 16-bit flavours are not matched; nor is
the library's conversion of an 8-bit bias to 32 bits for flavours without an 8-bit form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.cooperate import paced
from hexscope.engine.nodes import Node, OutputDef, Padding, const_tensor
from hexscope.engine.prepare.consumers import Consumers

CONV = "QuantizedConv2d_8x8to32"
QDOWN = "QuantizeDownAndShrinkRange_32to8"
REQUANT = "Requantize_32to8"
BIASADD = "QuantizedBiasAdd_8p8to32"
BIASADD32 = "QuantizedBiasAdd_32p32to32"
RELUS = ("QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8")
SUPERNODE = "Supernode_8x8p8to8"
SUPERNODE32 = "Supernode_8x8p32to8"
DEPTHWISE = "QuantizedDepthwiseConv2d_8x8to32"
DWISE, DWISE32 = "DepthwiseSupernode_8x8p8to8", "DepthwiseSupernode_8x8p32to8"
FIRST_INTERNAL_ID = 0xFFFFFFFF
WHERE = "hexagon_nn prepare: try_make_supernode_flavored"


@dataclass(frozen=True, slots=True)
class Fusion:
    """One chain and the Supernode that replaces it."""

    supernode: Node
    fused: tuple[int, ...]          # conv, requantize, bias add[, requantize] (removed)
    chain: tuple[str, ...]          # the ops, in order, for messages


@dataclass
class _Scalars:
    """The scalar Consts the pass creates, one per value (the library's const cache)."""

    taken: set[int]
    made: dict[str, Node] = field(default_factory=dict)
    next_id: int = FIRST_INTERNAL_ID

    def ref(self, name: str, value: float) -> tuple[int, int]:
        if name not in self.made:
            while self.next_id in self.taken:
                self.next_id -= 1
            data = np.full((1, 1, 1, 1), value, np.float32)
            self.made[name] = Node(self.next_id, "Const", outputs=(OutputDef((1, 1, 1, 1), 4),),
                                   const=const_tensor(data), label=f"prepare: {name}")
            self.taken.add(self.next_id)
        return self.made[name].node_id, 0


def find_chains(nodes: dict[int, Node], order: list[int]) -> tuple[list[Fusion], list[str],
                                                                  list[Node]]:
    """The fusions prepare makes, notes on the chains it leaves, and the Consts it adds."""
    consumers = Consumers(nodes, order)
    scalars = _Scalars(set(nodes))
    fusions: list[Fusion] = []
    notes: list[str] = []
    for node_id in paced(order):
        conv = nodes[node_id]
        if conv.op == DEPTHWISE:
            fusion = _match_depthwise(conv, nodes, consumers, scalars)
        elif conv.op == CONV:
            fusion = _match(conv, nodes, consumers, scalars, notes)
        else:
            continue
        if fusion is not None:
            fusions.append(fusion)
    return fusions, notes, list(scalars.made.values())


@dataclass(frozen=True, slots=True)
class _Chain:
    """A matched chain: its nodes (None where a step is absent), the output range inputs."""

    steps: tuple[Node | None, ...]      # conv, qdown0, bias add, qdown1, relu
    lo: tuple[int, int]
    hi: tuple[int, int]

    @property
    def bias32(self) -> bool:
        return self.steps[2] is not None and self.steps[2].op == BIASADD32

    @property
    def last(self) -> Node:
        return next(n for n in reversed(self.steps) if n is not None)

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(n.op for n in self.steps if n is not None)


def _chain(conv: Node, consumers: Consumers, scalars: _Scalars) -> _Chain | None:
    """``try_make_supernode_flavored``'s match from ``conv`` on (see the module doc)."""
    first = consumers.unique(conv.node_id, (QDOWN, REQUANT, BIASADD32))
    if first is None:
        return None
    if first.op == BIASADD32:                    # the 32-bit bias form: no requantize before
        qdown0, bias = None, first
    else:
        qdown0 = first
        bias = consumers.unique(qdown0.node_id, (BIASADD,))
        if bias is None:
            return None                              # no bias: the library does not fuse
    qdown1 = consumers.unique(bias.node_id, (QDOWN, REQUANT))
    if qdown1 is None:
        return None
    if qdown1.op == REQUANT:                     # requantize_op_minmax_inputs: its range
        lo, hi = qdown1.inputs[3], qdown1.inputs[4]
    else:
        lo, hi = scalars.ref("-inf", -np.inf), scalars.ref("+inf", np.inf)
    relu = consumers.unique(qdown1.node_id, RELUS)
    if relu is not None:                         # extract_min_max_from_relu
        if relu.op == "QuantizedClamp_8":
            lo, hi = relu.inputs[3], relu.inputs[4]
        else:
            lo = scalars.ref("0", 0.0)
            if relu.op == "QuantizedReluX_8":
                hi = relu.inputs[3]
    return _Chain((conv, qdown0, bias, qdown1, relu), lo, hi)


def _match(conv: Node, nodes: dict[int, Node], consumers: Consumers, scalars: _Scalars,
           notes: list[str]) -> Fusion | None:
    found = _chain(conv, consumers, scalars)
    if found is None:
        return None
    _, qdown0, bias, qdown1, _ = found.steps
    assert bias is not None and qdown1 is not None      # _chain matched both
    op = SUPERNODE32 if found.bias32 else SUPERNODE
    last, lo, hi, chain = found.last, found.lo, found.hi, found.ops
    if _would_be_superfc(conv, last, nodes):
        notes.append(f"0x{conv.node_id:x}: the chain {' → '.join(chain)} becomes "
                     f"SuperFC_8x8p32to8 on the device (prepare: "
                     "maybe_morph_supernode_to_superfc), which Hexscope does not simulate; "
                     "it runs as authored")
        return None
    inputs = (*conv.inputs[:7], bias.inputs[1], bias.inputs[4], bias.inputs[5], lo, hi)
    supernode = Node(last.node_id, op, inputs=inputs, outputs=last.outputs,
                     padding=conv.padding, label=last.label, position=last.position)
    fused = tuple(n.node_id for n in (conv, qdown0, bias, qdown1)
                  if n is not None and n is not last)
    return Fusion(supernode, fused, chain)


def _would_be_superfc(conv: Node, last: Node, nodes: dict[int, Node]) -> bool:
    """``maybe_morph_supernode_to_superfc``'s conditions (prepare.c)."""
    sizes = last.outputs[0].max_sizes if last.outputs else ()
    if len(sizes) < 2 or sizes[0] != 1 or sizes[1] != 1:
        return False
    wts = nodes.get(conv.inputs[1][0]) if len(conv.inputs) > 1 else None
    if wts is None or wts.const is None:
        return False
    fh, fw, din, dout = wts.const.shape
    if (fh > 1 or fw > 1) and conv.padding is not Padding.VALID:
        return False
    if dout % 16 or dout < 32 or (fh * fw * din) % 16 or fh * fw * din < 32:
        return False
    src, idx = conv.inputs[0]
    producer = nodes.get(src)
    if producer is None or idx >= len(producer.outputs):
        return False
    shape = producer.outputs[idx].max_sizes
    return len(shape) >= 3 and shape[1] == fh and shape[2] == fw


def _match_depthwise(conv: Node, nodes: dict[int, Node], consumers: Consumers,
                     scalars: _Scalars) -> Fusion | None:
    """``ReplaceConv_DwiseSuperNode``: the same chain after a depthwise convolution becomes a
    DepthwiseSupernode (8- or 32-bit bias) when ``dwconv_extrachecks`` passes: const weights
    and stride (output 0), stride width <= 2, multiplier 1, filter height >= 2, width 3, 5
    or 7. Its channel scales stay an input (the op applies them; prepare's
    ``try_unimplemented_channelscale`` leaves depthwise Supernodes alone)."""
    (wsrc, widx), (ssrc, sidx) = conv.inputs[1], conv.inputs[6]
    wts, stride = nodes.get(wsrc), nodes.get(ssrc)
    if widx != 0 or sidx != 0 or wts is None or wts.const is None or stride is None \
            or not stride.is_const:
        return None
    sshape = stride.const.shape if stride.const is not None else stride.outputs[0].max_sizes
    fh, fw, _, mult = wts.const.shape
    if len(sshape) < 3 or sshape[2] > 2 or mult != 1 or fh < 2 or fw not in (3, 5, 7):
        return None
    found = _chain(conv, consumers, scalars)
    if found is None:
        return None
    _, _, bias, _, _ = found.steps
    assert bias is not None                       # _chain matched it
    op = DWISE32 if found.bias32 else DWISE
    last = found.last
    inputs = (*conv.inputs[:7], bias.inputs[1], bias.inputs[4], bias.inputs[5], found.lo,
              found.hi)
    supernode = Node(last.node_id, op, inputs=inputs, outputs=last.outputs,
                     padding=conv.padding, label=last.label, position=last.position)
    fused = tuple(n.node_id for n in found.steps[:4] if n is not None and n is not last)
    return Fusion(supernode, fused, found.ops)
