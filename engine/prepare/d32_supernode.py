"""Prepare's d32 conversion of the Supernodes (nnlib prepare.c ``convert_to_depth32`` →
``do_convert_to_depth32`` with ``depth32_replacement_op``, ``do_convert_to_short_conv``; then
``remove_dead_nodes``).

In graph order, each Supernode the library converts becomes its d32 op under the same id and
output definitions:

- Supernode_8x8p8to8 / _8x8p32to8 (their weights and stride must be Consts, or prepare fails:
  "supernode weights not found, or not const"): with a filter depth of at most 4, a stride
  width of at most 4 and no 13th ChannelScale input, the input Supernode
  InputSupernode_8x8p8to8_outd32 / _8x8p32to8_outd32 (flat input, d32 output), except that an
  odd stride width above 1 keeps the flat op; otherwise Supernode_8x8p8to8_d32 / _8x8p32to8_d32;
- DepthwiseSupernode_8x8p8to8 / _8x8p32to8: DepthwiseSupernode_..._d32.

Where a flat Supernode stays, the device runs it with HVX (op_supernode.c
``supernode_execute_hvx``), whose own checks Hexscope's flat op does not apply (it is the
``_ref``'s simulation): :func:`flat_hvx_notes` says where they would refuse the node.

A d32 op's data input goes through a new Convert_to_d32, unless it comes from a
Convert_from_d32 (then it reads that node's d32 input: ``need_convert_to_d32``), and a new
Convert_from_d32 after it feeds every reader of its output 0 (``change_output_refs``); a
Convert_from_d32 left with no reader is removed, as the library's next dead-node pass does.
New nodes get internal ids counting down from 0xFFFFFFFF past every id in use.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.errors import GraphError
from hexscope.engine.nodes import Node, OutputDef, Padding
from hexscope.engine.prepare.internal_ids import InternalIds

TO_D32, FROM_D32 = "Convert_to_d32", "Convert_from_d32"
WHERE = "hexagon_nn prepare: convert_to_depth32"
FLAT = ("Supernode_8x8p8to8", "Supernode_8x8p32to8")
DWISE = ("DepthwiseSupernode_8x8p8to8", "DepthwiseSupernode_8x8p32to8")
CONVERTED = frozenset(FLAT + DWISE)


def d32_op(nodes: dict[int, Node], node: Node) -> str | None:
    """``depth32_replacement_op`` (and ``do_convert_to_short_conv``'s stride test) for a
    Supernode: the op it becomes, or None where it stays flat."""
    if node.op in DWISE:
        return f"{node.op}_d32"
    if node.op not in FLAT:
        return None
    consts = []
    for k, what in ((1, "weights"), (6, "strides")):
        src = nodes.get(node.inputs[k][0]) if len(node.inputs) > k else None
        if src is None or not src.is_const or src.const is None:
            raise GraphError(f"node {node.title} ({node.op}): supernode {what} not found, or "
                             "not const (the device's prepare needs them to convert it to d32)")
        consts.append(src.const.shape)
    (_, _, depth, _), (_, _, stride_w, _) = consts
    if depth <= 4 and stride_w <= 4 and len(node.inputs) < 13:
        if stride_w > 1 and stride_w % 2:
            return None         # do_convert_to_short_conv: odd strides above 1 stay flat
        return node.op.replace("Supernode", "InputSupernode", 1) + "_outd32"
    return f"{node.op}_d32"


def convert_supernodes(nodes: dict[int, Node], order: list[int], used: set[int] | None = None
                       ) -> tuple[list[int], list[tuple[int, str]]]:
    """Rewrite ``nodes`` in place; the new order and (node id, reason) per converted node.
    ``used``: ids no new node may take (those of nodes earlier passes removed)."""
    ids = InternalIds(set(nodes) | (used or set()))
    readers: dict[int, set[int]] = {}
    for node_id in order:
        for src, _ in nodes[node_id].inputs:
            readers.setdefault(src, set()).add(node_id)
    made_to: dict[tuple[int, int], int] = {}
    before: dict[int, int] = {}
    after: dict[int, int] = {}
    done: list[tuple[int, str]] = []
    for node_id in order:
        node = nodes[node_id]
        new_op = d32_op(nodes, node)
        if new_op is None:
            continue
        inputs = list(node.inputs)
        how = "its input flat"
        if not new_op.startswith("Input"):
            inputs[0], made = _d32_source(nodes, inputs[0], node_id, ids, readers, made_to)
            if made is not None:
                before[node_id] = made
            src = nodes[inputs[0][0]]
            how = (f"its input through {TO_D32} 0x{src.node_id:x}" if src.op == TO_D32 else
                   f"its input the d32 output of 0x{src.node_id:x} (no conversion between)")
        nodes[node_id] = node.with_(op=new_op, inputs=tuple(inputs))
        from_id = ids.new()
        mine = readers.get(node_id, set())
        for r in mine:
            reader = nodes[r]
            nodes[r] = reader.with_(inputs=tuple((from_id, 0) if ref == (node_id, 0) else ref
                                                 for ref in reader.inputs))
        readers[from_id] = set(mine)
        readers[node_id] = {from_id}
        nodes[from_id] = Node(from_id, FROM_D32, inputs=((node_id, 0),),
                              outputs=(node.outputs[0] if node.outputs else OutputDef(),))
        after[node_id] = from_id
        done.append((node_id, f"{node.op} becomes {new_op} under this id ({WHERE}), {how}, "
                              f"its output through {FROM_D32} 0x{from_id:x}"))
    dead = {f for f in after.values() if not readers.get(f)}
    for f in dead:
        del nodes[f]
    new_order: list[int] = []
    for node_id in order:
        if node_id in before:
            new_order.append(before[node_id])
        new_order.append(node_id)
        if node_id in after and after[node_id] not in dead:
            new_order.append(after[node_id])
    return new_order, done


def _d32_source(nodes: dict[int, Node], ref: tuple[int, int], reader: int, ids: InternalIds,
                readers: dict[int, set[int]], made_to: dict[tuple[int, int], int]
                ) -> tuple[tuple[int, int], int | None]:
    """``need_convert_to_d32``: the d32 form of ``ref`` for ``reader``, and the node made."""
    producer = nodes[ref[0]]
    if ref[1] == 0 and producer.op == FROM_D32 and producer.inputs:
        readers.get(ref[0], set()).discard(reader)
        return producer.inputs[0], None
    if ref in made_to:
        return (made_to[ref], 0), None
    new_id = ids.new()
    made_to[ref] = new_id
    shape = producer.outputs[ref[1]] if ref[1] < len(producer.outputs) else OutputDef()
    nodes[new_id] = Node(new_id, TO_D32, inputs=(ref,), outputs=(OutputDef(shape.max_sizes, 1),))
    return (new_id, 0), new_id


def flat_hvx_notes(nodes: dict[int, Node], order: list[int]) -> list[str]:
    """The checks of ``supernode_execute_hvx`` that would refuse a Supernode left flat:
    "Batch size > 1 not supported with odd in depth" (fh fw depth not a multiple of 32, or
    SAME_CAFFE padding, with more than one batch: the declared input size) and, with an 8-bit
    bias and more than 3 output rows, "bias magnitude too large" (a bias bound past 2**30
    output steps, the step being the data step times the filter step; Const ranges only)."""
    notes = []
    for node_id in order:
        node = nodes[node_id]
        if node.op not in FLAT or len(node.inputs) < 12:
            continue
        src, idx = node.inputs[0]
        producer, wts = nodes.get(src), nodes.get(node.inputs[1][0])
        if producer is None or wts is None or wts.const is None or idx >= len(producer.outputs):
            continue
        batches = ((1, 1, 1, 1) + tuple(producer.outputs[idx].max_sizes))[-4]
        fh, fw, depth, _ = wts.const.shape
        if batches > 1 and ((fh * fw * depth) % 32 or node.padding is Padding.SAME_CAFFE):
            notes.append(f"0x{node_id:x}: on the device this {node.op} stays flat and its HVX "
                         "code refuses it: Batch size > 1 not supported with odd in depth "
                         "(op_supernode.c supernode_execute_hvx); Hexscope runs it as the _ref")
        out_h = ((1, 1, 1, 1) + tuple(node.outputs[0].max_sizes))[-3] if node.outputs else 0
        # an output of 3 rows or fewer goes to the _ref before this check
        if node.op == "Supernode_8x8p8to8" and out_h > 3 and _bias_too_large(nodes, node):
            notes.append(f"0x{node_id:x}: on the device this {node.op} stays flat and its HVX "
                         "code refuses it: bias magnitude too large (op_supernode.c "
                         "supernode_execute_hvx); Hexscope runs it as the _ref")
    return notes


def _bias_too_large(nodes: dict[int, Node], node: Node) -> bool:
    values = []
    for k in (2, 3, 4, 5, 8, 9):
        c = nodes.get(node.inputs[k][0])
        if c is None or c.const is None or not c.const.has_data:
            return False
        values.append(np.float32(c.const.array.reshape(-1)[0]))
    xl, xh, fl, fh, bl, bh = values
    with np.errstate(all="ignore"):
        step = np.float32(np.float32(np.float32(xh - xl) / np.float32(255)) *
                          np.float32(np.float32(fh - fl) / np.float32(255)))
        limit = np.float32(np.float32(2.0**30) * step)
    return bool(bh > limit or bl < -limit)
