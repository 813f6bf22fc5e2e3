"""State kept between executions is shown for the selected node, follows runs, and Restart
restores the state the run started with (issue 3: Variables, adaptive output ranges)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from nop_graphs import SIGMOID, VAR, counter_graph

from hexscope.engine.graph import Graph
from hexscope.widgets.node_state import range_state, state_lines, tensor_text

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
SIG = [0.5, 1 / (1 + np.exp(-0.5)), 1 / (1 + np.exp(-1 / (1 + np.exp(-0.5))))]


def _do(qtbot, window, action: str) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=5000):
        window.debug.actions[action].trigger()


def _shown_value(window) -> float:
    """The Variable's value as the outputs panel prints it ("value 0: ... = [a b]")."""
    lines = {line.label: line.value for line in window.outputs_panel.state_lines}
    text = lines["value 0"]
    assert text.startswith("float32 1x1x1x2 = [") and not window.outputs_panel.state.isHidden()
    a, b = (float(v) for v in text.split("[")[1].rstrip("]").split())
    assert a == b
    return a


def test_variable_value_is_shown_and_restart_restores_it(qtbot, window):
    window.set_graph(counter_graph(), None)
    window.select_node(VAR)
    _do(qtbot, window, "run")
    assert _shown_value(window) == pytest.approx(SIG[0], rel=1e-6)
    _do(qtbot, window, "run")              # a new execution: v carries over, as on the device
    assert _shown_value(window) == pytest.approx(SIG[1], rel=1e-6)
    assert "0.6224" in window.outputs_panel.state.text()
    _do(qtbot, window, "restart")          # back to the value this execution started with
    assert _shown_value(window) == pytest.approx(SIG[0], rel=1e-6)
    _do(qtbot, window, "run")              # and running again reproduces the same result
    assert _shown_value(window) == pytest.approx(SIG[1], rel=1e-6)
    out = window.session.graph_outputs()[0].array.reshape(-1)
    assert out == pytest.approx([SIG[1]] * 2, rel=1e-6)


def test_nodes_without_state_show_none(qtbot, window):
    window.set_graph(counter_graph(), None)
    _do(qtbot, window, "run")
    window.select_node(SIGMOID)
    assert window.outputs_panel.state_lines == []
    assert not not window.outputs_panel.state.isHidden()


def test_adaptive_range_of_the_d32_add_is_shown_after_a_run(qtbot, window):
    window.files.open_graph(str(EXAMPLES / "d32_pipeline.hexgraph"))
    add = next(n.node_id for n in window.graph if n.op == "QuantizedAdd_8p8to8_d32")
    window.select_node(add)
    assert window.outputs_panel.state_lines == []          # nothing kept before a run
    _do(qtbot, window, "run")
    # the node reports the range it keeps on its outputs 1 and 2 (quantized-ops spec §13.7)
    lo, hi = (float(window.session.output(add, k).array.reshape(-1)[0]) for k in (1, 2))
    assert lo < 0 < hi
    lines = {line.label: line.value for line in window.outputs_panel.state_lines}
    assert lines["output range"] == (
        f"[{lo:.6g}, {hi:.6g}] (adapts, from the data seen so far)")
    _do(qtbot, window, "restart")          # the run started from a fresh prepare: no state
    assert window.outputs_panel.state_lines == []


# the formatting, on hand-made states --------------------------------------------------------

def test_range_state_reads_dataclass_and_dict_forms():
    from dataclasses import dataclass

    @dataclass
    class AddLike:
        out_min: np.float32
        out_max: np.float32
        min_fixed: bool
        max_fixed: bool
        has_run_before: bool

    line = range_state(AddLike(np.float32(-1.5), np.float32(2.25), True, False, True))
    assert line.value == "[-1.5, 2.25] (min fixed, max adapts, from the data seen so far)"
    # d32 ops: precalc bit 0 = min fixed, bit 1 = max fixed (quantized-ops spec §13.4)
    line = range_state({"out_min": np.float32(0), "out_max": np.float32(4), "precalc": 3,
                        "has_run_before": False})
    assert line.value == "[0, 4] (both ends fixed, as prepared, before any data)"
    assert range_state({"rhs": object()}) is None


def test_state_lines_list_range_and_stored_values_of_one_node():
    from hexscope.engine.tensor import Tensor

    big = Tensor.from_array(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2))
    store = {(7, 0): big, (7, 1): Tensor.from_array(np.array([3], np.int32)),
             (8, 0): big}
    states = {7: {"out_min": np.float32(-1), "out_max": np.float32(1)}, 8: {}}
    lines = state_lines(7, states, store)
    assert [(x.label, x.value) for x in lines] == [
        ("output range", "[-1, 1]"),
        ("value 0", "float32 1x2x2x2 min 0 max 7"),
        ("value 1", "int32 1x1x1x1 = [3]")]
    assert state_lines(9, states, store) == []
    assert tensor_text(Tensor.shape_only((1, 2, 2, 1))).endswith("(no data)")


def test_counter_graph_reference_values():
    """The expected values above follow from the graph, checked headless."""
    from hexscope.engine.session import Session

    g: Graph = counter_graph()
    s = Session(g)
    got = [float(s.execute([])[0].array.reshape(-1)[0]) for _ in range(3)]
    assert got == pytest.approx(SIG, rel=1e-6)
