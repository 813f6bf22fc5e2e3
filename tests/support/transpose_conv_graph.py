"""A graph with one QuantizedTransposeConv2d_8x8p32to8, as TFLite's Hexagon delegate builds it
(transpose_conv_2d_builder.cc: data, filter [N, fh, fw, D], ranges, paddings [top, bottom,
left, right], the stride shape [1, sh, sw, 1], an int32 bias and its range, the output range
and, optionally, per-channel scales)."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph
from hexscope.engine.nodes import OutputDef

TC = 0x40


def transpose_conv_graph(x_shape: tuple[int, int, int, int], w: np.ndarray,
                         stride: tuple[int, int], pads: tuple[int, int, int, int],
                         out_hw: tuple[int, int], *, bias: np.ndarray | None = None,
                         x_range: tuple[float, float] = (-1.0, 1.0),
                         w_range: tuple[float, float] = (-1.0, 1.0),
                         bias_range: tuple[float, float] = (0.0, 0.0),
                         out_range: tuple[float, float] = (-8.0, 8.0),
                         scales: np.ndarray | None = None) -> Graph:
    n = w.shape[0]
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(x_shape, 1)])
    floats = {0x11: x_range[0], 0x12: x_range[1], 0x13: w_range[0], 0x14: w_range[1],
              0x19: bias_range[0], 0x1A: bias_range[1], 0x1B: out_range[0],
              0x1C: out_range[1]}
    for nid, v in floats.items():
        g.append_const_node(nid, np.array([v], np.float32))
    g.append_const_node(0x15, w.astype(np.uint8))
    g.append_const_node(0x16, np.array(pads, np.int32).reshape(1, 1, 2, 2))
    g.append_const_node(0x17, shape=(1, stride[0], stride[1], 1))
    b = np.zeros(n, np.int32) if bias is None else bias.astype(np.int32)
    g.append_const_node(0x18, b.reshape(1, 1, 1, n))
    inputs = [(0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x14, 0), (0x16, 0),
              (0x17, 0), (0x18, 0), (0x19, 0), (0x1A, 0), (0x1B, 0), (0x1C, 0)]
    if scales is not None:
        g.append_const_node(0x1D, scales.astype(np.float32).reshape(1, 1, 1, n))
        inputs.append((0x1D, 0))
    out = (x_shape[0], out_hw[0], out_hw[1], n)
    g.append_node(TC, "QuantizedTransposeConv2d_8x8p32to8", inputs=inputs,
                  outputs=[OutputDef(out, 1), OutputDef((1, 1, 1, 1), 4),
                           OutputDef((1, 1, 1, 1), 4)])
    g.append_node(0x50, "OUTPUT", inputs=[(TC, 0)])
    return g
