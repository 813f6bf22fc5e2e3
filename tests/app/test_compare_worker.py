"""The compare worker without a window: one job made on the calling thread (issue 12). The
frozen run it hands the float reference is tested with the engine
(tests/engine/analysis/test_run_snapshot.py)."""

from __future__ import annotations

from hexscope.app.compare_worker import CompareJob, CompareWorker
from hexscope.engine.analysis.compare import Trace
from hexscope.engine.session import Session
from support.compare_graphs import chain, chain_input


def _stepped(n: int) -> Session:
    session = Session(chain())
    session.set_inputs([chain_input()])
    for _ in range(n):
        session.step()
    return session


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
