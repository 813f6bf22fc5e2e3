"""Batch runs in worker processes: each worker prepares the graph once and runs input sets by
index; the parent merges what comes back in run order, so the report, the ranges and the
dump are the same whatever the number of workers.

A worker that dies (a crash in a kernel, the OOM killer) takes down the runs it shared the
pool with; those are run again one at a time in a fresh worker, so only the run that kills
its worker is reported as failed, with what happened, and every other run goes on.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path

from hexscope.engine.batch.deferred_signals import Deferred, signals_deferred
from hexscope.engine.batch.dump import dump_run, dumped
from hexscope.engine.batch.records import BatchResult, InputSet, Outcome, RunRecord, lost_run
from hexscope.engine.batch.single_run import open_session, plugin_files, run_one
from hexscope.engine.batch.stats import RangeAccumulator, RangePartial
from hexscope.engine.graph import Graph

Done = Callable[[int, "RunRecord", RangePartial, str], None]

# One worker's session, made by the pool's initializer (a process runs one at a time).
_WORKER: dict[str, object] = {}


def default_jobs() -> int:
    """The processors this process may use (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:      # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _init(graph_bytes: bytes, plugins: list[str], backend: str, seed: int,
          dump_dir: str | None, fusions: bool = True) -> None:
    from hexscope.engine.plugins import load_plugin

    # the parent handles Ctrl+C and stops the workers: no worker prints a traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_parent(os.getppid())
    for path in plugins:
        try:
            load_plugin(path)
        except Exception:  # noqa: BLE001, S110 - the parent loaded it; a run names the op
            pass
    with tempfile.TemporaryDirectory(prefix="hexscope-worker-") as folder:
        path = Path(folder) / "graph.hexgraph"
        path.write_bytes(graph_bytes)
        graph = Graph.load(path)
    session = open_session(graph, backend, seed, BatchResult("", backend), fusions)
    _WORKER.update(session=session, ranges=RangeAccumulator(), dump_dir=dump_dir)


def _watch_parent(parent: int, every_s: float = 0.5) -> None:
    """End this worker when the parent is gone (killed with SIGKILL, say): its task queue
    never reports the end of file (every worker holds the queue's write end too), so an
    orphan would wait for tasks for ever."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(1)

    threading.Thread(target=watch, name="hexscope-parent-watch", daemon=True).start()


def _task(k: int, input_set: InputSet) -> tuple[int, RunRecord, RangePartial, str]:
    session = _WORKER.get("session")
    if session is None:
        return k, RunRecord(input_set.name, list(input_set.sources), Outcome.BACKEND_ERROR,
                            message="the worker could not prepare the graph"), {}, ""
    run = run_one(session, session.backend, input_set)  # type: ignore[attr-defined]
    partial = _WORKER["ranges"].partial(session, run.nodes)  # type: ignore[attr-defined]
    dump_dir = _WORKER["dump_dir"]
    error = dumped(dump_dir, dump_run, Path(dump_dir), k, run, session) if dump_dir else ""
    return k, run, partial, error  # type: ignore[return-value]


def run_parallel(graph: Graph, input_sets: Sequence[InputSet], backend: str, seed: int,
                 dump_dir: str | None, jobs: int, done: Done, *, fusions: bool = True) -> None:
    """Run every input set in ``jobs`` worker processes; ``done(k, run, partial, dump_error)``
    is called in the parent as runs complete (in any order).

    At most ``IN_FLIGHT`` sets per worker are queued at a time, and a finished one is let go
    as soon as ``done`` has it: the parent's memory stays flat over a batch of any length
    (every result was kept until the end: 1 GiB for 384 InceptionV3 images). A worker that
    dies breaks the pool: the sets it may have been running are run again one by one, each
    in a process of its own, so the one that kills its process is reported as that run's
    failure; the others go on in a new pool."""
    # spawn, not fork: the parent may hold Qt, BLAS and compiler threads (and their locks)
    context = multiprocessing.get_context("spawn")
    init = (graph.to_bytes(), plugin_files(), backend, seed, dump_dir, fusions)
    jobs = max(1, min(jobs, len(input_sets)))     # never more processes than sets
    todo = deque(range(len(input_sets)))
    with signals_deferred() as signals:
        _run_rounds(todo, input_sets, context, init, jobs, done, signals)


def _run_rounds(todo: deque[int], input_sets: Sequence[InputSet], context: object,
                init: tuple, jobs: int, done: Done, signals: Deferred) -> None:
    while todo:
        suspects: list[int] = []
        broken = False
        with _pool(jobs, context, init) as pool:
            pending: dict[Future, int] = {}
            while (todo or pending) and not broken:
                try:
                    while todo and len(pending) < IN_FLIGHT * jobs:
                        k = todo.popleft()
                        with _sigint_blocked():     # the workers it may start inherit it
                            pending[pool.submit(_task, k, input_sets[k])] = k
                except BrokenProcessPool:
                    todo.appendleft(k)
                    broken = True
                    break
                finished, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
                signals.check()
                for future in finished:
                    k = pending.pop(future)
                    try:
                        done(*future.result())
                    except BrokenProcessPool:
                        suspects.append(k)
                        broken = True
                    except Exception as exc:  # noqa: BLE001 - that run's failure
                        done(k, lost_run(input_sets[k], f"{type(exc).__name__}: {exc}"), {}, "")
            # the pool broke: whatever it held may have been the culprit (and when it broke
            # before holding anything, the next set goes alone: each round moves on)
            suspects = sorted({*suspects, *pending.values()})
            if broken and not suspects and todo:
                suspects.append(todo.popleft())
        for k in suspects:
            _run_alone(k, input_sets[k], context, init, done, signals)


#: Input sets queued per worker: enough that none waits for the parent, few enough that the
#: queued inputs and results stay small.
IN_FLIGHT = 4
#: How often the parent, waiting for results, acts on a Ctrl+C it noted (seconds).
POLL_S = 0.1


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while it starts worker processes: a spawned worker keeps
    the blocked mask, so a Ctrl+C at the terminal (sent to the whole process group) reaches
    only the parent, which stops the workers itself. A SIGINT that arrives meanwhile is held,
    not lost: it is delivered when the block ends."""
    if not hasattr(signal, "pthread_sigmask") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextmanager
def _pool(workers: int, context: object, init: tuple) -> Iterator[ProcessPoolExecutor]:
    """A process pool that, on Ctrl+C, stops its workers at once (they ignore SIGINT, so
    none prints a traceback) instead of waiting for the sets they hold; otherwise it waits
    for them, as ``with ProcessPoolExecutor`` does. Either way the pool's manager thread
    has ended when this returns (see ``_unblock_manager``)."""
    pool = ProcessPoolExecutor(workers, mp_context=context,  # type: ignore[arg-type]
                               initializer=_init, initargs=init)
    interrupted = False
    try:
        yield pool
    except KeyboardInterrupt:
        interrupted = True
        _stop_workers()
        _unblock_manager(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=interrupted)


def _unblock_manager(pool: ProcessPoolExecutor) -> None:
    """Let the pool's manager thread see the end of its result pipe once the workers are
    killed. A worker killed while it wrote a result leaves half a message there, and CPython's
    ``concurrent.futures`` (3.11) reads it without a timeout: the thread waited for ever, and
    so did the interpreter's exit, which joins it (an interrupted ``run -j 2`` hung now and
    then), or raced it closing its wake-up pipe ("Exception ignored ... Bad file
    descriptor" after the one line). The parent's copy of the write end is the last one
    open: closing it turns the wait into an end of file, which the thread takes as a broken
    pool and ends. The attribute is CPython's; without it the old behaviour stays."""
    results = getattr(pool, "_result_queue", None)
    writer = getattr(results, "_writer", None)
    if writer is not None:
        writer.close()


def _stop_workers() -> None:
    """Terminate this process's worker processes and reap them."""
    children = multiprocessing.active_children()
    for child in children:
        child.terminate()
    for child in children:
        child.join(timeout=5)
        if child.is_alive():
            child.kill()


def _run_alone(k: int, input_set: InputSet, context: object, init: tuple,
               done: Done, signals: Deferred) -> None:
    with _pool(1, context, init) as alone:
        try:
            with _sigint_blocked():
                future = alone.submit(_task, k, input_set)
            while not wait([future], timeout=POLL_S).done:
                signals.check()
            done(*future.result())
        except BrokenProcessPool:
            done(k, lost_run(input_set, "the worker process running it died "
                          "(a crash or the system killed it)"), {}, "")
        except Exception as exc:  # noqa: BLE001
            done(k, lost_run(input_set, f"{type(exc).__name__}: {exc}"), {}, "")


__all__ = ["default_jobs", "run_parallel"]
