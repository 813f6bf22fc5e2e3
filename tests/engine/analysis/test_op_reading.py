"""The isolated analysis reads a convolution's inputs as the op does (issue 32 item 3).

QuantizedConv2d_8x8to32 subtracts the *rounded* zero code of its filter (quantize_int(0) of
[-1, 1]: 127.5 -> 128), where the spec reads a code q as min + q x step: relative to the spec
the op is off by half a filter step per tap times the data, an error it has by its ranges.
The analysis judges the op by its excess over its own ideal result, and shows both figures.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph, Session
from hexscope.engine.analysis.compare import compare_reference
from hexscope.engine.analysis.metrics import excess_error
from hexscope.engine.analysis.op_reading import op_inputs
from hexscope.engine.dtypes import DType
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.conv.common import CONV_IN
from hexscope.engine.ops.conv.conv2d import (
    CONV_ZERO_CODES,
    RANGE_OUT,
    conv2d_reference,
    quantized_conv2d_8x8to32,
)
from hexscope.engine.ops.reference import real
from hexscope.engine.ops.registry import REGISTRY, Category, op
from hexscope.engine.tensor import Tensor

X = np.array([10, 20, 30, 40], np.uint8)         # data range [0, 255]: code q is q itself
W = np.array([0, 64, 128, 200], np.uint8)        # filter range [-1, 1]: zero point 127.5
CONV = 0x20


def _u8(codes: np.ndarray) -> Tensor:
    return Tensor.from_array(codes, DType.QUINT8)


def _f32(value: float) -> Tensor:
    return Tensor.from_array(np.array([value], np.float32), DType.FLOAT32)


def _conv_graph(op_name: str = "QuantizedConv2d_8x8to32") -> Graph:
    """One 1x1 convolution of X (1x1x1x4) with W (1x1x4x1), VALID."""
    g = Graph()
    g.append_const_node(0x10, X.reshape(1, 1, 1, 4))
    g.append_const_node(0x11, W.reshape(1, 1, 4, 1))
    g.replace_node(g.node(0x10).with_(const=_u8(X.reshape(1, 1, 1, 4))))
    g.replace_node(g.node(0x11).with_(const=_u8(W.reshape(1, 1, 4, 1))))
    for i, v in enumerate((0.0, 255.0, -1.0, 1.0)):
        g.append_const_node(0x12 + i, np.array([v], np.float32))
    g.append_const_node(0x16, shape=(1, 1, 1, 1))
    word = OutputDef((1, 1, 1, 1), 4)
    g.append_node(CONV, op_name, inputs=[(0x10, 0), (0x11, 0), (0x12, 0), (0x13, 0),
                                         (0x14, 0), (0x15, 0), (0x16, 0)],
                  outputs=[word, word, word], padding="VALID")
    g.append_node(0x21, "OUTPUT", inputs=[(CONV, 0)])
    return g


def _isolated(graph: Graph, analysis: str = "isolated"):
    session = Session(graph)
    session.execute([])
    (diff,) = [d for d in compare_reference(session, analysis).outputs if d.node_id == CONV]
    return session, diff


def test_a_filter_with_an_inexact_zero_shows_its_raw_error_and_passes_by_its_excess():
    # by hand: the op sums x (w - 128) = 10(-128) + 20(-64) + 30(0) + 40(72) = 320 steps of
    # lx lf; the spec reads w - 127.5, so the reference is 320 + 0.5 (10+20+30+40) = 370.
    # The output's step is lx lf (qint32 range +-2**31 lx lf): 50 LSB of raw error, all of
    # it the op's reading of [-1, 1] (half a filter step per tap times the data)
    session, diff = _isolated(_conv_graph())
    (t,) = session.executor.trace[CONV].outputs[0].array.reshape(-1)
    assert t == 320
    m = diff.metrics
    assert m.max_lsb == pytest.approx(50.0, abs=1e-3)
    assert m.excess_lsb == pytest.approx(0.0, abs=1e-3)
    assert not diff.exceeds and m.beyond == 0
    assert "zero code 128 of filter (exact 127.50)" in diff.note
    assert "up to 50 LSB" in diff.note


def test_the_accumulated_analysis_still_counts_the_reading_as_the_graph_s_loss():
    # "what has the graph lost by here?": the device does compute with 128
    _, diff = _isolated(_conv_graph(), "accumulated")
    assert diff.exceeds and diff.metrics.excess_lsb == pytest.approx(50.0, abs=1e-3)


@pytest.fixture
def corrupt_conv():
    """A user op that runs Conv2d on its filter with one code changed (``corrupt_conv.delta``
    at tap 3): a kernel that computes with a filter other than its input, declared with
    Conv2d's reference and zero codes."""
    state = {"delta": 0}

    def kernel(ctx, x, filt, *rest):
        codes = np.array(filt.array, np.int32)
        codes.reshape(-1)[3] += state["delta"]
        return quantized_conv2d_8x8to32(ctx, x, _u8(codes.astype(np.uint8)), *rest)

    op("CorruptedFilterConv", Category.USER, user=True, reference=conv2d_reference,
       zero_codes=CONV_ZERO_CODES, inputs=CONV_IN, outputs=RANGE_OUT,
       uses_padding=True)(kernel)
    try:
        yield state
    finally:
        REGISTRY.unregister("CorruptedFilterConv")


@pytest.mark.parametrize("delta, excess", [
    (-72, 2880.0),               # tap 3 as 128 (0.0): t = -2560, 2880 from 320, 2930 from 370
    (1, 10.0),                   # one code up: 360, towards the reference 370, 40 from 320
])
def test_a_corrupted_filter_still_fails(corrupt_conv, delta, excess):
    # Judged by |t - r| beyond |p - r| (p = 320 the op's ideal, r = 370), t = 360 would pass
    # (10 - 50 < 0); its excess is the nearer ideal's miss: min(|360 - 370|, |360 - 320|)
    corrupt_conv["delta"] = delta
    _, diff = _isolated(_conv_graph("CorruptedFilterConv"))
    assert diff.exceeds
    assert diff.metrics.excess_lsb == pytest.approx(excess, abs=1e-3)


def test_the_op_s_reading_moves_only_a_rounded_inexact_zero():
    spec = REGISTRY.get("QuantizedConv2d_8x8to32")
    inputs = [_u8(X.reshape(1, 1, 1, 4)), _u8(W.reshape(1, 1, 4, 1)), _f32(0.0), _f32(255.0),
              _f32(-1.0), _f32(1.0), Tensor.from_array(np.zeros((1, 1, 1, 1), np.int32))]
    reading = op_inputs(spec, inputs)
    assert reading is not None and reading.note == "zero code 128 of filter (exact 127.50)"
    assert reading.inputs[2] is inputs[2] and reading.inputs[3] is inputs[3]   # exact zero
    w = real(reading.inputs[1], reading.inputs[4], reading.inputs[5], np.float64)
    assert np.allclose(w.reshape(-1), (W.astype(np.float64) - 128) * 2 / 255, atol=1e-6)
    # a range whose zero is a code ([-1, 1] nudged: TFLite's) reads as the spec does
    exact = [*inputs[:4], _f32(-1.0), _f32(1.0 * 127 / 128), inputs[6]]
    assert op_inputs(spec, exact) is None
    # a Supernode's saturated zero code on a range without 0.0 is a wrong range, still counted
    snode = REGISTRY.get("Supernode_8x8p8to8")
    improper = [*inputs[:4], _f32(0.1), _f32(1.0), *inputs[6:]]
    assert op_inputs(snode, improper + [_u8(np.zeros(1, np.uint8)), _f32(0.0), _f32(1.0),
                                        _f32(-np.inf), _f32(np.inf)]) is None


def test_the_excess_is_the_nearer_ideal_s_miss():
    # r = 370.0 (spec), p = 320.0 (op): t = 320 and t = 370 are ideal, 345 misses both by 25
    r, p = np.array([370.0, 370.0, 370.0]), np.array([320.0, 320.0, 320.0])
    worst, beyond = excess_error(r, np.array([320, 370, 345]), 1.0, 0.0, 1.0, p)
    assert worst == pytest.approx(25.0) and beyond == 1
    # a NaN on the op's side leaves the spec's figure
    worst, _ = excess_error(r[:1], np.array([372]), 1.0, 0.0, 1.0, np.array([np.nan]))
    assert worst == pytest.approx(2.0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(-300, 300, allow_nan=False),
                          st.floats(-3, 3, allow_nan=False), st.integers(-300, 300)),
                min_size=1, max_size=30))
def test_reading_the_op_s_way_never_fails_what_the_spec_s_reading_passes(rows):
    r = np.array([a for a, _, _ in rows])
    p = r + np.array([g for _, g, _ in rows])
    t = np.array([c for _, _, c in rows], np.float64)
    plain, _ = excess_error(r, t, 1.0, 0.0, 0.0)
    judged, _ = excess_error(r, t, 1.0, 0.0, 0.0, p)
    assert judged <= plain + 1e-9


def test_a_d32_supernode_is_read_the_op_s_way_too():
    # prepare fuses the chain into Supernode_8x8p8to8_d32 (data, filter and bias on [-1, 1]:
    # zero code 128 for 127.5); its output's memory holds d32 padding, its reference the
    # logical elements. (Its 16-bit output reciprocal, 0xff0000 // steps, is an error of its
    # own, of a few codes here: not the reading's, and still counted.)
    from support.supernode_graphs import chain_graph

    filt = (3, 3, 8, 16)
    rng = np.random.default_rng(3)
    g = chain_graph(filt=filt, tail="none")
    g.replace_node(g.node(0x15).with_(const=_u8(rng.integers(0, 256, filt, dtype=np.uint8))))
    conv = g.node(0x20)
    g.replace_node(conv.with_(inputs=(*conv.inputs[:4], (0x11, 0), *conv.inputs[5:])))
    session = Session(g)
    session.execute([rng.uniform(-1, 1, (1, 4, 4, 8)).astype(np.float32)])
    (diff,) = [d for d in compare_reference(session, "isolated").outputs
               if d.op == "Supernode_8x8p8to8_d32"]
    assert "zero code 128 of x (exact 127.50), zero code 128 of filter" in diff.note
    gap = float(diff.note.split("ideal result is up to ")[1].split()[0])
    assert 1.0 < gap < diff.metrics.max_lsb + 4.0      # the reading's share of the error
    assert diff.metrics.excess_lsb <= diff.metrics.max_lsb


def test_every_declared_zero_code_names_a_quint8_input_and_its_range():
    declared = [s for s in REGISTRY.specs() if s.zero_codes]
    assert {"QuantizedConv2d_8x8to32", "Supernode_8x8p8to8_d32", "QuantizedMatMul_8x8to32",
            "DepthwiseSupernode_8x8p32to8", "SuperFC_8x8p32to8"} <= {s.name for s in declared}
    for spec in declared:
        n = spec.inputs.arity[1] or len(spec.inputs.head)
        for zc in spec.zero_codes:
            ports = [spec.inputs.port(i, n) for i in (zc.codes, zc.lo, zc.hi)]
            assert ports[0].dtype is DType.QUINT8, (spec.name, zc)
            assert ports[1].dtype is ports[2].dtype is DType.FLOAT32, (spec.name, zc)
            assert zc.rule(-1.0, 1.0) in (127, 128)      # 127.5 rounded, by the op's rule


def test_a_matmul_on_minus_one_one_passes_by_its_excess():
    # A (1x4) on [-1, 1] and B (4x1) on [-1, 1]: both zero points 127.5, both rounded to 128
    a = np.array([0, 100, 200, 255], np.uint8)
    b = np.array([10, 128, 250, 60], np.uint8)
    g = Graph()
    g.append_const_node(0x10, a.reshape(1, 1, 1, 4))
    g.append_const_node(0x11, b.reshape(1, 1, 4, 1))
    g.replace_node(g.node(0x10).with_(const=_u8(a.reshape(1, 1, 1, 4))))
    g.replace_node(g.node(0x11).with_(const=_u8(b.reshape(1, 1, 4, 1))))
    g.append_const_node(0x12, np.array([-1.0], np.float32))
    g.append_const_node(0x13, np.array([1.0], np.float32))
    word = OutputDef((1, 1, 1, 1), 4)
    g.append_node(CONV, "QuantizedMatMul_8x8to32_ref",
                  inputs=[(0x10, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x12, 0), (0x13, 0)],
                  outputs=[word, word, word])
    g.append_node(0x21, "OUTPUT", inputs=[(CONV, 0)])
    _, diff = _isolated(g)
    # by hand, in steps of la lb: sum (a - 127.5)(b - 127.5) less sum (a - 128)(b - 128) is
    # 0.5 sum(a - 128) + 0.5 sum(b - 128) + 4 x 0.25 = 21.5 - 32 + 1 = -9.5 (the float32
    # reference is good to a few 1e-3 of a step here)
    da, db = a.astype(float) - 128, b.astype(float) - 128
    assert diff.metrics.max_lsb == pytest.approx(abs(0.5 * da.sum() + 0.5 * db.sum() + 1.0),
                                                 abs=0.01)
    assert diff.metrics.excess_lsb == pytest.approx(0.0, abs=0.01) and not diff.exceeds
