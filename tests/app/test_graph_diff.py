"""graph_differences: each changed node named once, in words."""

from __future__ import annotations

import numpy as np

from hexscope.app.graph_diff import MAX_LINES, graph_differences
from hexscope.engine import Graph


def _graph(values: np.ndarray) -> Graph:
    g = Graph()
    g.append_const_node(0x10, values, label="w")
    g.append_node(0x20, "Nop", inputs=[(0x10, 0)], outputs=1)
    return g


def test_the_same_graph_has_no_differences():
    a = _graph(np.arange(6, dtype=np.float32))
    assert graph_differences(a, _graph(np.arange(6, dtype=np.float32))) == []


def test_a_changed_const_is_named_with_its_first_different_value():
    b_values = np.arange(6, dtype=np.float32)
    b_values[4] = 40
    lines = graph_differences(_graph(np.arange(6, dtype=np.float32)), _graph(b_values))
    assert lines == ["0x10 'w' (Const): const values differ at 1 of 6 element(s) "
                     "(first at flat index 4: 4.0 here, 40.0 in B)"]


def test_added_removed_and_many_changes_are_counted():
    a, b = Graph(), Graph()
    for k in range(MAX_LINES + 2):
        a.append_const_node(0x100 + k, np.array([k], np.int32))
        b.append_const_node(0x100 + k, np.array([k + 1], np.int32))
    b.append_node(0x300, "Nop", inputs=[(0x100, 0)], outputs=1)
    lines = graph_differences(a, b)
    assert len(lines) == MAX_LINES + 1 and lines[-1] == "… and 3 more node(s)"
