"""A run's end and an edit on a large graph leave the GUI thread's work in short turns of
the event loop (issue 32: F5 after an edit held it 124 ms at 10,000 nodes). The gaps are
measured in bench/ui_latency.py; these tests check the mechanism."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from hexscope.app import debug_actions
from hexscope.engine.nodes import OutputDef
from support.large_graph import residual_graph


@pytest.fixture
def big_run(window, tmp_path, qtbot):
    """A graph just over LOOKS_AT_ONCE nodes, opened and run to the end."""
    graph = residual_graph(debug_actions.LOOKS_AT_ONCE + 100)
    graph.set_outputs(0x10, [OutputDef(max_sizes=(1, 8, 8, 8), elementsize=4)])
    path = tmp_path / "big.hexgraph"
    graph.save(path)
    assert window.files.open_graph(str(path))
    window.debug.actions["run"].trigger()
    qtbot.waitUntil(lambda: not window.controller.busy, timeout=30000)
    qtbot.waitUntil(lambda: not window.debug._looks_scheduled, timeout=10000)
    return window


def test_an_edit_marks_a_large_downstream_stale_between_events(big_run, qtbot, monkeypatch):
    window = big_run
    scene = window.scene
    filt = next(n for n in window.graph if n.is_const and n.const is not None
                and len(n.const.shape) == 4 and n.const.shape[-1] > 1)
    conv = next(dst for dst, _, _ in window.graph.consumers(filt.node_id))
    set_now: list[int] = []
    real = scene.set_look
    monkeypatch.setattr(scene, "set_look", lambda nid, **kw: (set_now.append(nid),
                                                              real(nid, **kw)))
    array = filt.const.array.copy()
    array.flat[0] ^= 1
    window.edits.set_const(filt.node_id, array)
    assert len(set_now) <= 1          # the edit itself: only the next node's mark at once
    downstream = window.graph.downstream([conv]) & set(window.session.executor.trace)
    assert len(downstream) > 500
    qtbot.waitUntil(lambda: all(scene.looks[n].status == "stale" for n in downstream),
                    timeout=10000)


def test_a_run_end_sets_the_looks_of_a_large_graph_after_its_own_turn(big_run, qtbot,
                                                                    monkeypatch):
    window = big_run
    slices: list[int] = []
    real = debug_actions.DebugActions._set_looks_slice
    monkeypatch.setattr(debug_actions.DebugActions, "_set_looks_slice",
                        lambda self: (slices.append(1), real(self)))
    window.debug._on_idle("run")      # what the controller's idle signal runs
    assert slices == []               # no slice in the idle handler's own turn
    qtbot.waitUntil(lambda: not window.debug._looks_scheduled, timeout=10000)
    QApplication.processEvents()
    assert slices


def test_an_edit_s_issues_and_prepare_s_marks_come_in_separate_turns(window, graph_file,
                                                                     qtbot, monkeypatch):
    """After an edit the validate timer showed the issues and prepare's marks in one turn of
    the event loop (65-70 ms at 10,000 nodes, just before the F5 that follows an edit)."""
    import inspect

    assert window.files.open_graph(graph_file)
    qtbot.waitUntil(lambda: not window._validate_timer.isActive(), timeout=5000)
    seen: list[tuple[str, set[str]]] = []
    real_issues, real_marks = window._show_issues, window._marks_arrived

    def record(name: str, real):
        def call(*args):
            seen.append((name, {f.function for f in inspect.stack()}))
            return real(*args)
        return call

    monkeypatch.setattr(window, "_show_issues", record("issues", real_issues))
    monkeypatch.setattr(window, "_marks_arrived", record("marks", real_marks))
    window.marks_preparer.marks_ready.disconnect()       # (bound before the patch)
    window.marks_preparer.marks_ready.connect(window._marks_arrived)
    node = next(n for n in window.graph if not n.is_const)
    window.edits.set_label(node.node_id, "renamed")
    qtbot.waitUntil(lambda: [name for name, _ in seen] == ["issues", "marks"], timeout=5000)
    issues_stack, marks_stack = seen[0][1], seen[1][1]
    timer_run = issues_stack & {"revalidate", "_revalidate_in_turns"}
    assert timer_run                                   # the validate timer's turn
    assert not marks_stack & timer_run                 # the marks: a turn of their own


def test_a_large_run_s_end_shows_looks_timings_and_views_in_turns_of_their_own(
        big_run, qtbot, monkeypatch):
    """The idle handler set the looks, filled the timings, listed the problems and told
    every view of the results in one turn: 60-100 ms of the GUI thread at the end of a
    10,000-node run (issue 32). Now each in its own turn, all of them in the end."""
    import inspect

    window = big_run
    turns: list[tuple[str, set[str]]] = []          # each call and its callers
    for name in ("refresh_looks", "refresh_results", "show_problems"):
        owner = window.debug if name == "refresh_looks" else window
        real = getattr(owner, name)
        monkeypatch.setattr(owner, name, (lambda n, r: lambda *a: (
            turns.append((n, {f.function for f in inspect.stack()})), r(*a)))(name, real))
    views: list[int] = []
    window.results_changed.connect(lambda: views.append(1))
    window.debug._on_idle("run")
    assert [n for n, _ in turns] == ["refresh_looks"] and views == []   # its own turn
    qtbot.waitUntil(lambda: views != [], timeout=5000)
    ours = {"_on_idle", "_idle_results_then_views", "_idle_views"}
    turns = [(n, stack) for n, stack in turns if stack & ours]     # (a timer's own too)
    assert [n for n, _ in turns] == ["refresh_looks", "refresh_results", "show_problems"]
    (_, looks), (_, results), (_, problems) = turns
    assert "_on_idle" in looks and "_on_idle" not in results | problems
    assert "_idle_results_then_views" in results                 # a timer's turn
    assert "_idle_results_then_views" not in problems            # the next one
    assert window.timing.table.rowCount() == len(window.session.executor.trace) > 500
