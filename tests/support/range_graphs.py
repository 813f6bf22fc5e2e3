"""A small graph with each of the four run-time range patterns (issue 29), and its data."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph
from hexscope.engine.batch.records import InputSet
from hexscope.engine.nodes import OutputDef
from hexscope.engine.tensor import Tensor

SHAPE = (1, 4, 4, 4)
QDOWN, RANGE, REQUANT, SUPERNODE, QUANTIZE = 0x24, 0x31, 0x32, 0x40, 0x03


def _scalar(g: Graph, node_id: int, value: float, label: str = "") -> None:
    g.append_const_node(node_id, np.array([value], np.float32), label=label)


def _q(shape: tuple[int, ...] = SHAPE) -> list[OutputDef]:
    return [OutputDef(shape, 1), OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4)]


def _i32() -> list[OutputDef]:
    return [OutputDef(SHAPE, 4), OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4)]


def _weights(g: Graph, node_id: int, rng: np.random.Generator) -> None:
    g.append_const_node(node_id, rng.integers(0, 256, (1, 1, 4, 4)).astype(np.uint8),
                        label=f"weights 0x{node_id:x}")


def four_patterns(seed: int = 0, *, relu: bool = True) -> Graph:
    """INPUT 0x01 → Quantize 0x03 fed by Min_f 0x04 / Max_f 0x05 (pattern 4) → conv 0x21 →
    QuantizeDownAndShrinkRange 0x22 → bias add 0x23 → QuantizeDownAndShrinkRange 0x24
    (pattern 1; prepare makes a Supernode of the chain) [→ Relu 0x25] → conv 0x30 →
    RequantizationRange_32 0x31 + Requantize_32to8 0x32 (pattern 2) → Supernode_8x8p8to8 0x40
    with ±inf output range (pattern 3) → Dequantize 0x50 → OUTPUT 0x60. 1x1 filters over
    4x4x4, random weights in [-1, 1]."""
    rng = np.random.default_rng(seed)
    g = Graph()
    g.append_node(0x01, "INPUT", outputs=[OutputDef(SHAPE, 4)], label="image")
    g.append_node(0x04, "Min_f", inputs=[(0x01, 0)], outputs=[OutputDef((1, 1, 1, 1), 4)])
    g.append_node(0x05, "Max_f", inputs=[(0x01, 0)], outputs=[OutputDef((1, 1, 1, 1), 4)])
    g.append_node(QUANTIZE, "Quantize", inputs=[(0x01, 0), (0x04, 0), (0x05, 0)],
                  outputs=_q(), label="quantize")
    _scalar(g, 0x10, -1.0)
    _scalar(g, 0x11, 1.0)
    _scalar(g, 0x12, -np.inf, "auto min")
    _scalar(g, 0x13, np.inf, "auto max")
    g.append_const_node(0x14, shape=(1, 1, 1, 1), label="stride 1")
    _weights(g, 0x15, rng)
    g.append_const_node(0x16, rng.integers(0, 256, (1, 1, 1, 4)).astype(np.uint8),
                        label="bias")
    _weights(g, 0x17, rng)
    _weights(g, 0x18, rng)
    g.append_const_node(0x19, rng.integers(0, 256, (1, 1, 1, 4)).astype(np.uint8),
                        label="bias 2")

    def conv(node_id: int, src: int, weights: int) -> None:
        g.append_node(node_id, "QuantizedConv2d_8x8to32",
                      inputs=[(src, 0), (weights, 0), (src, 1), (src, 2), (0x10, 0), (0x11, 0),
                              (0x14, 0)], outputs=_i32(), padding="SAME")

    conv(0x21, QUANTIZE, 0x15)
    g.append_node(0x22, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x21, 0), (0x21, 1), (0x21, 2)], outputs=_q())
    g.append_node(0x23, "QuantizedBiasAdd_8p8to32",
                  inputs=[(0x22, 0), (0x16, 0), (0x22, 1), (0x22, 2), (0x10, 0), (0x11, 0)],
                  outputs=_i32())
    g.append_node(QDOWN, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x23, 0), (0x23, 1), (0x23, 2)], outputs=_q(), label="requantize")
    last = QDOWN
    if relu:
        g.append_node(0x25, "QuantizedRelu_8", inputs=[(QDOWN, 0), (QDOWN, 1), (QDOWN, 2)],
                      outputs=_q(), label="relu")
        last = 0x25
    conv(0x30, last, 0x17)
    g.append_node(RANGE, "RequantizationRange_32", inputs=[(0x30, 0), (0x30, 1), (0x30, 2)],
                  outputs=[OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4)])
    g.append_node(REQUANT, "Requantize_32to8",
                  inputs=[(0x30, 0), (0x30, 1), (0x30, 2), (RANGE, 0), (RANGE, 1)],
                  outputs=_q(), label="conv2 requantize")
    g.append_node(SUPERNODE, "Supernode_8x8p8to8",
                  inputs=[(REQUANT, 0), (0x18, 0), (REQUANT, 1), (REQUANT, 2), (0x10, 0),
                          (0x11, 0), (0x14, 0), (0x19, 0), (0x10, 0), (0x11, 0), (0x12, 0),
                          (0x13, 0)], outputs=_q(), padding="SAME", label="conv3")
    g.append_node(0x50, "Dequantize", inputs=[(SUPERNODE, 0), (SUPERNODE, 1), (SUPERNODE, 2)],
                  outputs=[OutputDef(SHAPE, 4)], label="dequantize")
    g.append_node(0x60, "OUTPUT", inputs=[(0x50, 0)])
    return g


def data_set(n: int = 6, seed: int = 1, scale: float = 1.0) -> list[InputSet]:
    """``n`` float images of the graph's input shape."""
    rng = np.random.default_rng(seed)
    return [InputSet(f"set{k}", [Tensor.from_array(
        (rng.normal(0.0, scale, SHAPE)).astype(np.float32))]) for k in range(n)]
