"""The engine's pause points (engine/cooperate.py): an app's threads take turns during the
long passes (issue 32: at 10,000 nodes a re-prepare after an edit held the interpreter
0.2-0.4 s beside the window, with nowhere to pause), and nothing changes without an app."""

from __future__ import annotations

import io
import json
import statistics
import threading
import time
import zipfile

import numpy as np
import pytest

from hexscope.engine import Graph, Session, cooperate
from hexscope.engine.analysis.ranges import node_ranges, references_from_session
from hexscope.engine.io.hexgraph import graph_bytes, graph_document, load_graph, save_graph
from hexscope.engine.prepare import prepare
from hexscope.engine.validate import Validator, validate
from tests.support.large_graph import input_tensor, residual_graph


@pytest.fixture
def calls():
    """A counting callback installed for the test; the previous one put back after."""
    seen: list[str] = []
    previous = cooperate.install(lambda: seen.append(threading.current_thread().name))
    yield seen
    cooperate.install(previous)


@pytest.fixture(scope="module")
def graph() -> Graph:
    return residual_graph(600)


def test_without_a_callback_a_pause_point_does_nothing_and_paced_is_the_items_themselves():
    previous = cooperate.install(None)
    try:
        items = [1, 2, 3]
        assert cooperate.paced(items) is items
        cooperate.pause()
    finally:
        cooperate.install(previous)


def test_paced_pauses_every_n_items_and_yields_them_all(calls):
    assert list(cooperate.paced(range(10), every=4)) == list(range(10))
    assert len(calls) == 2                     # after the 4th and the 8th


@pytest.fixture(scope="module")
def ran(graph: Graph) -> Session:
    session = Session(Graph.from_snapshot(graph.snapshot()))
    session.set_inputs([input_tensor()])
    session.run()
    return session


@pytest.mark.parametrize("step", ["copy", "validate", "prepare", "load", "save", "ranges",
                                  "references"])
def test_each_long_pass_pauses_and_gives_the_same_result(step, graph, ran, tmp_path):
    """Each pass reaches a pause point at least every ~EVERY nodes, and makes what it makes
    without a callback (a save the same bytes)."""
    path = tmp_path / "g.hexgraph"
    save_graph(graph, path)
    passes = {
        "copy": lambda: [n for n in Graph.from_snapshot(graph.snapshot())],
        "validate": lambda: validate(graph),
        "prepare": lambda: prepare(graph),
        "load": lambda: load_graph(path),
        "save": lambda: graph_bytes(graph),
        # the Ranges view's statistics and a run read as a reference, on the app's threads
        "ranges": lambda: node_ranges(ran),
        "references": lambda: {k: v.tobytes() for k, v in references_from_session(ran).items()},
    }
    alone = passes[step]()
    seen: list[int] = []
    previous = cooperate.install(lambda: seen.append(1))
    try:
        paused = passes[step]()
    finally:
        cooperate.install(previous)
    nodes = len(ran.plan) if step in ("ranges", "references") else len(graph)
    assert len(seen) >= nodes // (2 * cooperate.EVERY) >= 1
    if step == "load":                  # Tensors compare by identity: compare the files
        paused, alone = graph_bytes(paused), graph_bytes(alone)
    assert paused == alone


def test_a_saved_graph_json_is_json_dumps_of_the_document(graph, calls):
    """The file's graph.json, encoded in pieces with pause points between, is what
    ``json.dumps(document, indent=1)`` writes."""
    with zipfile.ZipFile(io.BytesIO(graph_bytes(graph))) as zf:
        text = zf.read("graph.json").decode()
    assert text == json.dumps(graph_document(graph)[0], indent=1)
    assert len(calls) > len(graph) // cooperate.EVERY


def test_a_session_validates_again_only_what_an_edit_changed(graph):
    g = Graph.from_snapshot(graph.snapshot())
    session = Session(g)
    session.set_inputs([input_tensor()])
    session.run()
    assert session.validator.checked == len(g)
    const = next(n for n in g if n.is_const and n.const.has_data and n.const.array.size > 8)
    data = const.const.array.copy()
    data.reshape(-1)[0] ^= 1
    g.set_const(const.node_id, data)
    session.run()
    # the const and its readers: not the 600 nodes again
    assert session.validator.checked <= 1 + len(g.consumers(const.node_id))
    assert session.issues == validate(g)


def test_a_session_reprepares_a_copy_of_the_edited_graph_with_pauses(graph, calls):
    """The app's way: the session follows a copy of the editor's graph and prepares it
    again before the next run; every step of that pauses on the run's thread."""
    session = Session(Graph.from_snapshot(graph.snapshot()))
    session.set_inputs([input_tensor()])
    edited = Graph.from_snapshot(graph.snapshot())
    const = next(n for n in edited if n.is_const and n.const.has_data)
    edited.set_const(const.node_id, np.zeros_like(const.const.array))
    calls.clear()
    worker = threading.Thread(target=lambda: (
        session.follow(Graph.from_snapshot(edited.snapshot()), {const.node_id}),
        session.run()), name="run")
    worker.start()
    worker.join(60)
    assert calls and set(calls) == {"run"}
    assert len(calls) >= 4 * len(graph) // cooperate.EVERY     # copy, validate, prepare, plan


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_thread_that_pauses_lets_another_compute_sooner(graph):
    """The same 20 ms of Python on this thread ("the window") beside a thread validating
    and preparing the graph over and over: with a callback that sleeps while this thread
    computes (as the app's does), the work takes less wall time than beside the passes
    without one, which share the interpreter about evenly."""
    busy = threading.Event()

    def give_way() -> None:
        while busy.is_set():
            time.sleep(0.001)

    validator = Validator()
    medians = {}
    for callback in (None, give_way):
        previous = cooperate.install(callback)
        stop = threading.Event()

        def passes(stop: threading.Event = stop) -> None:
            while not stop.is_set():
                validator.validate(Graph.from_snapshot(graph.snapshot()))
                prepare(graph)

        worker = threading.Thread(target=passes, daemon=True)
        worker.start()
        try:
            walls = []
            for _ in range(12):
                time.sleep(0.01)
                t0 = time.perf_counter()
                busy.set()
                _spin(0.02)
                busy.clear()
                walls.append(time.perf_counter() - t0)
        finally:
            stop.set()
            worker.join()
            cooperate.install(previous)
        medians[callback is None] = statistics.median(walls)
    assert medians[False] < 0.8 * medians[True], medians


def test_a_threads_own_hook_runs_at_its_pause_points_only():
    seen: list[str] = []
    previous = cooperate.install(None)
    try:
        assert list(cooperate.paced(range(3))) == [0, 1, 2]

        def other() -> None:
            for _ in cooperate.paced(range(200)):
                pass

        with cooperate.on_this_thread(lambda: seen.append(threading.current_thread().name)):
            for _ in cooperate.paced(range(200)):        # paces with a hook alone
                pass
            thread = threading.Thread(target=other, name="other")
            thread.start()
            thread.join()
            with pytest.raises(RuntimeError):
                with cooperate.on_this_thread(lambda: None):
                    pass
        assert seen == [threading.current_thread().name] * (200 // cooperate.EVERY)
        cooperate.pause()                                # the block is over: nothing
        assert len(seen) == 200 // cooperate.EVERY
    finally:
        cooperate.install(previous)


@pytest.mark.parametrize("analysis", ["isolated", "accumulated"])
def test_a_comparison_pauses_every_few_nodes_and_gives_the_same_diffs(analysis, graph):
    """Compare's passes over a run (a reference and metrics per node, 30-100 us each) ran
    on the app's thread with no pause point: 100 ms of its CPU in one gap of the window at
    10,000 nodes. Each pass on a fresh run, so that no cache stands in for it."""
    from hexscope.engine.analysis import float_run

    def fresh_run() -> Session:
        session = Session(Graph.from_snapshot(graph.snapshot()))
        session.set_inputs([input_tensor()])
        session.run()
        return session

    def summary(diffs: list) -> list[tuple]:
        return [(d.node_id, d.index, d.exceeds, d.max_code_diff,
                 None if d.metrics is None else d.metrics.max_abs) for d in diffs]

    compare = getattr(float_run, analysis)
    alone_run, paused_run = fresh_run(), fresh_run()
    alone = compare(alone_run)
    seen: list[int] = []
    previous = cooperate.install(lambda: seen.append(1))
    try:
        paused = compare(paused_run)
    finally:
        cooperate.install(previous)
    assert len(seen) >= len(paused_run.plan) // float_run.ANALYSIS_EVERY >= 4
    assert summary(paused[0]) == summary(alone[0]) and paused[1] == alone[1]
