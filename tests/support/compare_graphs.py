"""Graphs for the compare tests: a small quantized chain, and its faulty twin."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hexscope.engine import Graph
from hexscope.engine.nodes import OutputDef

PLUGIN = Path(__file__).resolve().parent.parent / "data" / "plugins" / "flip_relu.py"
RELU_ID = 0x105
SHAPE = (1, 4, 4, 8)


def chain(relu_op: str = "QuantizedRelu_8") -> Graph:
    """INPUT -> AutoQuantize -> relu (``relu_op``) -> MaxPool 2x2 -> Dequantize -> OUTPUT."""
    g = Graph()
    data = OutputDef(SHAPE, 4)
    u8 = OutputDef(SHAPE, 1)
    word = OutputDef((1, 1, 1, 1), 4)
    g.append_node(0x100, "INPUT", outputs=[data], label="x")
    g.append_node(0x101, "AutoQuantize", inputs=[(0x100, 0)], outputs=[u8, word, word],
                  label="quantize")
    g.append_node(RELU_ID, relu_op, inputs=[(0x101, 0), (0x101, 1), (0x101, 2)],
                  outputs=[u8, word, word], label="relu")
    g.append_const_node(0x106, shape=(1, 2, 2, 1))
    g.append_node(0x107, "QuantizedMaxPool_8",
                  inputs=[(RELU_ID, 0), (RELU_ID, 1), (RELU_ID, 2), (0x106, 0), (0x106, 0)],
                  outputs=[u8, word, word], padding="VALID", label="pool")
    g.append_node(0x108, "Dequantize", inputs=[(0x107, 0), (0x107, 1), (0x107, 2)],
                  outputs=[data], label="dequantize")
    g.append_node(0x109, "OUTPUT", inputs=[(0x108, 0)])
    return g


def chain_input(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, SHAPE).astype(np.float32)
