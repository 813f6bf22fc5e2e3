"""hexscope diff's engine: nodes added, removed and changed between two graphs (issue 31)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.prepare import prepare
from hexscope.engine.structural_diff import CHANGED, REMOVED, structural_diff
from support.diff_graphs import CONV2, CONV2_FMIN, FILTER, copy_graph, three_edits
from support.large_graph import residual_graph


def test_structural_diff_names_a_filter_byte_a_rewired_input_and_a_removed_node():
    a, b = three_edits()
    diff = structural_diff(a, b)
    assert [(e.kind, e.a_id) for e in diff.entries] == [
        (CHANGED, FILTER), (REMOVED, CONV2_FMIN), (CHANGED, CONV2)]
    const = diff.by_a[FILTER].changes
    assert [c.field for c in const] == ["const"]
    assert const[0].differing_bytes == 1
    old = int(a.node(FILTER).const.array[0, 0, 2, 3])
    assert const[0].largest_change == abs((old + 17) % 256 - old)
    assert "at [0, 0, 2, 3]" in const[0].detail
    wire = diff.by_a[CONV2].changes
    assert [(c.field, c.detail) for c in wire] == [("input 4", "rewired")]
    assert wire[0].a.startswith("0x100d") and wire[0].b.startswith("0x1006")
    assert "1 changed" not in diff.summary() and "2 changed, 1 removed, 0 added" in diff.summary()


def test_structural_diff_of_a_graph_with_itself_is_empty():
    a = residual_graph(24)
    diff = structural_diff(a, copy_graph(a))
    assert diff.same and diff.entries == () and len(diff.pairs) == len(a)
    assert diff.to_json()["nodes"] == []


def test_structural_diff_matches_a_renumbered_node_by_label_and_ignores_moves():
    a = Graph()
    a.append_node(0x10, "INPUT", outputs=1)
    a.append_node(0x11, "Nop", [(0x10, 0)], outputs=1, label="mid")
    a.append_node(0x20, "OUTPUT", [(0x11, 0)])
    b = Graph()
    b.append_node(0x10, "INPUT", outputs=1)
    b.append_node(0x99, "Nop", [(0x10, 0)], outputs=1, label="mid")
    b.append_node(0x20, "OUTPUT", [(0x99, 0)])
    b.move({0x10: (5.0, 7.0)})
    diff = structural_diff(a, b)
    assert diff.pairs[0x11] == 0x99
    # the OUTPUT reads the matched node: no rewiring; the renumbering itself is named
    assert [(e.kind, e.a_id, [c.field for c in e.changes]) for e in diff.entries] == [
        (CHANGED, 0x11, ["id"])]


def test_structural_diff_authored_against_prepared_names_the_autoquantize_fusion():
    a = residual_graph(24)
    diff = structural_diff(a, prepare(a).nodes.values())
    assert {e.a_id for e in diff.of_kind(REMOVED)} == {0x1000, 0x1001, 0x1002, 0x1003}
    quantize = diff.by_a[0x1004].changes
    assert (quantize[0].field, quantize[0].b) == ("op", "AutoQuantize")
    assert [c.field for c in quantize[1:]] == ["input 1", "input 2"]


_BASE = residual_graph(24)
_CONSTS = [n.node_id for n in _BASE if n.is_const and n.const.has_data]


@settings(max_examples=25, deadline=None)
@given(changed=st.sets(st.sampled_from(_CONSTS), max_size=4),
       relabel=st.sets(st.sampled_from(_CONSTS), max_size=3),
       drop_output=st.booleans(), data=st.data())
def test_structural_diff_names_exactly_the_edited_nodes(changed, relabel, drop_output, data):
    b = copy_graph(_BASE)
    for node_id in changed:
        values = np.array(b.node(node_id).const.array)
        flat = values.reshape(-1)
        k = data.draw(st.integers(0, flat.size - 1))
        flat[k] = flat[k] + 1 if values.dtype != np.uint8 else (int(flat[k]) + 1) % 256
        b.set_const(node_id, values)
    for node_id in relabel:
        b.set_label(node_id, f"renamed {node_id:x}")
    if drop_output:
        b.remove_node(0x20)
    diff = structural_diff(_BASE, b)
    assert {e.a_id for e in diff.of_kind(CHANGED)} == changed | relabel
    assert {e.a_id for e in diff.of_kind(REMOVED)} == ({0x20} if drop_output else set())
    for node_id in changed:
        const = next(c for c in diff.by_a[node_id].changes if c.field == "const")
        assert const.differing_bytes >= 1 and const.largest_change > 0
    back = structural_diff(b, _BASE)            # the other way round: added, not removed
    assert {e.b_id for e in back.of_kind("added")} == {e.a_id for e in diff.of_kind(REMOVED)}
    assert {e.a_id for e in back.of_kind(CHANGED)} == changed | relabel
