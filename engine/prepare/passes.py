"""The prepare passes, in the library's order (graph spec §2.5; nnlib prepare.c ``optimize``).

* RequantizationRange_32 and the Requantize_32to8 reading it become one
  QuantizeDownAndShrinkRange_32to8 (:mod:`range_ops`);
* Quantize fed by Min_f (input 1) and Max_f (input 2) becomes AutoQuantize under the same id;
* QuantizedTransposeConv2d_8x8p32to8 is expanded into a padded convolution chain
  (:mod:`transpose_conv`);
* dead nodes (no consumer, not retained) are removed, whole chains at once;
* a Relu after a Requantize_32to8 with a const max becomes a ReluX of that max (:mod:`range_ops`);
* the convolution chains become Supernodes (:mod:`supernode`), and the fully-connected
  chains SuperFC_8x8p32to8 (:mod:`superfc`), unless ``fusions`` is off (run the graph as
  authored);
* the Supernodes become their d32 forms between Convert_to_d32 and Convert_from_d32
  (:mod:`d32_supernode`);
* then a Supernode left flat has its ChannelScale input folded into its weights
  (:mod:`channelscale`): the library folds only those, its d32 forms apply the scales;
* QuantizedSub_8p8to8, which the library only runs in d32 form, becomes
  QuantizedSub_8p8to8_d32 between Convert_to_d32 and Convert_from_d32, and the elementwise
  ops fed from d32 take their d32 forms (:mod:`d32_forms`);
* Consts move to the front, keeping the relative order of the rest.

The library's other d32 conversions only change layouts and are not modelled; the shape
and resize ops it would move to d32 get a note (:mod:`d32_shape`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from hexscope.engine.cooperate import paced, pause
from hexscope.engine.graph import Graph
from hexscope.engine.nodes import Node
from hexscope.engine.ops.registry import REGISTRY, OpRegistry
from hexscope.engine.prepare.channelscale import FOLDED_SUPERNODES, apply_channel_scales
from hexscope.engine.prepare.d32_forms import D32_CANDIDATES, convert_to_d32_forms
from hexscope.engine.prepare.d32_shape import RULES as D32_RULES
from hexscope.engine.prepare.d32_shape import d32_notes, pad_rewrites
from hexscope.engine.prepare.d32_supernode import CONVERTED as D32_SUPERNODES
from hexscope.engine.prepare.d32_supernode import convert_supernodes, flat_hvx_notes
from hexscope.engine.prepare.range_ops import (
    RANGE,
    REQUANT,
    fuse_requantization_ranges,
    make_relux,
)
from hexscope.engine.prepare.superfc import MATMUL, fuse_superfc
from hexscope.engine.prepare.supernode import WHERE, find_chains
from hexscope.engine.prepare.transpose_conv import TRANSPOSE_CONV, expand_transpose_convs


@dataclass(frozen=True, slots=True)
class Rewrite:
    """What prepare did to an authored node, and why."""

    node_id: int
    kind: str          # "fused", "removed" or "replaced"
    reason: str
    into: int | None = None


@dataclass(frozen=True)
class Prepared:
    nodes: dict[int, Node]
    order: tuple[int, ...]       # every surviving node, Consts first
    plan: tuple[int, ...]        # the nodes that run, in order
    rewrites: tuple[Rewrite, ...]
    notes: tuple[str, ...] = ()  # what prepare would do on the device but Hexscope does not
    fusions: bool = True         # False: run as authored (no Supernode fusion)
    # the graph as authored, in append order: a backend that uploads the graph to a device
    # sends these, and the device runs its own prepare
    authored: tuple[Node, ...] = ()

    def rewrite_of(self, node_id: int) -> Rewrite | None:
        return self.rewrite_index.get(node_id)

    @cached_property
    def rewrite_index(self) -> dict[int, Rewrite]:
        """The rewrites by authored node id (a view asks once per node: keep it O(1))."""
        return {r.node_id: r for r in self.rewrites}


def prepare(graph: Graph, registry: OpRegistry = REGISTRY, *, fusions: bool = True) -> Prepared:
    """Rewrite a valid graph as hexagon_nn's prepare would (``fusions=False``: keep the
    convolution chains as authored, to compare them with what the device runs)."""
    nodes = {node.node_id: node for node in graph}
    order = list(graph.order)
    rewrites: list[Rewrite] = []
    if any(n.op == RANGE for n in nodes.values()):
        rewrites += [Rewrite(*r) for r in fuse_requantization_ranges(nodes, order)]
    if any(n.op == "Quantize" for n in nodes.values()):
        rewrites += _fuse_autoquantize(nodes)
    autoquantized = list(rewrites)
    notes: list[str] = []
    if any(n.op == TRANSPOSE_CONV for n in nodes.values()):
        order, expanded, notes = expand_transpose_convs(nodes, order, d32=fusions)
        rewrites += [Rewrite(e.node_id, "replaced", e.reason) for e in expanded]
    pause()
    removed = _remove_dead(nodes, order, registry)
    pause()
    # source -> the first fused Quantize it fed: one pass, not one scan of rewrites per node
    fed: dict[int, int] = {}
    for r in autoquantized:
        if r.kind == "replaced":
            for src in _quantize_sources(graph.node(r.node_id)):
                fed.setdefault(src, r.node_id)
    for node_id in removed:
        fused_into = fed.get(node_id)
        why = ("its only consumer was fused into AutoQuantize" if fused_into is not None
               else "nothing reads its outputs (dead node)")
        rewrites.append(Rewrite(node_id, "fused" if fused_into else "removed", why, fused_into))
    order = [i for i in order if i not in removed]
    if any(nodes[i].op == REQUANT for i in order):
        rewrites += [Rewrite(i, "replaced", why) for i, why in make_relux(nodes, order)]
    # between passes (each 5-15 ms at 10,000 nodes), an app's threads take turns
    pause()
    if fusions and any(nodes[i].op in ("QuantizedConv2d_8x8to32",
                                       "QuantizedDepthwiseConv2d_8x8to32") for i in order):
        order, fuse_notes = _fuse_supernodes(nodes, order, rewrites)
        notes += fuse_notes
        pause()
    if fusions and any(nodes[i].op == MATMUL for i in order):     # the delegate's FC chain
        order, done, fc_notes = fuse_superfc(nodes, order)
        rewrites += [Rewrite(*r) for r in done]
        notes += fc_notes
    if fusions and any(nodes[i].op in D32_SUPERNODES for i in order):
        order, converted = convert_supernodes(nodes, order, {r.node_id for r in rewrites})
        rewrites = _then(rewrites, converted)
        notes += flat_hvx_notes(nodes, order)
        pause()
    # after the d32 conversion, as the library's remove_unimplemented_channelscale runs after
    # convert_to_depth32 (prepare.c:4926-4930): the d32 Supernodes keep their ChannelScale
    if any(nodes[i].op in FOLDED_SUPERNODES and len(nodes[i].inputs) == 13 for i in order):
        order, folded = apply_channel_scales(nodes, order)
        rewrites = _then(rewrites, folded)
    # the d32 forms first: a split or depth-to-space they rewrite needs no note after
    if fusions and any(nodes[i].op in D32_CANDIDATES for i in order):
        order, converted, form_notes = convert_to_d32_forms(
            nodes, order, {r.node_id for r in rewrites})
        # a node replaced already (the transpose conv's DepthToSpace) keeps one rewrite; a
        # Convert_from_d32 an earlier pass made and this one left unread goes unrecorded
        rewrites = _then(rewrites, [(r.node_id, r.reason) for r in converted
                                    if r.kind == "replaced"])
        rewrites += [Rewrite(r.node_id, r.kind, r.reason) for r in converted
                     if r.kind == "removed" and r.node_id in graph]
        notes += form_notes
        pause()
    if any(nodes[i].op in D32_RULES for i in order):
        if fusions:
            order, moved = pad_rewrites(nodes, order)
            rewrites += [Rewrite(node_id, "replaced", why, into) for node_id, why, into in moved]
        notes += d32_notes(nodes, order)
    consts = [i for i in order if nodes[i].is_const]
    rest = [i for i in order if not nodes[i].is_const]
    kept = {i: nodes[i] for i in consts + rest}
    return Prepared(kept, tuple(consts + rest), tuple(rest), tuple(rewrites), tuple(notes),
                    fusions, tuple(graph))


def _fuse_supernodes(nodes: dict[int, Node], order: list[int], rewrites: list[Rewrite]
                     ) -> tuple[list[int], list[str]]:
    """Apply :func:`find_chains`: each Supernode takes its convolution's place."""
    fusions, notes, consts = find_chains(nodes, order)
    at_conv: dict[int, int] = {}
    gone: set[int] = set()
    for f in fusions:
        sid = f.supernode.node_id
        at_conv[f.fused[0]] = sid
        gone.update(f.fused)
        gone.add(sid)
        nodes[sid] = f.supernode
        for node_id in f.fused:
            del nodes[node_id]
            rewrites.append(Rewrite(node_id, "fused", f"fused into {f.supernode.op} 0x{sid:x} "
                                    f"({WHERE})", sid))
        rewrites.append(Rewrite(sid, "replaced", f"{' → '.join(f.chain)} becomes one "
                                f"{f.supernode.op} under this id ({WHERE}); it runs in the "
                                f"convolution's place"))
    # the library's unread -inf (a Relu replaced it) goes with its next dead-node pass
    read = {src for f in fusions for src, _ in f.supernode.inputs}
    consts = [c for c in consts if c.node_id in read]
    for c in consts:
        nodes[c.node_id] = c
    new_order = [c.node_id for c in consts]
    for node_id in order:
        if node_id in at_conv:
            new_order.append(at_conv[node_id])
        elif node_id not in gone:
            new_order.append(node_id)
    return new_order, notes


def _then(rewrites: list[Rewrite], more: list[tuple[int, str]]) -> list[Rewrite]:
    """``more`` added to ``rewrites``: a node replaced already keeps one rewrite, both
    reasons in order (the view shows one per node)."""
    at = {r.node_id: k for k, r in enumerate(rewrites) if r.kind == "replaced"}
    for node_id, why in more:
        if node_id in at:
            old = rewrites[at[node_id]]
            rewrites[at[node_id]] = Rewrite(node_id, "replaced", f"{old.reason}; then {why}")
        else:
            rewrites.append(Rewrite(node_id, "replaced", why))
    return rewrites


def _quantize_sources(node: Node) -> set[int]:
    return {src for src, _ in node.inputs[1:3]}


def _fuse_autoquantize(nodes: dict[int, Node]) -> list[Rewrite]:
    # Only the producers' ops are tested, as in try_make_autoquantize.
    rewrites = []
    for node_id, node in list(nodes.items()):
        if node.op != "Quantize" or len(node.inputs) < 3:
            continue
        lo, hi = nodes.get(node.inputs[1][0]), nodes.get(node.inputs[2][0])
        if lo is not None and hi is not None and lo.op == "Min_f" and hi.op == "Max_f":
            nodes[node_id] = node.with_(op="AutoQuantize", inputs=node.inputs[:1])
            rewrites.append(Rewrite(node_id, "replaced", "Quantize fed by Min_f and Max_f "
                                    "becomes AutoQuantize (hexagon_nn prepare)"))
    return rewrites


def _remove_dead(nodes: dict[int, Node], order: list[int], registry: OpRegistry) -> set[int]:
    refs = dict.fromkeys(order, 0)
    for node_id in paced(order):
        for src, _ in nodes[node_id].inputs:
            if src in refs:
                refs[src] += 1
    removed: set[int] = set()
    for node_id in paced(reversed(order)):
        node = nodes[node_id]
        spec = registry.get(node.op) if node.op in registry else None
        retained = spec.never_dead if spec else True
        if refs[node_id] == 0 and not retained:
            removed.add(node_id)
            for src, _ in node.inputs:
                if src in refs:
                    refs[src] -= 1
    return removed
