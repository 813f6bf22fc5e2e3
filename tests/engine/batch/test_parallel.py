"""--jobs: worker processes give the same report, ranges and dump as one process, and a
worker that dies costs only the run it was running."""

from __future__ import annotations

import filecmp
import json

import numpy as np

from hexscope.engine.batch.report import report_document
from hexscope.engine.batch.runner import InputSet, Outcome, run_batch
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
