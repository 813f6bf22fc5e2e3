"""Opening, importing and redrawing a large graph leave the window answering (issue 32): the
file is read and the graph checked on the loader's thread, the canvas's items are made a
slice at a time between events, and the user can cancel. The gaps themselves are measured
in bench/ui_latency.py, not here; these tests check the mechanism."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QProgressDialog, QPushButton

import hexscope.app.graph_loader as graph_loader
from hexscope.app.graph_loader import BIG_GRAPH
from hexscope.engine.io.c_export import export_c
from hexscope.widgets.graph_canvas import GraphScene
from hexscope.widgets.graph_canvas import scene as scene_module
from support.large_graph import residual_graph


@pytest.fixture
def big_file(tmp_path) -> str:
    path = tmp_path / "big.hexgraph"
    residual_graph(BIG_GRAPH + 100).save(path)
    return str(path)


def _ticks_while(window, action) -> tuple[list[float], object]:
    """Run ``action`` with a 5 ms timer ticking on the GUI thread; the tick times."""
    ticks: list[float] = []
    timer = QTimer(window, interval=5)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    try:
        result = action()
    finally:
        timer.stop()
    return ticks, result


def test_open_reads_on_another_thread_while_the_window_answers(window, big_file, monkeypatch):
    read_on: list[threading.Thread] = []
    real = graph_loader.load_any

    def slow_load(path, notes=None):
        read_on.append(threading.current_thread())
        time.sleep(0.3)                    # a large file: the window must keep answering
        return real(path, notes)

    monkeypatch.setattr(graph_loader, "load_any", slow_load)
    start = time.perf_counter()
    ticks, opened = _ticks_while(window, lambda: window.files.open_graph(big_file))
    assert opened
    assert read_on and read_on[0] is not threading.main_thread()
    # the GUI thread handled events while the file was being read
    assert len([t for t in ticks if t - start < 0.3]) >= 10
    assert len(window.scene.items_by_id) > BIG_GRAPH / 2
    assert window.files.path == big_file
    assert not window.issues or all(i.node_id in window.graph for i in window.issues)


def test_a_large_graph_is_drawn_in_slices_between_events(window, big_file, monkeypatch):
    slices: list[int] = []
    real = graph_loader.run_in_slices

    def counting(steps, dialog, budget=graph_loader.SLICE_S):
        def counted():
            for step in steps:
                if step[0] >= 0:        # not WAITING (the layout's thread), nor HEAVY
                    slices.append(step[0])
                yield step
        return real(counted(), dialog, budget)

    monkeypatch.setattr(graph_loader, "run_in_slices", counting)
    assert window.files.open_graph(big_file)
    assert len(slices) > 20                       # many steps, each a small part of the work
    assert slices == sorted(slices)               # and they only go forward


def test_the_sliced_build_makes_the_same_scene_as_the_one_pass_build(qtbot):
    graph = residual_graph(600)
    whole = GraphScene(graph)
    sliced = GraphScene(graph, build=False)
    steps = list(sliced.build_steps(chunk=50))
    assert len(steps) > 20
    assert sliced.items_by_id.keys() == whole.items_by_id.keys()
    for nid, item in whole.items_by_id.items():
        other = sliced.items_by_id[nid]
        assert (other.pos(), len(other.edges)) == (item.pos(), len(item.edges))
        assert [e.crossing for e in other.edges] == [e.crossing for e in item.edges]
    for scene in (whole, sliced):
        scene.close()


def test_building_the_scene_makes_each_item_once(qtbot, monkeypatch):
    """Linear: one item per shown node and one edge per input, whatever the graph's size."""
    made = {"items": 0, "edges": 0}
    real_item, real_edge = GraphScene._add_item, GraphScene._add_edge

    def add_item(self, node):
        made["items"] += 1
        return real_item(self, node)

    def add_edge(self, edge, check=True):
        made["edges"] += 1
        return real_edge(self, edge, check)

    monkeypatch.setattr(GraphScene, "_add_item", add_item)
    monkeypatch.setattr(GraphScene, "_add_edge", add_edge)
    for n in (300, 1200):
        made.update(items=0, edges=0)
        scene = GraphScene(residual_graph(n), build=False)
        for _ in scene.build_steps():
            pass
        assert made["items"] == len(scene.items_by_id)
        assert made["edges"] == sum(len(i.edges) for i in scene.items_by_id.values()) // 2
        scene.close()
    assert scene_module.GraphScene is GraphScene


def test_cancelling_an_open_keeps_the_graph_shown(window, big_file, graph_file, monkeypatch):
    assert window.files.open_graph(graph_file)
    before = window.graph
    real = graph_loader.load_any

    def slow_load(path, notes=None):
        time.sleep(1.0)
        return real(path, notes)

    def cancel() -> None:                # the user clicks Cancel on the progress dialog
        dialogs = [w for w in window.findChildren(QProgressDialog) if w.isVisible()]
        assert dialogs, "no progress dialog shown"
        dialogs[0].findChild(QPushButton).click()

    monkeypatch.setattr(graph_loader, "load_any", slow_load)
    QTimer.singleShot(graph_loader.SHOW_AFTER_MS + 300, cancel)
    assert not window.files.open_graph(big_file)
    assert window.graph is before and window.files.path == graph_file
    assert set(window.scene.items_by_id) <= {n.node_id for n in before}


def test_import_c_reads_on_another_thread(window, tmp_path, monkeypatch):
    path = tmp_path / "big.c"
    export_c(residual_graph(BIG_GRAPH + 100), path, "big")
    threads: list[threading.Thread] = []
    real = graph_loader.load_any

    def spy(p, notes=None):
        threads.append(threading.current_thread())
        return real(p, notes)

    monkeypatch.setattr(graph_loader, "load_any", spy)
    assert window.files.open_graph(str(path), c_only=True)
    assert threads and threads[0] is not threading.main_thread()
    assert window.files.imported_from == str(path)
    assert len(window.graph) >= BIG_GRAPH


def test_consts_as_nodes_on_a_large_graph_keep_looks_and_selection(window, big_file):
    assert window.files.open_graph(big_file)
    conv = next(n.node_id for n in window.graph if n.op == "QuantizedConv2d_8x8to32")
    window.select_node(conv)
    window.scene.selectedItems()[0].setSelected(True)
    window.debug.toggle_breakpoint()
    old = window.scene
    window.show_consts.trigger()
    assert window.scene is not old                   # a new scene, swapped in when done
    assert window.scene.show_consts
    assert len(window.scene.items_by_id) == len(window.graph)     # the consts are nodes
    assert window.scene.selected_ids() == [conv]
    assert window.scene.items_by_id[conv].look.breakpoint
    window.show_consts.trigger()
    assert not window.scene.show_consts
    assert len(window.scene.items_by_id) < len(window.graph)
    assert window.scene.items_by_id[conv].look.breakpoint


def test_save_writes_on_another_thread_while_the_window_answers(window, big_file, tmp_path,
                                                                monkeypatch, qtbot):
    assert window.files.open_graph(big_file)
    qtbot.wait(500)                     # what the open left to do (the old scene's deletion)
    written_on: list[threading.Thread] = []
    real = graph_loader.save_graph

    def slow_save(graph, path):
        written_on.append(threading.current_thread())
        time.sleep(0.3)
        real(graph, path)

    monkeypatch.setattr(graph_loader, "save_graph", slow_save)
    target = str(tmp_path / "saved.hexgraph")
    start = time.perf_counter()
    ticks, saved = _ticks_while(window, lambda: window.files.save_graph_as(target))
    assert saved and written_on[0] is not threading.main_thread()
    assert len([t for t in ticks if t - start < 0.3]) >= 10
    assert len(graph_loader.read_graph(target).graph) == len(window.graph)
    assert window.files.path == target and not window.isWindowModified()


def test_a_save_that_fails_names_the_file(window, graph_file, tmp_path, monkeypatch):
    assert window.files.open_graph(graph_file)
    shown: list[str] = []
    monkeypatch.setattr("hexscope.app.file_actions.QMessageBox.critical",
                        lambda _parent, _title, text: shown.append(text))
    target = str(tmp_path / "no such folder" / "g.hexgraph")
    assert not window.files.save_graph_as(target)
    assert shown and target in shown[0]
    assert window.files.path == graph_file


def test_the_ranges_wait_for_the_run_to_end(shown, graph_file, monkeypatch):
    """The Ranges view reads the session only while its thread is idle (it adds results
    while it runs); the run's end brings them."""
    w = shown
    assert w.files.open_graph(graph_file)
    w.views.docks["ranges"].show()
    w.views.docks["ranges"].raise_()
    QApplication.processEvents()
    assert w.views.docks["ranges"].isVisible()
    read: list[bool] = []
    monkeypatch.setattr("hexscope.app.views.node_ranges",
                        lambda session, refs: read.append(w.controller.busy) or [])
    w.debug.actions["run"].trigger()             # a first run: the session exists
    qtbot_wait_until_idle(w)
    read.clear()
    w.debug.actions["run"].trigger()
    assert w.controller.busy and w.session is not None
    w.views.refresh_ranges()                    # as its timer would, mid-run
    assert read == []
    qtbot_wait_until_idle(w)
    w.views.refresh_ranges()
    assert read and not any(read)


def qtbot_wait_until_idle(w) -> None:
    deadline = time.perf_counter() + 20
    while w.controller.busy and time.perf_counter() < deadline:
        QApplication.processEvents()
        time.sleep(0.005)
    assert not w.controller.busy


def test_after_a_restart_the_looks_of_a_large_graph_are_set_between_events(window, tmp_path,
                                                                           qtbot, monkeypatch):
    from hexscope.app import debug_actions
    from hexscope.engine.nodes import OutputDef

    slices = [0]
    real = debug_actions.DebugActions._set_looks_slice

    def counted(self):
        slices[0] += 1
        real(self)

    monkeypatch.setattr(debug_actions.DebugActions, "_set_looks_slice", counted)
    monkeypatch.setattr(debug_actions, "LOOKS_SLICE_S", 0.005)

    graph = residual_graph(debug_actions.LOOKS_AT_ONCE + 100)
    graph.set_outputs(0x10, [OutputDef(max_sizes=(1, 8, 8, 8), elementsize=4)])
    path = tmp_path / "runs.hexgraph"
    graph.save(path)
    assert window.files.open_graph(str(path))
    window.debug.actions["run"].trigger()
    qtbot_wait_until_idle(window)
    scene = window.scene
    ran = [nid for nid, look in scene.looks.items() if look.status == "done"]
    assert len(ran) > BIG_GRAPH / 4
    slices[0] = 0
    window.debug.actions["restart"].trigger()
    qtbot.waitUntil(lambda: not window.controller.busy, timeout=20000)
    # at once: the next node; then the rest, slice by slice, without blocking the window
    assert scene.looks[window.next_node].is_next
    qtbot.waitUntil(lambda: all(scene.looks[nid].status == "pending" for nid in ran),
                    timeout=10000)
    assert [nid for nid, look in scene.looks.items() if look.is_next] == [window.next_node]
    assert slices[0] > 1


def test_a_replaced_scene_is_deleted_a_slice_at_a_time(qtbot):
    from hexscope.app.graph_loader import dispose_later

    scene = GraphScene(residual_graph(3000))
    steps = [0]
    real = scene.dispose_steps

    def counted(chunk=200):
        for step in real(chunk):
            steps[0] += 1
            yield step

    scene.dispose_steps = counted
    n_items = len(scene.items())
    with qtbot.waitSignal(scene.destroyed, timeout=20000):
        dispose_later(scene)
    assert n_items > 3000 and steps[0] >= 5         # many slices, not one big deletion


def test_the_ranges_of_a_large_run_are_made_on_another_thread(shown, tmp_path, qtbot,
                                                               monkeypatch):
    from hexscope.app import views
    from hexscope.engine.nodes import OutputDef

    graph = residual_graph(5 * views.RANGES_APART)      # prepare fuses most nodes
    graph.set_outputs(0x10, [OutputDef(max_sizes=(1, 8, 8, 8), elementsize=4)])
    path = tmp_path / "ranges.hexgraph"
    graph.save(path)
    w = shown
    assert w.files.open_graph(str(path))
    w.debug.actions["run"].trigger()
    qtbot_wait_until_idle(w)
    threads: list[threading.Thread] = []
    real = views.node_ranges

    def spy(session, refs):
        threads.append(threading.current_thread())
        return real(session, refs)

    monkeypatch.setattr(views, "node_ranges", spy)
    w.views.docks["ranges"].show()
    w.views.docks["ranges"].raise_()
    QApplication.processEvents()
    w.views.range_panel.set_stats([])
    w.views.refresh_ranges()
    qtbot.waitUntil(lambda: w.views.range_panel.model.rowCount() > 0, timeout=10000)
    assert threads and threads[0] is not threading.main_thread()
    assert w.views.range_panel.model.rowCount() == len(real(w.session, None))


class _CountingPlan(tuple):
    """A plan that counts membership tests (each is a pass over the plan)."""

    tests = 0

    def __contains__(self, item: object) -> bool:
        type(self).tests += 1
        return super().__contains__(item)


def test_refreshing_the_looks_after_a_run_reads_the_plan_once(window, tmp_path, monkeypatch):
    """After a run to the end no node is next: asking each node whether it is planned made
    the refresh quadratic."""
    from hexscope.engine.nodes import OutputDef
    from hexscope.engine.session import Session

    graph = residual_graph(300)
    graph.set_outputs(0x10, [OutputDef(max_sizes=(1, 8, 8, 8), elementsize=4)])
    path = tmp_path / "plan.hexgraph"
    graph.save(path)
    assert window.files.open_graph(str(path))
    window.debug.actions["run"].trigger()
    qtbot_wait_until_idle(window)
    assert window.next_node is None                  # ran to the end
    real = Session.plan
    monkeypatch.setattr(Session, "plan", property(lambda s: _CountingPlan(real.fget(s))))
    _CountingPlan.tests = 0
    window.debug.refresh_looks()
    assert _CountingPlan.tests <= 1


def test_scenes_replaced_in_a_row_are_taken_apart_one_after_the_other(qtbot):
    """One slice per event in all: each scene with its own timer made two slices run in
    one event (the const toggled twice)."""
    from hexscope.app.graph_loader import dispose_later

    order: list[str] = []
    scenes = {name: GraphScene(residual_graph(800)) for name in "ab"}
    for name, scene in scenes.items():
        real = scene.dispose_steps

        def counted(chunk=200, real=real, name=name):
            for step in real(chunk):
                order.append(name)
                yield step

        scene.dispose_steps = counted
    with qtbot.waitSignal(scenes["b"].destroyed, timeout=20000):
        for scene in scenes.values():
            dispose_later(scene)
    assert order.count("a") > 3 and order.count("b") > 3
    assert order == sorted(order)                    # all of a's slices, then b's


def test_a_build_waiting_for_its_layout_lets_events_run_between_its_steps(
        window, big_file, monkeypatch):
    """Waiting for the layout's thread, each slice slept in 2 ms steps for all its 30 ms
    (and waited for the GIL after each): now a waiting step ends the slice."""
    real_layout = scene_module.layered_layout

    def slow_layout(*args, **kwargs):
        time.sleep(0.3)
        return real_layout(*args, **kwargs)

    monkeypatch.setattr(scene_module, "layered_layout", slow_layout)
    seen: list[str] = []
    real = graph_loader.run_in_slices

    def watched(steps, dialog, budget=graph_loader.SLICE_S):
        def counted():
            for step in steps:
                seen.append("wait" if step[0] == scene_module.WAITING else "step")
                yield step
        return real(counted(), dialog, budget)

    monkeypatch.setattr(graph_loader, "run_in_slices", watched)
    timer = QTimer(window, interval=0)
    timer.timeout.connect(lambda: seen.append("tick"))
    timer.start()
    assert window.files.open_graph(big_file)
    timer.stop()
    waits = [k for k, what in enumerate(seen) if what == "wait"]
    assert len(waits) > 3                               # it did wait for the layout
    assert all(seen[k + 1] != "wait" for k in waits)    # and never twice in one slice


def test_a_replaced_scene_is_taken_apart_in_short_slices_with_pauses(qtbot):
    """A replaced scene's slices (30-50 ms, back to back) ran in the same turns as the new
    scene's first paint and looks: Import C's longest gap at 10,000 nodes."""
    from hexscope.app.graph_loader import DISPOSE_SLICE_S, dispose_later

    scene = GraphScene(residual_graph(5000))
    times: list[float] = []
    real = scene.dispose_steps

    def timed(chunk=200):
        for step in real(chunk):
            times.append(time.perf_counter())
            yield step

    scene.dispose_steps = timed
    with qtbot.waitSignal(scene.destroyed, timeout=20000):
        dispose_later(scene)
    # runs of steps without a pause of 3 ms between them: one slice each
    runs, start, last = [], times[0], times[0]
    for t in times[1:]:
        if t - last > 0.003:
            runs.append(last - start)
            start = t
        last = t
    runs.append(last - start)
    assert len(runs) >= 5
    assert sorted(runs)[len(runs) // 2] <= 1.5 * DISPOSE_SLICE_S
