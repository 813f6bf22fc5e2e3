"""Prepare's d32 rewrite of QuantizedSplit_8 and DepthToSpace_8 (nnlib prepare.c
depth32_replacement_op, do_convert_concat_depth32, check_spaceop_ok_for_d32): the
conditions, the rewrite as prepare shows it, and the same logical values as the flat run."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare


def split_graph(shape=(1, 2, 3, 64), n=2, axis: int | None = 3, out=None) -> Graph:
    """INPUT 0x10 → QuantizedSplit_8 0x20 (axis Const 0x11, or input 0 wired as input 1 when
    ``axis`` is None) → OUTPUT 0x30 reading every part and the range."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(shape, 1)])
    g.append_const_node(0x11, np.array([axis or 0], np.int32))
    g.append_const_node(0x12, np.array([-1.0], np.float32))
    g.append_const_node(0x13, np.array([3.0], np.float32))
    part = out or (*shape[:3], shape[3] // n)
    first = (0x10, 0) if axis is None else (0x11, 0)
    g.append_node(0x20, "QuantizedSplit_8", inputs=[first, (0x10, 0), (0x12, 0), (0x13, 0)],
                  outputs=[OutputDef(part, 1)] * n + [OutputDef((1, 1, 1, 1), 4)] * 2)
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, k) for k in range(n + 2)])
    return g


@pytest.mark.parametrize("axis", [3, -1, None])
def test_a_depth_split_becomes_split_d32_with_a_converter_per_part(axis):
    p = prepare(split_graph(n=3, shape=(1, 2, 3, 96), axis=axis))
    node = p.nodes[0x20]
    assert node.op == "QuantizedSplit_8_d32"
    to = p.nodes[node.inputs[1][0]]
    assert (to.op, to.inputs) == ("Convert_to_d32", ((0x10, 0),))
    assert node.inputs[0] == (node.inputs[1] if axis is None else (0x11, 0))
    reads = p.nodes[0x30].inputs
    for k in range(3):
        conv = p.nodes[reads[k][0]]
        assert (conv.op, conv.inputs, reads[k][1]) == ("Convert_from_d32", ((0x20, k),), 0)
    assert reads[3:] == ((0x20, 3), (0x20, 4))             # the range is the d32 op's
    (r,) = [r for r in p.rewrites if r.node_id == 0x20]
    assert "QuantizedSplit_8_d32" in r.reason and "outputs through Convert_from_d32" in r.reason
    assert not [n for n in p.notes if n.startswith("0x20:")]
    plan = list(p.plan)
    assert plan.index(to.node_id) < plan.index(0x20) < plan.index(reads[2][0])


@pytest.mark.parametrize(("kwargs", "why"), [
    ({"axis": 2, "shape": (1, 2, 4, 64), "out": (1, 2, 2, 64)}, "not on depth"),
    ({"n": 1}, "one part: the d32 op needs 4 outputs"),
    ({"shape": (1, 1, 1, 64)}, "1x1xD outputs (do_convert_concat_depth32)"),
])
def test_splits_the_library_leaves_flat(kwargs, why):
    assert prepare(split_graph(**kwargs)).nodes[0x20].op == "QuantizedSplit_8", why


def test_the_split_runs_in_d32_with_the_flat_values_and_min_clamped_to_zero():
    shape = (2, 3, 5, 48)
    x = np.random.default_rng(3).integers(0, 256, shape, dtype=np.uint8)
    d32 = Session(split_graph(shape=shape, n=3))
    flat = Session(split_graph(shape=shape, n=3), fusions=False)
    got, want = d32.execute([x]), flat.execute([x])
    for a, b in zip(got[:3], want[:3], strict=True):
        assert np.array_equal(a.array, b.array)
    # split_d32 reports fminf(0, min): the range [-1, 3] already holds 0
    assert got[3].array.item() == want[3].array.item() == -1.0


def d2s_graph(depth=128, block=(2,), src_depth=None) -> Graph:
    """INPUT 0x10 → DepthToSpace_8 0x20 (block Const 0x11) → OUTPUT 0x30."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 2, 3, src_depth or depth), 1)])
    g.append_const_node(0x11, np.array(block, np.int32))
    g.append_const_node(0x12, np.array([0.0], np.float32))
    g.append_const_node(0x13, np.array([1.0], np.float32))
    bh, bw = block[0], block[-1]
    g.append_node(0x20, "DepthToSpace_8", inputs=[(0x10, 0), (0x11, 0), (0x12, 0), (0x13, 0)],
                  outputs=[OutputDef((1, 2 * bh, 3 * bw, depth // (bh * bw)), 1),
                           OutputDef(), OutputDef()])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    return g


@pytest.mark.parametrize(("depth", "block", "converted"), [
    (128, (2,), True),            # output depth 32
    (64, (1, 2), True),           # output depth 32
    (32, (1, 2), True),           # 16 with bw = 2
    (64, (2, 2), True),           # 16 with bw = 2
    (64, (2, 1), True),           # output depth 32, bw 1
    (96, (1, 3), True),
    (128, (1, 4), True),
    (32 * 5, (1, 5), False),      # bw 5
    (48, (1, 1), False),          # input depth not a multiple of 32
    (128, (4,), False),           # output depth 8
])
def test_depth_to_space_converts_under_check_spaceop_ok_for_d32(depth, block, converted):
    p = prepare(d2s_graph(depth, block))
    assert (p.nodes[0x20].op == "DepthToSpace_8_d32") == converted
    if converted:
        to = p.nodes[p.nodes[0x20].inputs[0][0]]
        back = p.nodes[p.nodes[0x30].inputs[0][0]]
        assert (to.op, back.op, back.inputs) == ("Convert_to_d32", "Convert_from_d32",
                                                 ((0x20, 0),))
        assert not [n for n in p.notes if n.startswith("0x20:")]


def test_depth_to_space_runs_in_d32_with_the_flat_values():
    x = np.random.default_rng(5).integers(0, 256, (1, 2, 3, 128), dtype=np.uint8)
    (got,) = Session(d2s_graph()).execute([x])
    (want,) = Session(d2s_graph(), fusions=False).execute([x])
    assert Session(d2s_graph()).prepared.nodes[0x20].op == "DepthToSpace_8_d32"
    assert np.array_equal(got.array, want.array)


def resize_graph(out=(1, 4, 6, 64), align: int | None = None) -> Graph:
    """INPUT 0x10 → QuantizedResizeBilinear_8 0x20 → OUTPUT 0x30."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 2, 3, out[3]), 1)])
    g.append_const_node(0x11, np.array(out[1:3], np.int32))
    g.append_const_node(0x12, np.array([0.0], np.float32))
    g.append_const_node(0x13, np.array([1.0], np.float32))
    ins = [(0x10, 0), (0x11, 0), (0x12, 0), (0x13, 0)]
    if align is not None:
        g.append_const_node(0x14, np.array([align], np.int32))
        ins.append((0x14, 0))
    g.append_node(0x20, "QuantizedResizeBilinear_8", inputs=ins,
                  outputs=[OutputDef(out, 1), OutputDef(), OutputDef()])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    return g


@pytest.mark.parametrize(("out", "converted"), [((1, 4, 6, 64), True), ((1, 4, 8, 3), True),
                                                ((1, 4, 6, 2), True), ((1, 4, 8, 2), False),
                                                ((1, 5, 4, 1), False)])
def test_resize_bilinear_converts_for_depth_over_2_or_a_width_not_a_power_of_2(out, converted):
    p = prepare(resize_graph(out))
    assert (p.nodes[0x20].op == "QuantizedResizeBilinear_8_d32") == converted
    assert not [n for n in p.notes if n.startswith("0x20:")] or not converted


def test_resize_bilinear_runs_in_d32_within_a_code_of_the_flat_run():
    x = np.random.default_rng(7).integers(0, 256, (1, 2, 3, 64), dtype=np.uint8)
    for out, align in (((1, 4, 6, 64), None), ((1, 5, 7, 64), 1)):
        (got,) = Session(resize_graph(out, align)).execute([x])
        (want,) = Session(resize_graph(out, align), fusions=False).execute([x])
        assert got.shape == want.shape
        assert np.abs(got.array.astype(int) - want.array.astype(int)).max() <= 1
