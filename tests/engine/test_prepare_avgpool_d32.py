"""Prepare's d32 conversion of QuantizedAvgPool_8 (nnlib prepare.c depth32_replacement_op:
"case OP_QuantizedAvgPool_8: return OP_QuantizedAvgPool_8_d32", whatever feeds it), made
where Hexscope simulates the d32 op (engine/ops/pooling/avgpool_d32.py); the other pools
run flat with a note."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph, Session
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare


def pool_graph(size: int = 16, window: int = 16, stride: int = 1, padding: str = "VALID",
               depth: int = 8, lo: float = 0.0, hi: float = 255.0) -> Graph:
    """INPUT 0x10 → QuantizedAvgPool_8 0x20 → OUTPUT 0x30 (its data and range)."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, size, size, depth), 1)])
    for k, v in enumerate((lo, hi)):
        g.append_const_node(0x100 + k, np.array([v], np.float32))
    g.append_const_node(0x102, None, shape=(1, window, window, 1))
    g.append_const_node(0x103, None, shape=(1, stride, stride, 1))
    out = -(-size // stride) if padding == "SAME" else (size - window) // stride + 1
    g.append_node(0x20, "QuantizedAvgPool_8",
                  inputs=[(0x10, 0), (0x100, 0), (0x101, 0), (0x102, 0), (0x103, 0)],
                  outputs=[OutputDef((1, out, out, depth), 1), OutputDef((1, 1, 1, 1), 4),
                           OutputDef((1, 1, 1, 1), 4)], padding=padding)
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0), (0x20, 1), (0x20, 2)])
    return g


def test_global_pool_past_16_bit_sums_runs_the_d32_op_with_32_bit_sums():
    # 16x16 codes of 200 on [0, 255]: each window sums to 51200, which the flat op's 16-bit
    # lane reads as -14336 (code 0, the wrong answer Hexscope gave before). The d32 op's
    # reduce-to-1x1 handler: range [0, 51200 / 256] = [0, 200], code 255 = 200.0, the mean
    # (hand-computed in tests/engine/ops/test_avgpool_d32.py)
    g = pool_graph()
    p = prepare(g)
    node = p.nodes[0x20]
    assert node.op == "QuantizedAvgPool_8_d32"
    to_d32 = p.nodes[node.inputs[0][0]]
    assert to_d32.op == "Convert_to_d32" and to_d32.inputs == ((0x10, 0),)
    from_id = p.nodes[0x30].inputs[0][0]
    assert p.nodes[from_id].op == "Convert_from_d32"
    assert p.nodes[0x30].inputs[1:] == ((0x20, 1), (0x20, 2))
    (why,) = [r.reason for r in p.rewrites if r.node_id == 0x20]
    assert "QuantizedAvgPool_8_d32" in why
    assert not [n for n in p.notes if n.startswith("0x20:")]
    x = np.full((1, 16, 16, 8), 200, np.uint8)
    y, lo, hi = Session(g).execute([x])
    np.testing.assert_array_equal(np.asarray(y.array), np.full((1, 1, 1, 8), 255))
    assert (float(lo.array.item()), float(hi.array.item())) == (0.0, 200.0)


def test_pools_whose_d32_form_is_not_simulated_run_flat_with_a_note():
    # an edge window of over 128 valid cells: the C reads past its reciprocal table
    p = prepare(pool_graph(size=300, window=140, stride=140, padding="SAME", depth=1))
    assert p.nodes[0x20].op == "QuantizedAvgPool_8"
    (note,) = [n for n in p.notes if n.startswith("0x20:")]
    assert "QuantizedAvgPool_8_d32 on the device" in note and "not simulated" in note
    assert "reciprocal table" in note
    # the 2x2 stride-2 and 3x3 stride-1 handlers are simulated
    for window, stride in ((2, 2), (3, 1)):
        assert prepare(pool_graph(size=8, window=window, stride=stride)).nodes[0x20].op == \
            "QuantizedAvgPool_8_d32"
    # run as authored: the flat op, noted
    p = prepare(pool_graph(), fusions=False)
    assert p.nodes[0x20].op == "QuantizedAvgPool_8"
    assert any("16-bit sums wrap" in n for n in p.notes if n.startswith("0x20:"))


def test_edge_windows_run_the_d32_op():
    # SAME 3x3 stride 2 on 8x8: the last windows reach past the input; the d32 op fills
    # them with scaled padding, so a constant image stays constant
    g = pool_graph(size=8, window=3, stride=2, padding="SAME", depth=3, hi=1.0)
    assert prepare(g).nodes[0x20].op == "QuantizedAvgPool_8_d32"
    y, _, _ = Session(g).execute([np.full((1, 8, 8, 3), 77, np.uint8)])
    np.testing.assert_array_equal(np.asarray(y.array), 77)


def test_valid_pool_inside_the_input_runs_the_integral_path():
    # 4x4 VALID windows at stride 4 on 8x8 (no special handler, no edge padding): each
    # output is the rounded window mean, the range passes through
    g = pool_graph(size=8, window=4, stride=4, depth=3, hi=1.0)
    assert prepare(g).nodes[0x20].op == "QuantizedAvgPool_8_d32"
    x = np.random.default_rng(3).integers(0, 256, (1, 8, 8, 3), dtype=np.uint8)
    y, lo, hi = Session(g).execute([x])
    mean = x.reshape(1, 2, 4, 2, 4, 3).mean(axis=(2, 4))
    assert np.abs(np.asarray(y.array, float) - mean).max() <= 1
    assert (float(lo.array.item()), float(hi.array.item())) == (0.0, 1.0)
