"""The d32 forms of ops, by name, and the layout conversions prepare puts around them.

nnlib's prepare (and Hexscope's, :mod:`hexscope.engine.prepare`) turns a flat op into its d32
form under the same node id (``Supernode_8x8p8to8`` into ``Supernode_8x8p8to8_d32`` or
``InputSupernode_8x8p8to8_outd32``, ``QuantizedAdd_8p8to8`` into ``QuantizedAdd_8p8to8_d32``),
with a ``Convert_to_d32`` before it and a ``Convert_from_d32`` after it under new internal ids.
The device runs, names and dumps the d32 node under the authored id; the conversions only
move bytes. Features that look for an op by its flat name (the ranges' rewrites, the
profile's matching, a reduction's units) use these to see the op the device runs.
"""

from __future__ import annotations

from collections.abc import Mapping

from hexscope.engine.nodes import Node

__all__ = ["CONVERSIONS", "FROM_D32", "TO_D32", "conversion_owner", "flat_form",
           "is_d32_form", "logical_source"]

TO_D32, FROM_D32 = "Convert_to_d32", "Convert_from_d32"
CONVERSIONS = (TO_D32, FROM_D32)
_SUFFIXES = ("_outd32", "_d32")
_INPUT_FORM = "Input"           # InputSupernode_..._outd32: the flat-input form


def is_d32_form(op: str) -> bool:
    """Whether ``op`` is the d32 form of an op (a name ending in ``_d32`` or ``_outd32``,
    the conversions themselves excepted)."""
    return op.endswith(_SUFFIXES) and op not in CONVERSIONS


def flat_form(op: str) -> str:
    """The flat op a d32 form stands for (``InputSupernode_8x8p8to8_outd32`` ->
    ``Supernode_8x8p8to8``); any other op is its own."""
    if not is_d32_form(op):
        return op
    suffix = next(s for s in _SUFFIXES if op.endswith(s))
    base = op[:-len(suffix)]
    if suffix == "_outd32" and base.startswith(_INPUT_FORM):
        base = base[len(_INPUT_FORM):]
    return base


def logical_source(nodes: Mapping[int, Node], ref: tuple[int, int]) -> tuple[int, int]:
    """The output whose logical values ``ref`` carries: ``ref`` with every layout
    conversion before it looked through."""
    seen = set()
    while ref not in seen:
        seen.add(ref)
        node = nodes.get(ref[0])
        if node is None or node.op not in CONVERSIONS or ref[1] != 0 or not node.inputs:
            break
        ref = node.inputs[0]
    return ref


def conversion_owner(nodes: Mapping[int, Node], node_id: int) -> int:
    """The d32 node a conversion is there for (a ``Convert_from_d32``'s source, else the
    first d32 node reading a ``Convert_to_d32``); any other node is its own."""
    node = nodes.get(node_id)
    if node is None or node.op not in CONVERSIONS:
        return node_id
    if node.op == FROM_D32 and node.inputs:
        src = nodes.get(node.inputs[0][0])
        if src is not None and is_d32_form(src.op):
            return src.node_id
    if node.op == TO_D32:
        for other in nodes.values():
            if is_d32_form(other.op) and any(s == node_id for s, _ in other.inputs):
                return other.node_id
    return node_id
