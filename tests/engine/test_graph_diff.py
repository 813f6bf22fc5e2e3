"""diff_graphs: what an autosave holds that the file does not."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph
from hexscope.engine.graph_diff import diff_graphs


def _graph() -> Graph:
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x11, np.array([1.0], np.float32))
    g.append_node(0x12, "Nop", inputs=[(0x10, 0)], outputs=1)
    g.append_node(0x13, "OUTPUT", inputs=[(0x12, 0)])
    return g


def test_diff_names_added_removed_changed_and_moved_nodes():
    old, new = _graph(), _graph()
    new.remove_node(0x11)
    new.set_label(0x12, "renamed")
    new.move({0x13: (5.0, 6.0)})
    new.append_node(0x20, "Nop", inputs=[(0x12, 0)], outputs=1)
    d = diff_graphs(old, new)
    assert (d.added, d.removed, d.changed, d.moved) == ((0x20,), (0x11,), (0x12,), (0x13,))
    assert d.summary() == ("1 node(s) added (0x20); 1 node(s) removed (0x11); "
                           "1 node(s) changed (0x12); 1 node(s) moved (0x13)")


def test_equal_graphs_have_no_difference_and_long_lists_are_cut():
    assert diff_graphs(_graph(), _graph()).same
    g = Graph()
    d = diff_graphs(g, _graph())
    assert d.summary(show=2) == "4 node(s) added (0x10, 0x11, … 2 more)"


def test_snapshot_saves_the_same_bytes_as_the_graph(tmp_path):
    g = _graph()
    snap = g.snapshot()
    g.set_label(0x12, "after the snapshot")
    snap.save(tmp_path / "s.hexgraph")
    assert (tmp_path / "s.hexgraph").read_bytes() == _graph().to_bytes()
