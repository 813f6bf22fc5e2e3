"""Batch runs on a Dask distributed cluster (``hexscope run --scheduler tcp://HOST:PORT``;
needs the optional extra ``hexscope[cluster]``).

Each input set is one task. A worker thread prepares the graph once (the graph's bytes are
scattered to every worker, the plugin files travel as their text) and keeps that session for
the next runs of the same graph. A task returns the run's record, its range partial and,
when a dump is wanted, the dump's files as bytes, which this process writes: the workers
need not share a file system with it. Everything is merged here in run order, so the
report, the ranges and the dump are those of ``--jobs 1``.

A worker that dies (a crash in a kernel, the OOM killer) makes the scheduler retry its tasks
elsewhere, up to its ``allowed-failures``; a task it gives up on (``KilledWorker``) is run
once more on its own, after the others, so a run that only shared the dying worker passes,
and the run that kills every worker it lands on is reported as that run's failure.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from hexscope.engine.batch.dump import dump_run
from hexscope.engine.batch.parallel import IN_FLIGHT, Done
from hexscope.engine.batch.records import BatchResult, InputSet, Outcome, RunRecord, lost_run
from hexscope.engine.batch.single_run import open_session, plugin_files, run_one
from hexscope.engine.batch.stats import RangeAccumulator, RangePartial
from hexscope.engine.errors import BackendError

CONNECT_TIMEOUT = "20s"
DIED = "the worker process running it died (a crash or the system killed it)"

_local = threading.local()          # per worker thread: {graph digest: session}
_plugins_lock = threading.Lock()
_plugins_loaded: set[str] = set()   # per worker process: digests of plugin texts loaded


def _client(address: str):  # type: ignore[no-untyped-def]
    try:
        from distributed import Client
    except ImportError as exc:
        raise BackendError("--scheduler needs Dask distributed: pip install "
                           "'hexscope[cluster]'") from exc
    try:
        return Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise BackendError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc


def _load_plugins(plugins: Sequence[tuple[str, str]]) -> None:
    from hexscope.engine.plugins import load_plugin

    with _plugins_lock:
        for name, text in plugins:
            digest = hashlib.sha256(text.encode()).hexdigest()
            if digest in _plugins_loaded:
                continue
            _plugins_loaded.add(digest)
            folder = Path(tempfile.mkdtemp(prefix="hexscope-plugin-"))
            path = folder / name
            path.write_text(text, encoding="utf-8")
            try:
                load_plugin(path)
            except Exception:  # noqa: BLE001, S110 - the client loaded it; a run names the op
                pass


def _session(graph_bytes: bytes, plugins: Sequence[tuple[str, str]], backend: str, seed: int,
             fusions: bool):  # type: ignore[no-untyped-def]
    from hexscope.engine.graph import Graph

    sessions = getattr(_local, "sessions", None)
    if sessions is None:
        sessions = _local.sessions = {}
    key = (hashlib.sha256(graph_bytes).hexdigest(), backend, seed, fusions)
    if key not in sessions:
        _load_plugins(plugins)
        with tempfile.TemporaryDirectory(prefix="hexscope-worker-") as folder:
            path = Path(folder) / "graph.hexgraph"
            path.write_bytes(graph_bytes)
            graph = Graph.load(path)
        sessions.clear()            # one graph at a time per thread: bounded memory
        sessions[key] = open_session(graph, backend, seed, BatchResult("", backend), fusions)
    return sessions[key]


def _task(k: int, input_set: InputSet, graph_bytes: bytes, plugins: list[tuple[str, str]],
          backend: str, seed: int, dump: bool, fusions: bool
          ) -> tuple[int, RunRecord, RangePartial, dict[str, bytes]]:
    session = _session(graph_bytes, plugins, backend, seed, fusions)
    if session is None:
        return k, RunRecord(input_set.name, list(input_set.sources), Outcome.BACKEND_ERROR,
                            message="the worker could not prepare the graph"), {}, {}
    run = run_one(session, session.backend, input_set)
    partial = RangeAccumulator().partial(session, run.nodes)
    files: dict[str, bytes] = {}
    if dump:
        with tempfile.TemporaryDirectory(prefix="hexscope-dump-") as folder:
            root = Path(folder)
            dump_run(root, k, run, session)
            files = {p.relative_to(root).as_posix(): p.read_bytes()
                     for p in sorted(root.rglob("*")) if p.is_file()}
    return k, run, partial, files


def _write_files(dump_dir: str, files: dict[str, bytes]) -> str:
    root = Path(dump_dir)
    try:
        for rel, data in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    except OSError as exc:
        return f"cannot write the dump to {dump_dir}: {exc.strerror or exc}"
    return ""


def run_on_cluster(graph_bytes: bytes, input_sets: Sequence[InputSet], backend: str, seed: int,
                   dump_dir: str | None, address: str, done: Done, *,
                   fusions: bool = True) -> None:
    """Run every input set as a task on the Dask cluster at ``address``; ``done(k, run,
    partial, dump_error)`` is called here as runs complete (in any order). Raises
    BackendError when the scheduler cannot be reached."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker, as_completed

    # a dead worker also loses the graph's bytes it held; tasks waiting on them are cancelled
    retry = (KilledWorker, CancelledError)

    plugins = [(Path(p).name, Path(p).read_text(encoding="utf-8")) for p in plugin_files()]
    client = _client(address)
    dump_failed = ""

    def finish(k: int, run: RunRecord, partial: RangePartial, files: dict[str, bytes]) -> None:
        nonlocal dump_failed
        error = ""
        if dump_dir is not None and not dump_failed:
            error = dump_failed = _write_files(dump_dir, files)
        done(k, run, partial, error)

    try:
        graph_future = client.scatter(graph_bytes, broadcast=True, hash=False)

        def submit(k: int, graph):  # type: ignore[no-untyped-def]
            return client.submit(_task, k, input_sets[k], graph, plugins, backend, seed,
                                 dump_dir is not None, fusions, pure=False,
                                 key=f"hexscope-run-{k}-{id(input_sets)}-{_next()}")

        # A few sets per worker at a time, as --jobs does: the scheduler and the workers
        # hold the queued sets (whole tensors, when they are not recipes) and the results
        # not yet collected, so submitting a batch of thousands at once held all of them.
        todo = iter(range(len(input_sets)))
        futures: dict[object, int] = {}
        queue = as_completed(loop=client.loop)

        def top_up() -> None:
            workers = len(client.scheduler_info().get("workers", {}))
            while len(futures) < IN_FLIGHT * max(1, workers):
                k = next(todo, None)
                if k is None:
                    return
                future = submit(k, graph_future)
                futures[future] = k
                queue.add(future)

        top_up()
        killed: list[int] = []
        for future in queue:
            k = futures.pop(future)
            try:
                finish(*future.result())
            except retry:
                killed.append(k)
            except Exception as exc:  # noqa: BLE001 - a run's trouble is that run's failure
                done(k, lost_run(input_sets[k], f"{type(exc).__name__}: {exc}"), {}, "")
            top_up()
        for k in sorted(killed):          # alone now: only the run that kills is lost
            try:
                fresh = client.scatter(graph_bytes, broadcast=True, hash=False)
                finish(*submit(k, fresh).result())
            except retry:
                done(k, lost_run(input_sets[k], DIED), {}, "")
            except Exception as exc:  # noqa: BLE001
                done(k, lost_run(input_sets[k], f"{type(exc).__name__}: {exc}"), {}, "")
    finally:
        client.close()


_counter = iter(range(1 << 62))


def _next() -> int:
    return next(_counter)


__all__ = ["run_on_cluster"]
