"""Large graphs of real ops, shaped as hexagon_nn's converters write ResNet-like networks.

Shared by the tests and ``bench/graph_size.py``. The graph starts as converters start a
quantized network (INPUT -> Min_f / Max_f -> Quantize, which prepare fuses into AutoQuantize),
then repeats a residual block: two convolution layers, each QuantizedConv2d_8x8to32 with its
own filter const, filter range consts and stride shape, QuantizeDownAndShrinkRange_32to8 and
QuantizedRelu_8, then QuantizedAdd_8p8to8 of the block's input and output. Tensors are tiny
(8x8x8) so the graph also runs; its size is in nodes, not bytes.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph

#: nodes per residual block: 2 x (4 consts + conv + requantize + relu) + 2 consts + add
BLOCK_NODES = 2 * 7 + 3
_HEAD_NODES = 6  # INPUT, 2 reduction consts, Min_f, Max_f, Quantize
_TAIL_NODES = 1  # OUTPUT


def residual_graph(nodes: int, channels: int = 8, seed: int = 0) -> Graph:
    """A graph of about ``nodes`` nodes (whole blocks; at least one block)."""
    rng = np.random.default_rng(seed)
    blocks = max(1, (nodes - _HEAD_NODES - _TAIL_NODES) // BLOCK_NODES)
    g = Graph()
    ids = iter(range(0x1000, 0x1000 + 1_000_000))

    def const(data: np.ndarray | None = None, shape: tuple[int, ...] | None = None) -> int:
        node_id = next(ids)
        g.append_const_node(node_id, data, shape)
        return node_id

    def node(op: str, inputs: list[tuple[int, int]], outputs: int = 3,
             padding: str = "NA") -> int:
        node_id = next(ids)
        g.append_node(node_id, op, inputs, outputs=outputs, padding=padding)
        return node_id

    g.append_node(0x10, "INPUT", outputs=1)
    axes = const(np.array([0, 1, 2, 3], np.int32))
    keep = const(np.array([0], np.int32))
    mn = node("Min_f", [(0x10, 0), (axes, 0), (keep, 0)], outputs=1)
    mx = node("Max_f", [(0x10, 0), (axes, 0), (keep, 0)], outputs=1)
    q = node("Quantize", [(0x10, 0), (mn, 0), (mx, 0)])
    x = (q, 0), (q, 1), (q, 2)

    def conv_layer(t: tuple) -> tuple:
        data, lo, hi = t
        filt = const(rng.integers(0, 256, (1, 1, channels, channels), dtype=np.uint8))
        f_min = const(np.array([-1.0], np.float32))
        f_max = const(np.array([1.0], np.float32))
        stride = const(shape=(1, 1, 1, 1))       # converters write one per node
        conv = node("QuantizedConv2d_8x8to32",
                    [data, (filt, 0), lo, hi, (f_min, 0), (f_max, 0), (stride, 0)],
                    padding="SAME")
        rq = node("QuantizeDownAndShrinkRange_32to8", [(conv, 0), (conv, 1), (conv, 2)])
        relu = node("QuantizedRelu_8", [(rq, 0), (rq, 1), (rq, 2)])
        return (relu, 0), (relu, 1), (relu, 2)

    for _ in range(blocks):
        y = conv_layer(conv_layer(x))
        add_min = const(np.array([-8.0], np.float32))
        add_max = const(np.array([8.0], np.float32))
        add = node("QuantizedAdd_8p8to8", [x[0], y[0], x[1], x[2], y[1], y[2],
                                           (add_min, 0), (add_max, 0)])
        x = (add, 0), (add, 1), (add, 2)
    g.append_node(0x20, "OUTPUT", inputs=[x[0]])
    return g


def input_tensor(channels: int = 8) -> np.ndarray:
    """A float input for :func:`residual_graph` (1x8x8xchannels)."""
    return np.linspace(-1.0, 1.0, 64 * channels, dtype=np.float32).reshape(1, 8, 8, channels)
