"""A convolution whose output is declared too small fails as on the device; when hexagon_nn's
prepare would fold it with its bias add into a Supernode (prepare.c,
try_make_supernode_flavored: only when a bias add follows), the message says so."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.nodes import OutputDef
from support.conv_graph import append_conv_consts

SMALL = OutputDef((1, 4, 4, 16), 1)     # int32 sums need 4 bytes each: a quarter too small


def _graph(with_bias: bool) -> Graph:
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 4, 4, 3), 1)])
    append_conv_consts(g)
    g.append_const_node(0x15, np.full((1, 1, 3, 16), 130, np.uint8))
    g.append_node(0x20, "QuantizedConv2d_8x8to32",
                  inputs=[(0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x12, 0),
                          (0x14, 0)], outputs=[SMALL, OutputDef(), OutputDef()],
                  padding="SAME")
    g.append_node(0x21, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x20, 0), (0x20, 1), (0x20, 2)], outputs=3)
    last = 0x21
    if with_bias:
        g.append_const_node(0x16, np.full((1, 1, 1, 16), 128, np.uint8))
        g.append_node(0x22, "QuantizedBiasAdd_8p8to32",
                      inputs=[(0x21, 0), (0x16, 0), (0x21, 1), (0x21, 2), (0x11, 0), (0x12, 0)],
                      outputs=3)
        last = 0x22
    g.append_node(0x30, "OUTPUT", inputs=[(last, 0)])
    return g


@pytest.mark.parametrize("with_bias", [True, False])
def test_the_capacity_failure_says_when_the_device_would_fuse(with_bias):
    s = Session(_graph(with_bias))
    s.set_inputs([np.arange(48, dtype=np.uint8).reshape(1, 4, 4, 3)])
    s.run()
    message = s.executor.failed[0x20]
    assert "needs 1024 bytes (qint32 1x4x4x16), but its declared size holds 256 bytes" in message
    assert ("fuses this convolution with its bias add into a Supernode" in message) is with_bias
