"""Prepare's d32 conversion of the ops nnlib only runs in d32 form (prepare.c
``do_convert_to_depth32`` with ``depth32_replacement_op``).

Only the rewrites whose d32 op Hexscope simulates are made: QuantizedSub_8p8to8, which the
library always converts ("this op is currently not supported in non-d32"),
QuantizedAdd_8p8to8 when input 0 or 1 comes from a Convert_from_d32 or the two producers'
declared dims differ (``check_dims_equal``; the d32 add then broadcasts or refuses at
execute, as the device's does), Requantize_8to8 / QuantizedTanh_8 / QuantizedSigmoid_8 /
QuantizedNeg_8 when their input 0 is already a Convert_from_d32's output, ArgMax_8toInt32 /
ArgMin_8 on a Const axis 3 (their int32 output
stays flat: no Convert_from_d32 after them), DepthToSpace_8 whose depths suit its d32 form
(``check_spaceop_ok_for_d32``), QuantizedResizeBilinear_8 with a declared output depth > 2
or a width not a power of 2, QuantizedSoftmax_8 (a Convert_from_d32 input, or not after a
SuperFC_8x8p32to8 and a declared output height >= 4, width >= 8 or 4, depth > 2), and
QuantizedSplit_8 on depth (inputs 0 and 1
wired to the same output, or a Const axis 3 / -1; ``do_convert_concat_depth32``: its data
input converts and every part gets its own Convert_from_d32; not for 1x1xD outputs), and
every well-formed QuantizedConcat_8 whose output is not 1x1xD, on any axis
(``do_convert_concat_depth32``: 3N+1 inputs with 1 <= N <= 1024, 3 to 1026 outputs, and not
``max_sizes[1] == max_sizes[2] == 1``; it reads no axis: each of its N data inputs
converts), and QuantizedAvgPool_8 (the library converts every one; Hexscope all but an
edge window of over 128 valid cells, which is not simulated:
``d32_shape.avg_pool_unsimulated``; those run flat with a note). The
node becomes the d32 op under the same id and output definitions, each data input goes
through a Convert_to_d32 (or, when it comes from a Convert_from_d32's output 0, takes that
node's input directly; a Convert_to_d32 this pass already made for the same source is
reused), and a new Convert_from_d32 after each data output feeds its readers; the readers
of the range outputs still read the d32 node. A Convert_from_d32 left with no reader (every
reader now takes its d32 input) is removed, as the library's ``remove_dead_nodes`` after
``convert_to_depth32`` does. New nodes get internal ids counting down from 0xFFFFFFFF past
every id in use.

Nodes are decided in graph order on the graph as rewritten so far, as the library's
``graph_iterator`` visits them: an add converted first gets a Convert_from_d32 after it, so
the Requantize_8to8 reading it converts too. The Supernodes were converted by the pass
before (:mod:`d32_supernode`), so a Supernode reading such a Requantize_8to8 or add has its
own Convert_to_d32 of the flat output: after those two ops that Convert_to_d32 (reading the
new Convert_from_d32) is removed and its readers read the d32 output itself, as the library's
single pass does (its Supernode reads past the Convert_from_d32) and as
``remove_unnecessary_d32_converts`` does for any pair left, after every d32 op; a
Convert_from_d32 left unread goes too. So a depthwise Supernode after a width-1 d32 concat
reads the concat's output, which has no left padding (op_concat_d32.c:496), and nnlib's
first check refuses it ("Need at least 1 left pad", op_dwise_snode_8bit.c:716): the wake
word's first depthwise stops there, before its 5x1 filter would.

Every d32 conversion ``depth32_replacement_op`` makes for these ops is simulated, so
``NOT_SIMULATED`` is empty: an op added there is noted ("runs flat") instead of rewritten.

A depth concat converts as well, as on the device: its d32 op truncates each input's gain
and offset where the flat QuantizedConcat_8 rounds them (quantized-ops spec §10-11), so an
input whose range is not the merged range can come out one code apart from the flat op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexscope.engine.cooperate import paced, pause
from hexscope.engine.nodes import Node, OutputDef
from hexscope.engine.prepare.d32_shape import avg_pool_unsimulated
from hexscope.engine.prepare.internal_ids import InternalIds

SUB = "QuantizedSub_8p8to8"
CONCAT = "QuantizedConcat_8"
SUB_D32 = "QuantizedSub_8p8to8_d32"
ADD = "QuantizedAdd_8p8to8"
SPLIT = "QuantizedSplit_8"
D2S = "DepthToSpace_8"
RESIZE = "QuantizedResizeBilinear_8"
SOFTMAX = "QuantizedSoftmax_8"
AVGPOOL = "QuantizedAvgPool_8"
TO_D32 = "Convert_to_d32"
FROM_D32 = "Convert_from_d32"
WHERE = "hexagon_nn prepare: convert_to_depth32"
#: authored op -> the library's d32 op, for the conversions that are not simulated
NOT_SIMULATED: dict[str, str] = {}
#: authored op -> (its d32 op, the data inputs that convert, converted only after a
#: Convert_from_d32, a Convert_from_d32 after each data output)
SIMULATED = {SUB: (SUB_D32, (0, 1), False, True),
             # an input from a Convert_from_d32, or inputs of different declared dims
             ADD: ("QuantizedAdd_8p8to8_d32", (0, 1), False, True),
             "Requantize_8to8": ("Requantize_8to8_d32", (0,), True, True),
             "QuantizedTanh_8": ("QuantizedTanh_8_d32", (0,), True, True),
             "QuantizedSigmoid_8": ("QuantizedSigmoid_8_d32", (0,), True, True),
             "QuantizedNeg_8": ("QuantizedNeg_8_d32", (0,), True, True),
             # on axis 3 only; their int32 output stays flat (convoutput_set = -1)
             "ArgMax_8toInt32": ("ArgMax_8_d32", (0,), False, False),
             "ArgMin_8": ("ArgMin_8_d32", (0,), False, False),
             # do_convert_concat_depth32: input 1 converts, every data output gets its own
             # Convert_from_d32
             SPLIT: ("QuantizedSplit_8_d32", (1,), False, True),
             D2S: ("DepthToSpace_8_d32", (0,), False, True),
             RESIZE: ("QuantizedResizeBilinear_8_d32", (0,), False, True),
             SOFTMAX: ("QuantizedSoftmax_8_d32", (0,), False, True),
             # always converted by the library; here where its d32 form is simulated
             AVGPOOL: ("QuantizedAvgPool_8_d32", (0,), False, True),
             # do_convert_concat_depth32's checks (_concat_converts); data inputs 1..N (None)
             CONCAT: ("QuantizedConcat_8_d32", None, False, True)}
D32_CANDIDATES = frozenset({*SIMULATED, *NOT_SIMULATED})


@dataclass(frozen=True, slots=True)
class D32Rewrite:
    node_id: int
    reason: str
    kind: str = "replaced"          # or "removed": a Convert_from_d32 nothing reads any more


def convert_to_d32_forms(nodes: dict[int, Node], order: list[int], used: set[int] | None = None
                         ) -> tuple[list[int], list[D32Rewrite], list[str]]:
    """Rewrite ``nodes`` in place; returns the new order, one rewrite per converted node
    (and per Convert_from_d32 removed) and notes for the conversions the library makes that
    are not simulated. ``used``: ids no new node may take (those of nodes earlier passes
    removed, as the library never hands out an internal id twice)."""
    notes = [f"0x{i:x}: the library runs this {nodes[i].op} as {NOT_SIMULATED[nodes[i].op]} "
             "(not simulated: it runs flat)"
             for i in order if nodes[i].op in NOT_SIMULATED and _library_converts(nodes, i)]
    if not any(nodes[i].op in SIMULATED for i in order):
        return order, [], notes
    ids = InternalIds(set(nodes) | (used or set()))
    readers: dict[int, set[int]] = {}
    for node_id in paced(order):
        for src, _ in nodes[node_id].inputs:
            readers.setdefault(src, set()).add(node_id)
    pause()
    made_to: dict[tuple[int, int], int] = {}
    before: dict[int, list[int]] = {}
    after: dict[int, list[int]] = {}
    bypassed: dict[int, int] = {}       # Convert_from_d32 -> the first node that read past it
    rewrites: list[D32Rewrite] = []
    # in graph order, each node decided on the graph as rewritten so far, as the library's
    # graph_iterator does: a Requantize_8to8 after an add converted just before it sees that
    # add's new Convert_from_d32
    for sub_id in [i for i in order if nodes[i].op in SIMULATED]:
        if not _converts(nodes, nodes[sub_id]):
            continue
        rewrites.append(_convert_one(nodes, sub_id, readers, made_to, before, after,
                                     bypassed, ids))
    pairs = _remove_pairs(nodes, readers, after)
    dead = {f for f in bypassed if not readers.get(f)}
    for f in sorted(dead):
        del nodes[f]
        rewrites.append(D32Rewrite(f, f"nothing reads it once 0x{bypassed[f]:x} takes its d32 "
                                      "input (hexagon_nn prepare: remove_dead_nodes)", "removed"))
    unread = {f for froms in after.values() for f in froms if not readers.get(f)} - dead
    for f in unread:
        del nodes[f]
    gone = dead | unread | set(pairs)
    for t, (d, moved) in pairs.items():
        rewrites.append(D32Rewrite(t, f"{TO_D32} of the d32 output of 0x{d:x} through a "
                                      f"{FROM_D32}: its readers take that output "
                                      "(hexagon_nn prepare: remove_unnecessary_d32_converts)",
                                   "removed"))
        # the reader's own rewrite (a Supernode's) named the conversion it no longer reads
        rewrites += [D32Rewrite(r, f"its input is the d32 output of 0x{d:x} itself ({TO_D32} "
                                   f"0x{t:x} removed: remove_unnecessary_d32_converts)")
                     for r in sorted(moved)]
    new_order: list[int] = []
    for node_id in order:
        new_order += before.get(node_id, [])
        if node_id not in gone:
            new_order.append(node_id)
        new_order += [f for f in after.get(node_id, []) if f not in gone]
    return new_order, rewrites, notes


def _convert_one(nodes: dict[int, Node], sub_id: int, readers: dict[int, set[int]],
                 made_to: dict[tuple[int, int], int], before: dict[int, list[int]],
                 after: dict[int, list[int]], bypassed: dict[int, int],
                 ids: InternalIds) -> D32Rewrite:
    """``do_convert_to_depth32`` for one node: its d32 op, the data inputs' d32 sources and
    a Convert_from_d32 after each data output."""
    sub = nodes[sub_id]
    d32_op, data_inputs, _, convert_output = SIMULATED[sub.op]
    inputs = list(sub.inputs)
    data = range(1, 1 + len(inputs) // 3) if data_inputs is None else data_inputs
    how = []
    for k in data:
        if nodes[inputs[k][0]].op == FROM_D32 and inputs[k][1] == 0:
            readers.get(inputs[k][0], set()).discard(sub_id)
            bypassed.setdefault(inputs[k][0], sub_id)
        inputs[k], new = _d32_source(nodes, inputs[k], made_to, ids)
        if new is not None:
            before.setdefault(sub_id, []).append(new)
        src = nodes[inputs[k][0]]
        how.append(f"through {TO_D32} 0x{src.node_id:x}" if src.op == TO_D32 else
                   f"the d32 output of 0x{src.node_id:x}")
    if sub.op == SPLIT and sub.inputs[0] == sub.inputs[1]:
        inputs[0] = inputs[1]           # the depth-split wiring follows the new input
    nodes[sub_id] = sub.with_(op=d32_op, inputs=tuple(inputs))
    why = (f"{sub.op} becomes {d32_op} under this id ({WHERE}), its input"
           f"{'s' if len(how) > 1 else ''} {', '.join(how)}")
    if convert_output:
        froms = [_convert_back(nodes, readers, sub_id, k, sub.outputs, ids)
                 for k in range(_data_outputs(sub))]
        after[sub_id] = froms
        why += (f", its output{'s' if len(froms) > 1 else ''} through {FROM_D32} "
                + ", ".join(f"0x{i:x}" for i in froms))
        direct = sorted({r for f in froms for t in readers.get(f, ())
                         if nodes[t].op == TO_D32 for r in readers.get(t, ())})
        if direct:
            why += (" (to " + ", ".join(f"0x{r:x}" for r in direct) + " directly: "
                    "remove_unnecessary_d32_converts)")
    return D32Rewrite(sub_id, why)


def _remove_pairs(nodes: dict[int, Node], readers: dict[int, set[int]],
                  after: dict[int, list[int]]) -> dict[int, tuple[int, set[int]]]:
    """A Convert_to_d32 reading a Convert_from_d32 this pass made after a d32 node (one an
    earlier pass made for a Supernode, or an authored one): its readers read the d32 output
    itself and it goes, as ``remove_unnecessary_d32_converts`` then ``remove_dead_nodes``
    do (a later Supernode in the library's single pass reads past the Convert_from_d32).
    Returns the removed Convert_to_d32 -> (the d32 node, the readers now reading it)."""
    removed: dict[int, tuple[int, set[int]]] = {}
    for node_id, froms in after.items():
        for k, f in enumerate(froms):
            for t in sorted(readers.get(f, set())):
                conv = nodes.get(t)
                if conv is None or conv.op != TO_D32 or conv.inputs != ((f, 0),):
                    continue
                moved = readers.pop(t, set())
                _rewire(nodes, moved, (t, 0), (node_id, k))
                readers.setdefault(node_id, set()).update(moved)
                readers[f].discard(t)
                del nodes[t]
                removed[t] = (node_id, moved)
    return removed


def _data_outputs(node: Node) -> int:
    """Outputs converted back: every one but min and max for a split, else output 0."""
    return max(1, len(node.outputs) - 2) if node.op == SPLIT else 1


def _convert_back(nodes: dict[int, Node], readers: dict[int, set[int]], node_id: int, k: int,
                  outputs: tuple[OutputDef, ...], ids: InternalIds) -> int:
    """A new Convert_from_d32 of output k; its readers read the converter instead."""
    from_id = ids.new()
    # only the readers of output k move (a reader of a range output keeps the d32 node)
    mine = {r for r in readers.get(node_id, set()) if (node_id, k) in nodes[r].inputs}
    _rewire(nodes, mine, (node_id, k), (from_id, 0))
    readers.setdefault(from_id, set()).update(mine)
    nodes[from_id] = Node(from_id, FROM_D32, inputs=((node_id, k),),
                          outputs=(outputs[k] if k < len(outputs) else OutputDef(),))
    return from_id


def _converts(nodes: dict[int, Node], node: Node) -> bool:
    if node.op == CONCAT:
        return _concat_converts(node)
    if node.op == AVGPOOL:
        return avg_pool_unsimulated(nodes, node) is None
    if node.op in ("ArgMax_8toInt32", "ArgMin_8", SPLIT, D2S, RESIZE, SOFTMAX, ADD):
        return _library_converts(nodes, node.node_id)
    return not SIMULATED[node.op][2] or _after_from_d32(nodes, node)


def _concat_converts(node: Node) -> bool:
    """``do_convert_concat_depth32`` for QuantizedConcat_8 (``depth32_replacement_op`` maps
    it unconditionally): 4 to 3*1024+1 inputs, exactly 3N+1 of them ("node has %d inputs"
    otherwise), 3 to 1026 outputs, and an output whose declared ``max_sizes[1]`` and
    ``max_sizes[2]`` are not both 1 ("Don't try and convert 1x1xD tensors"). The axis is not
    read: a depth concat converts like any other."""
    ins, outs = len(node.inputs), len(node.outputs)
    if not (4 <= ins <= 1 + 3 * 1024 and 3 <= outs <= 1024 + 2) or (ins - 1) % 3:
        return False
    # the C reads entries 1 and 2 of the array as declared (not the last four of a longer
    # rank); an entry past the declared rank is taken as 0, as a zeroed struct holds
    sizes = list(node.outputs[0].max_sizes) + [0, 0, 0]
    return not (sizes[1] == 1 and sizes[2] == 1)


def _after_from_d32(nodes: dict[int, Node], node: Node) -> bool:
    src = nodes.get(node.inputs[0][0]) if node.inputs else None
    return src is not None and src.op == FROM_D32 and node.inputs[0][1] == 0


def _library_converts(nodes: dict[int, Node], node_id: int) -> bool:
    """``depth32_replacement_op``'s own conditions, for the ops that have them."""
    node = nodes[node_id]
    src = nodes.get(node.inputs[0][0]) if node.inputs else None
    from_d32 = src is not None and src.op == FROM_D32
    if node.op in ("ArgMax_8toInt32", "ArgMin_8"):
        a = _const_word(nodes, node.inputs[1]) if len(node.inputs) > 1 else None
        return a in (3, -1)
    if node.op == SPLIT:
        return _split_converts(nodes, node)
    if node.op == ADD:
        return _add_converts(nodes, node)
    if node.op == D2S:
        return _d2s_converts(nodes, node)
    if node.op == RESIZE:
        # the declared output depth > 2, or a width that is not a power of 2
        _, _, w, d = (list(node.outputs[0].max_sizes) if node.outputs else [1] * 4)[-4:]
        return d > 2 or (w & (w - 1)) != 0
    if node.op == "QuantizedSoftmax_8":
        if from_d32 or (src is not None and src.op == "SuperFC_8x8p32to8"):
            return from_d32
        _, h, w, d = (list(node.outputs[0].max_sizes) if node.outputs else [1] * 4)[-4:]
        return h >= 4 and (w >= 8 or w == 4) and d > 2
    return from_d32


def _add_converts(nodes: dict[int, Node], node: Node) -> bool:
    """``depth32_replacement_op`` for QuantizedAdd_8p8to8: input 0 or 1 made by a
    Convert_from_d32 (whichever output), or ``check_dims_equal`` of the two producers'
    output definitions failing: their ``max_sizes[0..3]`` as declared differ (an entry past
    the declared rank read as 0, as a zeroed struct holds). Whether the d32 add can then
    broadcast them is its own check at execute ("unsupported broadcast mode")."""
    if len(node.inputs) < 2:
        return False
    producers = [(nodes.get(src), idx) for src, idx in node.inputs[:2]]
    if any(p is None for p, _ in producers):
        return False
    if any(p.op == FROM_D32 for p, _ in producers):
        return True
    dims = [(list(p.outputs[idx].max_sizes) if idx < len(p.outputs) else []) + [0] * 4
            for p, idx in producers]
    return dims[0][:4] != dims[1][:4]


def _const_word(nodes: dict[int, Node], ref: tuple[int, int]) -> int | None:
    """Word 0 of a Const's output (``find_node_must_be_Const`` + ``tensor_get_int32``)."""
    src = nodes.get(ref[0])
    if src is None or not src.is_const or src.const is None or not src.const.has_data:
        return None
    return int(src.const.array.reshape(-1).view(np.int32)[0])


def _split_converts(nodes: dict[int, Node], node: Node) -> bool:
    """``depth32_replacement_op`` for QuantizedSplit_8 (4 inputs; inputs 0 and 1 wired to
    the same output, or a Const axis 3 / -1 with at least 4 outputs), then
    ``do_convert_concat_depth32``'s own refusal of 1x1xD outputs. One part (3 outputs) is
    left flat: the d32 op needs at least 4 outputs (NN_IOCOUNT_GE(4))."""
    if len(node.inputs) != 4 or len(node.outputs) < 4:
        return False
    if node.inputs[0] != node.inputs[1] and _const_word(nodes, node.inputs[0]) not in (3, -1):
        return False
    sizes = list(node.outputs[0].max_sizes)[-4:]
    return not (len(sizes) == 4 and sizes[1] == 1 and sizes[2] == 1)


def _d2s_converts(nodes: dict[int, Node], node: Node) -> bool:
    """``check_spaceop_ok_for_d32``: 4+ inputs; the producer's declared depth a multiple
    of 32; a Const block of 1 or 2 int32 values >= 1 (``get_blocksize_values``) with bw
    1..4 or 8; an output depth D/(bh bw) that divides exactly and is a multiple of 32, or
    16 with bw = 2."""
    if len(node.inputs) < 4:
        return False
    src, idx = nodes.get(node.inputs[0][0]), node.inputs[0][1]
    block = nodes.get(node.inputs[1][0])
    if src is None or idx >= len(src.outputs) or block is None or not block.is_const \
            or block.const is None or not block.const.has_data:
        return False
    depth = (list(src.outputs[idx].max_sizes) or [0])[-1]
    words = np.ascontiguousarray(block.const.buffer).view(np.uint8)
    if depth % 32 or words.size not in (4, 8) or block.const.shape[3] != words.size // 4:
        return False
    bs = words.view(np.int32)
    bh, bw = int(bs[0]), int(bs[-1])
    if min(bh, bw) < 1 or (bw > 4 and bw != 8):
        return False
    prod = min(bh * bw, 2**32 - 1)
    out = depth // prod
    return out > 0 and out * prod == depth and (out % 32 == 0 or (out == 16 and bw == 2))


def _d32_source(nodes: dict[int, Node], ref: tuple[int, int], made_to: dict[tuple[int, int], int],
                ids: InternalIds) -> tuple[tuple[int, int], int | None]:
    """``need_convert_to_d32``: the d32 form of input ``ref`` and the node made for it."""
    producer = nodes[ref[0]]
    if ref[1] == 0 and producer.op == FROM_D32 and producer.inputs:
        return producer.inputs[0], None
    if ref in made_to:
        return (made_to[ref], 0), None
    new_id = ids.new()
    shape = producer.outputs[ref[1]] if ref[1] < len(producer.outputs) else OutputDef()
    nodes[new_id] = Node(new_id, TO_D32, inputs=(ref,), outputs=(OutputDef(shape.max_sizes, 1),))
    made_to[ref] = new_id
    return (new_id, 0), new_id


def _rewire(nodes: dict[int, Node], readers: set[int], old: tuple[int, int],
            new: tuple[int, int]) -> None:
    """``change_output_refs``: every reader of ``old`` reads ``new`` instead."""
    for node_id in readers:
        node = nodes[node_id]
        if old in node.inputs:
            nodes[node_id] = node.with_(inputs=tuple(new if r == old else r for r in node.inputs))
