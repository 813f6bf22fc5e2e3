"""Prepare's convolution-chain fusion (nnlib prepare.c try_make_supernode_flavored, the
consumer test of graphops.c find_unique_consumer, maybe_morph_supernode_to_superfc)."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Session
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare
from support.supernode_graphs import CHAIN, chain_graph


def test_the_chain_becomes_one_supernode_under_the_relus_id_in_the_convs_place():
    p = prepare(chain_graph("relu"))
    sn = p.nodes[0x24]
    # then prepare's d32 conversion: a filter depth of 3 makes it the input Supernode
    assert sn.op == "InputSupernode_8x8p8to8_outd32"
    assert all(i not in p.nodes for i in CHAIN)
    zero, inf = sn.inputs[10][0], sn.inputs[11][0]
    assert sn.inputs[:10] == ((0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x12, 0),
                              (0x14, 0), (0x16, 0), (0x11, 0), (0x12, 0))
    assert float(p.nodes[zero].const.array.reshape(-1)[0]) == 0.0
    assert float(p.nodes[inf].const.array.reshape(-1)[0]) == np.inf
    assert {zero, inf} <= set(range(0xFFFFFFF0, 0x100000000))       # internal ids
    assert [p.nodes[i].op for i in p.plan] == ["INPUT", sn.op, "Convert_from_d32", "OUTPUT"]
    kinds = {r.node_id: (r.kind, r.into) for r in p.rewrites if r.node_id != 0x17}
    assert kinds == {0x20: ("fused", 0x24), 0x21: ("fused", 0x24), 0x22: ("fused", 0x24),
                     0x23: ("fused", 0x24), 0x24: ("replaced", None)}
    assert sn.outputs == chain_graph("relu").node(0x24).outputs


def test_a_relux_gives_its_maximum_and_no_relu_leaves_both_bounds_free():
    p = prepare(chain_graph("relux"))
    assert p.nodes[0x24].inputs[11] == (0x17, 0)
    p = prepare(chain_graph("none"))
    sn = p.nodes[0x23]
    lo, hi = (float(p.nodes[sn.inputs[k][0]].const.array.reshape(-1)[0]) for k in (10, 11))
    assert (lo, hi) == (-np.inf, np.inf)


def test_a_second_reader_anywhere_in_the_chain_stops_the_fusion():
    for producer in (0x20, 0x21, 0x22):
        g = chain_graph("relu")
        g.append_node(0x40, "OUTPUT", inputs=[(producer, 0)])
        p = prepare(g)
        assert 0x20 in p.nodes and p.nodes[0x24].op == "QuantizedRelu_8", hex(producer)


def test_as_authored_nothing_is_fused():
    p = prepare(chain_graph("relu"), fusions=False)
    assert all(i in p.nodes for i in CHAIN) and not p.fusions


def test_a_one_pixel_fully_connected_chain_would_be_superfc_and_runs_as_authored():
    # output [1,1,1,32], a 2x2 filter over a 2x2 input, VALID, 2*2*8 = 32 inputs
    g = chain_graph("relu", out_hw=1, filt=(2, 2, 8, 32), padding="VALID")
    g.replace_node(g.node(0x10).with_(outputs=(OutputDef((1, 2, 2, 8), 1),)))
    p = prepare(g)
    assert p.nodes[0x24].op == "QuantizedRelu_8"
    assert any("SuperFC_8x8p32to8" in n and n.startswith("0x20:") for n in p.notes)


def test_an_edit_that_unmakes_the_fusion_makes_the_relus_result_stale():
    g = chain_graph("relu")
    s = Session(g)
    s.execute([np.full((1, 4, 4, 3), 90, np.uint8)])
    assert s.result(0x24) is not None
    g.append_node(0x40, "OUTPUT", inputs=[(0x21, 0)])     # a second reader of the requantize
    s.step()                                                # applies the edit
    assert s.prepared.nodes[0x24].op == "QuantizedRelu_8"
    assert s.executor.trace.get(0x24) is None or 0x24 in s.executor.stale


def _bias32_chain(requant: str = "Requantize_32to8", tail: str | None = "QuantizedClamp_8"):
    """INPUT 0x10 → conv 0x20 → QuantizedBiasAdd_32p32to32 0x22 → requant 0x23 [→ tail 0x24]
    → OUTPUT 0x30 (the TFLite delegate's form before prepare; prepare.c
    try_make_supernode_flavored, the bias32 branch)."""
    from hexscope.engine import Graph
    from support.conv_graph import append_conv_consts
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 4, 4, 3), 1)])
    append_conv_consts(g)
    g.append_const_node(0x15, np.full((1, 1, 3, 16), 130, np.uint8))
    g.append_const_node(0x16, np.arange(16, dtype=np.int32).reshape(1, 1, 1, 16))
    for nid, v in ((0x17, 6.0), (0x18, -3.0), (0x19, 0.5)):
        g.append_const_node(nid, np.array([v], np.float32))
    g.append_node(0x20, "QuantizedConv2d_8x8to32",
                  inputs=[(0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x12, 0),
                          (0x14, 0)], outputs=3, padding="SAME")
    g.append_node(0x22, "QuantizedBiasAdd_32p32to32",
                  inputs=[(0x20, 0), (0x16, 0), (0x20, 1), (0x20, 2), (0x11, 0), (0x12, 0)],
                  outputs=3)
    extra = [(0x18, 0), (0x17, 0)] if requant == "Requantize_32to8" else []
    g.append_node(0x23, requant, inputs=[(0x22, 0), (0x22, 1), (0x22, 2), *extra], outputs=3)
    last = 0x23
    if tail is not None:
        more = {"QuantizedClamp_8": [(0x19, 0), (0x17, 0)], "QuantizedReluX_8": [(0x17, 0)],
                "QuantizedRelu_8": []}[tail]
        g.append_node(0x24, tail, inputs=[(0x23, 0), (0x23, 1), (0x23, 2), *more], outputs=3)
        last = 0x24
    g.append_node(0x30, "OUTPUT", inputs=[(last, 0)])
    return g


def test_a_32_bit_bias_chain_becomes_supernode_8x8p32to8_with_the_clamps_bounds():
    p = prepare(_bias32_chain())
    sn = p.nodes[0x24]
    assert sn.op == "InputSupernode_8x8p32to8_outd32"     # then converted (filter depth 3)
    # conv inputs, the bias add's bias and range, then the Clamp's bounds (0.5, 6.0)
    assert sn.inputs == ((0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x12, 0),
                         (0x14, 0), (0x16, 0), (0x11, 0), (0x12, 0), (0x19, 0), (0x17, 0))
    assert p.plan[:2] == (0x10, 0x24) and p.plan[-1] == 0x30
    assert {r.node_id: r.into for r in p.rewrites if r.kind == "fused"} == \
        {0x20: 0x24, 0x22: 0x24, 0x23: 0x24}
    assert "Supernode_8x8p32to8" in p.rewrite_of(0x24).reason


def test_a_requantize_gives_its_range_and_a_relu_its_zero():
    p = prepare(_bias32_chain(tail=None))
    assert p.nodes[0x23].inputs[10:] == ((0x18, 0), (0x17, 0))     # Requantize_32to8's range
    p = prepare(_bias32_chain(tail="QuantizedRelu_8"))
    lo = p.nodes[0x24].inputs[10]
    assert float(p.nodes[lo[0]].const.array.reshape(-1)[0]) == 0.0
    assert p.nodes[0x24].inputs[11] == (0x17, 0)          # the requantize's max stays
    p = prepare(_bias32_chain("QuantizeDownAndShrinkRange_32to8", "QuantizedReluX_8"))
    sn = p.nodes[0x24]
    assert float(p.nodes[sn.inputs[10][0]].const.array.reshape(-1)[0]) == 0.0
    assert sn.inputs[11] == (0x17, 0)


def _dwise_chain(tail: str | None = "QuantizedRelu_8"):
    g = _bias32_chain(tail=tail)
    conv = g.node(0x20)
    g.append_const_node(0x1A, np.full((3, 3, 3, 1), 130, np.uint8))
    g.append_const_node(0x1B, np.arange(3, dtype=np.int32).reshape(1, 1, 1, 3))
    g.replace_node(conv.with_(op="QuantizedDepthwiseConv2d_8x8to32",
                              inputs=(conv.inputs[0], (0x1A, 0), *conv.inputs[2:])))
    bias = g.node(0x22)
    g.replace_node(bias.with_(inputs=(bias.inputs[0], (0x1B, 0), *bias.inputs[2:])))
    return g


def test_a_depthwise_chain_becomes_a_depthwise_supernode_that_runs():
    # prepare.c ReplaceConv_DwiseSuperNode: the bias32 chain after a depthwise convolution
    g = _dwise_chain()
    p = prepare(g)
    sn = p.nodes[0x24]
    assert sn.op == "DepthwiseSupernode_8x8p32to8_d32"        # then converted to d32
    to_d32 = p.nodes[sn.inputs[0][0]]
    assert to_d32.op == "Convert_to_d32" and to_d32.inputs == ((0x10, 0),)
    assert sn.inputs[1:10] == ((0x1A, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x12, 0),
                              (0x14, 0), (0x1B, 0), (0x11, 0), (0x12, 0))
    assert float(p.nodes[sn.inputs[10][0]].const.array.reshape(-1)[0]) == 0.0   # the Relu
    assert sn.inputs[11] == (0x17, 0)                     # the Requantize_32to8's max
    assert [p.nodes[i].op for i in p.plan] == ["INPUT", "Convert_to_d32", sn.op,
                                               "Convert_from_d32", "OUTPUT"] and not p.notes
    assert {r.node_id: r.into for r in p.rewrites if r.kind == "fused"} == \
        {0x20: 0x24, 0x22: 0x24, 0x23: 0x24}
    assert "DepthwiseSupernode_8x8p32to8 under this id" in p.rewrite_of(0x24).reason
    assert "then DepthwiseSupernode_8x8p32to8 becomes" in p.rewrite_of(0x24).reason


def test_the_d32_depthwise_supernode_pads_its_output_as_dwise_supernode_execute():
    # SAME 3x3, stride 1 over a 4-wide input from Convert_to_d32 (4 columns left): the output
    # starts (4 - 1) / 1 = 3 columns in, right padding to a multiple of 4: (-(4 + 3)) & 3 = 1;
    # the input's depth padding (3 + 29 = 32)
    g = _dwise_chain()
    s = Session(g)
    s.execute([(np.arange(48) * 7 % 256).astype(np.uint8).reshape(1, 4, 4, 3)])
    y = s.output(0x24)
    assert y.padding == (4, 4, 3, 1, 0, 29)
    (want,) = Session(g, fusions=False).execute(
        [(np.arange(48) * 7 % 256).astype(np.uint8).reshape(1, 4, 4, 3)])
    assert y.shape == want.shape


def test_an_8bit_depthwise_chain_becomes_a_depthwise_supernode_near_the_chains_result():
    from support.supernode_graphs import chain_graph
    g = chain_graph("relux", filt=(3, 3, 3, 1))
    g.append_const_node(0x1A, (np.arange(27) * 5 + 60).astype(np.uint8).reshape(3, 3, 3, 1))
    g.append_const_node(0x1B, np.array([128, 100, 200], np.uint8).reshape(1, 1, 1, 3))
    conv, bias, relu = g.node(0x20), g.node(0x22), g.node(0x24)
    g.replace_node(conv.with_(op="QuantizedDepthwiseConv2d_8x8to32",
                              inputs=(conv.inputs[0], (0x1A, 0), *conv.inputs[2:])))
    g.replace_node(bias.with_(inputs=(bias.inputs[0], (0x1B, 0), *bias.inputs[2:])))
    g.replace_node(relu.with_(outputs=(OutputDef((1, 4, 4, 3), 1), OutputDef(), OutputDef())))
    p = prepare(g)
    assert p.nodes[0x24].op == "DepthwiseSupernode_8x8p8to8_d32"
    assert len(p.plan) == 5 and p.plan[2] == 0x24
    x = (np.arange(48) * 5 % 256).astype(np.uint8).reshape(1, 4, 4, 3)
    s_fused, s_authored = Session(g), Session(g, fusions=False)
    s_fused.execute([x])
    s_authored.execute([x])
    assert s_fused.prepared.nodes[0x24].op == "DepthwiseSupernode_8x8p8to8_d32"
    assert s_authored.prepared.nodes[0x24].op == "QuantizedReluX_8"

    def real(s: Session) -> np.ndarray:
        lo, hi = (float(np.asarray(s.output(0x24, k).array).reshape(-1)[0]) for k in (1, 2))
        return lo + np.asarray(s.output(0x24).array, float) * (hi - lo) / 255

    a, b = real(s_fused), real(s_authored)
    assert a.shape == b.shape == (1, 4, 4, 3) and a.max() > 0
    # the same real values: the chain rounds twice (its first requantize to 8 bits, then
    # the bias add's), the Supernode once, into ranges of different widths: within two of
    # the wider range's steps
    step = max(float(np.ptp(a)), float(np.ptp(b)), 6.0) / 255
    assert np.abs(a - b).max() <= 2 * step


def test_a_depthwise_chain_the_device_would_not_fuse_runs_as_authored():
    # dwconv_extrachecks refuses a 1x1 filter with multiplier 16
    g2 = _bias32_chain(tail="QuantizedRelu_8")
    g2.replace_node(g2.node(0x20).with_(op="QuantizedDepthwiseConv2d_8x8to32"))
    p = prepare(g2)
    assert p.nodes[0x20].op == "QuantizedDepthwiseConv2d_8x8to32" and not p.notes
