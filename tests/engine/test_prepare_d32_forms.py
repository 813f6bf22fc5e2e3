"""Prepare's d32 conversion of QuantizedSub_8p8to8 (nnlib prepare.c do_convert_to_depth32,
depth32_replacement_op: "this op is currently not supported in non-d32")."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.errors import EngineError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare


def sub_graph(shape=(1, 2, 3, 5), reader_of_range: bool = False) -> Graph:
    """INPUT 0x10 (a, b) → Sub 0x20 → OUTPUT 0x30 (and 0x31 reading its max)."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(shape, 1), OutputDef(shape, 1)])
    for node_id, v in ((0x12, -1.0), (0x13, 1.0), (0x14, 0.0), (0x15, 2.0)):
        g.append_const_node(node_id, np.array([v], np.float32))
    g.append_node(0x20, "QuantizedSub_8p8to8",
                  inputs=[(0x10, 0), (0x10, 1), (0x12, 0), (0x13, 0), (0x14, 0), (0x15, 0)],
                  outputs=[OutputDef(shape, 1), OutputDef(), OutputDef()])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    if reader_of_range:
        g.append_node(0x31, "OUTPUT", inputs=[(0x20, 2)])
    return g


def test_sub_becomes_its_d32_form_between_converts():
    p = prepare(sub_graph(reader_of_range=True))
    sub = p.nodes[0x20]
    assert sub.op == "QuantizedSub_8p8to8_d32"
    to_a, to_b = (p.nodes[sub.inputs[k][0]] for k in (0, 1))
    assert (to_a.op, to_a.inputs, to_b.op, to_b.inputs) == \
        ("Convert_to_d32", ((0x10, 0),), "Convert_to_d32", ((0x10, 1),))
    from_id = p.nodes[0x30].inputs[0][0]
    assert p.nodes[from_id].op == "Convert_from_d32" and p.nodes[from_id].inputs == ((0x20, 0),)
    assert p.nodes[0x31].inputs == ((0x20, 2),)          # the range still comes from the d32 op
    assert {to_a.node_id, to_b.node_id, from_id} <= set(range(0xFFFFFFF0, 0x100000000))
    plan = list(p.plan)
    assert plan.index(to_b.node_id) < plan.index(0x20) < plan.index(from_id) < plan.index(0x30)
    (r,) = [r for r in p.rewrites if r.node_id == 0x20]
    assert r.kind == "replaced" and "QuantizedSub_8p8to8_d32" in r.reason


def test_the_same_input_twice_gets_one_convert():
    g = sub_graph()
    g.replace_node(g.node(0x20).with_(inputs=((0x10, 0), (0x10, 0), *g.node(0x20).inputs[2:])))
    p = prepare(g)
    assert p.nodes[0x20].inputs[0] == p.nodes[0x20].inputs[1]


def test_the_rewritten_graph_runs_and_subtracts():
    s = Session(sub_graph(shape=(1, 1, 1, 3)))
    a = np.array([128, 255, 0], np.uint8).reshape(1, 1, 1, 3)      # about 0, 1, -1 in [-1, 1]
    b = np.array([0, 0, 255], np.uint8).reshape(1, 1, 1, 3)        # 0, 0, 2 in [0, 2]
    (y,) = s.execute([a, b])
    lo = float(s.output(0x20, 1).array.reshape(-1)[0])
    hi = float(s.output(0x20, 2).array.reshape(-1)[0])
    got = lo + y.array.reshape(-1).astype(np.float64) * (hi - lo) / 255
    np.testing.assert_allclose(got, [0.0, 1.0, -3.0], atol=(hi - lo) / 255 * 1.5)


def test_as_authored_the_flat_sub_refuses_as_nnlib_does():
    s = Session(sub_graph(shape=(1, 1, 1, 3)), fusions=False)
    assert s.prepared.nodes[0x20].op == "QuantizedSub_8p8to8"
    with pytest.raises(EngineError, match="non d32 sub not supported"):
        s.execute([np.zeros((1, 1, 1, 3), np.uint8)] * 2)


def _one_op(op: str, out_shape: tuple, *, from_d32: bool = False) -> Graph:
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(out_shape, 1)])
    src = 0x10
    if from_d32:
        g.append_node(0x11, "Convert_to_d32", inputs=[(0x10, 0)], outputs=[OutputDef(out_shape, 1)])
        g.append_node(0x12, "Convert_from_d32", inputs=[(0x11, 0)],
                      outputs=[OutputDef(out_shape, 1)])
        src = 0x12
    g.append_const_node(0x13, np.array([-1.0], np.float32))
    g.append_const_node(0x14, np.array([1.0], np.float32))
    g.append_node(0x20, op, inputs=[(src, 0), (0x13, 0), (0x14, 0)],
                  outputs=[OutputDef(out_shape, 1), OutputDef(), OutputDef()])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    return g


@pytest.mark.parametrize("op, shape, from_d32, converted", [
    ("ArgMin_8", (1, 2, 2, 8), True, False),     # input 1 is no int32 axis of 3: not converted
    ("QuantizedSoftmax_8", (1, 1, 1, 1001), False, False),
    ("QuantizedSoftmax_8", (1, 4, 8, 3), False, True),   # height >= 4, width >= 8, depth > 2
    ("QuantizedSoftmax_8", (1, 4, 4, 3), False, True),   # width == 4
    ("QuantizedSoftmax_8", (1, 4, 6, 3), False, False),  # width 6
    ("QuantizedSoftmax_8", (1, 4, 8, 2), False, False),  # depth 2
    ("QuantizedSoftmax_8", (1, 1, 1, 10), True, True),   # its input is already d32
])
def test_d32_conversions_follow_the_librarys_conditions(op, shape, from_d32, converted):
    p = prepare(_one_op(op, shape, from_d32=from_d32))
    assert (p.nodes[0x20].op == op + "_d32") == converted
    assert not [n for n in p.notes if n.startswith("0x20:")]


@pytest.mark.parametrize("op", ["QuantizedTanh_8", "QuantizedSigmoid_8", "QuantizedNeg_8"])
def test_tanh_after_a_convert_from_d32_runs_in_d32_with_the_same_codes(op):
    shape = (1, 2, 3, 40)
    p = prepare(_one_op(op, shape, from_d32=True))
    node = p.nodes[0x20]
    assert node.op == op + "_d32" and node.inputs[0] == (0x11, 0)    # the d32 source itself
    from_id = p.nodes[0x30].inputs[0][0]
    assert p.nodes[from_id].op == "Convert_from_d32"
    assert prepare(_one_op(op, shape)).nodes[0x20].op == op          # flat input: stays flat
    x = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    (converted,) = Session(_one_op(op, shape, from_d32=True)).execute([x])
    (flat,) = Session(_one_op(op, shape)).execute([x])
    assert np.array_equal(converted.array, flat.array)


def test_a_convert_from_d32_left_unread_is_removed():
    # the Tanh reads past 0x12 to its d32 input: nothing reads 0x12, and the library's
    # remove_dead_nodes after convert_to_depth32 takes it away
    p = prepare(_one_op("QuantizedTanh_8", (1, 2, 3, 40), from_d32=True))
    assert 0x12 not in p.nodes and 0x12 not in p.plan
    r = p.rewrite_of(0x12)
    assert r.kind == "removed" and "0x20" in r.reason and "remove_dead_nodes" in r.reason
    assert "its input through Convert_to_d32 0x11," in p.rewrite_of(0x20).reason
    # read by another node too, it stays
    g = _one_op("QuantizedTanh_8", (1, 2, 3, 40), from_d32=True)
    g.append_node(0x31, "OUTPUT", inputs=[(0x12, 0)])
    p = prepare(g)
    assert p.nodes[0x12].op == "Convert_from_d32" and p.rewrite_of(0x12) is None


@pytest.mark.parametrize("op, axis, converted", [("ArgMax_8toInt32", 3, True),
                                                 ("ArgMin_8", -1, True),
                                                 ("ArgMax_8toInt32", 2, False)])
def test_argmax_on_depth_runs_in_d32_with_a_flat_output(op, axis, converted):
    shape = (1, 2, 3, 40)
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(shape, 1)])
    g.append_const_node(0x12, np.array([axis], np.int32))
    g.append_const_node(0x13, np.array([0.0], np.float32))
    g.append_const_node(0x14, np.array([1.0], np.float32))
    g.append_node(0x20, op, inputs=[(0x10, 0), (0x12, 0), (0x13, 0), (0x14, 0)],
                  outputs=[OutputDef(tuple(1 if k == axis % 4 else n
                                           for k, n in enumerate(shape)), 4)])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    p = prepare(g)
    assert (p.nodes[0x20].op == op.split("_8")[0] + "_8_d32") == converted
    assert p.nodes[0x30].inputs == ((0x20, 0),)                    # no Convert_from_d32
    x = np.random.default_rng(1).integers(0, 4, shape, dtype=np.uint8)     # many ties
    (got,) = Session(g).execute([x])
    want = (np.argmax if op.startswith("ArgMax") else np.argmin)(x, axis=axis)
    assert np.array_equal(got.array.reshape(-1), want.reshape(-1))


def concat_graph(axis: int, shape=(1, 2, 3, 4), out=(1, 4, 3, 4)) -> Graph:
    """INPUT 0x10 (a, b), both in [0, 1] → QuantizedConcat_8 0x20 on ``axis`` → OUTPUT."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(shape, 1), OutputDef(shape, 1)])
    g.append_const_node(0x11, np.array([axis], np.int32))
    g.append_const_node(0x12, np.array([0.0], np.float32))
    g.append_const_node(0x13, np.array([1.0], np.float32))
    g.append_node(0x20, "QuantizedConcat_8",
                  inputs=[(0x11, 0), (0x10, 0), (0x10, 1), (0x12, 0), (0x12, 0), (0x13, 0),
                          (0x13, 0)],
                  outputs=[OutputDef(out, 1), OutputDef(), OutputDef()])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    return g


def test_an_off_depth_concat_becomes_the_d32_concat_and_runs():
    # prepare.c do_convert_concat_depth32: every data input (1..N) through Convert_to_d32,
    # a Convert_from_d32 after; the flat op refuses axis != 3 ("only depth")
    p = prepare(concat_graph(axis=1))
    concat = p.nodes[0x20]
    assert concat.op == "QuantizedConcat_8_d32" and concat.inputs[0] == (0x11, 0)
    assert [p.nodes[concat.inputs[k][0]].op for k in (1, 2)] == ["Convert_to_d32"] * 2
    assert p.nodes[p.nodes[0x30].inputs[0][0]].op == "Convert_from_d32"
    s = Session(concat_graph(axis=1))
    a = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    b = (255 - np.arange(24)).astype(np.uint8).reshape(1, 2, 3, 4)
    (y,) = s.execute([a, b])
    # both inputs have the merged range [0, 1] (no nudge): copied exactly, stacked on the
    # height (quantized-ops spec §11: offset 0 and gain >= 32704 copy)
    assert np.array_equal(y.array, np.concatenate([a, b], axis=1))


def test_a_depth_concat_converts_and_1x1xd_or_malformed_ones_stay_flat():
    # prepare.c: depth32_replacement_op maps every QuantizedConcat_8 to
    # QuantizedConcat_8_d32, and do_convert_concat_depth32 reads no axis: a depth concat
    # converts like an off-depth one; it leaves flat a 1x1xD output ("Don't try and convert
    # 1x1xD tensors to D32 format") and inputs that are not 3N+1 ("node has %d inputs")
    p = prepare(concat_graph(3, out=(1, 2, 3, 8)))
    assert p.nodes[0x20].op == "QuantizedConcat_8_d32"
    assert [p.nodes[p.nodes[0x20].inputs[k][0]].op for k in (1, 2)] == ["Convert_to_d32"] * 2
    flat = concat_graph(0, shape=(1, 1, 1, 4), out=(2, 1, 1, 4))
    assert prepare(flat).nodes[0x20].op == "QuantizedConcat_8"
    # the delegate's split-depthwise concat: 3N+3 inputs (its min and max appended)
    odd = concat_graph(3, out=(1, 2, 3, 8))
    node = odd.node(0x20)
    odd.replace_node(node.with_(inputs=(*node.inputs, (0x12, 0), (0x13, 0))))
    assert prepare(odd).nodes[0x20].op == "QuantizedConcat_8"


def test_a_depth_concat_runs_as_the_device_does_one_code_off_the_flat_op():
    # a in [0, 1], b in [0, 0.7], merged [0, 1]: b's gain is f32(f32(255/1) * f32(0.7/255))
    # * 32768 = 22937.6, truncated to 22937 by QuantizedConcat_8_d32 (spec §11) and rounded
    # to 22938 by QuantizedConcat_8 (§10); y = (x * gain + 16384) >> 15, so for x = 255 the
    # device gives (5848935 + 16384) >> 15 = 178 and the flat op (5849190 + 16384) >> 15 = 179
    # (x = 100: 70 both; x = 200: 140 both; a is copied: offset 0, gain >= 32704)
    shape = (1, 1, 2, 2)
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(shape, 1), OutputDef(shape, 1)])
    g.append_const_node(0x11, np.array([3], np.int32))
    g.append_const_node(0x12, np.array([0.0], np.float32))
    g.append_const_node(0x13, np.array([1.0], np.float32))
    g.append_const_node(0x15, np.array([0.7], np.float32))
    g.append_node(0x20, "QuantizedConcat_8",
                  inputs=[(0x11, 0), (0x10, 0), (0x10, 1), (0x12, 0), (0x12, 0), (0x13, 0),
                          (0x15, 0)],
                  outputs=[OutputDef((1, 1, 2, 4), 1), OutputDef(), OutputDef()])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    a = np.array([0, 1, 128, 255], np.uint8).reshape(shape)
    b = np.array([0, 100, 200, 255], np.uint8).reshape(shape)
    (y,) = Session(g).execute([a, b])
    assert y.array.ravel().tolist() == [0, 1, 0, 70, 128, 255, 140, 178]
    (flat,) = Session(g, fusions=False).execute([a, b])
    assert flat.array.ravel().tolist() == [0, 1, 0, 70, 128, 255, 140, 179]
