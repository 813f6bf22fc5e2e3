"""--scheduler: a real Dask LocalCluster on loopback (2 worker processes) gives the report,
ranges and dump of --jobs 1 byte for byte, and a worker that dies costs only the run that
killed it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hexscope.engine.batch.records import InputSet, Outcome
from hexscope.engine.batch.report import junit_tree, report_document
from hexscope.engine.batch.runner import run_batch
from hexscope.engine.graph import Graph
from hexscope.engine.nodes import OutputDef
from hexscope.engine.tensor import Tensor
from support.batch_sets import _graph, _sets, _without_timings

distributed = pytest.importorskip("distributed")



@pytest.fixture(scope="module")
def scheduler():
    import dask

    # the scheduler gives up on a task at the first worker it kills (default: the 4th), so
    # the killed-worker test needs two worker restarts, not eight
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           host="127.0.0.1", dashboard_address=None,
                                           memory_limit="1GiB")
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def _junit_text(result) -> str:
    tree = junit_tree(result)
    for element in tree.iter():
        for name in ("time",):
            element.attrib.pop(name, None)
    import xml.etree.ElementTree as ET

    return ET.tostring(tree.getroot(), encoding="unicode")


def test_the_cluster_gives_the_report_and_dump_of_one_process(scheduler, tmp_path):
    sets = _sets(6, np.random.default_rng(5))
    one = run_batch(_graph(), sets, dump_dir=tmp_path / "one", jobs=1)
    far = run_batch(_graph(), sets, dump_dir=tmp_path / "far", scheduler=scheduler)
    assert one.outcome is Outcome.PASSED and far.outcome is Outcome.PASSED, far.message
    doc1 = json.dumps(_without_timings(report_document(one)), sort_keys=True)
    doc2 = json.dumps(_without_timings(report_document(far)), sort_keys=True)
    assert doc1 == doc2
    assert _junit_text(one) == _junit_text(far)
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*")
                   if p.is_file())
    assert len(files) > 6
    assert files == sorted(p.relative_to(tmp_path / "far") for p in
                           (tmp_path / "far").rglob("*") if p.is_file())
    for rel in files:
        assert (tmp_path / "far" / rel).read_bytes() == (tmp_path / "one" / rel).read_bytes(), \
            rel


def test_a_killed_worker_fails_its_run_and_the_others_go_on(scheduler, dying_op):
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 1, 1, 4), 4)])
    g.append_node(0x11, "DieOnNegative_f", inputs=[(0x10, 0)],
                  outputs=[OutputDef((1, 1, 1, 4), 4)])
    g.append_node(0x12, "OUTPUT", inputs=[(0x11, 0)])
    values = [1, 2, -1, 3, 4]
    sets = [InputSet(f"s{k}", [Tensor.from_array(np.full((1, 1, 1, 4), v, np.float32))])
            for k, v in enumerate(values)]
    result = run_batch(g, sets, scheduler=scheduler)
    outcomes = [r.outcome for r in result.runs]
    assert outcomes == [Outcome.PASSED] * 2 + [Outcome.BACKEND_ERROR] + [Outcome.PASSED] * 2, [
        r.message for r in result.runs]
    assert "worker process running it died" in result.runs[2].message
    assert result.exit_code == 3
    assert [r["runs"] for r in result.ranges if r["node"] == 0x11] == [4]


def test_an_unreachable_scheduler_is_a_backend_error(monkeypatch):
    from hexscope.engine.batch import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    result = run_batch(_graph(), _sets(2, np.random.default_rng(1)),
                       scheduler="tcp://127.0.0.1:9")
    assert result.outcome is Outcome.BACKEND_ERROR and result.runs == []
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in result.message


def test_the_command_line_sends_the_runs_to_the_scheduler(scheduler, tmp_path):
    import subprocess
    import sys

    graph = tmp_path / "g.hexgraph"
    _graph().save(graph)
    images = tmp_path / "images"
    images.mkdir()
    sets = _sets(4, np.random.default_rng(9))
    for s in sets:
        np.save(images / f"{s.name}.npy", s.tensors[0].array)
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "hexscope.app", "run", str(graph),
                           "--inputs-dir", str(images), "--scheduler", scheduler,
                           "--report", str(out), "-q"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    far = _without_timings(json.loads(out.read_text()))
    from hexscope.app.cli_run import build_input_sets

    loaded = Graph.load(graph)
    one = run_batch(loaded, build_input_sets(loaded, str(graph), [], [str(images)]),
                    graph_name="g.hexgraph", jobs=1)
    local = _without_timings(json.loads(json.dumps(report_document(one, str(graph)))))
    assert far["summary"]["runs"] == 4 and far == local


def test_a_few_sets_per_worker_are_queued_at_a_time(scheduler, monkeypatch):
    # the scheduler and the workers hold what is queued: a large batch is let out a few
    # sets per worker at a time, as --jobs does (2 workers, 1 each here)
    from hexscope.engine.batch import cluster

    monkeypatch.setattr(cluster, "IN_FLIGHT", 1)
    submitted = []
    real_next = cluster._next
    monkeypatch.setattr(cluster, "_next", lambda: submitted.append(1) or real_next())
    queued: list[int] = []
    real_run = cluster.run_on_cluster

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        done = args[6]

        def seen(k, run, partial, error):  # type: ignore[no-untyped-def]
            queued.append(len(submitted) - len(queued))    # submitted, not yet done
            done(k, run, partial, error)
        return real_run(*args[:6], seen, *args[7:], **kwargs)

    monkeypatch.setattr(cluster, "run_on_cluster", counting)
    sets = _sets(9, np.random.default_rng(3))
    result = run_batch(_graph(), sets, scheduler=scheduler)
    assert result.outcome is Outcome.PASSED, result.message
    assert len(result.runs) == 9 and len(submitted) == 9
    assert max(queued) <= 2 and queued[0] <= 2
