"""hexscope diff's engine: nodes added, removed and changed between two graphs (issue 31)."""

from __future__ import annotations

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
