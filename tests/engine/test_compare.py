"""Comparing runs and the float reference node by node (issue 12)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.analysis.compare import compare_reference, compare_traces, run_trace
from hexscope.engine.analysis.metrics import error_metrics
from hexscope.engine.nodes import OutputDef
from hexscope.engine.plugins import load_plugin, unload_plugin
from support.compare_graphs import PLUGIN, RELU_ID, SHAPE, chain, chain_input


@pytest.fixture
def flip_index() -> int:
    """The plugin's FLIP_INDEX, read from its source (loading it would register the op)."""
    return int(PLUGIN.read_text().split("FLIP_INDEX = ")[1].split()[0])


def test_injected_fault_is_the_first_divergence_at_its_node_and_element(flip_index):
    specs = load_plugin(PLUGIN)
    try:
        x = chain_input()
        good = run_trace(Session(chain()), [x], "good")
        bad = run_trace(Session(chain("FlipRelu_8")), [x], "faulty")
    finally:
        unload_plugin(specs)
    result = compare_traces(good, bad)
    first = result.first_divergence
    assert first is not None and first.node_id == RELU_ID
    assert first.first_index == tuple(int(i) for i in np.unravel_index(flip_index, SHAPE))
    assert first.differing == 1 and first.bit_identical is False
    assert first.first_a is not None and first.first_b == float(int(first.first_a) ^ 0xFF)
    assert first.max_code_diff == abs(first.first_b - first.first_a)
    # nodes before it are identical
    before = [d for d in result.outputs if d.node_id in (0x100, 0x101)]
    assert before and all(d.bit_identical for d in before)


def test_a_run_compared_with_itself_shows_no_difference():
    x = chain_input()
    session = Session(chain())
    a = run_trace(session, [x], "a")
    b = run_trace(Session(chain()), [x], "b")
    result = compare_traces(a, b)
    assert result.first_divergence is None and not result.exceeding
    assert all(d.bit_identical and d.differing == 0 for d in result.outputs)
    assert all(d.metrics.max_abs == 0 and d.metrics.sqnr_db == math.inf
               for d in result.outputs)
    assert not result.unmatched_a and not result.unmatched_b


def test_a_pinned_run_keeps_its_tensors_and_shows_what_changed():
    g = chain()
    session = Session(g)
    pinned = run_trace(session, [chain_input()], "pinned")
    second = run_trace(session, [chain_input(seed=2)], "current")
    result = compare_traces(pinned, second)
    assert result.first_divergence is not None
    assert result.first_divergence.node_id == 0x100     # the input itself changed first


def test_unmatched_nodes_are_listed_and_labels_match_renumbered_nodes():
    a = chain()
    b = chain()
    b.append_node(0x200, "Dequantize", inputs=[(0x101, 0), (0x101, 1), (0x101, 2)],
                  outputs=[OutputDef(SHAPE, 4)], label="extra")
    b.replace_node(b.node(0x109).with_(inputs=((0x108, 0), (0x200, 0))))   # keep it alive
    x = chain_input()
    ta = run_trace(Session(a), [x], "a")
    tb = run_trace(Session(b), [x], "b")
    result = compare_traces(ta, tb)
    assert result.unmatched_b == ["0x200 'extra'"] and not result.unmatched_a
    # renumber one node in B: it is matched by its label
    tb.nodes[0x300] = tb.nodes.pop(0x108).with_(node_id=0x300)
    tb.outputs[0x300] = tb.outputs.pop(0x108)
    tb.plan = tuple(0x300 if i == 0x108 else i for i in tb.plan)
    result = compare_traces(ta, tb)
    matched = [d for d in result.outputs if d.node_id == 0x108]
    assert matched and "0x300" in matched[0].note and not result.exceeding


def test_d32_padding_bytes_are_compared_separately():
    g = Graph.load(_example("d32_pipeline.hexgraph"))
    from hexscope.engine.inputs import make_inputs

    inputs = make_inputs(g, _example(""))
    a = run_trace(Session(g, padding_fill=0xA5), inputs, "a")
    b = run_trace(Session(g, padding_fill=0x00), inputs, "b")
    result = compare_traces(a, b)
    assert result.first_divergence is None          # logical elements all agree
    padded = [d for d in result.outputs if d.padding_differing]
    assert padded and all(d.bit_identical is False and d.differing == 0 for d in padded)


def _example(name: str) -> str:
    from pathlib import Path

    import hexscope.resources as res
    return str(Path(res.__file__).parent / "examples" / name)


def _requantize_graph(data: np.ndarray, lo: float, hi: float) -> Graph:
    g = Graph()
    g.append_const_node(0x10, data)
    g.append_const_node(0x11, np.array([lo], np.float32))
    g.append_const_node(0x12, np.array([hi], np.float32))
    word = OutputDef((1, 1, 1, 1), 4)
    g.append_node(0x20, "QuantizeDownAndShrinkRange_32to8", inputs=[(0x10, 0), (0x11, 0),
                  (0x12, 0)], outputs=[OutputDef(data.shape, 1), word, word])
    g.append_node(0x21, "OUTPUT", inputs=[(0x20, 0)])
    return g


def _requantize_error(seed: int, shape: tuple[int, ...], span: int) -> float:
    from hexscope.engine.dtypes import DType
    from hexscope.engine.tensor import Tensor

    rng = np.random.default_rng(seed)
    data = rng.integers(-span, span, shape, dtype=np.int64).astype(np.int32)
    g = _requantize_graph(data, -float(rng.uniform(1, 50)), float(rng.uniform(1, 50)))
    g.replace_node(g.node(0x10).with_(const=Tensor.from_array(data, DType.QINT32)))
    session = Session(g)
    session.execute([])
    result = compare_reference(session, "isolated", tolerance_lsb=0.5)
    (diff,) = [d for d in result.outputs if d.node_id == 0x20]
    return diff.metrics.max_lsb


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(1, 2, 4, 8), (1, 4, 4, 16)])   # paths B and A (§7)
def test_isolated_error_of_a_requantize_is_at_most_half_an_lsb(seed, shape):
    # sums of conv-like size (|s| < 2**20): the 31-bit gain is fine enough that each code
    # is the nearest one to the true value
    error = _requantize_error(seed, shape, 2 ** 20)
    assert 0.3 < error <= 0.5 + 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_a_coarse_requantize_gain_shows_as_error_beyond_half_an_lsb(seed):
    # Sums spanning +-2**28 of the qint32 range make the gain ~4.8e-7, an integer gi of
    # about 1022 in 31 bits (§7): up to 0.5/1022 relative error, i.e. 128 * 0.5 / 1022 =
    # 0.063 LSB at the ends of the range, on top of the rounding. The comparison shows it.
    error = _requantize_error(seed, (1, 2, 4, 8), 2 ** 28)
    assert error <= 0.5 + 128 * 0.5 / 1000


def test_isolated_error_of_a_convolution_matches_the_hand_worked_value():
    # x range [-0.1, 1.0]: step lx = 1.1/255, true zero at 0.1/lx = 23.18..., but the
    # kernel subtracts the integer zero code 23. Filter code 2 in [0, 255] is 2.0 (zf = 0).
    # One 1x1 tap of x code 100: quantized (100 - 23) * 2 * lx, float (-0.1 + 100 lx) * 2.
    # The error is 2 (0.1/lx - 23) lx, i.e. 2 * (0.1 * 255 / 1.1 - 23) = 0.3636.. in LSB of
    # the output (whose step is lx * lf = lx).
    g = Graph()
    g.append_const_node(0x10, np.full((1, 1, 1, 1), 100, np.uint8))
    g.append_const_node(0x11, np.full((1, 1, 1, 1), 2, np.uint8))
    for i, v in enumerate((-0.1, 1.0, 0.0, 255.0)):
        g.append_const_node(0x12 + i, np.array([v], np.float32))
    g.append_const_node(0x16, shape=(1, 1, 1, 1))
    from hexscope.engine.dtypes import DType
    from hexscope.engine.tensor import Tensor
    g.replace_node(g.node(0x10).with_(const=Tensor.from_array(
        np.full((1, 1, 1, 1), 100, np.uint8), DType.QUINT8)))
    g.replace_node(g.node(0x11).with_(const=Tensor.from_array(
        np.full((1, 1, 1, 1), 2, np.uint8), DType.QUINT8)))
    word = OutputDef((1, 1, 1, 1), 4)
    g.append_node(0x20, "QuantizedConv2d_8x8to32",
                  inputs=[(0x10, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x14, 0), (0x15, 0),
                          (0x16, 0)], outputs=[word, word, word], padding="VALID")
    g.append_node(0x21, "OUTPUT", inputs=[(0x20, 0)])
    session = Session(g)
    session.execute([])
    (diff,) = compare_reference(session, "isolated").outputs
    expected = 2 * (0.1 * 255 / 1.1 - 23)
    # the reference's float32 GEMM is good to ~1e-5 LSB here (a float32 ulp of the sum)
    assert diff.metrics.max_lsb == pytest.approx(expected, abs=1e-4)
    lx = 1.1 / 255
    assert diff.metrics.worst_a == pytest.approx((-0.1 + 100 * lx) * 2, rel=1e-6)


def test_accumulated_error_grows_along_the_chain_and_isolated_does_not():
    session = Session(chain())
    session.execute([chain_input()])
    iso = {d.node_id: d for d in compare_reference(session, "isolated").outputs}
    acc = {d.node_id: d for d in compare_reference(session, "accumulated").outputs}
    # relu and max pool are exact on codes (up to the f32 zero point): they add nothing,
    # but carry the quantize error
    assert iso[RELU_ID].metrics.max_lsb < 1e-4 and iso[0x107].metrics.max_lsb < 1e-4
    assert acc[RELU_ID].metrics.max_abs > 0.0
    # the first quantized node reads the float input itself: both analyses agree there
    assert acc[0x101].metrics.max_abs == pytest.approx(iso[0x101].metrics.max_abs)


@pytest.mark.parametrize("a, b, lsb, check", [
    ([], [], 0.1, lambda m: m.max_abs == 0 and m.cosine == 1 and m.sqnr_db == math.inf),
    ([0.0, 0.0], [0.0, 0.0], 0.1, lambda m: m.cosine == 1 and m.sqnr_db == math.inf),
    ([3.0, 3.0], [3.0, 3.0], 0.0, lambda m: m.max_lsb is None and m.max_abs == 0),
    ([0.0, 0.0], [1.0, 0.0], 0.5, lambda m: m.cosine == 0 and m.sqnr_db == -math.inf
     and m.max_lsb == 2.0),
    ([np.nan, 1.0], [np.nan, 1.0], 1.0, lambda m: m.beyond == 0 and m.max_abs == 0),
    ([np.inf, 1.0], [-np.inf, 1.0], 1.0, lambda m: m.nonfinite == 1 and m.max_abs == math.inf
     and m.worst_index == (0,) and m.sqnr_db == -math.inf),
    ([1.0, 2.0], [1.0, np.nan], None, lambda m: m.max_lsb is None and m.beyond == 1),
])
def test_degenerate_metrics_are_defined_without_warnings(a, b, lsb, check):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = error_metrics(np.array(a, float), np.array(b, float), lsb)
    assert check(m), m


def test_metrics_worst_element_and_share_beyond():
    m = error_metrics(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 2.2], [3.0, 5.0]]),
                      lsb=0.5, tolerance_lsb=0.5)
    assert m.worst_index == (1, 1) and (m.worst_a, m.worst_b) == (4.0, 5.0)
    assert m.max_lsb == pytest.approx(2.0) and m.beyond == 1 and m.beyond_share == 0.25
    assert m.rms_abs == pytest.approx(math.sqrt((0.04 + 1.0) / 4))
