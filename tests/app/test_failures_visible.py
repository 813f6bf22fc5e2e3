"""A failed run leaves a lasting mark, and New/Open start from a clean slate."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "engine" / "analysis"))
from test_degenerate import NAN_MIN, Q, _graph  # noqa: E402

EXAMPLES = Path(__file__).parents[2] / "resources" / "examples"


def _do(qtbot, window, action: str) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions[action].trigger()


def _problem_texts(window) -> list[str]:
    return [window.problems.list.item(k).text() for k in range(window.problems.list.count())]


@pytest.fixture
def failing(tmp_path, window, qtbot):
    path = tmp_path / "nan.hexgraph"
    g = _graph(float("nan"))
    g.meta["inputs"] = [{"kind": "constant", "value": 3.0, "dtype": "uint8",
                         "shape": [1, 1, 1, 8]}]
    g.save(path)
    assert window.files.open_graph(str(path))
    _do(qtbot, window, "run")
    return window


def _failed_node(window) -> int:
    return next(iter(window.session.executor.failed))


def test_a_failed_run_is_listed_in_problems_with_its_node_and_origin(failing):
    w = failing
    failed = _failed_node(w)
    texts = _problem_texts(w)
    row = next(t for t in texts if f"0x{failed:x}" in t and "failed" in t)
    assert f"0x{NAN_MIN:x}" in row                       # where the degenerate range began
    assert w.problems_dock.windowTitle().startswith("Problems (")
    # activating the problem selects the node
    item = w.problems.list.item(texts.index(row))
    w.problems.list.itemActivated.emit(item)
    assert w.scene.selected_ids() == [failed]


def test_the_failed_node_is_selected_centred_and_stays_marked(qtbot, failing):
    w = failing
    failed = _failed_node(w)
    assert w.scene.selected_ids() == [failed]
    assert w.scene.looks[failed].status == "failed"
    w.select_node(w.graph.order[0])                       # looking elsewhere keeps the mark
    assert w.scene.looks[failed].status == "failed"
    assert "✖" in w.log_dock.windowTitle()               # the log tab shows an error marker


def test_fixing_the_cause_clears_the_problem_after_the_next_run(qtbot, failing):
    w = failing
    w.edits.set_const(NAN_MIN, np.array([-1.0], np.float32))
    _do(qtbot, w, "run")
    assert w.session.executor.failed == {}
    assert not any("failed" in t for t in _problem_texts(w))
    assert w.scene.looks[Q].status == "done"


def test_new_clears_every_panel_and_the_run_state(qtbot, failing):
    w = failing
    w.show()
    qtbot.waitExposed(w)
    w.views.docks["ranges"].show()
    w.views.docks["ranges"].raise_()
    w.views.refresh_ranges()
    assert w.views.range_panel.model.stats            # the ranges of the nodes that ran
    assert w.timing.table.rowCount() > 0 and w.log_panel.lines
    w.undo_stack.setClean()
    w.files.meta_dirty = False
    w.files.new_graph()
    qtbot.waitUntil(lambda: w.session is None or not w.session.executor.trace, timeout=5000)
    assert _problem_texts(w) == ["No problems."]
    assert w.problems_dock.windowTitle() == "Problems"
    assert w.log_panel.lines == [] and w.log_dock.windowTitle() == "Log"
    assert w.timing.table.rowCount() == 0 and w.run_label.text() == ""
    assert not w.progress.isVisible()
    assert w.next_node is None
    assert w.views.range_panel.model.stats == [] and w.views.batch_stats == []


def test_open_clears_the_previous_graphs_log_and_problems(qtbot, failing):
    w = failing
    w.undo_stack.setClean()
    w.files.meta_dirty = False
    assert w.files.open_graph(str(EXAMPLES / "classic_quantized.hexgraph"))
    assert not any("failed" in t for t in _problem_texts(w))
    assert w.log_panel.lines == []



def test_stop_is_disabled_once_a_run_has_failed_or_finished(qtbot, failing):
    w = failing
    assert not w.debug.actions["stop"].isEnabled()          # failed
    w.edits.set_const(NAN_MIN, np.array([-1.0], np.float32))
    w.select_node(Q)
    w.debug.actions["breakpoint"].trigger()
    _do(qtbot, w, "restart")
    _do(qtbot, w, "run")                                      # paused at the breakpoint
    assert w.next_node == Q and w.debug.actions["stop"].isEnabled()
    _do(qtbot, w, "run")                                      # to the end
    assert w.next_node is None and not w.debug.actions["stop"].isEnabled()
