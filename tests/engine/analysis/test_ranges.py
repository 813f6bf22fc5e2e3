"""Range statistics and LSB errors (issue 5; quantized-ops spec §1.1 for the code meaning)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import DType, Graph, InputError, QuantRange, Session, Tensor
from hexscope.engine.analysis.ranges import (
    load_references,
    lsb_error,
    node_ranges,
    quantized_outputs,
    range_stats,
    references_from_session,
)
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import REGISTRY, Category, Port, op

QUANT = "TestRangesQuantize"


@pytest.fixture(scope="module", autouse=True)
def toy_quantize():
    """A user op that quantizes float input to [-1, 3] (outputs codes, min, max)."""

    @op(QUANT, Category.USER, user=True, inputs=(Port("x", DType.FLOAT32),),
        outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
                 Port("y_max", DType.FLOAT32)))
    def quantize(ctx: KernelContext, x: Tensor):
        """Test op: quantize to [-1, 3]."""
        codes = QuantRange(-1.0, 3.0).quantize(x.array)
        return codes, np.float32([[[[-1.0]]]]), np.float32([[[[3.0]]]])

    yield
    REGISTRY.unregister(QUANT)


def _naive_stats(codes):
    flat = [int(c) for c in np.asarray(codes).reshape(-1)]
    return len(set(flat)), flat.count(0) / len(flat), flat.count(255) / len(flat)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=300))
def test_range_stats_counts_match_a_plain_count(values):
    codes = np.array(values, np.uint8)
    s = range_stats(codes, QuantRange(-2.0, 6.0))
    distinct, s0, s255 = _naive_stats(codes)
    assert (s.distinct, s.elements) == (distinct, len(values))
    assert s.share_0 == pytest.approx(s0) and s.share_255 == pytest.approx(s255)


def test_range_stats_range_fields_follow_the_quant_range():
    # quantized-ops spec §1.1: step = (max - min)/255; [-1, 3]: zero point 63.75 is not exact.
    s = range_stats(np.zeros(4, np.uint8), QuantRange(-1.0, 3.0))
    assert s.stepsize == pytest.approx(4 / 255)
    assert s.zero_code == 64 and not s.zero_exact
    assert range_stats(np.zeros(1, np.uint8), QuantRange(-1.0, 254.0)).zero_exact  # z = 1


def test_saturation_ignores_code_zero_when_it_means_zero():
    codes = np.array([0, 0, 255, 7], np.uint8)
    relu = range_stats(codes, QuantRange(0.0, 6.0))          # zero code 0: exact zeros
    signed = range_stats(codes, QuantRange(-3.0, 3.0))
    assert relu.saturation == pytest.approx(0.25)
    assert signed.saturation == pytest.approx(0.75)


def test_lsb_error_in_steps_of_the_range():
    q = QuantRange(0.0, 255.0)                               # step exactly 1.0
    codes = np.array([10, 20, 30], np.uint8)
    ref = np.array([10.0, 20.5, 28.0])
    mx, rms = lsb_error(codes, q, ref)
    assert mx == pytest.approx(2.0)
    assert rms == pytest.approx(np.sqrt((0 + 0.25 + 4) / 3))
    with pytest.raises(InputError, match="2 elements"):
        lsb_error(codes, q, ref[:2])


def test_quantized_outputs_finds_code_min_max_triples():
    c = Tensor.from_array(np.zeros((1, 2, 2, 1), np.uint8))
    f = Tensor.scalar(1.0)
    i = Tensor.from_array(np.zeros((1, 1, 1, 2), np.int32))
    assert quantized_outputs([c, f, f]) == [0]
    assert quantized_outputs([i, f, f, c, f, f]) == [3]
    assert quantized_outputs([c, f]) == []


def _graph() -> Graph:
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 2, 3, 1), 4)])
    g.append_node(0x101, QUANT, inputs=[(0x100, 0)], outputs=3)
    g.append_node(0x102, "OUTPUT", inputs=[(0x101, 0)])
    return g


def test_node_ranges_of_a_session_with_float_reference():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 3.0, 5.0], np.float32).reshape(1, 2, 3, 1)
    s = Session(_graph())
    s.execute([x])
    [stats] = node_ranges(s, references={0x101: x})
    assert (stats.node_id, stats.op, stats.output) == (0x101, QUANT, 0)
    assert (stats.min, stats.max) == (-1.0, 3.0)
    assert stats.share_0 == pytest.approx(2 / 6) and stats.share_255 == pytest.approx(2 / 6)
    # The clipped -2 and 5 are 1 and 2 units off; one unit is 255/4 steps.
    assert stats.err_max_lsb == pytest.approx(2 * 255 / 4, rel=1e-4)
    refs = references_from_session(s)
    np.testing.assert_allclose(refs[0x101].reshape(-1),
                               [-1, -1, 0, 1, 3, 3], atol=4 / 255 / 2 + 1e-6)


def test_load_references_reads_hex_ids(tmp_path):
    path = tmp_path / "ref.npz"
    np.savez(path, **{"0x101": np.ones(3), "258": np.zeros(2)})
    refs = load_references(path)
    assert set(refs) == {0x101, 258} and refs[0x101].dtype == np.float32
    np.savez(tmp_path / "bad.npz", conv=np.ones(1))
    with pytest.raises(InputError, match="not a node id"):
        load_references(tmp_path / "bad.npz")


def _report_doc():
    """A small report written by hand to the schema (resources/schemas/report.schema.json)."""
    def out(low, high):
        return {"index": 0, "shape": [1, 2, 2, 1], "dtype": "quint8", "layout": "flat",
                "padding": None, "min": -1.0, "max": 1.0, "nan": 0, "inf": 0,
                "saturation": {"low": low, "high": high}, "quant_range": [-1.0, 1.0]}

    def run(name, low, high):
        node = {"node": "0x101", "op": "Quantize", "label": "", "status": "done",
                "seconds": 0.001, "outputs": [out(low, high)], "warnings": [], "message": ""}
        return {"name": name, "sources": [], "outcome": "passed", "exit_code": 0,
                "seconds": 0.01, "message": "", "failed_node": None, "nodes": [node],
                "checks": []}

    return {
        "format": "hexscope-report", "version": 2,
        "tool": {"name": "hexscope", "version": "0.1.0"},
        "graph": {"name": "g", "path": "g.hexgraph", "nodes": 3}, "backend": "sim",
        "started": "2026-01-01T00:00:00", "seconds": 0.1, "outcome": "passed",
        "exit_code": 0, "message": "",
        "summary": {"runs": 2, "passed": 2, "failed": 0, "checks": 0, "checks_failed": 0,
                    "warnings": 0},
        "issues": [], "rewrites": [], "runs": [run("a", 0.1, 0.3), run("b", 0.3, 0.1)],
        "ranges": [{"node": "0x101", "op": "Quantize", "label": "", "index": 0,
                    "dtype": "quint8", "runs": 2, "count": 8, "min": -1.5, "max": 1.5,
                    "percentiles": None, "percentile_relative_error": 0.01,
                    "quant_range": [-1.0, 2.0]}],
    }


def test_load_batch_ranges_reads_a_schema_valid_report(tmp_path):
    import json
    from pathlib import Path

    import jsonschema

    from hexscope.engine.analysis.ranges import load_batch_ranges

    doc = _report_doc()
    schema_path = Path(__file__).resolve().parents[3] / "resources/schemas/report.schema.json"
    if schema_path.exists():
        jsonschema.validate(doc, json.loads(schema_path.read_text()))
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc))
    [s] = load_batch_ranges(path)
    assert (s.node_id, s.op, s.output, s.source) == (0x101, "Quantize", 0, "batch")
    assert (s.min, s.max) == (-1.0, 2.0)                  # quant_range, not the data range
    assert s.stepsize == pytest.approx(3 / 255) and s.elements == 8
    assert s.share_0 == pytest.approx(0.2) and s.share_255 == pytest.approx(0.2)  # run means
    with pytest.raises(InputError, match="not a Hexscope batch report"):
        load_batch_ranges({"format": "other"})
