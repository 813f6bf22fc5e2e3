"""Variable and Assign through a Session (graph spec §4.28-§4.29)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph
from hexscope.engine.errors import GraphError, NodeError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.session import Session

F = np.float32
VAR, ASSIGN, BEFORE, AFTER = 0x20, 0x22, 0x21, 0x23


def counter_graph(declared: bool = True) -> Graph:
    """INPUT -> Assign(Variable) ; Flatten reads the Variable before and after the Assign."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x1, np.array([1.0, 2.0], F))
    outs = [OutputDef((1, 1, 1, 2), 4)] if declared else 1
    g.append_node(VAR, "Variable", inputs=[(0x1, 0)], outputs=outs)
    g.append_node(BEFORE, "Flatten", inputs=[(VAR, 0)], outputs=1)
    g.append_node(ASSIGN, "Assign", inputs=[(VAR, 0), (0x10, 0)], outputs=0)
    g.append_node(AFTER, "Flatten", inputs=[(VAR, 0)], outputs=1)
    g.append_node(0x30, "OUTPUT", inputs=[(BEFORE, 0), (AFTER, 0)])
    return g


def values(tensors) -> list[list[float]]:
    return [t.array.reshape(-1).tolist() for t in tensors]


def test_variable_starts_from_its_const_and_assign_is_seen_downstream():
    s = Session(counter_graph())
    assert values(s.execute([np.array([5, 6], F)])) == [[1, 2], [5, 6]]


def test_later_executions_see_the_latest_value():
    s = Session(counter_graph())
    s.execute([np.array([5, 6], F)])
    assert values(s.execute([np.array([7, 8], F)])) == [[5, 6], [7, 8]]
    assert s.output(VAR).array.reshape(-1).tolist() == [7, 8]


def test_restart_mid_run_restores_the_store():
    s = Session(counter_graph())
    s.execute([np.array([5, 6], F)])
    s.execute([np.array([7, 8], F)])        # this run started with the Variable at [5, 6]
    s.restart()
    s.run_to(ASSIGN)
    assert s.executor.store[(VAR, 0)].array.reshape(-1).tolist() == [7, 8]
    s.restart()                             # mid-run: the Assign of this run is undone
    assert s.executor.store[(VAR, 0)].array.reshape(-1).tolist() == [5, 6]
    s.run()
    assert values(s.graph_outputs()) == [[5, 6], [7, 8]]


def test_begin_run_keeps_the_latest_value():
    s = Session(counter_graph())
    s.execute([np.array([5, 6], F)])
    s.begin_run()
    s.run()
    assert values(s.graph_outputs()) == [[5, 6], [5, 6]]


def test_reprepare_clears_variables():
    s = Session(counter_graph())
    s.execute([np.array([5, 6], F)])
    s.prepare()
    assert values(s.execute([np.array([7, 8], F)])) == [[1, 2], [7, 8]]


def test_variable_and_assign_survive_dead_node_removal():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x1, np.array([1.0], F))
    g.append_node(VAR, "Variable", inputs=[(0x1, 0)], outputs=[OutputDef((1, 1, 1, 1), 4)])
    g.append_node(ASSIGN, "Assign", inputs=[(VAR, 0), (0x10, 0)])
    s = Session(g)
    assert VAR in s.plan and ASSIGN in s.plan
    s.execute([np.array([3.0], F)])
    assert s.output(VAR).array.item() == 3.0


def test_assign_output_is_a_copy_of_the_value():
    g = counter_graph()
    g2 = Graph()
    for node in g:
        if node.node_id == ASSIGN:
            g2.append_node(ASSIGN, "Assign", inputs=node.inputs,
                           outputs=[OutputDef((1, 1, 1, 2), 4)])
        elif node.is_const:
            g2.append_const_node(node.node_id, node.const.array.copy())
        else:
            g2.append_node(node.node_id, node.op, node.inputs, node.outputs, node.padding)
    s = Session(g2)
    s.execute([np.array([4, 5], F)])
    assert s.output(ASSIGN).array.reshape(-1).tolist() == [4, 5]


def test_assign_placeholder_output_with_elementsize_0_stays_empty():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x1, np.array([1.0], F))
    g.append_node(VAR, "Variable", inputs=[(0x1, 0)], outputs=[OutputDef((1, 1, 1, 1), 4)])
    g.append_node(ASSIGN, "Assign", inputs=[(VAR, 0), (0x10, 0)],
                  outputs=[OutputDef((1, 1, 1, 1), 0)])
    s = Session(g)
    s.execute([np.array([3.0], F)])
    assert not s.output(ASSIGN).has_data


BYTE_OUT = OutputDef((1, 2, 3, 1), 1, zero_offset=7)


def zero_init_graph(shape=(1, 2, 3, 1), out=BYTE_OUT) -> Graph:
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x1, shape=shape)
    g.append_node(VAR, "Variable", inputs=[(0x1, 0)], outputs=[out])
    g.append_node(0x30, "OUTPUT", inputs=[(VAR, 0)])
    return g


def test_shape_only_const_zero_initialises_with_zero_offset():
    (out,) = Session(zero_init_graph()).execute([np.zeros(1, F)])
    assert out.shape == (1, 2, 3, 1)
    assert out.buffer.tolist() == [7] * 6


def test_zero_init_with_4_byte_elements_uses_real_zero():
    g = zero_init_graph(out=OutputDef((1, 2, 3, 1), 4, zero_offset=7))
    (out,) = Session(g).execute([np.zeros(1, F)])
    assert out.buffer.tolist() == [0] * 24


def test_non_const_producer_zero_initialises_like_prepare():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(VAR, "Variable", inputs=[(0x10, 0)],
                  outputs=[OutputDef((1, 1, 1, 3), 1, zero_offset=128)])
    g.append_node(0x30, "OUTPUT", inputs=[(VAR, 0)])
    (out,) = Session(g).execute([np.array([[1, 2, 3]], np.uint8)])
    assert out.buffer.tolist() == [128, 128, 128]     # not the INPUT's bytes


def test_variable_outputs_without_input_stay_empty_until_assigned():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x1, np.array([1.0], F))
    g.append_node(VAR, "Variable", inputs=[(0x1, 0)],
                  outputs=[OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 2), 4)])
    g.append_node(ASSIGN, "Assign", inputs=[(VAR, 1), (0x10, 0)])
    s = Session(g)
    s.set_inputs([np.array([3.0, 4.0], F)])
    s.step(), s.step()
    assert not s.output(VAR, 1).has_data
    s.run()
    assert s.output(VAR, 1).array.reshape(-1).tolist() == [3.0, 4.0]


@pytest.mark.parametrize("shape, out, message", [
    ((1, 1, 1, 200), OutputDef((1, 1, 1, 4), 1), "variable too small for zero-init"),
    ((1, 1, 1, 0), OutputDef((1, 1, 1, 4), 1), "bad shape/elsize for zero-init"),
])
def test_zero_init_errors(shape, out, message):
    with pytest.raises(NodeError, match=message):
        Session(zero_init_graph(shape, out)).execute([np.zeros(1, F)])


def test_initial_value_larger_than_the_output_is_out_too_small():
    g = Graph()
    g.append_const_node(0x1, np.zeros(40, F))        # 160 bytes > 128
    g.append_node(VAR, "Variable", inputs=[(0x1, 0)], outputs=[OutputDef((1, 1, 1, 2), 4)])
    with pytest.raises(NodeError, match="out too small"):
        Session(g).execute([])


def test_variable_with_more_inputs_than_outputs_fails():
    g = Graph()
    g.append_const_node(0x1, np.zeros(1, F))
    g.append_node(VAR, "Variable", inputs=[(0x1, 0), (0x1, 0)],
                  outputs=[OutputDef((1, 1, 1, 1), 4)])
    with pytest.raises(NodeError, match="too many inputs"):
        Session(g).execute([])


def test_assign_larger_than_variable_storage_fails_and_keeps_earlier_pairs():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=2)
    g.append_const_node(0x1, np.zeros(1, F))
    g.append_node(VAR, "Variable", inputs=[(0x1, 0), (0x1, 0)],
                  outputs=[OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4)])
    g.append_node(ASSIGN, "Assign", inputs=[(VAR, 0), (0x10, 0), (VAR, 1), (0x10, 1)])
    s = Session(g)
    with pytest.raises(NodeError, match="can't copy to input 2"):
        s.execute([np.array([5.0], F), np.zeros(33, F)])       # 132 bytes > 128
    assert s.executor.store[(VAR, 0)].array.item() == 5.0


def test_assign_must_write_a_variable():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x11, "Flatten", inputs=[(0x10, 0)], outputs=1)
    g.append_node(ASSIGN, "Assign", inputs=[(0x11, 0), (0x10, 0)])
    with pytest.raises(NodeError, match="input 0 not connected to valid Variable output"):
        Session(g).execute([np.zeros(1, F)])


def test_assign_with_too_many_outputs_fails():
    g2 = Graph()
    g2.append_node(0x10, "INPUT", outputs=1)
    g2.append_const_node(0x1, np.zeros(2, F))
    g2.append_node(VAR, "Variable", inputs=[(0x1, 0)], outputs=[OutputDef((1, 1, 1, 2), 4)])
    g2.append_node(ASSIGN, "Assign", inputs=[(VAR, 0), (0x10, 0)], outputs=2)
    with pytest.raises(NodeError, match="too many outs"):
        Session(g2).execute([np.zeros(2, F)])


def test_assign_with_odd_input_count_is_rejected_by_validation():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x1, np.zeros(1, F))
    g.append_node(VAR, "Variable", inputs=[(0x1, 0)], outputs=[OutputDef((1, 1, 1, 1), 4)])
    g.append_node(ASSIGN, "Assign", inputs=[(VAR, 0), (0x10, 0), (0x10, 0)])
    with pytest.raises(GraphError, match="Assign takes"):
        Session(g)
