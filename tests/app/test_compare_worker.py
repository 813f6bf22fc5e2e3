"""The compare worker's parts without a window: the frozen view of a run that the float
reference reads, and one job made on the calling thread (issue 12)."""

from __future__ import annotations

import pytest

from hexscope.app.compare_worker import Cancelled, CompareJob, CompareWorker, run_view
from hexscope.engine.analysis.compare import Trace, compare_reference
from hexscope.engine.executor import CancelToken
from hexscope.engine.session import Session
from support.compare_graphs import RELU_ID, chain, chain_input


def _stepped(n: int) -> Session:
    session = Session(chain())
    session.set_inputs([chain_input()])
    for _ in range(n):
        session.step()
    return session


def _rows(comparison) -> list[tuple]:
    return [(d.node_id, d.index, d.exceeds, d.metrics.max_abs if d.metrics else None)
            for d in comparison.outputs]


@pytest.mark.parametrize("mode", ["isolated", "accumulated"])
def test_run_view_is_the_run_as_it_was_when_copied(mode):
    session = _stepped(3)                              # INPUT, quantize, relu
    view = run_view(session, CancelToken())
    before = compare_reference(session, mode, 1.0)
    session.run()                                      # the live run moves on
    after = compare_reference(session, mode, 1.0)
    frozen = compare_reference(view, mode, 1.0)        # type: ignore[arg-type]
    assert _rows(frozen) == _rows(before)
    assert RELU_ID in {d.node_id for d in frozen.outputs}
    assert len(after.outputs) > len(frozen.outputs)    # the run did move on
    assert frozen.b_name == session.backend.name


def test_run_view_stops_the_float_reference_once_cancelled():
    session = _stepped(3)
    token = CancelToken()
    view = run_view(session, token)
    token.cancel()
    with pytest.raises(Cancelled):
        compare_reference(view, "isolated", 1.0)       # type: ignore[arg-type]


def _job(session: Session, **kw) -> CompareJob:
    job = CompareJob(7, "backend", "sim", 0.0, current=Trace.from_session(session, "this run"),
                     graph=session.graph.snapshot(), inputs=session.inputs, backend="sim")
    for k, v in kw.items():
        setattr(job, k, v)
    return job


def _make(job: CompareJob):
    worker = CompareWorker()
    outcomes, progress = [], []
    worker.finished.connect(outcomes.append)
    worker.progress.connect(lambda gen, text: progress.append((gen, text)))
    worker.make(job)                                   # on this thread: direct signals
    assert len(outcomes) == 1
    return outcomes[0], progress


def test_a_job_against_another_backend_runs_b_and_compares():
    session = _stepped(0)
    session.run()
    job = _job(session)
    outcome, progress = _make(job)
    assert outcome.generation == 7 and not outcome.error and not outcome.cancelled
    assert outcome.comparison.first_divergence is None
    assert len(outcome.comparison.outputs) >= 4
    assert {text for _, text in progress} >= {"preparing B…", "running B…", "comparing…"}
    assert all(gen == 7 for gen, _ in progress)


def test_a_cancelled_job_ends_as_cancelled_without_a_comparison():
    session = _stepped(0)
    session.run()
    job = _job(session)
    job.token.cancel()
    outcome, _ = _make(job)
    assert outcome.cancelled and outcome.comparison is None and not outcome.error


def test_an_unknown_backend_is_an_error_naming_it():
    session = _stepped(0)
    session.run()
    outcome, _ = _make(_job(session, backend="nonesuch", b_name="nonesuch"))
    assert outcome.comparison is None
    assert outcome.error.startswith("Cannot compare against nonesuch: unknown backend")
