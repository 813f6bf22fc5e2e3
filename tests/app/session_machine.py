"""A user at the keyboard and mouse, at random: a hypothesis state machine over the real app.

It drives the main window through what a user touches: the palette, mouse drags between
ports, clicks, the Delete key, the inspector's fields, the undo keys, the View toggles, the
debugger keys (step, run, run to, breakpoints, restart, stop mid-run), the Compare panel
(a comparison is left in flight while the user goes on; pin, cancel) and File's commands.
It also edits, undoes and redoes *during* runs (F5, then at once a const edit, Ctrl+Z or
Ctrl+Shift+Z), and every run that ends FINISHED in a step (F5, F10, Ctrl+F10, the run of an
edit during a run, a stop that came too late) has its outputs checked against a fresh
session on the graph's saved bytes as the step began, started from the node state the run
started from (issue 32: an undo during a run was lost by the simulator, and every later run
computed with the undone const).
After every step it checks that the canvas shows exactly the graph, that the Problems panel
shows exactly ``validate(graph)``, that a settled Compare panel shows the current run and
no busy row, that undoing every step gives back the graph as opened
(saved bytes equal) and redoing them the graph as it is, and that nothing raised.

Run it as a script (the suite runs it in a child process, so a crash is a failing test with
the steps that led to it, not a dead suite)::

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/app/session_machine.py \
        --examples 200 --steps 40 --seed 1

Every step is printed before it runs; a crash leaves the last one on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, Phase, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.stateful import (  # noqa: E402
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from PySide6.QtCore import QPointF, QSettings, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QInputDialog, QMessageBox  # noqa: E402

from hexscope.app.main_window import MainWindow  # noqa: E402
from hexscope.app.settings import AppSettings  # noqa: E402
from hexscope.engine import Graph, Session  # noqa: E402
from hexscope.engine.errors import EngineError  # noqa: E402
from hexscope.engine.events import RunFinished, RunStatus  # noqa: E402
from hexscope.engine.validate import validate  # noqa: E402
from hexscope.widgets.graph_canvas.edge_item import EdgeItem  # noqa: E402

EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.hexgraph"))
OPS = ["Nop", "QuantizedRelu_8", "Const", "INPUT", "OUTPUT", "QuantizeDownAndShrinkRange_32to8",
       "Quantize", "Dequantize", "QuantizedMaxPool_8", "Convert_to_d32", "Flatten"]
PADDINGS = ["NA", "SAME", "VALID"]
KEY, MOD = Qt.Key, Qt.KeyboardModifier
IDLE_TIMEOUT = 30.0
VERBOSE = bool(os.environ.get("HEXSCOPE_SESSION_VERBOSE"))  # what each step changed

APP = QApplication.instance() or QApplication([])
RAISED: list[str] = []
CHECKED: list[int] = []     # each finished run checked against a fresh session: its outputs


def _record(kind, value, tb) -> None:   # Qt slots' exceptions land here, not in the caller
    RAISED.append("".join(traceback.format_exception(kind, value, tb)))


sys.excepthook = _record


def say(text: str) -> None:
    print(text, flush=True)


class AppSession(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="hexscope-session-"))
        settings_file = QSettings(str(self.tmp / "settings.ini"), QSettings.Format.IniFormat)
        self.w = MainWindow(AppSettings(settings_file, root=str(self.tmp / "appdata")))
        self.w.show()
        self.w.activateWindow()
        deadline = time.monotonic() + 5
        while not self.w.isActiveWindow() and time.monotonic() < deadline:
            APP.processEvents()
            QTest.qWait(10)
        self.saved: list[Path] = []
        self.original = self.w.graph.to_bytes()
        self.steps = 0
        # File commands ask about unsaved work: this user always discards.
        QMessageBox.question = staticmethod(  # type: ignore[method-assign]
            lambda *a, **k: QMessageBox.StandardButton.Discard)
        QMessageBox.critical = staticmethod(lambda *a, **k: None)  # type: ignore[method-assign]
        QMessageBox.warning = staticmethod(lambda *a, **k: None)  # type: ignore[method-assign]
        # Compare ▸ Other backend… asks for a name: this user always says the simulator.
        QInputDialog.getText = staticmethod(  # type: ignore[method-assign]
            lambda *a, **k: ("sim", True))

    # helpers ----------------------------------------------------------------------------------
    def _log(self, text: str) -> None:
        if VERBOSE and self.steps:
            say(f"    -> {self.w.undo_stack.count()} undo step(s), {len(self.w.graph)} node(s);"
                f" status: {self.w.statusBar().currentMessage()[:100]!r}")
        self.steps += 1
        say(f"step {self.steps}: {text}")

    def _key(self, key: Qt.Key, mods: Qt.KeyboardModifier = MOD.NoModifier) -> None:
        self.w.canvas.setFocus()
        QTest.keyClick(self.w.canvas, key, mods)
        self._settle()

    def _settle(self) -> None:
        """Let queued signals land and the worker finish; a freeze is a failure."""
        deadline = time.monotonic() + IDLE_TIMEOUT
        APP.processEvents()
        while self.w.controller.busy or self.w.controller._pending:  # noqa: SLF001
            if time.monotonic() > deadline:
                raise AssertionError(f"the app did not become idle within {IDLE_TIMEOUT} s")
            QTest.qWait(5)
        APP.processEvents()

    def _ids(self) -> list[int]:
        return list(self.w.graph.order)

    def _select(self, ids: list[int]) -> None:
        scene = self.w.scene
        scene.clearSelection()
        for node_id in ids:
            item = scene.items_by_id.get(scene.folded.get(node_id, node_id))
            if item is not None:
                item.setSelected(True)
        APP.processEvents()

    def _reset_baseline(self) -> None:
        self._settle()
        self.original = self.w.graph.to_bytes()

    # the start --------------------------------------------------------------------------------
    @initialize(path=st.sampled_from(EXAMPLES))
    def open_example(self, path: Path) -> None:
        say(f"--- new example: {path.name}")
        self._log(f"open {path.name}")
        self.w.files.open_graph(str(path))
        self._reset_baseline()

    # editing ------------------------------------------------------------------------------------
    @rule(op=st.sampled_from(OPS))
    def add_op_from_palette(self, op: str) -> None:
        self._log(f"add {op} from the palette")
        self.w.palette.op_activated.emit(op)      # what a double click on the palette sends
        self._settle()

    @precondition(lambda self: len(self.w.scene.items_by_id) >= 2)
    @rule(data=st.data())
    def drag_a_wire(self, data: st.DataObject) -> None:
        items = self.w.scene.items_by_id
        ids = sorted(items)
        src = items[data.draw(st.sampled_from(ids), "src")]
        dst = items[data.draw(st.sampled_from(ids), "dst")]
        out = data.draw(st.integers(0, max(0, len(src.outputs) - 1)), "out")
        port = data.draw(st.integers(0, len(dst.node.inputs)), "port")
        self._log(f"drag 0x{src.node_id:x}:{out} to 0x{dst.node_id:x} input {port}")
        canvas = self.w.canvas
        start, end = src.output_pos(out), dst.input_pos(port)
        canvas.fitInView(src.sceneBoundingRect().united(dst.sceneBoundingRect()).adjusted(
            -40, -40, 40, 40), Qt.AspectRatioMode.KeepAspectRatio)
        vp = canvas.viewport()
        QTest.mousePress(vp, Qt.MouseButton.LeftButton, MOD.NoModifier, canvas.mapFromScene(start))
        QTest.mouseMove(vp, canvas.mapFromScene((start + end) / 2))
        QTest.mouseMove(vp, canvas.mapFromScene(end))
        QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, MOD.NoModifier, canvas.mapFromScene(end))
        self._settle()

    @precondition(lambda self: any(isinstance(i, EdgeItem) for i in self.w.scene.items()))
    @rule(data=st.data())
    def delete_a_wire(self, data: st.DataObject) -> None:
        edges = sorted((e for e in self.w.scene.items() if isinstance(e, EdgeItem)),
                       key=lambda e: (e.dst.node_id, e.dst_port))
        edge = data.draw(st.sampled_from(edges), "edge")
        self._log(f"select the wire into 0x{edge.dst.node_id:x} input {edge.dst_port}, Delete")
        self.w.scene.clearSelection()
        edge.setSelected(True)
        self._key(KEY.Key_Delete)

    @precondition(lambda self: len(self.w.graph.order) > 0)
    @rule(data=st.data())
    def delete_nodes(self, data: st.DataObject) -> None:
        ids = data.draw(st.lists(st.sampled_from(self._ids()), min_size=1, max_size=3,
                                 unique=True), "ids")
        self._log(f"select {[hex(i) for i in ids]}, Delete")
        self._select(ids)
        self._key(KEY.Key_Delete)

    @precondition(lambda self: len(self.w.scene.items_by_id) > 0)
    @rule(data=st.data(), dx=st.integers(-300, 300), dy=st.integers(-200, 200))
    def drag_a_node(self, data: st.DataObject, dx: int, dy: int) -> None:
        node_id = data.draw(st.sampled_from(sorted(self.w.scene.items_by_id)), "node")
        item = self.w.scene.items_by_id[node_id]
        self._log(f"drag 0x{node_id:x} by ({dx}, {dy})")
        canvas = self.w.canvas
        canvas.center_on_node(node_id)
        grab = item.scenePos() + QPointF(item.width / 2, 8)     # the header, not a port
        vp = canvas.viewport()
        start = canvas.mapFromScene(grab)
        QTest.mousePress(vp, Qt.MouseButton.LeftButton, MOD.NoModifier, start)
        QTest.mouseMove(vp, start + (canvas.mapFromScene(grab + QPointF(dx, dy)) - start) / 2)
        QTest.mouseMove(vp, canvas.mapFromScene(grab + QPointF(dx, dy)))
        QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, MOD.NoModifier,
                           canvas.mapFromScene(grab + QPointF(dx, dy)))
        self._settle()

    @precondition(lambda self: len(self.w.graph.order) > 0)
    @rule(data=st.data(), label=st.text(max_size=12))
    def relabel(self, data: st.DataObject, label: str) -> None:
        node_id = data.draw(st.sampled_from(self._ids()), "node")
        self._log(f"relabel 0x{node_id:x} to {label!r} in the inspector")
        self.w.select_node(node_id)
        APP.processEvents()
        inspector = self.w.inspector
        if inspector.node_id is None:
            return
        inspector.label.setText(label)
        inspector.label.editingFinished.emit()
        self._settle()

    @precondition(lambda self: len(self.w.graph.order) > 0)
    @rule(data=st.data(), padding=st.sampled_from(PADDINGS))
    def set_padding(self, data: st.DataObject, padding: str) -> None:
        node_id = data.draw(st.sampled_from(self._ids()), "node")
        self._log(f"padding of 0x{node_id:x} to {padding} in the inspector")
        self.w.select_node(node_id)
        APP.processEvents()
        if self.w.inspector.node_id is None:
            return
        combo = self.w.inspector.padding
        combo.setCurrentText(padding)
        combo.activated.emit(combo.currentIndex())     # what the user's pick in the list sends
        self._settle()

    @rule(n=st.integers(1, 6))
    def undo(self, n: int) -> None:
        self._log(f"Ctrl+Z x{n}")
        for _ in range(n):
            self._key(KEY.Key_Z, MOD.ControlModifier)

    @rule(n=st.integers(1, 6))
    def redo(self, n: int) -> None:
        self._log(f"Ctrl+Shift+Z x{n}")
        for _ in range(n):
            self._key(KEY.Key_Z, MOD.ControlModifier | MOD.ShiftModifier)

    @rule()
    def auto_layout(self) -> None:
        self._log("Ctrl+L (auto layout)")
        self._key(KEY.Key_L, MOD.ControlModifier)

    @rule(direction=st.sampled_from(["left-to-right", "top-to-bottom"]))
    def layout_direction(self, direction: str) -> None:
        self._log(f"View > Layout direction > {direction}")
        self.w.layout_direction.actions[direction].trigger()
        self._settle()

    @rule(zoom=st.sampled_from([0.03, 0.1, 0.3, 1.0]))
    def zoom(self, zoom: float) -> None:
        # Far out the canvas paints from tiles: edits after this must still show.
        self._log(f"zoom to {zoom}")
        self.w.canvas.zoom_to(zoom)
        self.w.canvas.viewport().repaint()
        self._settle()

    @rule()
    def toggle_consts(self) -> None:
        self._log("View > Show consts as nodes")
        self.w.show_consts.trigger()
        self._settle()

    @rule()
    def toggle_prepared(self) -> None:
        self._log("View > Show prepared graph")
        self.w.show_prepared.trigger()
        self._settle()

    # debugging --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _checking_the_run(self) -> Iterator[list[RunFinished]]:
        """Around a step that runs: a run that ends FINISHED in it is checked against a
        fresh session on the graph as saved when the step began (the request carries the
        graph as it was then; an edit made during the run reaches the next one)."""
        saved = self.w.graph.to_bytes()
        ended: list[RunFinished] = []
        self.w.controller.run_finished.connect(ended.append)
        try:
            yield ended
            self._settle()
        finally:
            self.w.controller.run_finished.disconnect(ended.append)
        if any(e.status is RunStatus.FINISHED for e in ended):
            self._check_against_the_file(saved)

    def _check_against_the_file(self, saved: bytes) -> None:
        """The outputs of the run that just finished equal a fresh session's on ``saved``,
        run from the node state the run started from (issue 32: an undo during a run was
        lost by the simulator, and every later run computed with the undone const)."""
        session = self.w.session
        if session is None or session.next_node is not None \
                or session.executor.failed or not session.executor.finished:
            return                                  # stopped, failed or ended since
        path = self.tmp / "check.hexgraph"
        path.write_bytes(saved)
        try:
            fresh = Session(Graph.load(path))
        except EngineError:
            # the editor's graph does not validate: then the app must not have run it
            raise AssertionError("a run finished on a graph that does not validate") from None
        try:
            fresh.set_inputs(session.inputs)
            states, store = session._snapshot            # noqa: SLF001 - the run's start
            fresh.executor.states.update(copy.deepcopy(states))
            fresh.executor.store.update(store)
            fresh.run()
            got = [t.array.tobytes() for t in session.graph_outputs()]
            want = [t.array.tobytes() for t in fresh.graph_outputs()]
        finally:
            fresh.close()
        assert got == want, "the run's outputs differ from a fresh session on the saved graph"
        CHECKED.append(len(got))
        say(f"    checked: {len(got)} output(s) as a fresh session computes them")

    @rule()
    def step(self) -> None:
        self._log("F10")
        with self._checking_the_run():              # the last step ends the run
            self._key(KEY.Key_F10)

    @rule()
    def run(self) -> None:
        self._log("F5")
        with self._checking_the_run():
            self._key(KEY.Key_F5)

    @precondition(lambda self: len(self.w.graph.order) > 0)
    @rule(data=st.data())
    def run_to(self, data: st.DataObject) -> None:
        node_id = data.draw(st.sampled_from(self._ids()), "node")
        self._log(f"select 0x{node_id:x}, Ctrl+F10")
        self.w.select_node(node_id)
        with self._checking_the_run():              # a target past the end runs to it
            self._key(KEY.Key_F10, MOD.ControlModifier)

    @precondition(lambda self: len(self.w.graph.order) > 0)
    @rule(data=st.data())
    def breakpoint(self, data: st.DataObject) -> None:
        node_id = data.draw(st.sampled_from(self._ids()), "node")
        self._log(f"select 0x{node_id:x}, F9")
        self.w.select_node(node_id)
        self._key(KEY.Key_F9)

    @rule()
    def restart(self) -> None:
        self._log("Ctrl+Shift+F5")
        self._key(KEY.Key_F5, MOD.ControlModifier | MOD.ShiftModifier)

    def _consts(self) -> list[int]:
        # quantized ones too: four of the six examples have no float const, and with float
        # consts only the edits (and undos) during a run that issue 32 is about came in one
        # example of ten
        return [n.node_id for n in self.w.graph
                if n.is_const and n.const is not None and n.const.has_data
                and n.const.array.dtype.kind in "fiu" and 0 < n.const.array.size <= 4096]

    def _edit_const(self, node_id: int, scale: float) -> None:
        array = self.w.graph.node(node_id).const.array
        if array.dtype.kind == "f":
            edited = (array * np.float32(scale)).astype(array.dtype)
        else:                                   # codes scaled within the type's range
            info = np.iinfo(array.dtype)
            edited = np.clip(np.rint(array.astype(np.float64) * scale), info.min,
                             info.max).astype(array.dtype)
        self.w.edits.set_const(node_id, edited)

    @precondition(lambda self: bool(self._consts()))
    @rule(data=st.data(), scale=st.sampled_from([0.5, 2.0, -1.0, 0.0]))
    def edit_a_const(self, data: st.DataObject, scale: float) -> None:
        node_id = data.draw(st.sampled_from(self._consts()), "const")
        self._log(f"const 0x{node_id:x} times {scale} in the inspector")
        self._edit_const(node_id, scale)
        self._settle()

    @rule(data=st.data(), what=st.sampled_from(["const", "undo", "redo", "undo-redo",
                                                "edit, then undo"]))
    def edit_during_a_run(self, data: st.DataObject, what: str) -> None:
        consts = self._consts()
        node_id = data.draw(st.sampled_from(consts), "const") if consts else None
        if what in ("const", "edit, then undo") and node_id is None:
            what = "undo"
        if what == "edit, then undo":
            # issue 32's steps: edit a const, F5, Ctrl+Z at once, then F5 again, which must
            # compute with the const as the undo left it (it kept the edited one)
            self._log(f"const 0x{node_id:x} times 3, F5 then at once undo, then F5")
            self._edit_const(node_id, 3.0)
            self._settle()
        else:
            self._log(f"F5 then at once {what}" + (f" 0x{node_id:x}" if what == "const" else ""))
        self.w.canvas.setFocus()
        # the run is checked on the graph as it was at F5; the edit, on the next run's check
        with self._checking_the_run():
            QTest.keyClick(self.w.canvas, KEY.Key_F5)
            if what == "const":
                self._edit_const(node_id, 3.0)
            if what in ("undo", "undo-redo", "edit, then undo"):
                QTest.keyClick(self.w.canvas, KEY.Key_Z, MOD.ControlModifier)
            if what in ("redo", "undo-redo"):
                QTest.keyClick(self.w.canvas, KEY.Key_Z, MOD.ControlModifier | MOD.ShiftModifier)
        if what == "edit, then undo":
            with self._checking_the_run():
                self._key(KEY.Key_F5)

    @rule()
    def run_to_the_end_and_check_against_the_file(self) -> None:
        self._log("F5 until the run ends; check it against a fresh session on the file")
        with self._checking_the_run() as ended:
            for _ in range(60):                 # through every breakpoint
                before = len(ended)
                self._key(KEY.Key_F5)
                session = self.w.session
                if len(ended) == before or session is None or session.next_node is None \
                        or session.executor.failed:
                    break                       # refused (an invalid graph), ended or failed

    @rule()
    def stop_mid_run(self) -> None:
        self._log("F5 then at once Shift+F5")
        self.w.canvas.setFocus()
        with self._checking_the_run():              # a small graph may end before the stop
            QTest.keyClick(self.w.canvas, KEY.Key_F5)
            QTest.keyClick(self.w.canvas, KEY.Key_F5, MOD.ShiftModifier)

    # comparing ------------------------------------------------------------------------------
    @rule(b=st.sampled_from(["isolated", "accumulated", "pinned", "backend"]))
    def compare(self, b: str) -> None:
        # not settled: the comparison is made on its worker while the next steps go on
        self._log(f"Compare panel: B = {b}, Compare")
        panel = self.w.compare.panel  # type: ignore[attr-defined]
        panel.target.setCurrentIndex(panel.target.findData(b))
        QTest.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
        self._settle()

    @rule()
    def cancel_compare(self) -> None:
        self._log("Compare panel: Cancel")
        self.w.compare.panel.cancel_button.click()  # type: ignore[attr-defined]
        self._settle()

    @rule()
    def pin(self) -> None:
        self._log("Ctrl+Shift+P (pin this run)")
        self._key(KEY.Key_P, MOD.ControlModifier | MOD.ShiftModifier)

    # files ------------------------------------------------------------------------------------
    @rule()
    def save_as(self) -> None:
        path = self.tmp / f"saved-{len(self.saved)}.hexgraph"
        self._log(f"File > Save As {path.name}")
        assert self.w.files.save_graph_as(str(path))
        self.saved.append(path)
        self._settle()

    @precondition(lambda self: bool(self.saved))
    @rule(data=st.data())
    def open_saved(self, data: st.DataObject) -> None:
        path = data.draw(st.sampled_from(self.saved), "path")
        self._log(f"File > Open {path.name}")
        saved = path.read_bytes()
        assert self.w.files.open_graph(str(path))
        self._reset_baseline()
        assert self.original == saved, "opening a saved graph changed it"

    @rule()
    def new(self) -> None:
        self._log("File > New")
        self.w.files.new_graph()
        self._reset_baseline()

    # invariants -------------------------------------------------------------------------------
    @invariant()
    def nothing_raised(self) -> None:
        assert not RAISED, RAISED[0]

    @invariant()
    def a_settled_compare_panel_shows_the_current_run(self) -> None:
        compare = self.w.compare  # type: ignore[attr-defined]
        if compare.running is not None or compare._timer.isActive() \
                or self.w.controller.busy:  # noqa: SLF001
            return                                  # in flight: not made to wait for
        assert not compare.panel.busy, "the busy row stays with nothing in flight"
        shown, session = compare.panel.comparison, self.w.session
        if compare.active and shown is not None and session is not None:
            ran = set(session.executor.trace)
            assert {d.node_id for d in shown.outputs} <= ran, "a stale comparison is shown"

    @invariant()
    def canvas_shows_the_graph(self) -> None:
        scene, graph = self.w.scene, self.w.graph
        drawn = set(scene.items_by_id)
        assert drawn | set(scene.folded) == set(graph.order)
        assert not drawn & set(scene.folded)
        if scene.show_consts:
            assert not scene.folded
        edges = {(e.src.node_id, e.src_port, e.dst.node_id, e.dst_port)
                 for e in scene.items() if isinstance(e, EdgeItem)}
        expected = {(src, out, node.node_id, port) for node in graph if node.node_id in drawn
                    for port, (src, out) in enumerate(node.inputs)
                    if src in drawn and out < len(scene.items_by_id[src].outputs)}
        assert edges == expected, (edges ^ expected)

    @invariant()
    def problems_panel_is_validate(self) -> None:
        deadline = time.monotonic() + 5
        while self.w._validate_timer.isActive() and time.monotonic() < deadline:  # noqa: SLF001
            QTest.qWait(10)
        wanted = [str(i) for i in validate(self.w.graph)]
        assert [str(i) for i in self.w.problems.issues] == wanted
        rows = [self.w.problems.list.item(k).text()[2:] for k in range(len(wanted))]
        assert rows == wanted

    @invariant()
    def undo_all_gives_the_opened_graph_and_redo_all_the_current_one(self) -> None:
        stack, graph = self.w.undo_stack, self.w.graph
        current, index = graph.to_bytes(), stack.index()
        stack.setIndex(0)
        assert graph.to_bytes() == self.original, "undoing every step did not give it back"
        stack.setIndex(index)
        assert graph.to_bytes() == current, "redoing every step did not give it back"
        self._settle()

    def teardown(self) -> None:
        w = self.w
        w.undo_stack.setClean()
        w.files.meta_dirty = False
        w.close()
        w.shutdown()
        w.deleteLater()
        APP.processEvents()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    # shrinking a failing session replays it hundreds of times (many minutes of GUI work):
    # the test reports the unshrunk steps with the seed, and a developer asks for it
    parser.add_argument("--shrink", action="store_true", help="shrink a failing session")
    args = parser.parse_args(argv)
    say(f"seed {args.seed}, {args.examples} example(s) of up to {args.steps} steps")
    machine = seed(args.seed)(AppSession)
    start = time.monotonic()
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=args.examples, stateful_step_count=args.steps, deadline=None,
            database=None, suppress_health_check=list(HealthCheck), print_blob=True,
            phases=list(Phase) if args.shrink else [p for p in Phase if p is not Phase.shrink]))
    except BaseException:
        # sys.excepthook only records (for the invariant), so the failure is printed here
        traceback.print_exc()
        return 1
    say(f"done: {args.examples} example(s) in {time.monotonic() - start:.1f} s;"
        f" {len(CHECKED)} finished run(s) checked against a fresh session")
    return 0


if __name__ == "__main__":
    sys.exit(main())
