"""Build the example graphs in resources/examples/ (run again after changing them).

Run: .venv/bin/python packaging/make_examples.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hexscope.engine import Graph, OutputDef
from hexscope.engine.inputs import InputSource, set_input_sources

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"
F = OutputDef((1, 1, 1, 1), 4)          # a float scalar (range outputs)


def out(shape: tuple[int, ...], size: int = 1) -> OutputDef:
    return OutputDef(tuple(shape), size)


def scalar(g: Graph, node_id: int, value: float, dtype=np.float32, label: str = "") -> int:
    g.append_const_node(node_id, np.array([value], dtype), label=label)
    return node_id


def classic_quantized() -> Graph:
    """In the shape of hexagon_nn's classic example: float input quantized through the
    Min_f/Max_f/Quantize pattern (fused into AutoQuantize by prepare), a convolution, requantize,
    bias, relu, max and average pooling, concat, dequantize."""
    g = Graph()
    rng = np.random.default_rng(7)
    h = w = 16
    g.append_node(0x10000, "INPUT", outputs=[out((1, h, w, 3), 4)], label="image")
    scalar(g, 0x10001, -1, np.int32, "flatten shape")
    g.append_node(0x10002, "Flatten", inputs=[(0x10000, 0), (0x10001, 0)],
                  outputs=[out((1, 1, 1, h * w * 3), 4)])
    scalar(g, 0x10003, 0, np.int32, "reduce axis")
    g.append_node(0x10004, "Min_f", inputs=[(0x10002, 0), (0x10003, 0)], outputs=[F])
    g.append_node(0x10005, "Max_f", inputs=[(0x10002, 0), (0x10003, 0)], outputs=[F])
    g.append_node(0x10006, "Quantize", inputs=[(0x10000, 0), (0x10004, 0), (0x10005, 0)],
                  outputs=[out((1, h, w, 3)), F, F], label="quantize input")
    g.append_const_node(0x10010, rng.integers(0, 256, (3, 3, 3, 8), dtype=np.uint8),
                        label="conv1 weights")
    scalar(g, 0x10011, -0.9, label="weights min")
    scalar(g, 0x10012, 1.1, label="weights max")
    g.append_const_node(0x10013, shape=(1, 1, 1, 1), label="stride 1")
    g.append_node(0x10014, "QuantizedConv2d_8x8to32",
                  inputs=[(0x10006, 0), (0x10010, 0), (0x10006, 1), (0x10006, 2), (0x10011, 0),
                          (0x10012, 0), (0x10013, 0)],
                  outputs=[out((1, h, w, 8), 4), F, F], padding="SAME", label="conv1")
    g.append_node(0x10015, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x10014, 0), (0x10014, 1), (0x10014, 2)],
                  outputs=[out((1, h, w, 8)), F, F], label="conv1 requantize")
    g.append_const_node(0x10016, rng.integers(0, 256, (1, 1, 1, 8), dtype=np.uint8),
                        label="conv1 bias")
    scalar(g, 0x10017, -0.5, label="bias min")
    scalar(g, 0x10018, 0.5, label="bias max")
    g.append_node(0x10019, "QuantizedBiasAdd_8p8to32",
                  inputs=[(0x10015, 0), (0x10016, 0), (0x10015, 1), (0x10015, 2), (0x10017, 0),
                          (0x10018, 0)], outputs=[out((1, h, w, 8), 4), F, F], label="bias")
    g.append_node(0x1001A, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x10019, 0), (0x10019, 1), (0x10019, 2)],
                  outputs=[out((1, h, w, 8)), F, F], label="bias requantize")
    g.append_node(0x1001B, "QuantizedRelu_8",
                  inputs=[(0x1001A, 0), (0x1001A, 1), (0x1001A, 2)],
                  outputs=[out((1, h, w, 8)), F, F], label="relu")
    g.append_const_node(0x10020, shape=(1, 2, 2, 1), label="window 2x2")
    g.append_const_node(0x10021, shape=(1, 2, 2, 1), label="stride 2")
    g.append_const_node(0x10022, shape=(1, 3, 3, 1), label="window 3x3")
    g.append_node(0x10023, "QuantizedMaxPool_8",
                  inputs=[(0x1001B, 0), (0x1001B, 1), (0x1001B, 2), (0x10020, 0), (0x10021, 0)],
                  outputs=[out((1, h // 2, w // 2, 8)), F, F], padding="VALID", label="max pool")
    g.append_node(0x10024, "QuantizedAvgPool_8",
                  inputs=[(0x1001B, 0), (0x1001B, 1), (0x1001B, 2), (0x10022, 0), (0x10021, 0)],
                  outputs=[out((1, h // 2, w // 2, 8)), F, F], padding="SAME", label="avg pool")
    scalar(g, 0x10025, 3, np.int32, "concat depth")
    g.append_node(0x10026, "QuantizedConcat_8",
                  inputs=[(0x10025, 0), (0x10023, 0), (0x10024, 0), (0x10023, 1), (0x10024, 1),
                          (0x10023, 2), (0x10024, 2)],
                  outputs=[out((1, h // 2, w // 2, 16)), F, F], label="concat")
    g.append_node(0x10027, "Dequantize", inputs=[(0x10026, 0), (0x10026, 1), (0x10026, 2)],
                  outputs=[out((1, h // 2, w // 2, 16), 4)], label="dequantize")
    g.append_node(0x10028, "OUTPUT", inputs=[(0x10027, 0)])
    set_input_sources(g, [InputSource("random", seed=1, low=-1.0, high=1.0)])
    return g


def d32_pipeline() -> Graph:
    """A d32 network: QuantizeForTest_d32 gives the quantized input and its float
    'requantized' twin; FillPadding poisons the padding; the d32 add, mul and sub compute
    2x - x*x; a d32 concat is checked by Close_d32 against the float Concat_f of the twin."""
    g = Graph()
    h, w, d = 6, 7, 40
    g.append_node(0x20000, "INPUT", outputs=[out((1, h, w, d), 4)], label="x")
    q = 0x20001
    g.append_node(q, "QuantizeForTest_d32", inputs=[(0x20000, 0)],
                  outputs=[out((1, h, w, d)), F, F, out((1, h, w, d), 4)], label="quantize")
    p = 0x20002
    g.append_node(p, "FillPadding_8_d32", inputs=[(q, 0)], outputs=[out((1, h, w, d))],
                  label="poison padding")
    a, m, s = 0x20003, 0x20004, 0x20005
    g.append_node(a, "QuantizedAdd_8p8to8_d32",
                  inputs=[(p, 0), (p, 0), (q, 1), (q, 2), (q, 1), (q, 2)],
                  outputs=[out((1, h, w, d)), F, F], label="x + x")
    g.append_node(m, "QuantizedMul_8x8to8_d32",
                  inputs=[(p, 0), (p, 0), (q, 1), (q, 2), (q, 1), (q, 2)],
                  outputs=[out((1, h, w, d)), F, F], label="x * x")
    g.append_node(s, "QuantizedSub_8p8to8_d32",
                  inputs=[(a, 0), (m, 0), (a, 1), (a, 2), (m, 1), (m, 2)],
                  outputs=[out((1, h, w, d)), F, F], label="2x - x*x")
    scalar(g, 0x20006, 3, np.int32, "concat depth")
    c = 0x20007
    g.append_node(c, "QuantizedConcat_8_d32",
                  inputs=[(0x20006, 0), (p, 0), (p, 0), (q, 1), (q, 1), (q, 2), (q, 2)],
                  outputs=[out((1, h, w, 2 * d)), F, F], label="x | x (d32)")
    g.append_node(0x20008, "Concat_f", inputs=[(0x20006, 0), (q, 3), (q, 3)],
                  outputs=[out((1, h, w, 2 * d), 4)], label="x | x (float reference)")
    g.append_node(0x20009, "Close_d32", inputs=[(c, 0), (c, 1), (c, 2), (0x20008, 0)],
                  label="check concat")
    g.append_node(0x2000A, "Convert_from_d32", inputs=[(s, 0)], outputs=[out((1, h, w, d))],
                  label="to flat")
    g.append_node(0x2000B, "Dequantize", inputs=[(0x2000A, 0), (s, 1), (s, 2)],
                  outputs=[out((1, h, w, d), 4)], label="dequantize")
    g.append_node(0x2000C, "OUTPUT", inputs=[(0x2000B, 0)])
    set_input_sources(g, [InputSource("random", seed=2, low=-1.0, high=1.0)])
    return g


def float_lookup() -> Graph:
    """Float ops: an embedding lookup with Gather_f, then Softmax_f, Sigmoid_f and Tanh_f,
    printed with PPrint_f (set the log level to 1 to see it)."""
    g = Graph()
    rng = np.random.default_rng(3)
    g.append_node(0x30000, "INPUT", outputs=[out((1, 1, 1, 5), 4)], label="logits offset")
    g.append_const_node(0x30001, np.array([[3, 0, 7, 7, 15]], np.int32), label="token ids")
    g.append_const_node(0x30002, rng.normal(0, 2, (1, 1, 16, 5)).astype(np.float32),
                        label="embedding table")
    g.append_node(0x30003, "Gather_f", inputs=[(0x30001, 0), (0x30002, 0)],
                  outputs=[out((1, 1, 5, 5), 4)], label="lookup")
    g.append_node(0x30004, "Softmax_f", inputs=[(0x30003, 0)], outputs=[out((1, 1, 5, 5), 4)],
                  label="softmax")
    g.append_node(0x30005, "Sigmoid_f", inputs=[(0x30000, 0)], outputs=[out((1, 1, 1, 5), 4)],
                  label="sigmoid")
    g.append_node(0x30006, "Tanh_f", inputs=[(0x30004, 0)], outputs=[out((1, 1, 5, 5), 4)],
                  label="tanh")
    g.append_node(0x30007, "PPrint_f", inputs=[(0x30006, 0)], label="print")
    g.append_node(0x30008, "OUTPUT", inputs=[(0x30006, 0), (0x30005, 0)])
    set_input_sources(g, [InputSource("random", seed=3, low=-4.0, high=4.0)])
    return g


def main() -> None:
    EXAMPLES.mkdir(parents=True, exist_ok=True)
    for name, build in [("classic_quantized", classic_quantized), ("d32_pipeline", d32_pipeline),
                        ("float_lookup", float_lookup)]:
        build().save(EXAMPLES / f"{name}.hexgraph")
        print("wrote", EXAMPLES / f"{name}.hexgraph")


if __name__ == "__main__":
    main()
