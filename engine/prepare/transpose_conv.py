"""Prepare's expansion of QuantizedTransposeConv2d_8x8p32to8 (nnlib prepare.c
``create_transpose_conv_nodes`` → expand_transpose_conv_nodes.c, with the filter rework of
transpose_conv_procweights.c ``process_transpose_conv_filter``).

The op has no arithmetic of its own on the device: prepare replaces it, before the Supernode
fusion, by an ordinary convolution on a padded input with a reworked filter. For no groups
(the TFLite delegate's TRANSPOSE_CONV), with sh x sw the strides, fh x fw the filter:

- the filter [N, fh, fw, D] is padded with its zero code to multiples of the strides (and
  N to a multiple of 32 when sw is 2, 3, 4 or 8: ``pad_num_filters``), split space-to-batch
  into sh x sw sub-filters of r x s = (fh/sh) x (fw/sw) taps, turned into HWIO [r, s, D, K]
  with K = sh sw N' output channels (channel (i sw + j) N' + n is sub-filter (i, j) of filter
  n), and rotated 180 degrees;
- QuantizedPad_8 pads the input by r-1 rows and s-1 columns each side (less the transpose
  conv's own paddings when both strides are 1);
- QuantizedConv2d_8x8to32 (VALID, stride 1) → QuantizedBiasAdd_32p32to32 (the bias repeated
  per sub-filter, 0 elsewhere) → Requantize_32to8 into the output range; Hexscope's Supernode
  fusion then makes these one Supernode_8x8p32to8, as the library's ``make_supernodes`` does;
- with a stride above 1, DepthToSpace_8 (block sh x sw) turns the sub-filter channels into
  pixels and crops [top pad, bottom, left pad, right] to the output size.

With a ChannelScale input (14th) the library puts a QuantizedChannelScale_32xf after the
convolution, which its fusion takes into the Supernode as a 13th input; Hexscope, which does
not simulate that op, writes the fused Supernode_8x8p32to8 with the 13th input directly.

Where N was padded to a multiple of 32 the library's DepthToSpace has a 5th crop value, the
output depth, which only its d32 form accepts: prepare's d32 conversion (:mod:`d32_forms`)
makes it DepthToSpace_8_d32, as the library's does (its depths and block always suit
``check_spaceop_ok_for_d32`` there). Run as authored (``d32=False``: no d32 conversion), the
flat DepthToSpace_8, which refuses a 5th value, crops the 4 sides and a QuantizedSlice_8 keeps
the first N channels, the same bytes.

Not expanded (the node stays and fails as "not simulated", with a note naming the node and
the library's path for it): groups > 1 (a 15th input; expand_transpose_conv_nodes.c splits
the input per group and concatenates, cases 3-4) and the depthwise cases (groups equal to the
depths: subkernels on QuantizedDepthwiseConv2d, cases 5-6; AxisShuffle and Reshape for a
channel multiplier of 2, cases 7-8). TFLite's delegate never makes them:
``transpose_conv_2d_builder.cc`` gives at most 14 inputs (the channel scales last), so an
imported model's transpose convolutions always expand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.errors import GraphError
from hexscope.engine.hexmath import quantize_uint8
from hexscope.engine.nodes import Node, OutputDef, Padding, const_tensor

TRANSPOSE_CONV = "QuantizedTransposeConv2d_8x8p32to8"
WHERE = "hexagon_nn prepare: expand_transpose_conv_nodes"
_SCALAR = OutputDef((1, 1, 1, 1), 4)


@dataclass(frozen=True, slots=True)
class Expansion:
    """What one transpose convolution became."""

    node_id: int
    reason: str


@dataclass
class _Ids:
    """Internal ids counting down from 0xFFFFFFFF (``nn_graph_new_internal_node_id``)."""

    taken: set[int]
    next_id: int = 0xFFFFFFFF
    consts: list[Node] = field(default_factory=list)

    def new(self) -> int:
        while self.next_id in self.taken:
            self.next_id -= 1
        self.taken.add(self.next_id)
        return self.next_id

    def const(self, data: np.ndarray, shape: tuple[int, ...], label: str) -> tuple[int, int]:
        node_id = self.new()
        arr = np.ascontiguousarray(data).reshape(shape)
        self.consts.append(Node(node_id, "Const", outputs=(OutputDef(shape, arr.itemsize),),
                                const=const_tensor(arr), label=f"prepare: {label}"))
        return node_id, 0

    def shape_const(self, shape: tuple[int, ...], label: str) -> tuple[int, int]:
        node_id = self.new()
        self.consts.append(Node(node_id, "Const", outputs=(OutputDef(shape, 4),),
                                const=const_tensor(None, shape), label=f"prepare: {label}"))
        return node_id, 0


def dims4(sizes: tuple[int, ...]) -> tuple[int, int, int, int]:
    b, h, w, d = ((1, 1, 1, 1) + tuple(sizes))[-4:]
    return b, h, w, d


def roundup(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def rework_filter(w: np.ndarray, sh: int, sw: int, zero: int, pad_filters: bool) -> np.ndarray:
    """``process_transpose_conv_filter`` for no groups: [N, fh, fw, D] uint8 to the HWIO
    filter [r, s, D, sh sw N'] of the convolution that replaces the transpose conv."""
    n, fh, fw, d = w.shape
    pn = roundup(n, 32) if pad_filters else n
    pfh, pfw = roundup(fh, sh), roundup(fw, sw)
    padded = np.full((pn, pfh, pfw, d), zero, np.uint8)
    padded[:n, :fh, :fw] = w
    r, s = pfh // sh, pfw // sw
    # space to batch: [N', r, sh, s, sw, D] -> [sh, sw, N', r, s, D] -> [K, r, s, D]
    s2b = padded.reshape(pn, r, sh, s, sw, d).transpose(2, 4, 0, 1, 3, 5)
    hwio = s2b.reshape(sh * sw * pn, r, s, d).transpose(1, 2, 3, 0)
    return np.ascontiguousarray(hwio[::-1, ::-1])       # rotated 180 degrees


def padded_per_subfilter(values: np.ndarray, k: int, pn: int, copies: int, fill: float,
                         dtype: type) -> np.ndarray:
    """The bias (or channel scales) laid out as the reworked filter's K channels: the values
    at i N' for each sub-filter i, ``fill`` elsewhere."""
    out = np.full(k, fill, dtype)
    for i in range(copies):
        out[i * pn:i * pn + values.size] = values
    return out


def expand_transpose_convs(nodes: dict[int, Node], order: list[int], *, d32: bool = True
                           ) -> tuple[list[int], list[Expansion], list[str]]:
    """Rewrite ``nodes`` in place; returns the new order, one expansion per node and notes
    for the transpose convolutions left as they are. ``d32``: prepare converts to d32 after
    (the depth crop is DepthToSpace's 5th value, else a QuantizedSlice_8)."""
    ids = _Ids(set(nodes))
    new_order: list[int] = []
    done: list[Expansion] = []
    notes: list[str] = []
    for node_id in order:
        node = nodes[node_id]
        if node.op != TRANSPOSE_CONV:
            new_order.append(node_id)
            continue
        made = _expand(node, nodes, ids, notes, d32)
        if made is None:
            new_order.append(node_id)
            continue
        run, reason = made
        new_order += [c.node_id for c in ids.consts]
        for c in ids.consts:
            nodes[c.node_id] = c
        ids.consts.clear()
        new_order += [n.node_id for n in run]
        for n in run:
            nodes[n.node_id] = n
        done.append(Expansion(node_id, reason))
    return new_order, done, notes


def _const(nodes: dict[int, Node], node: Node, k: int, what: str) -> Node:
    src, idx = node.inputs[k]
    c = nodes.get(src)
    if c is None or not c.is_const or c.const is None or idx != 0:
        raise GraphError(f"node {node.title} ({node.op}): input {k} ({what}) must be a Const: "
                         "the device's prepare reads it to expand the node")
    return c


def _expand(node: Node, nodes: dict[int, Node], ids: _Ids, notes: list[str], d32: bool
            ) -> tuple[list[Node], str] | None:
    ins = node.inputs
    wts = _const(nodes, node, 1, "filter")
    wmin, wmax = (float(_const(nodes, node, k, n).const.array.reshape(-1)[0])  # type: ignore[union-attr]
                  for k, n in ((4, "filter min"), (5, "filter max")))
    pads_c, stride_c, bias_c = (_const(nodes, node, k, n) for k, n in
                                ((6, "paddings"), (7, "stride"), (8, "bias")))
    for k, n in ((9, "bias min"), (10, "bias max")):
        _const(nodes, node, k, n)
    groups = 1
    if len(ins) > 14:
        groups = int(_const(nodes, node, 14, "groups").const.array.reshape(-1).view(np.int32)[0])  # type: ignore[union-attr]
    assert wts.const is not None and pads_c.const is not None and stride_c.const is not None
    assert bias_c.const is not None
    _, sh, sw, _ = stride_c.const.shape
    if sh < 1 or sw < 1:
        raise GraphError(f"node {node.title} ({node.op}): Bad strides {sh} {sw} for transpose "
                         "conv node")
    if groups > 1:
        notes.append(_groups_note(node, nodes, groups, wts.const.shape, (sh, sw)))
        return None
    w = wts.const.array.view(np.uint8).reshape(wts.const.shape)
    n_filt, fh, fw, depth = w.shape
    pads = [int(v) for v in pads_c.const.array.reshape(-1).view(np.int32)[:4]]
    if len(pads) < 4:
        raise GraphError(f"node {node.title} ({node.op}): the paddings hold {len(pads)} values; "
                         "the device's prepare reads 4 (top, bottom, left, right)")
    src = nodes[ins[0][0]]
    in_b, in_h, in_w, in_d = dims4(src.outputs[ins[0][1]].max_sizes
                                   if ins[0][1] < len(src.outputs) else ())
    out_def = node.outputs[0] if node.outputs else OutputDef()
    _, out_h, out_w, _ = dims4(out_def.max_sizes)
    pad_filters = 1 < sw < 5 or sw == 8
    pn = roundup(n_filt, 32) if pad_filters else n_filt
    strided = sh * sw > 1
    k = pn * sh * sw
    r, s = roundup(fh, sh) // sh, roundup(fw, sw) // sw
    filt = rework_filter(w, sh, sw, quantize_uint8(0.0, wmin, wmax), pad_filters)

    # the input's padding: r-1 / s-1 each side, less the node's own paddings at stride 1
    own = pads if not strided else [0, 0, 0, 0]
    conv_h, conv_w = (in_h + r - 1, in_w + s - 1) if strided else (out_h, out_w)
    crop_bottom = (in_h - 1 + r) * sh - pads[0] - out_h
    crop_right = (in_w - 1 + s) * sw - pads[2] - out_w
    pad_rows = [0, 0, r - 1 - own[0], r - 1 - own[1], s - 1 - own[2], s - 1 - own[3], 0, 0]

    run: list[Node] = []
    data, lo, hi = ins[0], ins[2], ins[3]
    if any(pad_rows):
        pad_id = ids.new()
        rows = ids.const(np.array(pad_rows, np.int64).astype(np.int32), (1, 1, 4, 2),
                         "transpose conv input paddings")
        padded = (in_b, in_h + pad_rows[2] + pad_rows[3], in_w + pad_rows[4] + pad_rows[5], in_d)
        run.append(Node(pad_id, "QuantizedPad_8", inputs=(data, lo, hi, rows),
                        outputs=(OutputDef(padded, 1), _SCALAR, _SCALAR), label=node.label))
        data, lo, hi = (pad_id, 0), (pad_id, 1), (pad_id, 2)
    bias = bias_c.const.array.reshape(-1).view(np.int32)
    if bias.size > pn:
        raise GraphError(f"node {node.title} ({node.op}): {bias.size} bias values for "
                         f"{n_filt} filters")
    bias_ref = ids.const(padded_per_subfilter(bias, k, pn, sh * sw, 0, np.int32), (1, 1, 1, k),
                         "transpose conv bias per sub-filter")
    stride_ref = ids.shape_const((1, 1, 1, 1), "stride 1")
    filt_ref = ids.const(filt, filt.shape, "transpose conv filter, reworked")
    conv_shape = (in_b, conv_h, conv_w, k)
    conv_in = (data, filt_ref, lo, hi, ins[4], ins[5], stride_ref)
    last_id = node.node_id if not strided else ids.new()
    req_out = (OutputDef(conv_shape, 1), _SCALAR, _SCALAR) if strided else node.outputs
    if len(ins) > 13:                  # ChannelScale: written as the library's fusion makes it
        scales = _const(nodes, node, 13, "channel scales").const.array.reshape(-1)  # type: ignore[union-attr]
        scale_ref = ids.const(padded_per_subfilter(scales.view(np.float32), k, pn, sh * sw, 1.0,
                                                   np.float32), (1, 1, 1, k),
                              "transpose conv channel scales per sub-filter")
        run.append(Node(last_id, "Supernode_8x8p32to8", padding=Padding.VALID,
                        inputs=(*conv_in, bias_ref, ins[9], ins[10], ins[11], ins[12],
                                scale_ref),
                        outputs=req_out, label=node.label))
    else:
        conv_id, add_id = ids.new(), ids.new()
        wide = (OutputDef(conv_shape, 4), _SCALAR, _SCALAR)
        run += [Node(conv_id, "QuantizedConv2d_8x8to32", inputs=conv_in, outputs=wide,
                     padding=Padding.VALID, label=node.label),
                Node(add_id, "QuantizedBiasAdd_32p32to32",
                     inputs=((conv_id, 0), bias_ref, (conv_id, 1), (conv_id, 2), ins[9], ins[10]),
                     outputs=wide, label=node.label),
                Node(last_id, "Requantize_32to8",
                     inputs=((add_id, 0), (add_id, 1), (add_id, 2), ins[11], ins[12]),
                     outputs=req_out, label=node.label)]
    if strided:
        crop = [pads[0], crop_bottom, pads[2], crop_right]
        if pad_filters and d32:
            crop.append(n_filt)             # the output depth: DepthToSpace_8_d32 crops it
        run += _depth_to_space(node, ids, last_id, (sh, sw), crop, n_filt,
                               pad_filters and not d32)
    names = ", ".join(f"{n.op} 0x{n.node_id:x}" for n in run)
    return run, (f"{node.op} expanded into {names} ({WHERE}); the last keeps this id")


def _groups_note(node: Node, nodes: dict[int, Node], groups: int,
                 filt: tuple[int, ...], stride: tuple[int, int]) -> str:
    """Why a grouped transpose convolution stays as it is, naming the path the library's
    ``expand_transpose_conv_nodes`` (expand_transpose_conv_nodes.c) takes for it."""
    src, idx = node.inputs[0]
    producer = nodes.get(src)
    in_d = dims4(producer.outputs[idx].max_sizes if producer is not None
                 and idx < len(producer.outputs) else ())[3]
    out_d = dims4(node.outputs[0].max_sizes if node.outputs else ())[3]
    _, fh, fw, _ = filt
    sh, sw = stride
    if groups == in_d == out_d:
        path = ("its depthwise case (groups == input depth == output depth: "
                "QuantizedDepthwiseConv2d_8x8to32" + (", split in sub-kernels for the stride"
                                                      if sh * sw > 1 else "") + ")")
    elif 2 * groups == in_d and groups == out_d and fw * 2 // sw < 7 \
            and roundup(fh, sh) // sh >= 2:
        path = ("its channel-multiplier depthwise case (input depth == 2 groups == 2 output "
                "depth: an AxisShuffle and a Reshape before QuantizedDepthwiseConv2d_8x8to32)")
    else:
        path = (f"its grouped case: the padded input split in {groups} on depth, one "
                "convolution chain per group" + (" with its DepthToSpace" if sh * sw > 1 else "")
                + ", then a QuantizedConcat_8")
    return (f"{node.title}: a transpose convolution in {groups} groups "
            f"(input 14) is not expanded by Hexscope: nnlib's prepare "
            f"(expand_transpose_conv_nodes.c, expand_transpose_conv_nodes) takes {path}, "
            "which Hexscope does not build; the node stays and refuses to run (not simulated)")


def _depth_to_space(node: Node, ids: _Ids, src: int, block: tuple[int, int], crop: list[int],
                    n_filt: int, depth_crop: bool) -> list[Node]:
    block_ref = ids.const(np.array(block, np.int32), (1, 1, 1, 2), "depth to space block")
    crop_ref = ids.const(np.array(crop, np.int64).astype(np.int32), (1, 1, 1, len(crop)),
                         "depth to space crop")
    d2s_id = ids.new() if depth_crop else node.node_id
    outputs = node.outputs
    if depth_crop:
        b, h, w, _ = dims4(node.outputs[0].max_sizes)
        outputs = (OutputDef((b, h, w, roundup(n_filt, 32)), 1), _SCALAR, _SCALAR)
    run = [Node(d2s_id, "DepthToSpace_8", inputs=((src, 0), block_ref, (src, 1), (src, 2),
                                                  crop_ref),
                outputs=outputs, label=node.label)]
    if depth_crop:     # the 5th crop value, as a slice of the depth
        start = ids.const(np.zeros(1, np.int32), (1, 1, 1, 1), "output depth start")
        size = ids.const(np.array([n_filt], np.int32), (1, 1, 1, 1), "output depth")
        run.append(Node(node.node_id, "QuantizedSlice_8",
                        inputs=((d2s_id, 0), start, size, (d2s_id, 1), (d2s_id, 2)),
                        outputs=node.outputs, label=node.label))
    return run
