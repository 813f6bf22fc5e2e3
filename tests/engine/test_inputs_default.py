"""The default source of an INPUT output follows its declared element size: one byte is a
quantized graph's uint8 codes, anything else float32 in [-1, 1] (engine/inputs.py)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.graph import Graph
from hexscope.engine.inputs import input_sources, make_inputs
from hexscope.engine.nodes import OutputDef


def test_one_byte_outputs_default_to_codes_and_others_to_float32():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 8, 8, 3), 1), OutputDef((1, 2, 2, 1), 4)])
    codes, floats = input_sources(g)
    assert (codes.dtype, codes.low, codes.high, codes.seed) == ("uint8", 0.0, 255.0, 0)
    assert (floats.dtype, floats.low, floats.high, floats.seed) == ("float32", -1.0, 1.0, 1)
    a, b = make_inputs(g)
    assert a.array.dtype == np.uint8 and a.array.shape == (1, 8, 8, 3)
    assert a.array.min() < 64 and a.array.max() > 191          # spread over the codes
    assert b.array.dtype == np.float32 and -1 <= b.array.min() <= b.array.max() <= 1
