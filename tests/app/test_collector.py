"""The app's garbage collector (app/collector.py, issue 32): short passes on the GUI thread,
none while a graph is read or drawn, the document shown frozen, and a dropped graph freed
by reference counting (a frozen graph that needed the cyclic collector would never go)."""

from __future__ import annotations

import gc
import weakref

import pytest

from hexscope.app.collector import FULL_GROWTH, FULL_MIN_GROWTH, GuiCollector
from hexscope.engine.gc_pause import gc_paused, keep_as_old, paused, unfreeze
from support.large_graph import residual_graph


@pytest.fixture
def collector(qtbot):
    made = GuiCollector(interval_ms=10_000)      # checked by hand below
    yield made
    _KEPT.clear()
    unfreeze()                   # the tests' windows are freed after each test (conftest)
    gc.disable()


_KEPT: list[list[list[int]]] = []


def _garbage(n: int) -> None:
    """``n`` young objects that stay (a run's results, say)."""
    _KEPT.append([[i] for i in range(n)])


def test_collector_makes_no_pass_while_a_graph_is_built(collector):
    _garbage(5000)
    with gc_paused():
        assert paused()
        assert collector.check() is None
    assert not paused()
    assert collector.check() == 0                 # young objects past the threshold


def test_collector_passes_go_on_while_another_thread_reads_a_graph(collector):
    """Skipped then, the next pass walked all that thread had made (0.3 s at 20,000
    nodes after a session's prepare)."""
    import threading

    inside, leave = threading.Event(), threading.Event()

    def read() -> None:
        with gc_paused():
            inside.set()
            leave.wait(5)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        inside.wait(5)
        assert paused() and not paused(threading.get_ident())
        _garbage(5000)
        assert collector.check() == 0
    finally:
        leave.set()
        reader.join()


def test_collector_freezes_what_is_shown_and_keep_as_old_leaves_it_frozen(collector):
    unfreeze()
    collector.freeze_soon()
    assert collector.check() is None
    frozen = gc.get_freeze_count()
    assert frozen > 1000                          # the test process's modules, at least
    graph = residual_graph(300)
    keep_as_old()                                 # as the loader does after a read
    assert gc.get_freeze_count() > frozen         # it joined them, none was unfrozen
    del graph


def test_collector_makes_a_full_pass_only_once_the_old_generation_grew(collector, monkeypatch):
    gc.collect()
    base = collector._old_after_full = len(gc.get_objects(2))
    monkeypatch.setattr(gc, "get_count", lambda: (10_000, 100, 100))
    assert collector.check() == 1                 # due by the counts, but nothing grew
    _garbage(int(max(FULL_MIN_GROWTH, FULL_GROWTH * base)) + 5000)
    gc.collect(1)                                 # they reach the oldest generation
    assert collector.check() == 2


def test_a_dropped_graph_is_freed_without_the_cyclic_collector():
    was = gc.isenabled()
    gc.disable()
    try:
        graph = residual_graph(300)
        list(graph.nx.in_degree), list(graph.nx.edges)    # networkx caches these views
        inner = weakref.ref(graph.nx)
        del graph
        assert inner() is None
    finally:
        if was:
            gc.enable()


def test_window_says_when_a_document_is_shown(window, graph_file, qtbot):
    with qtbot.waitSignal(window.document_shown, timeout=5000):
        assert window.files.open_graph(graph_file)
    with qtbot.waitSignal(window.document_shown, timeout=5000):
        window.show_consts.trigger()
