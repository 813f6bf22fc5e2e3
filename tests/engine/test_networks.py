"""Two small networks end to end (issue 3, "Done when"): a flat one in the shape of hexagon_nn's
classic example checked by Close_f against a float reference computed here, and a d32 one
checked by Close_d32. A deliberately wrong reference must fail each check."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, NodeError, OutputDef, Session
from hexscope.engine.quant import adjust_range_for_zero, dequantize_u8, quantize_u8

F = OutputDef((1, 1, 1, 1), 4)
H = W = 10


def scalar(g: Graph, node_id: int, value, dtype=np.float32) -> int:
    g.append_const_node(node_id, np.array([value], dtype))
    return node_id


def classic_graph(weights: np.ndarray, bias: np.ndarray) -> Graph:
    """INPUT (x, reference) -> Flatten/Min_f/Max_f/Quantize -> conv -> requantize -> bias ->
    requantize -> relu -> max pool | avg pool -> concat -> dequantize -> Close_f."""
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, H, W, 3), 4),
                                           OutputDef((1, H // 2, W // 2, 8), 4)])
    scalar(g, 0x101, -1, np.int32)
    g.append_node(0x102, "Flatten", inputs=[(0x100, 0), (0x101, 0)], outputs=1)
    scalar(g, 0x103, 0, np.int32)
    g.append_node(0x104, "Min_f", inputs=[(0x102, 0), (0x103, 0)], outputs=[F])
    g.append_node(0x105, "Max_f", inputs=[(0x102, 0), (0x103, 0)], outputs=[F])
    g.append_node(0x106, "Quantize", inputs=[(0x100, 0), (0x104, 0), (0x105, 0)], outputs=3)
    g.append_const_node(0x110, weights)
    scalar(g, 0x111, -0.9)
    scalar(g, 0x112, 1.1)
    g.append_const_node(0x113, shape=(1, 1, 1, 1))
    g.append_node(0x114, "QuantizedConv2d_8x8to32",
                  inputs=[(0x106, 0), (0x110, 0), (0x106, 1), (0x106, 2), (0x111, 0),
                          (0x112, 0), (0x113, 0)], outputs=3, padding="SAME")
    g.append_node(0x115, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x114, 0), (0x114, 1), (0x114, 2)], outputs=3)
    g.append_const_node(0x116, bias)
    scalar(g, 0x117, -0.5)
    scalar(g, 0x118, 0.5)
    g.append_node(0x119, "QuantizedBiasAdd_8p8to32",
                  inputs=[(0x115, 0), (0x116, 0), (0x115, 1), (0x115, 2), (0x117, 0),
                          (0x118, 0)], outputs=3)
    g.append_node(0x11A, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x119, 0), (0x119, 1), (0x119, 2)], outputs=3)
    g.append_node(0x11B, "QuantizedRelu_8", inputs=[(0x11A, 0), (0x11A, 1), (0x11A, 2)],
                  outputs=3)
    g.append_const_node(0x120, shape=(1, 2, 2, 1))
    g.append_const_node(0x121, shape=(1, 2, 2, 1))
    g.append_const_node(0x122, shape=(1, 3, 3, 1))
    g.append_node(0x123, "QuantizedMaxPool_8",
                  inputs=[(0x11B, 0), (0x11B, 1), (0x11B, 2), (0x120, 0), (0x121, 0)],
                  outputs=3, padding="VALID")
    g.append_node(0x124, "QuantizedAvgPool_8",
                  inputs=[(0x11B, 0), (0x11B, 1), (0x11B, 2), (0x122, 0), (0x121, 0)],
                  outputs=3, padding="SAME")
    scalar(g, 0x125, 3, np.int32)
    g.append_node(0x126, "QuantizedConcat_8",
                  inputs=[(0x125, 0), (0x123, 0), (0x124, 0), (0x123, 1), (0x124, 1),
                          (0x123, 2), (0x124, 2)], outputs=3)
    g.append_node(0x127, "Dequantize", inputs=[(0x126, 0), (0x126, 1), (0x126, 2)],
                  outputs=1)
    g.append_node(0x128, "Close_f", inputs=[(0x127, 0), (0x100, 1)])
    g.append_node(0x129, "OUTPUT", inputs=[(0x127, 0)])
    return g


def float_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The same network in float64, written independently with plain loops."""
    _, h, wd, _ = x.shape
    fh, fw, _, cout = w.shape
    conv = np.zeros((h, wd, cout))
    for i in range(h):
        for j in range(wd):
            for dy in range(fh):
                for dx in range(fw):
                    y, xx = i + dy - 1, j + dx - 1           # SAME, 3x3, stride 1
                    if 0 <= y < h and 0 <= xx < wd:
                        conv[i, j] += x[0, y, xx] @ w[dy, dx]
    act = np.maximum(conv + b.reshape(-1), 0)
    maxp = act.reshape(h // 2, 2, wd // 2, 2, cout).max(axis=(1, 3))      # 2x2/2 VALID
    avgp = np.zeros((h // 2, wd // 2, cout))
    for i in range(h // 2):
        for j in range(wd // 2):
            # 3x3/2 SAME on 10: total pad (5-1)*2-(10-3) = 1 -> 0 before; padding not counted
            window = act[2 * i:2 * i + 3, 2 * j:2 * j + 3]
            avgp[i, j] = window.reshape(-1, cout).mean(axis=0)
    return np.concatenate([maxp, avgp], axis=-1)[None].astype(np.float32)


@pytest.fixture
def classic_case():
    rng = np.random.default_rng(11)
    wq = rng.integers(0, 256, (3, 3, 3, 8), dtype=np.uint8)
    bq = rng.integers(0, 256, (1, 1, 1, 8), dtype=np.uint8)
    x = rng.uniform(-1, 1, (1, H, W, 3)).astype(np.float32)
    w = dequantize_u8(wq, -0.9, 1.1).astype(np.float64)
    b = dequantize_u8(bq, -0.5, 0.5).astype(np.float64)
    return classic_graph(wq, bq), x, float_reference(x.astype(np.float64), w, b)


def test_classic_network_matches_float_reference(classic_case):
    g, x, ref = classic_case
    s = Session(g)
    (out,) = s.execute([x, ref])
    # the fused AutoQuantize replaced Quantize, as hexagon_nn's prepare does
    assert s.prepared.nodes[0x106].op == "AutoQuantize"
    assert {0x102, 0x104, 0x105} & set(s.plan) == set()
    err = np.abs(out.array - ref)
    scale = max(ref.max(), 0) - min(ref.min(), 0)
    assert err.max() <= 0.07 * scale          # what Close_f accepted, checked independently
    assert err.mean() < 0.02 * scale


def test_classic_network_fails_a_wrong_reference(classic_case):
    g, x, ref = classic_case
    wrong = ref.copy()
    wrong[0, 2, 3, 5] += 0.5 * (ref.max() - ref.min()) + 0.1
    with pytest.raises(NodeError, match="node 0x128 .Close_f.") as info:
        Session(g).execute([x, wrong])
    assert "(0, 2, 3, 5)" in info.value.reason or "2,3,5" in info.value.reason.replace(" ", "")


def d32_graph() -> Graph:
    """x -> QuantizeForTest_d32 -> FillPadding -> add(x, x) -> Close_d32 vs reference input;
    mul(x, x) and sub(2x, x*x) checked the same way; concat of x|x vs Concat_f of the twin."""
    g = Graph()
    g.append_node(0x200, "INPUT", outputs=3)             # x, ref 2x, ref 2x - x*x
    g.append_node(0x201, "QuantizeForTest_d32", inputs=[(0x200, 0)], outputs=4)
    g.append_node(0x202, "FillPadding_8_d32", inputs=[(0x201, 0)], outputs=1)
    q, p = 0x201, 0x202
    g.append_node(0x203, "QuantizedAdd_8p8to8_d32",
                  inputs=[(p, 0), (p, 0), (q, 1), (q, 2), (q, 1), (q, 2)], outputs=3)
    g.append_node(0x204, "QuantizedMul_8x8to8_d32",
                  inputs=[(p, 0), (p, 0), (q, 1), (q, 2), (q, 1), (q, 2)], outputs=3)
    g.append_node(0x205, "QuantizedSub_8p8to8_d32",
                  inputs=[(0x203, 0), (0x204, 0), (0x203, 1), (0x203, 2), (0x204, 1),
                          (0x204, 2)], outputs=3)
    g.append_node(0x206, "Close_d32", inputs=[(0x203, 0), (0x203, 1), (0x203, 2), (0x200, 1)])
    g.append_node(0x207, "Close_d32", inputs=[(0x205, 0), (0x205, 1), (0x205, 2), (0x200, 2)])
    scalar(g, 0x208, 3, np.int32)
    g.append_node(0x209, "QuantizedConcat_8_d32",
                  inputs=[(0x208, 0), (p, 0), (p, 0), (q, 1), (q, 1), (q, 2), (q, 2)],
                  outputs=3)
    g.append_node(0x20A, "Concat_f", inputs=[(0x208, 0), (q, 3), (q, 3)], outputs=1)
    g.append_node(0x20B, "Close_d32", inputs=[(0x209, 0), (0x209, 1), (0x209, 2), (0x20A, 0)])
    g.append_node(0x20C, "Convert_from_d32", inputs=[(0x205, 0)], outputs=1)
    g.append_node(0x20D, "Dequantize", inputs=[(0x20C, 0), (0x205, 1), (0x205, 2)], outputs=1)
    g.append_node(0x20E, "OUTPUT", inputs=[(0x20D, 0)])
    return g


def requantized(x: np.ndarray) -> np.ndarray:
    """What QuantizeForTest_d32 hands to a float reference chain (quantized-ops spec §21):
    x quantized to its range (widened to include 0, made zero-exact by R2) and back."""
    mn, mx = adjust_range_for_zero(min(float(x.min()), 0.0), max(float(x.max()), 0.0))
    return dequantize_u8(quantize_u8(x, mn, mx), mn, mx).astype(np.float64)


def test_d32_network_passes_its_checks():
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (1, 5, 6, 40)).astype(np.float32)
    xr = requantized(x)
    # Close_d32 allows 0.2 LSB of excess error, so the sub's reference must start from what
    # the sub really reads: the dequantized outputs of the add and the mul (a first run).
    first = Session(d32_graph(), debug_level=0)
    with pytest.raises(NodeError, match="0x207"):
        first.execute([x, (2 * xr).astype(np.float32), (2 * xr - xr**2).astype(np.float32)])
    added, multiplied = (dequantize_u8(first.output(n, 0).array, first.output(n, 1).array.item(),
                                       first.output(n, 2).array.item()).astype(np.float64)
                         for n in (0x203, 0x204))
    ref = added - multiplied
    s = Session(d32_graph())
    s.execute([x, (2 * xr).astype(np.float32), ref.astype(np.float32)])
    assert np.allclose(s.output(0x201, 3).array, xr, atol=1e-6)   # the twin we assumed
    out = s.output(0x20D, 0).array
    step = (s.output(0x205, 2).array.item() - s.output(0x205, 1).array.item()) / 255
    assert np.abs(out - ref).max() <= 1.5 * step


def test_d32_network_fails_a_wrong_reference():
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (1, 5, 6, 40)).astype(np.float32)
    xr = requantized(x)
    wrong = (2 * xr).astype(np.float32)
    wrong[0, 1, 2, 3] += 0.5                                  # one element far off
    with pytest.raises(NodeError, match="node 0x206 .Close_d32.") as info:
        Session(d32_graph()).execute([x, wrong, (2 * xr - xr**2).astype(np.float32)])
    assert "(0,1,2,3)" in info.value.reason.replace(" ", "")
