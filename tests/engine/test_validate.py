"""Validation lists every problem at once, naming node (hex) and input (issue 2, spec §2.3-2.5)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph, GraphError, Session
from hexscope.engine.nodes import Node, OutputDef
from hexscope.engine.validate import Severity, can_connect, validate
from support.toy_ops import make_registry

REG = make_registry()


def codes(g: Graph) -> list[tuple[str, int, int | None]]:
    return [(i.code, i.node_id, i.port) for i in validate(g, REG)]


def test_clean_graph_has_no_issues(chain_graph):
    assert validate(chain_graph, REG) == []


def test_every_problem_is_listed_at_once():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x11, "NoSuchOp", inputs=[(0x10, 0)], outputs=1)
    g.append_node(0x12, "AddOne_f", inputs=[], outputs=1)                  # arity
    g.append_node(0x13, "Nop", inputs=[(0x99, 0)], outputs=1)              # dangling
    g.append_node(0x14, "Nop", inputs=[(0x15, 0)], outputs=1)              # forward reference
    g.append_node(0x15, "Nop", inputs=[(0x10, 3)], outputs=1)              # bad output index
    g.append_const_node(0x16, np.array([1], np.int32))
    g.append_node(0x17, "AddOne_f", inputs=[(0x10, 0), (0x16, 0)], outputs=1)   # type
    g.append_const_node(0x18, shape=(1, 2, 2, 1))
    g.append_node(0x19, "AddOne_f", inputs=[(0x18, 0)], outputs=1)         # shape-only data
    g.append_node(0x1A, "Nop", inputs=[(0x10, 0)], outputs=1)
    g.append_node(0x1A, "Nop", inputs=[(0x10, 0)], outputs=1)              # duplicate id
    found = codes(g)
    assert ("unknown-op", 0x11, None) in found
    assert ("arity", 0x12, None) in found
    assert ("dangling", 0x13, 0) in found
    assert ("forward-ref", 0x14, 0) in found
    assert ("bad-output", 0x15, 0) in found
    assert ("type", 0x17, 1) in found
    assert ("missing-const", 0x19, 0) in found
    assert ("duplicate-id", 0x1A, None) in found
    text = [str(i) for i in validate(g, REG)]
    assert any(t.startswith("node 0x13 input 0:") and "0x99" in t for t in text)
    assert any("expects float32 on 'bias', gets int32" in t for t in text)


def test_a_negative_output_index_is_a_bad_output():
    """hexagon_nn's output_idx is unsigned (graph spec §2.3): -1 must not read the last output
    (Python's indexing from the end) but be reported, as an index past the end is."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=2)
    g.append_node(0x11, "Nop", inputs=[(0x10, -1)], outputs=1)
    g.append_node(0x12, "OUTPUT", inputs=[(0x11, 0)])
    assert ("bad-output", 0x11, 0) in codes(g)
    assert can_connect(g, (0x10, -1), 0x12, 0, REG).code == "bad-output"
    with pytest.raises(GraphError):
        Session(g, registry=REG)


def test_unknown_op_suggests_close_names():
    g = Graph()
    g.append_node(0x10, "Nopp", outputs=0)
    (issue,) = validate(g, REG)
    assert "did you mean Nop" in issue.message


def test_layout_mismatch_is_a_type_problem():
    g = Graph()
    g.append_const_node(0x10, np.zeros((1, 2, 2, 3), np.uint8))
    g.append_node(0x11, "TakeU8d32", inputs=[(0x10, 0)], outputs=1)
    (issue,) = validate(g, REG)
    assert issue.code == "type" and "expects a d32 tensor" in issue.message


def test_cycle_is_reported():
    g = Graph()
    g.append_node(0x10, "Nop", inputs=[(0x11, 0)], outputs=1)
    g.append_node(0x11, "Nop", inputs=[(0x10, 0)], outputs=1)
    found = {c for c, _, _ in codes(g)}
    assert {"cycle", "forward-ref"} <= found


def test_reserved_id_is_a_warning_only():
    g = Graph()
    with pytest.warns(UserWarning):
        g.append_node(0xF0000010, "INPUT", outputs=1)
    (issue,) = validate(g, REG)
    assert issue.code == "reserved-id" and issue.severity is Severity.WARNING


def test_const_without_data_or_shape():
    from hexscope.engine.nodes import Node

    g = Graph()
    g._append(Node(0x10, "Const", (), ()))
    assert codes(g) == [("missing-const", 0x10, None)]


def test_session_refuses_invalid_graph_with_all_issues():
    g = Graph()
    g.append_node(0x10, "Nop", inputs=[(0x20, 0)], outputs=1)
    g.append_node(0x11, "Nop", inputs=[(0x21, 0)], outputs=1)
    with pytest.raises(GraphError) as info:
        Session(g, registry=REG)
    assert len(info.value.issues) == 2
    assert "0x20" in str(info.value) and "0x21" in str(info.value)


def test_can_connect_explains_refusals():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x11, np.array([1], np.int32))
    g.append_node(0x12, "AddOne_f", inputs=[(0x10, 0)], outputs=1)
    g.append_node(0x13, "Nop", inputs=[(0x12, 0)], outputs=1)
    assert can_connect(g, (0x10, 0), 0x12, 1, REG) is None          # INPUT is untyped
    assert can_connect(g, (0x11, 0), 0x12, 1, REG).code == "type"
    assert can_connect(g, (0x13, 0), 0x12, 0, REG).code == "cycle"
    assert can_connect(g, (0x12, 0), 0x12, 0, REG).code == "cycle"
    assert can_connect(g, (0x10, 1), 0x12, 0, REG).code == "bad-output"
    assert can_connect(g, (0x10, 0), 0x12, 2, REG).code == "arity"


def test_an_edit_that_keeps_the_wiring_reuses_the_cycle_search_and_a_rewire_redoes_it(
        monkeypatch):
    """The cycle search walks the whole graph (40 ms of 10,000 nodes): a const edit cannot
    make or break a cycle, so the last result stands; an input's edit searches again. (A
    loaded file can hold a cycle; an edit that would make one is refused.)"""
    import sys

    validate_module = sys.modules["hexscope.engine.validate"]

    g = Graph()
    g.append_const_node(0x20, np.zeros(4, np.float32))
    g.append_node(0x10, "Nop", inputs=[(0x11, 0)], outputs=1)
    g.append_node(0x11, "Nop", inputs=[(0x10, 0)], outputs=1)
    searches: list[int] = []
    real = validate_module._cycles
    monkeypatch.setattr(validate_module, "_cycles", lambda graph: searches.append(1) or
                        real(graph))
    validator = validate_module.Validator(REG)
    assert "cycle" in {i.code for i in validator.validate(g)} and len(searches) == 1
    g.set_const(0x20, np.ones(4, np.float32))
    assert "cycle" in {i.code for i in validator.validate(g)} and len(searches) == 1
    g.set_input(0x10, 0, None)                           # the loop is cut
    assert "cycle" not in {i.code for i in validator.validate(g)} and len(searches) == 2
    g.set_const(0x20, np.zeros(4, np.float32))
    validator.validate(g)
    assert len(searches) == 2
    g.set_input(0x10, 0, (0x20, 0))                      # a rewire (edits refuse cycles)
    validator.validate(g)
    assert len(searches) == 3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["const", "op", "wire", "unwire", "pad", "add",
                                           "remove", "undo", "renumber"]),
                          st.integers(0, 7), st.integers(0, 7)), max_size=25))
def test_validating_only_what_edits_changed_gives_what_a_full_validation_gives(steps):
    """The editor passes the ids of its edits (``GraphEdited.changed``) and only those nodes
    and their consumers are visited: after any sequence of edits the problems are the same
    as a fresh validation's, in the same order."""
    from hexscope.engine.validate import Validator

    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x11, np.zeros(3, np.float32))
    for k in range(6):
        g.append_node(0x20 + k, "AddOne_f" if k % 2 else "Nop",
                      inputs=[(0x10 if k == 0 else 0x20 + k - 1, 0)], outputs=1)
    changed: set[int] = set()
    g.edited.connect(lambda event: changed.update(event.changed))
    validator = Validator(REG)
    validator.validate(g)
    ops = ["Nop", "AddOne_f", "TakeU8d32", "NoSuchOp"]
    done: list = []
    for kind, a, b in steps:
        ids = list(g.order)
        node_id, other = ids[a % len(ids)], ids[b % len(ids)]
        node = g.node(node_id)
        try:
            if kind == "const" and node.is_const:
                g.set_const(node_id, np.full(a + 1, b, np.float32))
            elif kind == "op" and not node.is_const:
                g.set_op(node_id, ops[b % len(ops)])
            elif kind == "wire" and not node.is_const:
                g.set_input(node_id, min(b % 3, len(node.inputs)), (other, b % 2))
            elif kind == "unwire" and node.inputs:
                g.set_input(node_id, len(node.inputs) - 1, None)
            elif kind == "pad" and not node.is_const:
                g.set_padding(node_id, "SAME" if b % 2 else "VALID")
            elif kind == "add":
                done.append(g.add_node(Node(g.free_id(0x40), ops[b % len(ops)],
                                            ((other, 0),), (OutputDef((), 0),))))
            elif kind == "remove" and len(ids) > 2:
                done.append(g.remove_node(node_id))
            elif kind == "undo" and done:
                g.apply(done.pop().inverse())            # as the undo stack does
            elif kind == "renumber":
                done.append(g.renumber(node_id, g.free_id(0x60)))
        except GraphError:
            continue                                   # refused (a cycle): nothing changed
        got = validator.validate(g, changed)
        changed.clear()
        want = validate(g, REG)
        assert [(i.code, i.node_id, i.port, i.message) for i in got] == \
            [(i.code, i.node_id, i.port, i.message) for i in want]


def test_adding_or_removing_a_node_checks_only_it_and_its_readers(monkeypatch):
    """A palette add, a delete and their undo change the order but keep every other node's
    relative order: the nodes they touch and their readers are checked, and an acyclic
    graph is not searched for cycles again (a whole pass: 60-80 ms at 20,000 nodes)."""
    import sys

    validate_module = sys.modules["hexscope.engine.validate"]
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    for k in range(40):
        g.append_node(0x100 + k, "Nop", inputs=[(0x10 if k == 0 else 0x100 + k - 1, 0)],
                      outputs=1)
    changed: set[int] = set()
    g.edited.connect(lambda event: changed.update(event.changed))
    searches: list[int] = []
    real = validate_module._cycles
    monkeypatch.setattr(validate_module, "_cycles", lambda graph: searches.append(1) or
                        real(graph))
    validator = validate_module.Validator(REG)
    assert validator.validate(g) == [] and searches == [1]

    def again() -> list:
        issues = validator.validate(g, changed)
        changed.clear()
        n = len(searches)
        assert issues == validate(g, REG)          # a whole validation, its own search
        del searches[n:]
        return issues

    added = g.add_node(Node(0x400, "Nop", ((0x110, 0),), (OutputDef((), 0),)))
    assert again() == [] and validator.checked == 1
    removed = g.remove_node(0x120)                 # its reader 0x121 now dangles
    assert [(i.code, i.node_id) for i in again()] == [("dangling", 0x121)]
    assert validator.checked == 1
    g.apply(removed.inverse())                       # undo: 0x120 and its reader again
    assert again() == [] and validator.checked == 2
    g.apply(added.inverse())
    assert again() == [] and validator.checked == 0
    assert searches == [1]                         # no edit here could close a cycle
