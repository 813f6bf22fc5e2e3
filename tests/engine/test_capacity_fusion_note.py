"""A convolution whose output is declared too small fails as on the device, unless hexagon_nn's
prepare fuses its chain into a Supernode (prepare.c, try_make_supernode_flavored: conv →
QuantizeDownAndShrinkRange → BiasAdd → QuantizeDownAndShrinkRange [→ Relu]); run as authored,
the message says that the device would fuse it."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.errors import NodeError
from hexscope.engine.nodes import OutputDef
from support.conv_graph import append_conv_consts

SMALL = OutputDef((1, 4, 4, 16), 1)     # int32 sums need 4 bytes each: a quarter too small


def _graph(chain: str) -> Graph:
    """``chain``: "bias" (conv, requantize, bias add), "full" (and a requantize, a relu)."""
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
    g.append_const_node(0x16, np.full((1, 1, 1, 16), 128, np.uint8))
    g.append_node(0x22, "QuantizedBiasAdd_8p8to32",
                  inputs=[(0x21, 0), (0x16, 0), (0x21, 1), (0x21, 2), (0x11, 0), (0x12, 0)],
                  outputs=[SMALL, OutputDef(), OutputDef()])
    last = 0x22
    if chain == "full":
        g.append_node(0x23, "QuantizeDownAndShrinkRange_32to8",
                      inputs=[(0x22, 0), (0x22, 1), (0x22, 2)], outputs=3)
        g.append_node(0x24, "QuantizedRelu_8", inputs=[(0x23, 0), (0x23, 1), (0x23, 2)],
                      outputs=[OutputDef((1, 4, 4, 16), 1), OutputDef(), OutputDef()])
        last = 0x24
    g.append_node(0x30, "OUTPUT", inputs=[(last, 0)])
    return g


X = np.arange(48, dtype=np.uint8).reshape(1, 4, 4, 3)


def test_the_fused_chain_runs_where_the_authored_one_does_not_fit():
    s = Session(_graph("full"))
    (y,) = s.execute([X])
    assert y.shape == (1, 4, 4, 16)
    assert s.prepared.nodes[0x24].op == "InputSupernode_8x8p8to8_outd32"     # (then d32)


def test_as_authored_the_failure_names_the_supernode_the_device_makes():
    s = Session(_graph("full"), fusions=False)
    with pytest.raises(NodeError):
        s.execute([X])
    message = s.executor.failed[0x20]
    assert "needs 1024 bytes (qint32 1x4x4x16), but its declared size holds 256 bytes" in message
    assert "prepare fuses this convolution chain into Supernode_8x8p8to8 0x24" in message


def test_a_bias_add_without_the_second_requantize_is_not_fused_and_fails():
    # try_make_supernode_flavored drops the bias add when no requantize reads it, and then
    # does not fuse at all ("don't convert if no bias")
    s = Session(_graph("bias"))
    assert s.prepared.nodes[0x20].op == "QuantizedConv2d_8x8to32"
    with pytest.raises(NodeError):
        s.execute([X])
    message = s.executor.failed[0x20]
    assert "declared size holds 256 bytes" in message and "Supernode" not in message
