"""--jobs: worker processes give the same report, ranges and dump as one process, and a
worker that dies costs only the run it was running."""

from __future__ import annotations

import filecmp
import json

import numpy as np

from hexscope.engine.batch.records import InputSet, Outcome
from hexscope.engine.batch.report import report_document
from hexscope.engine.batch.runner import run_batch
from hexscope.engine.graph import Graph
from hexscope.engine.nodes import OutputDef
from hexscope.engine.tensor import Tensor
from support.batch_sets import _graph, _sets, _without_timings


def test_two_jobs_give_the_report_ranges_and_dump_of_one(tmp_path):
    rng = np.random.default_rng(5)
    sets = _sets(6, rng)
    one = run_batch(_graph(), sets, dump_dir=tmp_path / "one", jobs=1)
    two = run_batch(_graph(), sets, dump_dir=tmp_path / "two", jobs=2)
    assert one.outcome is Outcome.PASSED and two.outcome is Outcome.PASSED
    doc1 = _without_timings(report_document(one))
    doc2 = _without_timings(report_document(two))
    assert json.dumps(doc1, sort_keys=True) == json.dumps(doc2, sort_keys=True)
    assert [r.name for r in two.runs] == [s.name for s in sets]
    compare = filecmp.dircmp(tmp_path / "one", tmp_path / "two")
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*")
                   if p.is_file())
    assert len(files) > 6
    for rel in files:
        assert (tmp_path / "two" / rel).read_bytes() == (tmp_path / "one" / rel).read_bytes(), \
            rel
    assert not compare.left_only and not compare.right_only


def test_a_worker_that_dies_fails_its_run_and_the_others_go_on(dying_op):
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 1, 1, 4), 4)])
    g.append_node(0x11, "DieOnNegative_f", inputs=[(0x10, 0)], outputs=[OutputDef((1, 1, 1, 4),
                                                                                4)])
    g.append_node(0x12, "OUTPUT", inputs=[(0x11, 0)])
    values = [1, 2, -1, 3, 4]
    sets = [InputSet(f"s{k}", [Tensor.from_array(np.full((1, 1, 1, 4), v, np.float32))])
            for k, v in enumerate(values)]
    result = run_batch(g, sets, jobs=2)
    outcomes = [r.outcome for r in result.runs]
    assert outcomes == [Outcome.PASSED] * 2 + [Outcome.BACKEND_ERROR] + [Outcome.PASSED] * 2
    assert "worker process running it died" in result.runs[2].message
    assert result.exit_code == 3


def test_the_command_line_gives_the_same_report_for_any_jobs(tmp_path):
    import subprocess
    import sys

    graph = tmp_path / "g.hexgraph"
    _graph().save(graph)
    images = tmp_path / "images"
    images.mkdir()
    for s in _sets(5, np.random.default_rng(9)):
        np.save(images / f"{s.name}.npy", s.tensors[0].array)
    reports = []
    for jobs in ("1", "2"):
        out = tmp_path / f"report{jobs}.json"
        proc = subprocess.run([sys.executable, "-m", "hexscope.app", "run", str(graph),
                               "--inputs-dir", str(images), "--jobs", jobs, "--report",
                               str(out), "-q"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        reports.append(_without_timings(json.loads(out.read_text())))
    assert reports[0] == reports[1] and reports[0]["summary"]["runs"] == 5
    bad = subprocess.run([sys.executable, "-m", "hexscope.app", "run", str(graph), "--jobs",
                          "0"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "not a number of jobs" in bad.stderr


def test_a_long_batch_keeps_few_sets_in_flight_and_survives_two_deaths(dying_op, monkeypatch):
    """Sets are queued a few per worker, not all at once: with one in flight per worker,
    twelve sets over two workers go through several pools (each death breaks one); every
    other run passes, in order, and each death is its own run's failure."""
    from hexscope.engine.batch import parallel

    monkeypatch.setattr(parallel, "IN_FLIGHT", 1)
    submitted: list[int] = []

    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 1, 1, 4), 4)])
    g.append_node(0x11, "DieOnNegative_f", inputs=[(0x10, 0)], outputs=[OutputDef((1, 1, 1, 4),
                                                                                4)])
    g.append_node(0x12, "OUTPUT", inputs=[(0x11, 0)])
    values = [1, 2, 3, -1, 5, 6, 7, 8, -2, 10, 11, 12]
    sets = [InputSet(f"s{k}", [Tensor.from_array(np.full((1, 1, 1, 4), v, np.float32))])
            for k, v in enumerate(values)]
    seen_in_flight: list[int] = []

    class Pool(parallel.ProcessPoolExecutor):
        def submit(self, fn, *args, **kwargs):  # type: ignore[no-untyped-def, override]
            future = super().submit(fn, *args, **kwargs)
            submitted.append(args[0])
            live = sum(1 for f in self._pending_work_items.values() if not f.future.done())
            seen_in_flight.append(live)
            return future

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", Pool)
    result = run_batch(g, sets, jobs=2)
    outcomes = [r.outcome for r in result.runs]
    want = [Outcome.BACKEND_ERROR if v < 0 else Outcome.PASSED for v in values]
    assert outcomes == want and [r.name for r in result.runs] == [s.name for s in sets]
    assert max(seen_in_flight) <= 2          # IN_FLIGHT x jobs
    assert sorted(set(submitted)) == list(range(len(values)))


def test_a_lazy_input_set_sends_its_recipe_not_its_pixels(tmp_path):
    """An input set made from files (the command line's) is made where it runs: pickled to
    a worker it is a few hundred bytes whatever the image size, and runs as the eager one."""
    import pickle

    from hexscope.engine.inputs import InputSource

    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 64, 64, 3), 4)])
    g.append_node(0x12, "OUTPUT", inputs=[(0x10, 0)])
    data = np.random.default_rng(3).random((1, 64, 64, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", data)
    lazy = InputSet("x", sources=["npy x.npy"],
                    recipe=(str(tmp_path), [InputSource(kind="npy", path="x.npy")]))
    eager = InputSet("x", [Tensor.from_array(data)], ["npy x.npy"])
    assert len(pickle.dumps(lazy)) < 1000 < data.nbytes < len(pickle.dumps(eager))
    assert np.array_equal(lazy.loaded(g).tensors[0].array, data)
    a, b = (run_batch(g, [s], jobs=1) for s in (lazy, eager))
    assert _without_timings(report_document(a)) == _without_timings(report_document(b))
    missing = InputSet("y", sources=["npy y.npy"],
                       recipe=(str(tmp_path), [InputSource(kind="npy", path="y.npy")]))
    bad = run_batch(g, [missing], jobs=1)
    assert bad.runs[0].outcome is Outcome.INVALID and "y.npy" in bad.runs[0].message
