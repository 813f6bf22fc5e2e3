"""Edits, undos and redos made while the run's thread works reach the next run (issue 32, item 1).

The run's thread used to prepare the editor's own graph while the GUI thread edited it: an
undo that landed after prepare had read a const, but before prepare finished, was recorded
and then cleared with the edits prepare had just applied. The run, the next run, and even
Restart then computed with the undone value. The worker now runs a snapshot sent with each
request; these tests hold it inside prepare at exactly that moment.
"""

from __future__ import annotations

import threading

import numpy as np
from nop_graphs import CONST, nop_graph

from hexscope.engine import Graph, Session
from hexscope.engine import session as session_module


def _do(qtbot, window, action: str) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions[action].trigger()


def _fresh_outputs(path, inputs) -> list[np.ndarray]:
    """What a new session computes on the saved bytes and the same inputs (the command
    line's answer)."""
    session = Session(Graph.load(path))
    return [t.array.copy() for t in session.execute(inputs)]


def _assert_as_the_file(window, saved) -> None:
    got = [t.array.copy() for t in window.session.graph_outputs()]
    want = _fresh_outputs(saved, window.session.inputs)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert np.array_equal(a, b)


class _HeldPrepare:
    """Wraps the session's prepare: after it has read the graph, wait until released."""

    def __init__(self, monkeypatch) -> None:
        self.inside = threading.Event()
        self.release = threading.Event()
        self.armed = False
        real = session_module.prepare

        def held(*args, **kwargs):
            prepared = real(*args, **kwargs)
            if self.armed:
                self.armed = False
                self.inside.set()
                self.release.wait(10)
            return prepared

        monkeypatch.setattr(session_module, "prepare", held)


def _inputs_file(tmp_path) -> str:
    graph = nop_graph()
    path = tmp_path / "g.hexgraph"
    graph.save(path)
    return str(path)


def test_an_undo_while_the_run_prepares_reaches_the_next_run(qtbot, window, tmp_path,
                                                            monkeypatch):
    held = _HeldPrepare(monkeypatch)
    window.files.open_graph(_inputs_file(tmp_path))
    _do(qtbot, window, "run")                                   # prepared once, ran
    window.edits.set_const(CONST, np.array([7.0, 8.0, 9.0], np.float32))
    held.armed = True
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions["run"].trigger()                   # F5: prepares the edit
        qtbot.waitUntil(held.inside.is_set, timeout=5000)
        window.undo_stack.undo()                                 # Ctrl+Z meanwhile
        held.release.set()
    assert window.graph.node(CONST).const.array.ravel().tolist() == [1.0, 2.0, 3.0]
    saved = tmp_path / "after_undo.hexgraph"
    window.graph.save(saved)
    _do(qtbot, window, "run")                                   # the next F5
    _assert_as_the_file(window, saved)
    _do(qtbot, window, "restart")                               # and Restart + F5
    _do(qtbot, window, "run")
    _assert_as_the_file(window, saved)


def test_a_redo_while_the_run_prepares_reaches_the_next_run(qtbot, window, tmp_path,
                                                           monkeypatch):
    held = _HeldPrepare(monkeypatch)
    window.files.open_graph(_inputs_file(tmp_path))
    window.edits.set_const(CONST, np.array([7.0, 8.0, 9.0], np.float32))
    _do(qtbot, window, "run")
    window.undo_stack.undo()
    held.armed = True
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions["step"].trigger()                  # a new run's first step
        qtbot.waitUntil(held.inside.is_set, timeout=5000)
        window.undo_stack.redo()                                 # Ctrl+Shift+Z meanwhile
        held.release.set()
    assert window.graph.node(CONST).const.array.ravel().tolist() == [7.0, 8.0, 9.0]
    saved = tmp_path / "after_redo.hexgraph"
    window.graph.save(saved)
    _do(qtbot, window, "restart")
    _do(qtbot, window, "run")
    _assert_as_the_file(window, saved)


def test_the_worker_runs_a_copy_never_the_editors_graph(qtbot, window, tmp_path):
    window.files.open_graph(_inputs_file(tmp_path))
    _do(qtbot, window, "step")
    assert window.session.graph is not window.graph
    assert window.session.graph.to_bytes() == window.graph.to_bytes()
