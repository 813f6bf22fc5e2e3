"""Batch runs: one graph over many input sets, unattended (the ``hexscope run`` command).

Each input set runs from the state prepare left (``Session.reset_state``), so the
result of a set does not depend on the sets before it. Per run and per node the batch keeps
the status, wall time, output shapes, value ranges and saturation, warnings (such as a
declared output size smaller than what the op produced), and every Check/Close result with
the log lines the node wrote. Ranges over all runs (min, max, percentiles) are gathered for
calibration and the range views. ``dump_dir`` writes every node's outputs as ``.npy`` files
whose bytes depend only on the graph and the inputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from hexscope.engine.backends import Backend
from hexscope.engine.batch.dump import dump_manifest, dump_run, dumped
from hexscope.engine.batch.parallel import run_parallel
from hexscope.engine.batch.records import BatchResult, InputSet, Outcome, RunRecord, worst
from hexscope.engine.batch.single_run import Recorder, device_info, open_session, run_one
from hexscope.engine.batch.stats import RangeAccumulator, RangePartial
from hexscope.engine.errors import BackendError
from hexscope.engine.graph import Graph

Progress = Callable[[int, int, "RunRecord | None", str], None]


def run_batch(graph: Graph, input_sets: Sequence[InputSet], backend: str | Backend = "sim", *,
              graph_name: str = "graph", dump_dir: str | Path | None = None,
              progress: Progress | None = None, seed: int = 0, jobs: int = 1,
              fusions: bool = True, scheduler: str | None = None,
              on_partial: Callable[[int, RangePartial], None] | None = None) -> BatchResult:
    """Run ``graph`` once per input set; never raises for graph, input or backend trouble
    (the result's outcome says what went wrong). ``jobs`` > 1 runs the sets in that many
    worker processes (a backend given by name only); the result is the same. ``fusions``
    False runs the graph as authored (no Supernode fusion in prepare). ``scheduler``
    (``tcp://HOST:PORT``) sends the sets to that Dask distributed cluster instead (the
    optional extra ``hexscope[cluster]``); the result is the same again. ``on_partial(k,
    partial)`` sees each run's range partial as it arrives (calibration reads them)."""
    start = time.perf_counter()
    backend_name = backend if isinstance(backend, str) else getattr(backend, "name", "?")
    result = BatchResult(graph_name, backend_name, node_count=len(graph))
    session = open_session(graph, backend, seed, result, fusions)
    if session is None:
        result.seconds = time.perf_counter() - start
        return result
    recorder: Recorder = session.backend  # type: ignore[assignment]
    result.rewrites = [{"node": r.node_id, "kind": r.kind, "reason": r.reason}
                       for r in session.rewrites]
    ranges = RangeAccumulator()
    runs: list[RunRecord | None] = [None] * len(input_sets)
    dump_errors: list[str] = [""] * len(input_sets)
    finished = 0

    def done(k: int, run: RunRecord, partial: RangePartial, dump_error: str) -> None:
        nonlocal finished
        runs[k], dump_errors[k] = run, dump_error
        if on_partial is not None:
            on_partial(k, partial)
        ranges.merge_in_order(k, partial)
        finished += 1
        if progress:
            progress(finished, len(input_sets), run, input_sets[k].name)

    try:
        # a device agent serves one client at a time: its runs go one after another
        remote = getattr(recorder.inner, "runs_graph", False)
        if scheduler is not None:
            if not isinstance(backend, str) or remote:
                raise BackendError("--scheduler runs the simulator, given by name, only")
            from hexscope.engine.batch.cluster import run_on_cluster

            run_on_cluster(graph.to_bytes(), input_sets, backend, seed,
                           None if dump_dir is None else str(dump_dir), scheduler, done,
                           fusions=fusions)
        elif jobs > 1 and len(input_sets) > 1 and isinstance(backend, str) and not remote:
            run_parallel(graph, input_sets, backend, seed,
                         None if dump_dir is None else str(dump_dir), jobs, done,
                         fusions=fusions)
        else:
            for k, input_set in enumerate(input_sets):
                if progress:
                    progress(k, len(input_sets), None, input_set.name)
                run = run_one(session, recorder, input_set)
                dump_error = ""
                if dump_dir is not None and not any(dump_errors):
                    dump_error = dumped(dump_dir, dump_run, Path(dump_dir), k, run, session)
                done(k, run, ranges.partial(session, run.nodes), dump_error)
    except BackendError as exc:          # the cluster cannot be reached: nothing ran
        result.outcome, result.message = Outcome.BACKEND_ERROR, str(exc)
        result.seconds = time.perf_counter() - start
        return result
    finally:
        session.close()
    # In run order, whatever order they finished in: the same result for any jobs.
    result.runs = [run for run in runs if run is not None]
    dump_error = next((e for e in dump_errors if e), "")
    if dump_dir is not None and not dump_error:
        dump_error = dumped(dump_dir, dump_manifest, Path(dump_dir), result)
    result.ranges = ranges.records(session)
    result.device = device_info(recorder.inner)
    result.outcome = worst([r.outcome for r in result.runs])
    failed = [r for r in result.runs if r.outcome is result.outcome and r.message]
    result.message = failed[0].message if failed and result.outcome is not Outcome.PASSED else ""
    if dump_error and result.outcome.exit_code <= Outcome.INVALID.exit_code:
        # The runs are kept and reported; the missing dump makes the batch invalid (exit 2).
        result.outcome, result.message = Outcome.INVALID, dump_error
    result.seconds = time.perf_counter() - start
    return result
