"""The TFLite delegate's FULLY_CONNECTED chain, for prepare's SuperFC fusion."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph
from hexscope.engine.nodes import OutputDef

CHAIN = (0x20, 0x21, 0x22)


def fc_graph(k: int = 32, n: int = 32, tail: str = "relu", requant: str = "Requantize_32to8",
             w_range: tuple[float, float] = (-0.5, 1.5)) -> Graph:
    """INPUT 0x10 [1,1,2,k] → MatMul 0x20 → BiasAdd_32p32to32 0x21 → ``requant`` 0x22
    [→ Relu / ReluX 0x23] → OUTPUT 0x30, with Consts as the delegate adds them."""
    rng = np.random.default_rng(3)
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 1, 2, k), 1)])
    g.append_const_node(0x11, np.array([0.0], np.float32))
    g.append_const_node(0x12, np.array([6.0], np.float32))
    g.append_const_node(0x13, np.array([-1.0], np.float32))
    g.append_const_node(0x14, np.array([1.0], np.float32))
    g.append_const_node(0x15, rng.integers(0, 129, (1, 1, k, n), dtype=np.uint8))  # around 64
    g.append_const_node(0x16, rng.integers(-2**20, 2**20, (1, 1, 1, n)).astype(np.int32))
    g.append_const_node(0x17, np.array([-8.0], np.float32))
    g.append_const_node(0x18, np.array([8.0], np.float32))
    g.append_const_node(0x19, np.array([w_range[0]], np.float32))
    g.append_const_node(0x1A, np.array([w_range[1]], np.float32))
    out32 = [OutputDef((1, 1, 2, n), 4), OutputDef(), OutputDef()]
    out8 = [OutputDef((1, 1, 2, n), 1), OutputDef(), OutputDef()]
    g.append_node(0x20, "QuantizedMatMul_8x8to32",
                  inputs=[(0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x19, 0), (0x1A, 0)],
                  outputs=out32)
    g.append_node(0x21, "QuantizedBiasAdd_32p32to32",
                  inputs=[(0x20, 0), (0x16, 0), (0x20, 1), (0x20, 2), (0x13, 0), (0x14, 0)],
                  outputs=out32)
    extra = [(0x17, 0), (0x18, 0)] if requant == "Requantize_32to8" else []
    g.append_node(0x22, requant, inputs=[(0x21, 0), (0x21, 1), (0x21, 2), *extra],
                  outputs=out8)
    last = 0x22
    if tail != "none":
        op = "QuantizedRelu_8" if tail == "relu" else "QuantizedReluX_8"
        g.append_node(0x23, op, inputs=[(0x22, 0), (0x22, 1), (0x22, 2)]
                      + ([(0x12, 0)] if tail == "relux" else []), outputs=out8)
        last = 0x23
    g.append_node(0x30, "OUTPUT", inputs=[(last, 0)])
    return g
