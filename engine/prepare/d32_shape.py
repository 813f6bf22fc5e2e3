"""Which shape, resize and pool ops nnlib's prepare would move to their d32 forms.

nnlib's ``convert_to_depth32`` pass (prepare.c ``depth32_replacement_op``) replaces
QuantizedPad_8, MirrorPad_8, QuantizedSplit_8, DepthToSpace_8, QuantizedResizeBilinear_8
and (always) QuantizedAvgPool_8 by their ``_d32`` forms (with Convert_to_d32 /
Convert_from_d32 around them) when its conditions hold. A QuantizedPad_8 fed by a
Convert_from_d32 is rewritten as the device does (:func:`pad_rewrites`, shown as prepare's
other rewrites). The split, depth-to-space, resize and average-pool conversions are made by
:mod:`d32_forms`, which runs first (an average pool only where Hexscope simulates its d32
form: :func:`avg_pool_unsimulated`); what is left here gets a note saying what the device
runs instead (all of them when the graph runs as authored).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Node
from hexscope.engine.ops.pooling.avgpool_d32 import axis_plan, not_simulated

#: A producer after which the node reads d32 data on the device: an explicit
#: Convert_from_d32, or a Supernode, which the same pass turns into Supernode_8x8p8to8_d32
#: followed by a Convert_from_d32 earlier in the graph.
_FROM_D32 = ("Convert_from_d32", "Supernode_8x8p8to8")
_WHERE = "nnlib prepare.c depth32_replacement_op"
_PASS = "nnlib prepare.c convert_to_depth32"


def _const_words(nodes: dict[int, Node], ref: tuple[int, int]) -> np.ndarray | None:
    """The int32 words of a Const's output 0 (``find_node_must_be_Const``), else None."""
    src = nodes.get(ref[0])
    if src is None or not src.is_const or ref[1] != 0 or src.const is None:
        return None
    if not src.const.has_data:
        return None
    raw = np.ascontiguousarray(src.const.buffer).view(np.uint8)
    return raw[: raw.size // 4 * 4].view(np.int32)


def _fed_d32(nodes: dict[int, Node], node: Node) -> bool:
    src = nodes.get(node.inputs[0][0]) if node.inputs else None
    return src is not None and src.op in _FROM_D32


def _pad(nodes: dict[int, Node], node: Node) -> str | None:
    if len(node.inputs) < 4 or not _fed_d32(nodes, node):
        return None
    pads = _const_words(nodes, node.inputs[3])
    rows = 0 if pads is None else pads.size // 2
    if pads is None or not 1 <= rows <= 4 or pads[2 * rows - 2] or pads[2 * rows - 1]:
        return None
    return "its input comes from d32 and it pads no depth"


def _mirror_pad(nodes: dict[int, Node], node: Node) -> str | None:
    # prepare.c reads the pads from input 3, which for MirrorPad_8 is the max: a one-word
    # Const gives 0 rows, so in practice the op stays flat.
    if len(node.inputs) < 4 or not _fed_d32(nodes, node):
        return None
    pads = _const_words(nodes, node.inputs[3])
    rows = 0 if pads is None else pads.size // 2
    if pads is None or not 1 <= rows <= 4 or pads[0] or pads[1]:
        return None
    if rows > 3 and (pads[6] or pads[7]):
        return None
    return "its input comes from d32 and input 3 (read as the pads) has no batch/depth padding"


def _split(nodes: dict[int, Node], node: Node) -> str | None:
    if len(node.inputs) != 4:
        return None
    if node.inputs[0] == node.inputs[1]:
        return "inputs 0 and 1 share a source (a depth split)"
    axis = _const_words(nodes, node.inputs[0])
    if axis is None or axis.size < 1 or len(node.outputs) < 4:
        return None
    a = int(axis[0])
    return "it splits depth" if a in (3, -1) else None


def _depth_to_space(nodes: dict[int, Node], node: Node) -> str | None:
    if len(node.inputs) < 4:
        return None
    src = nodes.get(node.inputs[0][0])
    if src is None or node.inputs[0][1] >= len(src.outputs):
        return None
    depth = src.outputs[node.inputs[0][1]].shape[3]
    block = _const_words(nodes, node.inputs[1])
    if depth % 32 or block is None or block.size not in (1, 2):
        return None
    bh, bw = int(block[0]), int(block[-1])
    if min(bh, bw) < 1 or (bw > 4 and bw != 8):
        return None
    out = depth // (bh * bw)
    if out == 0 or out * bh * bw != depth or (out % 32 and not (out == 16 and bw == 2)):
        return None
    return f"its input depth {depth} and block {bh}x{bw} suit the d32 form"


def _resize_bilinear(nodes: dict[int, Node], node: Node) -> str | None:
    if not node.outputs:
        return None
    _, _, width, depth = node.outputs[0].shape
    if depth > 2 or width & (width - 1):
        return f"its declared output depth {depth} > 2 or width {width} is not a power of 2"
    return None


def avg_pool_unsimulated(nodes: dict[int, Node], node: Node) -> str | None:
    """Why Hexscope cannot run this QuantizedAvgPool_8 as QuantizedAvgPool_8_d32 (None: it
    can), from its input's declared shape and its window and stride Consts' shapes: see
    :func:`~hexscope.engine.ops.pooling.avgpool_d32.not_simulated`."""
    src = nodes.get(node.inputs[0][0]) if node.inputs else None
    idx = node.inputs[0][1] if node.inputs else 0
    if src is None or idx >= len(src.outputs) or len(src.outputs[idx].max_sizes) < 3 \
            or len(node.inputs) < 5:
        return "its input's declared shape is unknown"
    h, w = list(src.outputs[idx].max_sizes)[-3:-1]
    shapes = []
    for ref in node.inputs[3:5]:
        c = nodes.get(ref[0])
        if c is None or not c.is_const or c.const is None:
            return "its window or stride is not a Const"
        shapes.append(c.const.shape)
    (_, fh, fw, _), (_, sh, sw, _) = shapes
    try:
        hp = axis_plan(h, fh, sh, node.padding)
        wp = axis_plan(w, fw, sw, node.padding)
    except KernelError as e:
        return str(e)
    return not_simulated(hp, wp)


def _avg_pool(nodes: dict[int, Node], node: Node) -> str | None:
    # the library converts every one; prepare converts the simulated ones before this runs,
    # so a note here is for a pool run as authored or one whose d32 form is not simulated
    why = avg_pool_unsimulated(nodes, node)
    return "it converts every QuantizedAvgPool_8" + (f"; {why}, not simulated" if why else "")


RULES: dict[str, tuple[str, Callable[[dict[int, Node], Node], str | None]]] = {
    "QuantizedPad_8": ("QuantizedPad_8_d32", _pad),
    "MirrorPad_8": ("MirrorPad_8_d32", _mirror_pad),
    "QuantizedSplit_8": ("QuantizedSplit_8_d32", _split),
    "DepthToSpace_8": ("DepthToSpace_8_d32", _depth_to_space),
    "QuantizedResizeBilinear_8": ("QuantizedResizeBilinear_8_d32", _resize_bilinear),
    "QuantizedAvgPool_8": ("QuantizedAvgPool_8_d32", _avg_pool),
}
# what the device's d32 form computes differently, where it does
_DIFFERS = {
    "QuantizedAvgPool_8": "the d32 avgpool sums each window in 32 bits (op_avgpool_d32.c) "
                          "and fills edge windows with scaled padding, where the flat HVX "
                          "op's 16-bit sums wrap: a window whose codes add up to 32768 or "
                          "more (over 128 cells) differs",
}


def d32_notes(nodes: dict[int, Node], order: list[int]) -> list[str]:
    """A note per node the device's prepare would replace by its d32 form."""
    notes = []
    for node_id in order:
        node = nodes[node_id]
        rule = RULES.get(node.op)
        why = rule[1](nodes, node) if rule else None
        if rule and why:
            notes.append(f"0x{node_id:x}: {node.op} becomes {rule[0]} on the device ({_WHERE}: "
                         f"{why}), with Convert_to_d32 / Convert_from_d32 around it; Hexscope "
                         "runs the flat op (" + _DIFFERS.get(
                             node.op, "the same logical values for a pad, split or "
                             "depth-to-space; the d32 resize is HVX fixed-point") + ")")
    return notes


def pad_rewrites(nodes: dict[int, Node], order: list[int]
                 ) -> tuple[list[int], list[tuple[int, str, int | None]]]:
    """nnlib's d32 substitution of a QuantizedPad_8 fed by a Convert_from_d32, modelled
    with the authored ids: the pad (id P) becomes QuantizedPad_8_d32 reading the converter's
    d32 input, and the converter (id C) moves after it, converting the pad's result back for
    the readers of P's output 0. Only where C has no other reader (the device would keep C
    for them and add a new converter, which needs an id Hexscope does not invent).

    Returns the new order and, per rewritten node, (id, why, the node it went with).
    """
    readers: dict[tuple[int, int], int] = {}
    for node_id in order:
        for ref in nodes[node_id].inputs:
            readers[ref] = readers.get(ref, 0) + 1
    done: list[tuple[int, str, int | None]] = []
    for node_id in list(order):
        node = nodes[node_id]
        if node.op != "QuantizedPad_8" or not _pad(nodes, node):
            continue
        conv_id = node.inputs[0][0]
        conv = nodes[conv_id]
        if conv.op != "Convert_from_d32" or readers.get((conv_id, 0), 0) != 1 or \
                len(conv.outputs) != 1 or not node.outputs:
            continue
        nodes[node_id] = node.with_(op="QuantizedPad_8_d32", inputs=(conv.inputs[0],
                                                                     *node.inputs[1:]))
        nodes[conv_id] = conv.with_(inputs=((node_id, 0),), outputs=(node.outputs[0],))
        for other_id in order:
            other = nodes[other_id]
            if other_id != conv_id and (node_id, 0) in other.inputs:
                nodes[other_id] = other.with_(inputs=tuple(
                    (conv_id, 0) if ref == (node_id, 0) else ref for ref in other.inputs))
        order.remove(conv_id)
        order.insert(order.index(node_id) + 1, conv_id)
        done.append((node_id, "fed by a Convert_from_d32 and padding no depth, it runs as "
                     f"QuantizedPad_8_d32 on that converter's d32 input ({_PASS})", None))
        done.append((conv_id, f"moved after 0x{node_id:x}: converts the d32 pad's result "
                     f"back for its readers ({_PASS})", node_id))
    return order, done
