"""A failure caused by a degenerate range upstream names the node where it started."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph, Session

X, NAN_MIN, ONE, RELU, DEQ, Q, OUT = 0x10, 0x11, 0x12, 0x20, 0x21, 0x22, 0x30


def _graph(low: float) -> Graph:
    g = Graph()
    g.append_node(X, "INPUT", outputs=1)
    g.append_const_node(NAN_MIN, np.array([low], np.float32))
    g.append_const_node(ONE, np.array([1.0], np.float32))
    g.append_node(RELU, "QuantizedRelu_8", inputs=[(X, 0), (NAN_MIN, 0), (ONE, 0)], outputs=3)
    g.append_node(DEQ, "Dequantize", inputs=[(RELU, 0), (RELU, 1), (RELU, 2)], outputs=1)
    # the requantize reads the relu's (copied) range: it is the op that refuses NaN
    g.append_node(Q, "Quantize", inputs=[(DEQ, 0), (RELU, 1), (RELU, 2)], outputs=3)
    g.append_node(OUT, "OUTPUT", inputs=[(Q, 0)])
    return g


def _failure(low: float) -> str:
    s = Session(_graph(low))
    s.set_inputs([np.arange(8, dtype=np.uint8)])
    s.run()
    return next(iter(s.executor.failed.items()))


def test_a_nan_range_two_nodes_up_is_traced_to_the_const_that_holds_it():
    node_id, message = _failure(float("nan"))
    assert node_id in (DEQ, Q)
    assert f"a degenerate range from node 0x{NAN_MIN:x} (Const): the const holds nan" in message


def test_the_node_whose_range_input_is_degenerate_says_so_when_it_made_none():
    from hexscope.engine.analysis.degenerate import degenerate_inputs
    from hexscope.engine.ops.registry import REGISTRY
    from hexscope.engine.tensor import Tensor

    spec = REGISTRY.get("Quantize")
    x = Tensor.from_array(np.zeros(4, np.float32))
    lo, hi = Tensor.from_array(np.float32([2.0])), Tensor.from_array(np.float32([2.0]))
    assert degenerate_inputs(spec, [x, lo, hi]) == ["input range has zero width (2.0 to 2.0)"]
    inf = Tensor.from_array(np.float32([np.inf]))
    assert degenerate_inputs(spec, [x, lo, inf]) == ["max is inf"]
    assert degenerate_inputs(spec, [x, lo, Tensor.from_array(np.float32([3.0]))]) == []


def test_a_zero_width_bias_range_is_a_zero_bias_not_a_degenerate_range():
    """The wake word's first depthwise failed on its input's left padding, and the message
    went on "(its range input is degenerate: bias range has zero width (-0.0 to 0.0))": the
    delegate's range of an all-zero bias, which adds nothing and causes nothing."""
    from hexscope.engine.analysis.degenerate import degenerate_inputs
    from hexscope.engine.ops.registry import REGISTRY
    from hexscope.engine.tensor import Tensor

    spec = REGISTRY.get("DepthwiseSupernode_8x8p32to8_d32")
    f = [Tensor.from_array(np.float32([v])) for v in (-1.0, 1.0, -0.0, 0.0, 2.0, 2.0)]
    ins = [None, None, f[0], f[1], f[0], f[1], None, None, f[2], f[3], f[0], f[1]]
    assert degenerate_inputs(spec, ins) == []
    ins[2:4] = f[4:6]                         # a zero-width input range is still named
    assert degenerate_inputs(spec, ins) == ["x range has zero width (2.0 to 2.0)"]


def test_a_failure_with_fine_ranges_gets_no_range_note():
    s = Session(_graph(-1.0))
    s.set_inputs([np.arange(8, dtype=np.uint8)])
    s.run()
    assert s.executor.failed == {}


def test_a_float_run_that_overflows_gives_values_not_numpy_warnings(recwarn):
    """A deep residual graph of random weights drives the float run to inf and NaN (the
    app's 5,000-node graph did): the analysis defines those (metrics module text) and
    numpy prints nothing."""
    import warnings

    from hexscope.engine.analysis.compare import compare_reference
    from hexscope.engine.session import Session
    from support.large_graph import input_tensor, residual_graph

    session = Session(residual_graph(3000))
    session.execute([input_tensor()])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        comparison = compare_reference(session, "accumulated", 1.0)
    bad = [d for d in comparison.outputs if d.metrics and d.metrics.nonfinite]
    assert comparison.outputs and bad, "the graph no longer overflows: pick a deeper one"
