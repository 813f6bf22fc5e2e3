"""Prepare's two range-op rewrites (nnlib prepare.c try_fuse_requantization_range and
try_make_reluX) and the RequantizationRange_32 kernel."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.nodes import Node, OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.prepare import prepare
from hexscope.engine.tensor import Tensor
from support.range_graphs import RANGE, REQUANT, four_patterns
from support.supernode_graphs import chain_graph


def _range_of(codes: list[int], lo: float, hi: float) -> tuple[float, float]:
    spec = REGISTRY.get("RequantizationRange_32")
    x = Tensor.from_array(np.array(codes, np.int32).reshape(1, 1, 1, -1), DType.QINT32)
    out = spec.kernel(KernelContext(node_id=1, op=spec.name), x,
                      Tensor.scalar(np.float32(lo)), Tensor.scalar(np.float32(hi)))
    return float(np.asarray(out[0]).ravel()[0]), float(np.asarray(out[1]).ravel()[0])


def test_requantization_range_is_the_data_range_from_zero_without_a_nudge():
    # step (2 - -2) / 2**32 = 2**-30: codes -2**29 and 2**30 are -0.5 and 1.0
    assert _range_of([-2**29, 2**30], -2, 2) == (-0.5, 1.0)
    assert _range_of([3 * 2**20, 2**21], -2, 2) == (0.0, 3 / 2**10)   # 0 is always in
    # zero point 255 * 3/7 = 109.29 stays fractional: the Requantize that reads it nudges
    assert _range_of([-2**20 * 3, 2**22], -2, 2) == (-3 / 2**10, 4 / 2**10)


def test_prepare_fuses_requantization_range_and_requantize_into_one_shrink():
    p = prepare(four_patterns())
    assert RANGE not in p.nodes
    node = p.nodes[REQUANT]
    assert node.op == "QuantizeDownAndShrinkRange_32to8"
    assert node.inputs == ((0x30, 0), (0x30, 1), (0x30, 2))
    assert {r.node_id: r.kind for r in p.rewrites}[RANGE] == "fused"


def test_a_second_reader_of_the_range_keeps_both_nodes():
    g = four_patterns()
    g.append_node(0x70, "OUTPUT", inputs=[(RANGE, 1)])
    p = prepare(g)
    assert p.nodes[RANGE].op == "RequantizationRange_32"
    assert p.nodes[REQUANT].op == "Requantize_32to8"


def _requantized_chain():
    g = chain_graph("relu")
    g.append_const_node(0x18, np.array([-2.0], np.float32))
    g.append_const_node(0x19, np.array([5.0], np.float32))
    old = g.node(0x23)
    g.replace_node(Node(0x23, "Requantize_32to8", (*old.inputs, (0x18, 0), (0x19, 0)),
                        old.outputs))
    return g


def test_a_relu_after_a_requantize_with_a_const_max_becomes_relux_of_that_max():
    p = prepare(_requantized_chain(), fusions=False)
    relu = p.nodes[0x24]
    assert relu.op == "QuantizedReluX_8" and relu.inputs == ((0x23, 0), (0x23, 1), (0x23, 2),
                                                              (0x19, 0))
    assert relu.outputs == _requantized_chain().node(0x24).outputs
    # then the Supernode fusion takes 0 and that max as its output range (the Supernode in
    # the d32 form prepare then makes of it: filter depth 3, so the flat-input form)
    p = prepare(_requantized_chain())
    sn = p.nodes[0x24]
    assert sn.op == "InputSupernode_8x8p8to8_outd32" and sn.inputs[11] == (0x19, 0)
    assert p.nodes[sn.inputs[10][0]].const.array.ravel()[0] == 0.0


def test_a_requantize_whose_max_is_computed_leaves_the_relu_alone():
    g = _requantized_chain()
    g.append_node(0x1a, "Max_f", inputs=[(0x19, 0)], outputs=[OutputDef((1, 1, 1, 1), 4)])
    old = g.node(0x23)
    g.replace_node(old.with_(inputs=(*old.inputs[:4], (0x1a, 0))))
    assert prepare(g, fusions=False).nodes[0x24].op == "QuantizedRelu_8"
