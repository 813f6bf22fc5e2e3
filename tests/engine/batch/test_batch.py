"""Batch runs: outcomes and their exit codes, per-node records, check results, ranges over all
runs against numpy computed here, warnings, and reproducible dumps."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hexscope.engine.backends import FakeBackend
from hexscope.engine.batch.records import InputSet, Outcome
from hexscope.engine.batch.report import junit_tree, report_document
from hexscope.engine.batch.runner import run_batch
from hexscope.engine.batch.stats import tensor_stats
from hexscope.engine.errors import BackendError, CheckFailed, NotSimulatedError
from hexscope.engine.graph import Graph
from hexscope.engine.nodes import OutputDef
from hexscope.engine.tensor import Tensor


def sets(*arrays: np.ndarray) -> list[InputSet]:
    return [InputSet(f"s{k}", [Tensor.from_array(a)]) for k, a in enumerate(arrays)]


def close_graph(ref: np.ndarray) -> Graph:
    """INPUT -> Nop -> Close_f(against a const) and OUTPUT."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(ref.shape, 4)])
    g.append_const_node(0x11, ref)
    g.append_node(0x12, "Nop", inputs=[(0x10, 0)], outputs=[OutputDef(ref.shape, 4)])
    g.append_node(0x13, "Close_f", inputs=[(0x12, 0), (0x11, 0)], label="check it")
    g.append_node(0x14, "OUTPUT", inputs=[(0x12, 0)])
    return g


def test_ranges_over_all_runs_match_numpy(chain_graph, rng):
    arrays = [rng.standard_normal((1, 2, 3, 4)).astype(np.float32) for _ in range(3)]
    result = run_batch(chain_graph, sets(*arrays))
    assert result.outcome is Outcome.PASSED and result.exit_code == 0
    assert [r.name for r in result.runs] == ["s0", "s1", "s2"]
    assert [n.node_id for n in result.runs[1].nodes] == [0x100, 0x101, 0x102, 0x103, 0x200]
    assert all(n.status == "done" for n in result.runs[1].nodes)
    assert result.runs[1].nodes[2].outputs[0]["max"] == pytest.approx(float(arrays[1].max()))
    joined = np.concatenate([a.ravel() for a in arrays]).astype(np.float64)
    entry = next(r for r in result.ranges if r["node"] == 0x102)
    assert (entry["runs"], entry["count"]) == (3, 72)
    assert entry["percentile_relative_error"] == 0.01
    assert entry["min"] == pytest.approx(joined.min()) and entry["max"] == pytest.approx(
        joined.max())
    exact = np.sort(joined)
    for p, name in ((50, "p50"), (99.9, "p99.9"), (0.1, "p0.1")):
        # the bound stated in report.schema.json: the order statistic, within 1 %
        true = exact[int(np.floor(p / 100 * (exact.size - 1)))]
        assert abs(entry["percentiles"][name] - true) <= 0.01 * abs(true) * (1 + 1e-9)


def test_check_results_pass_and_fail():
    ref = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    result = run_batch(close_graph(ref), sets(ref, ref + 50))
    first, second = result.runs
    assert first.outcome is Outcome.PASSED
    assert [(c.node_id, c.status, c.label) for c in first.checks] == [(0x13, "passed",
                                                                       "check it")]
    assert second.outcome is Outcome.CHECK_FAILED and second.failed_node == 0x13
    assert second.checks[0].status == "failed" and second.checks[0].log   # its figures
    assert [n.status for n in second.nodes][-1] == "not-run"               # OUTPUT
    assert result.outcome is Outcome.CHECK_FAILED and result.exit_code == 1


@pytest.mark.parametrize(("error", "outcome"), [
    (CheckFailed("mismatch"), Outcome.CHECK_FAILED),
    (NotSimulatedError("not simulated yet"), Outcome.BACKEND_ERROR),
    (BackendError("link down"), Outcome.BACKEND_ERROR),
    (RuntimeError("kernel bug"), Outcome.BACKEND_ERROR),
    (ValueError("x"), Outcome.BACKEND_ERROR),
])
def test_failure_classification(chain_graph, error, outcome):
    def boom(inputs):
        raise error

    backend = FakeBackend(outputs={0x102: boom})
    result = run_batch(chain_graph, sets(np.zeros((1, 1, 1, 2), np.float32)), backend)
    assert result.runs[0].outcome is outcome and result.exit_code == outcome.exit_code
    assert result.runs[0].failed_node == 0x102


def test_kernel_error_means_invalid_graph_or_inputs(chain_graph):
    backend = FakeBackend(fail={0x101: "input has the wrong depth"})
    result = run_batch(chain_graph, sets(np.zeros((1, 1, 1, 2), np.float32)), backend)
    assert result.outcome is Outcome.INVALID and result.exit_code == 2
    assert "wrong depth" in result.message


def test_invalid_graph_and_broken_backend_do_not_run():
    g = Graph()
    g.append_node(0x1, "INPUT", outputs=1)
    g.append_node(0x2, "OUTPUT", inputs=[(0x9, 0)])
    result = run_batch(g, sets(np.zeros((1, 1, 1, 1), np.float32)))
    assert (result.outcome, result.runs) == (Outcome.INVALID, [])
    assert any("0x9" in issue for issue in result.issues)
    # a device agent is contacted once the graph is known to be valid: nobody listens here
    valid = Graph()
    valid.append_node(0x1, "INPUT", outputs=1)
    valid.append_node(0x2, "OUTPUT", inputs=[(0x1, 0)])
    result = run_batch(valid, [], "dsp://127.0.0.1:9")
    assert result.outcome is Outcome.BACKEND_ERROR
    assert "dsp://127.0.0.1:9: cannot connect" in result.message


def test_input_set_errors_are_invalid(chain_graph):
    result = run_batch(chain_graph, [InputSet("bad", error="x.npy: cannot read")])
    assert result.outcome is Outcome.INVALID and result.runs[0].message == "x.npy: cannot read"


def test_declared_size_warning_reaches_the_records():
    """graph spec §4.1: a graph input larger than INPUT's declared size is only reported."""
    g = Graph()
    g.append_node(0x1, "INPUT", outputs=[OutputDef((1, 1, 1, 32), 4)])
    g.append_node(0x2, "Nop", inputs=[(0x1, 0)], outputs=[OutputDef((1, 1, 1, 64), 4)])
    g.append_node(0x3, "OUTPUT", inputs=[(0x2, 0)])
    big = np.zeros((1, 1, 1, 64), np.float32)       # 256 bytes, the INPUT declares 128
    result = run_batch(g, sets(big))
    assert result.outcome is Outcome.PASSED
    (node_id, warning), = result.runs[0].warnings
    assert node_id == 0x1 and "needs 256 bytes" in warning and "holds 128" in warning
    assert report_document(result)["summary"]["warnings"] == 1


def test_an_output_larger_than_its_declared_size_fails_the_node():
    """Every op but INPUT fails as hexagon_nn's tensor_out_prepare_normal
    (nn_graph_types.h) makes it fail: "out too small", both sizes named."""
    g = Graph()
    g.append_node(0x1, "INPUT", outputs=[OutputDef((1, 1, 1, 64), 4)])
    g.append_node(0x2, "Nop", inputs=[(0x1, 0)], outputs=[OutputDef((1, 1, 1, 4), 1)])
    g.append_node(0x3, "OUTPUT", inputs=[(0x2, 0)])
    result = run_batch(g, sets(np.zeros((1, 1, 1, 64), np.float32)))
    assert result.outcome is not Outcome.PASSED
    message = result.runs[0].message
    assert "0x2" in message and "needs 256 bytes" in message and "holds 128" in message


def test_tensor_stats_saturation_and_quant_range():
    codes = Tensor.from_array(np.array([0, 0, 3, 255], np.uint8).reshape(1, 1, 1, 4))
    lo, hi = Tensor.scalar(-1.0), Tensor.scalar(2.5)
    info = tensor_stats(codes, 0, [codes, lo, hi])
    assert (info["min"], info["max"]) == (0, 255)
    assert info["saturation"] == {"low": 0.5, "high": 0.25}
    assert info["quant_range"] == [-1.0, 2.5]
    floats = Tensor.from_array(np.array([np.nan, 1.0, np.inf, -2.0], np.float32))
    info = tensor_stats(floats, 0, [floats])
    assert (info["min"], info["max"], info["nan"], info["inf"]) == (-2.0, 1.0, 1, 1)
    assert info["saturation"] is None and info["quant_range"] is None


def test_dump_is_reproducible_and_holds_the_outputs(chain_graph, rng, tmp_path):
    arrays = [rng.standard_normal((1, 2, 2, 3)).astype(np.float32) for _ in range(2)]
    for name in ("a", "b"):
        run_batch(chain_graph, sets(*arrays), dump_dir=tmp_path / name)
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*")
                     if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*")
                     if p.is_file())
    # the manifest, then per run four .npy files and outputs.json
    assert files_a == files_b and len(files_a) == 1 + 2 * 5
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    saved = np.load(tmp_path / "a" / "run-0002" / "0x103_0.npy")
    assert saved.tobytes() == arrays[1].tobytes()
    outputs = json.loads((tmp_path / "a" / "run-0002" / "outputs.json").read_text())
    assert outputs["outputs"]["0x103"][0]["file"] == "0x103_0.npy"


def test_a_dump_that_cannot_be_written_keeps_the_runs_and_makes_the_batch_invalid(
        chain_graph, rng, tmp_path):
    """run_batch never raises for such trouble: a file where the dump folder should be (as
    a full disk would) stops the dumping, the runs are still reported, the outcome is
    invalid (exit 2) and the message names the dump folder."""
    (tmp_path / "taken").write_text("")
    arrays = [rng.standard_normal((1, 2, 2, 3)).astype(np.float32) for _ in range(2)]
    result = run_batch(chain_graph, sets(*arrays), dump_dir=tmp_path / "taken")
    assert len(result.runs) == 2 and all(r.outcome is Outcome.PASSED for r in result.runs)
    assert result.outcome is Outcome.INVALID and result.exit_code == 2
    assert result.message.startswith(f"cannot write the dump to {tmp_path / 'taken'}")


def test_junit_tree_counts():
    ref = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    root = junit_tree(run_batch(close_graph(ref), sets(ref, ref + 50))).getroot()
    assert root.get("tests") == "4" and root.get("failures") == "1"
    failure = root.find(".//testcase[@name=\"0x13 Close_f 'check it'\"]/failure")
    assert failure is not None


def stateful_add_graph() -> Graph:
    """INPUT -> QuantizedAdd_8p8to8(x, x): its output range adapts across executions (§1.9)."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x11, np.array([0.0], np.float32))
    g.append_const_node(0x12, np.array([1.0], np.float32))
    g.append_node(0x13, "QuantizedAdd_8p8to8",
                  inputs=[(0x10, 0), (0x10, 0), (0x11, 0), (0x12, 0), (0x11, 0), (0x12, 0)],
                  outputs=3)
    g.append_node(0x14, "OUTPUT", inputs=[(0x13, 0), (0x13, 1), (0x13, 2)])
    return g


def test_each_input_set_starts_from_the_prepared_state():
    from hexscope.engine import Session

    small = np.full((1, 1, 4, 8), 3, np.uint8)
    big = np.arange(32, dtype=np.uint8).reshape(1, 1, 4, 8) * 8
    # the graph really is stateful: on a plain session, 'small' after 'big' keeps big's range
    carried = Session(stateful_add_graph())
    carried.execute([big])
    after_big = [t.array.copy() for t in carried.execute([small])]
    fresh = [t.array.copy() for t in Session(stateful_add_graph()).execute([small])]
    assert any(not np.array_equal(a, b) for a, b in zip(after_big, fresh, strict=True))
    # a batch gives each set the fresh state, whatever came before it
    both = run_batch(stateful_add_graph(), sets(big, small))
    alone = run_batch(stateful_add_graph(), sets(small))
    assert [(n.node_id, n.outputs) for n in both.runs[1].nodes] == [
        (n.node_id, n.outputs) for n in alone.runs[0].nodes]
