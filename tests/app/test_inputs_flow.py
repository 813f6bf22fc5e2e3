"""The inputs dialog end to end: choose, save with the graph, reload, and run with it."""

from __future__ import annotations

import numpy as np
from nop_graphs import INPUT
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from hexscope.engine import Graph
from hexscope.engine.inputs import InputSource, input_sources
from hexscope.widgets.inputs_dialog import InputsDialog
from support.titles import shown_title


def _fill_dialog(qtbot, window, fill) -> None:
    """Open the dialog with Ctrl+I's action, let ``fill`` set row 0, press OK."""
    seen: list[InputsDialog] = []
    tries = [0]

    def act() -> None:
        dialogs = [d for d in QApplication.topLevelWidgets()
                   if isinstance(d, InputsDialog) and d.isVisible()]
        if not dialogs:
            tries[0] += 1
            if tries[0] < 300:          # never wait forever: the assertion below fails
                QTimer.singleShot(10, act)
            return
        seen.append(dialogs[0])
        fill(dialogs[0].rows[0])
        dialogs[0].findChild(QDialogButtonBox).button(
            QDialogButtonBox.StandardButton.Ok).click()

    QTimer.singleShot(0, act)
    window.debug.actions["inputs"].trigger()        # modal: returns once OK was pressed
    assert len(seen) == 1 and seen[0].result() == InputsDialog.DialogCode.Accepted


def _run(qtbot, window) -> None:
    with qtbot.waitSignal(window.controller.idle, timeout=5000):
        window.debug.actions["run"].trigger()


def _input_values(window) -> np.ndarray:
    return np.asarray(window.session.output(INPUT, 0).array)


def test_constant_input_is_saved_with_the_graph_and_used(qtbot, window, graph_file, tmp_path):
    window.files.open_graph(graph_file)
    assert window.debug.actions["inputs"].shortcut().toString() == "Ctrl+I"

    def constant(row) -> None:
        row.kind.setCurrentText("constant")
        assert row.value.isEnabled() and not row.path.isEnabled()
        row.value.setValue(0.25)

    _fill_dialog(qtbot, window, constant)
    saved = window.graph.meta["inputs"]
    assert saved[0]["kind"] == "constant" and saved[0]["value"] == 0.25
    assert window.files.modified and shown_title(window).startswith("nops.hexgraph*")
    _run(qtbot, window)
    values = _input_values(window)
    assert values.shape == (1, 2, 2, 3) and np.all(values == np.float32(0.25))
    # the tensor reaches OUTPUT through the Nops
    assert np.all(window.session.graph_outputs()[1].array == np.float32(0.25))
    # saved with the graph: survives save and load
    path = tmp_path / "with_inputs.hexgraph"
    assert window.files.save_graph_as(str(path))
    assert input_sources(Graph.load(path))[0] == InputSource(kind="constant", value=0.25,
                                                              seed=0)
    window.files.new_graph()
    window.files.open_graph(str(path))
    assert input_sources(window.graph)[0].kind == "constant"
    _run(qtbot, window)
    assert np.all(_input_values(window) == np.float32(0.25))


def test_npy_input_beside_the_graph_replaces_the_inputs_of_a_running_session(
        qtbot, window, tmp_path):
    from nop_graphs import nop_graph

    path = tmp_path / "nops.hexgraph"
    nop_graph().save(path)
    data = np.arange(12, dtype=np.float32).reshape(1, 2, 2, 3) - 5.5
    np.save(tmp_path / "x.npy", data)
    window.files.open_graph(str(path))
    _run(qtbot, window)                               # the default: a seeded random tensor
    random_values = _input_values(window).copy()
    assert not np.array_equal(random_values, data)

    def npy(row) -> None:
        row.kind.setCurrentText("npy")
        assert row.path.isEnabled() and not row.value.isEnabled()
        row.path.setText("x.npy")                      # relative to the graph's folder

    with qtbot.waitSignal(window.controller.idle, timeout=5000):   # a session: it restarts
        _fill_dialog(qtbot, window, npy)
    assert window.graph.meta["inputs"][0]["kind"] == "npy"
    assert window.graph.meta["inputs"][0]["path"] == "x.npy"
    _run(qtbot, window)
    assert np.array_equal(_input_values(window), data)
    assert window.files.save_graph()
    assert Graph.load(path).meta["inputs"][0]["path"] == "x.npy"


def test_damaged_saved_settings_warn_and_the_dialog_starts_from_defaults(
        qtbot, window, graph_file, monkeypatch):
    """A graph file whose input settings are damaged: Ctrl+I says what is wrong and opens
    the dialog on the defaults; OK saves them over the damaged ones."""
    from PySide6.QtWidgets import QMessageBox

    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning",
                        lambda parent, title, text, *a: warned.append(text))
    window.files.open_graph(graph_file)
    window.graph.meta["inputs"] = [{"kind": "random", "seed": -3}]

    def keep(row) -> None:
        assert row.kind.currentText() == "random"

    _fill_dialog(qtbot, window, keep)
    assert len(warned) == 1 and "input 0: the saved 'seed' -3" in warned[0]
    assert window.graph.meta["inputs"][0]["seed"] == 0
    assert input_sources(window.graph)[0] == InputSource(seed=0)
