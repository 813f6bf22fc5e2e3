"""The app's garbage collector (app/collector.py, issue 32): short passes on the GUI thread,
none while a graph is read or drawn, the middle generation collected by its size, the
survivors and the document shown frozen, frozen cyclic garbage collected once it grew while
idle, and a dropped graph freed by reference counting."""

from __future__ import annotations

import gc
import weakref

import pytest

from hexscope.app import collector as collector_module
from hexscope.app.collector import (
    FULL_WALK_MAX,
    IDLE_S,
    MIDDLE_LIMIT,
    OLD_LIMIT,
    RECLAIM_AFTER_DOCUMENTS,
    RECLAIM_EVERY_S,
    GuiCollector,
)
from hexscope.engine.gc_pause import freeze, gc_paused, keep_as_old, paused, unfreeze
from support.large_graph import residual_graph


@pytest.fixture
def collector(qtbot):
    gc.collect()                                 # young and middle empty: a known start
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


def test_a_middle_pass_comes_when_the_survivors_add_up_not_after_ten_young_passes(collector):
    """A run's results, B's session and a prepared copy survive their young passes; after
    ten of them CPython's rule made one middle pass walk 230,000-415,000 objects (80-160 ms
    at 10,000 nodes)."""
    gc.collect()
    passes = []
    for _ in range(3):
        _garbage(MIDDLE_LIMIT // 3 + 1000)
        passes.append(collector.check())
    assert passes == [0, 0, 1]
    _garbage(MIDDLE_LIMIT + 1000)                 # one young batch that big: walked once
    assert collector.check() == 1


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_survivors_are_frozen_after_a_short_full_pass_but_not_while_a_thread_builds(
        collector):
    freeze()                                      # the oldest generation is empty
    kept = [[i] for i in range(OLD_LIMIT + 1000)]
    dropped = _Cycle()
    probe = weakref.ref(dropped)
    assert collector.check() == 1                 # they reach the oldest generation
    del dropped                                   # garbage there: only a full pass finds it
    import threading

    inside, leave = threading.Event(), threading.Event()

    def build() -> None:
        with gc_paused():
            inside.set()
            leave.wait(5)

    builder = threading.Thread(target=build)
    builder.start()
    try:
        inside.wait(5)
        assert collector.check() is None and collector.freezes == 0   # B's session, say
    finally:
        leave.set()
        builder.join()
    assert collector.check() is None
    assert collector.freezes == 1 and collector.passes[-1] == 2
    assert probe() is None                        # collected before the rest was frozen
    assert len(gc.get_objects()) < 1000           # nothing left for a later pass to walk
    assert kept[-1] == [OLD_LIMIT + 999]


def test_many_survivors_are_frozen_without_a_long_full_pass(collector):
    freeze()
    kept = [[i] for i in range(FULL_WALK_MAX + 1000)]
    assert collector.check() == 1
    assert collector.check() is None
    assert collector.freezes == 1 and 2 not in collector.passes
    assert len(gc.get_objects()) < 1000 and len(kept) == FULL_WALK_MAX + 1000


def _idle(made: GuiCollector, checks: int) -> None:
    for _ in range(checks):
        made.check()


def test_frozen_cyclic_garbage_is_collected_once_it_grew_and_the_window_is_idle(
        qtbot, monkeypatch):
    monkeypatch.setattr(collector_module, "RECLAIM_GROWTH", 0.0)
    monkeypatch.setattr(collector_module, "RECLAIM_MIN_GROWTH", 2000)
    now = [0.0]
    made = GuiCollector(interval_ms=1000, clock=lambda: now[0])    # idle: IDLE_S checks
    idle = int(IDLE_S)
    try:
        freeze()
        _idle(made, idle)                         # idle: the frozen count now is the base
        junk = [_Cycle() for _ in range(3000)]
        probe = weakref.ref(junk[0])
        freeze()                                  # as a document's leftovers are
        del junk
        _idle(made, idle)
        assert probe() is not None                # not read again before RECLAIM_EVERY_S
        _garbage(5000)
        made.check()                              # a pass was due: not idle any more
        now[0] += RECLAIM_EVERY_S
        _idle(made, idle - 1)
        assert probe() is not None and made.reclaims == 0
        made.check()
        assert probe() is None and made.reclaims == 1
        now[0] += RECLAIM_EVERY_S
        _idle(made, idle)
        assert made.reclaims == 1                 # nothing grew since
    finally:
        _KEPT.clear()
        unfreeze()
        gc.disable()


def test_a_larger_document_shown_is_no_growth_but_many_documents_are(qtbot, monkeypatch):
    monkeypatch.setattr(collector_module, "RECLAIM_GROWTH", 0.0)
    monkeypatch.setattr(collector_module, "RECLAIM_MIN_GROWTH", 2000)
    now = [0.0]
    made = GuiCollector(interval_ms=1000, clock=lambda: now[0])
    idle = int(IDLE_S)
    try:
        made.freeze_soon()                        # the app's start
        _idle(made, idle + 1)
        kept = [_Cycle() for _ in range(3000)]
        for _ in range(RECLAIM_AFTER_DOCUMENTS - 2):
            made.freeze_soon()                    # a larger graph opened: frozen with it
            now[0] += RECLAIM_EVERY_S
            _idle(made, idle + 1)
        assert made.reclaims == 0
        made.freeze_soon()
        now[0] += RECLAIM_EVERY_S
        _idle(made, idle + 1)
        assert made.reclaims == 1 and len(kept) == 3000
    finally:
        unfreeze()
        gc.disable()


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
