"""An edit's prepare (the canvas's rewrite marks) runs on a thread of its own, and only the
latest graph's marks are shown (issue 32: 150-190 ms of prepare on the GUI thread at
10,000 nodes, right before the F5 that follows an edit)."""

from __future__ import annotations

import threading

import pytest
from nop_graphs import A, B, nop_graph

from hexscope.app import prepare_marks
from hexscope.engine.prepare.marks import marks_of

DEAD = 0x300


@pytest.fixture
def dead_node(window):
    """nop_graph with a Nop nothing reads: prepare removes it ("removed", dead)."""
    g = nop_graph()
    g.append_node(DEAD, "Nop", inputs=[(A, 0)], outputs=1)
    window.set_graph(g, None)
    assert window.scene.looks[DEAD].rewrite == "removed"
    return window


@pytest.fixture
def held_prepare(monkeypatch):
    """prepare as the marks' thread calls it, recording the thread; the first call waits
    for ``release`` (an in-flight prepare the test can edit under)."""
    real = prepare_marks.prepare
    state = {"threads": [], "calls": 0, "started": threading.Event(),
             "release": threading.Event()}

    def held(graph, *args, **kwargs):
        state["threads"].append(threading.get_ident())
        state["calls"] += 1
        if state["calls"] == 1:
            state["started"].set()
            assert state["release"].wait(5)
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(prepare_marks, "prepare", held)
    yield state
    state["release"].set()


def _validated(window, qtbot):
    qtbot.waitUntil(lambda: not window._validate_timer.isActive(), timeout=5000)


def test_an_edit_s_marks_are_prepared_off_the_gui_thread(dead_node, held_prepare, qtbot):
    window = dead_node
    held_prepare["release"].set()
    window.edits.connect(DEAD, 0, B, 0)          # something reads it now: not dead
    qtbot.waitUntil(lambda: window.scene.looks[DEAD].rewrite == "", timeout=5000)
    assert held_prepare["threads"]
    assert threading.get_ident() not in held_prepare["threads"]
    assert not window.marks_preparer.pending


def test_an_edit_during_a_prepare_drops_its_marks_for_the_latest_graph_s(dead_node,
                                                                          held_prepare, qtbot,
                                                                          monkeypatch):
    window = dead_node
    window.edits.connect(DEAD, 0, B, 0)          # prepare 1 (not dead) is held in flight
    qtbot.waitUntil(held_prepare["started"].is_set, timeout=5000)
    set_on_dead: list[str] = []
    real = window.scene.set_look
    monkeypatch.setattr(window.scene, "set_look", lambda nid, **kw: (
        set_on_dead.append(kw["rewrite"]) if nid == DEAD and "rewrite" in kw else None,
        real(nid, **kw)))
    window.undo_stack.undo()                     # dead again: prepare 1 is of an old graph
    _validated(window, qtbot)                    # request 2, queued behind prepare 1
    window.edits.set_label(B, "renamed")         # request 3: request 2 is stale too
    _validated(window, qtbot)
    held_prepare["release"].set()
    qtbot.waitUntil(lambda: not window.marks_preparer.pending, timeout=5000)
    assert set_on_dead == []                     # prepare 1's "" never reached the canvas
    assert window.scene.looks[DEAD].rewrite == "removed"
    assert held_prepare["calls"] == 2            # request 2 was skipped, not prepared
    assert window._marks == marks_of(window.graph, prepare_marks.prepare(window.graph))


def test_a_prepare_that_fails_says_so_and_leaves_no_marks(dead_node, monkeypatch, qtbot):
    window = dead_node

    def broken(graph, *args, **kwargs):
        raise ValueError("a prepare bug")

    monkeypatch.setattr(prepare_marks, "prepare", broken)
    window.edits.set_label(B, "renamed")
    qtbot.waitUntil(lambda: window.scene.looks[DEAD].rewrite == "", timeout=5000)
    assert "a prepare bug" in window.statusBar().currentMessage()
    assert window.marks_preparer.pending is False


def test_opening_a_partly_placed_graph_prepares_its_marks_off_the_gui_thread(
        window, tmp_path, monkeypatch, qtbot):
    """A file whose nodes are only partly placed is laid out once shown (an edit: its
    revalidation runs in turns, the prepare on the marks' thread); Open then also called
    revalidate(), which prepared the whole graph again on the GUI thread (100-200 ms at
    10,000 nodes) for a move that changes no issue and no mark."""
    from hexscope.app import main_window

    g = nop_graph()
    g.append_node(DEAD, "Nop", inputs=[(A, 0)], outputs=1)
    g.move({A: (0.0, 0.0), B: (300.0, 0.0)})          # the others have no place
    path = tmp_path / "partly.hexgraph"
    g.save(path)
    on_gui: list[int] = []
    real = main_window.prepare
    monkeypatch.setattr(main_window, "prepare", lambda graph, *a, **k: (
        on_gui.append(threading.get_ident()), real(graph, *a, **k))[1])
    window.files.open_graph(str(path))
    assert all(n.position is not None for n in window.graph if not n.is_const)  # laid out
    _validated(window, qtbot)
    qtbot.waitUntil(lambda: not window.marks_preparer.pending, timeout=5000)
    assert on_gui == []
    assert window.scene.looks[DEAD].rewrite == "removed"
    assert window._marks == marks_of(window.graph, prepare_marks.prepare(window.graph))
