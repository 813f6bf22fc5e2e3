"""Build the example graphs that show the views' point, and check that they do.

    .venv/bin/python packaging/make_view_examples.py

Writes resources/examples/padding_demo.hexgraph (a user op from the PeekLeft plugin reads
its left padding; the padding check finds it), fill_padding_demo.hexgraph (FillPadding_8_d32
with distinct spatial and depth fills) and saturating_range.hexgraph (a range that clips a
third of the data, next to one that wastes half the codes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from hexscope.engine import Graph, Session
from hexscope.engine.analysis.padding_check import check_padding
from hexscope.engine.analysis.ranges import node_ranges
from hexscope.engine.inputs import InputSource, make_inputs, set_input_sources
from hexscope.engine.nodes import OutputDef
from hexscope.engine.plugins import load_plugin

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"
PLUGIN = ROOT / "resources" / "plugins" / "peek_left.py"
F32 = OutputDef((1, 1, 1, 1), 4)


def _d32(shape: tuple[int, int, int, int]) -> OutputDef:
    """A d32 output big enough for the default padding (graph files declare padded sizes)."""
    b, h, w, d = shape
    return OutputDef((b, h + 8, w + 8, -(-d // 32) * 32), 1)


def _const(g: Graph, node_id: int, value: float | int, label: str = "") -> int:
    dtype = np.float32 if isinstance(value, float) else np.int32
    g.append_const_node(node_id, np.array([value], dtype), label=label)
    return node_id


def _input(g: Graph, shape: tuple[int, int, int, int], low: float, high: float) -> None:
    g.append_node(0x1000, "INPUT", outputs=[OutputDef(shape, 4)], label="image")
    set_input_sources(g, [InputSource(kind="random", dtype="float32", low=low, high=high,
                                      seed=7)])


def padding_demo() -> Graph:
    """INPUT -> AutoQuantize_d32 -> PeekLeft_8_d32 (plugin) -> Convert_from_d32 -> OUTPUT."""
    shape = (1, 16, 16, 8)
    g = Graph()
    _input(g, shape, 0.0, 1.0)
    g.append_node(0x1001, "AutoQuantize_d32", inputs=[(0x1000, 0)],
                  outputs=[_d32(shape), F32, F32], label="to d32")
    g.append_node(0x1002, "PeekLeft_8_d32", inputs=[(0x1001, 0), (0x1001, 1), (0x1001, 2)],
                  outputs=[_d32(shape), F32, F32], label="peeks left (bug)")
    g.append_node(0x1003, "Convert_from_d32", inputs=[(0x1002, 0)],
                  outputs=[OutputDef(shape, 1)], label="to flat")
    g.append_node(0x1004, "OUTPUT", inputs=[(0x1003, 0)])
    g.meta["plugins"] = ["../plugins/peek_left.py"]
    return g


def fill_padding_demo() -> Graph:
    """INPUT -> AutoQuantize_d32 -> FillPadding_8_d32(0x00, 0xff) -> Convert_from_d32."""
    shape = (1, 12, 13, 20)          # depth 20: 12 bytes of depth-after padding per position
    g = Graph()
    _input(g, shape, -1.0, 1.0)
    g.append_node(0x1001, "AutoQuantize_d32", inputs=[(0x1000, 0)],
                  outputs=[_d32(shape), F32, F32], label="to d32")
    _const(g, 0x10, 0x00, "spatial fill")
    _const(g, 0x11, 0xFF, "depth fill")
    g.append_node(0x1002, "FillPadding_8_d32", inputs=[(0x1001, 0), (0x10, 0), (0x11, 0)],
                  outputs=[_d32(shape)], label="fill padding")
    g.append_node(0x1003, "Convert_from_d32", inputs=[(0x1002, 0)],
                  outputs=[OutputDef(shape, 1)], label="to flat")
    g.append_node(0x1004, "OUTPUT", inputs=[(0x1003, 0)])
    return g


def saturating_range() -> Graph:
    """Data in [-4, 4] quantized to [-1, 1] (clips) and to [-16, 16] (wastes codes)."""
    shape = (1, 24, 24, 8)
    g = Graph()
    _input(g, shape, -4.0, 4.0)
    _const(g, 0x10, -1.0, "narrow min")
    _const(g, 0x11, 1.0, "narrow max")
    _const(g, 0x12, -16.0, "wide min")
    _const(g, 0x13, 16.0, "wide max")
    _const(g, 0x14, 0.5, "relu cap")
    q = [OutputDef(shape, 1), F32, F32]
    g.append_node(0x1001, "Quantize", inputs=[(0x1000, 0), (0x10, 0), (0x11, 0)], outputs=q,
                  label="too narrow")
    g.append_node(0x1002, "Quantize", inputs=[(0x1000, 0), (0x12, 0), (0x13, 0)], outputs=q,
                  label="too wide")
    g.append_node(0x1003, "QuantizedReluX_8",
                  inputs=[(0x1001, 0), (0x1001, 1), (0x1001, 2), (0x14, 0)], outputs=q,
                  label="relu x 0.5")
    g.append_node(0x1004, "OUTPUT", inputs=[(0x1003, 0), (0x1002, 0)])
    return g


def main() -> int:
    load_plugin(PLUGIN)
    EXAMPLES.mkdir(parents=True, exist_ok=True)
    graphs = {"padding_demo": padding_demo(), "fill_padding_demo": fill_padding_demo(),
              "saturating_range": saturating_range()}
    for name, g in graphs.items():
        Session(g).execute(make_inputs(g))       # each must run
        g.save(EXAMPLES / f"{name}.hexgraph")
        print(f"wrote {name}.hexgraph ({len(g)} nodes)")
    readers = check_padding(graphs["padding_demo"]).readers
    assert readers == [0x1002], f"padding check found {readers}"
    assert check_padding(graphs["fill_padding_demo"]).readers == []
    s = Session(graphs["saturating_range"])
    s.execute(make_inputs(graphs["saturating_range"]))
    clipped = {st.node_id: st.saturation for st in node_ranges(s)}
    assert clipped[0x1001] > 0.5 and clipped[0x1002] < 0.01, clipped
    print("checked: padding reader 0x1002; FillPadding demo clean; 0x1001 clips "
          f"{100 * clipped[0x1001]:.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
