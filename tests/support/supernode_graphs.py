"""Convolution chains for tests: as hexagon_nn's converters write them (prepare's Supernode
fusion), and the d32 Supernode chain the delegate's graphs become."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph
from hexscope.engine.nodes import OutputDef
from support.conv_graph import append_conv_consts

CHAIN = (0x20, 0x21, 0x22, 0x23)


def chain_graph(tail: str = "relu", out_hw: int = 4, filt: tuple = (1, 1, 3, 16),
                padding: str = "SAME") -> Graph:
    """INPUT 0x10 → conv 0x20 → requantize 0x21 → bias add 0x22 → requantize 0x23
    [→ Relu / ReluX 0x24] → OUTPUT 0x30. ``tail``: "relu", "relux" or "none"."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, out_hw, out_hw, filt[2]), 1)])
    append_conv_consts(g)
    g.append_const_node(0x15, np.full(filt, 130, np.uint8))
    g.append_const_node(0x16, np.full((1, 1, 1, filt[3]), 128, np.uint8))
    g.append_const_node(0x17, np.array([6.0], np.float32))
    g.append_node(0x20, "QuantizedConv2d_8x8to32",
                  inputs=[(0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x12, 0),
                          (0x14, 0)], outputs=3, padding=padding)
    g.append_node(0x21, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x20, 0), (0x20, 1), (0x20, 2)], outputs=3)
    g.append_node(0x22, "QuantizedBiasAdd_8p8to32",
                  inputs=[(0x21, 0), (0x16, 0), (0x21, 1), (0x21, 2), (0x11, 0), (0x12, 0)],
                  outputs=3)
    g.append_node(0x23, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x22, 0), (0x22, 1), (0x22, 2)], outputs=3)
    last = 0x23
    if tail != "none":
        op = "QuantizedRelu_8" if tail == "relu" else "QuantizedReluX_8"
        extra = [] if tail == "relu" else [(0x17, 0)]
        g.append_node(0x24, op, inputs=[(0x23, 0), (0x23, 1), (0x23, 2), *extra],
                      outputs=[OutputDef((1, 1, 1, filt[3]) if out_hw == 1 else
                                         (1, out_hw, out_hw, filt[3]), 1),
                               OutputDef(), OutputDef()])
        last = 0x24
    g.append_node(0x30, "OUTPUT", inputs=[(last, 0)])
    return g


def d32_snode_chain(rng: np.random.Generator) -> Graph:
    """INPUT -> Convert_to_d32 -> Supernode_d32 (1x1, 8 -> 24) -> DepthwiseSupernode_d32
    (3x3) -> Convert_from_d32 -> OUTPUT, fixed output ranges: every run gives the same bytes
    whatever ran before (the open ranges' moves are the test above's)."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 6, 7, 8), 1)])
    for nid, v in ((0x11, 0.0), (0x12, 6.0), (0x13, -1.0), (0x14, 1.0), (0x15, -8.0),
                   (0x16, 8.0), (0x17, -(2.0 ** 20)), (0x18, 2.0 ** 20)):
        g.append_const_node(nid, np.array([v], np.float32))
    for nid, v in ((0x19, 0), (0x1A, 4), (0x1B, 4), (0x1C, 4)):
        g.append_const_node(nid, np.array([v], np.int32))
    g.append_const_node(0x1D, None, shape=(1, 1, 1, 1))
    g.append_const_node(0x21, rng.integers(0, 256, (1, 1, 8, 24), dtype=np.uint8))
    g.append_const_node(0x22, rng.integers(-900, 900, (1, 1, 1, 24)).astype(np.int32))
    g.append_const_node(0x23, rng.integers(0, 256, (3, 3, 24, 1), dtype=np.uint8))
    g.append_const_node(0x24, rng.integers(-900, 900, (1, 1, 1, 24)).astype(np.int32))
    g.append_node(0x30, "Convert_to_d32", inputs=[(0x10, 0), (0x19, 0), (0x1A, 0), (0x1B, 0),
                                                  (0x1C, 0)],
                  outputs=[OutputDef((1, 16, 16, 32), 1)])
    for nid, src, filt, bias in ((0x31, 0x30, 0x21, 0x22), (0x32, 0x31, 0x23, 0x24)):
        range_in = ((0x11, 0), (0x12, 0)) if src == 0x30 else ((src, 1), (src, 2))
        g.append_node(nid, "Supernode_8x8p32to8_d32" if nid == 0x31
                      else "DepthwiseSupernode_8x8p32to8_d32",
                      inputs=[(src, 0), (filt, 0), *range_in, (0x13, 0), (0x14, 0),
                              (0x1D, 0), (bias, 0), (0x17, 0), (0x18, 0), (0x15, 0),
                              (0x16, 0)],
                      outputs=[OutputDef((1, 16, 16, 32), 1), OutputDef((1, 1, 1, 1), 4),
                               OutputDef((1, 1, 1, 1), 4)],
                      padding="SAME")
    g.append_node(0x33, "Convert_from_d32", inputs=[(0x32, 0)],
                  outputs=[OutputDef((1, 6, 7, 24), 1)])
    g.append_node(0x40, "OUTPUT", inputs=[(0x33, 0)])
    return g
