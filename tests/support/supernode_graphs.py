"""A convolution chain as hexagon_nn's converters write it, for prepare's Supernode fusion."""

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
