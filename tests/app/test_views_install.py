"""install_views (issue 5) against a stand-in window that offers only the APP_CONTRACT API."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QMainWindow

from hexscope.app.views import install_views
from hexscope.engine import D32Padding, Graph, Session, Tensor
from hexscope.engine.nodes import OutputDef


class ContractWindow(QMainWindow):
    session_changed = Signal(object)
    graph_replaced = Signal()
    node_selected = Signal(int)
    results_changed = Signal()

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self._session = None
        self.overlays: list = []
        self.selected: list[int] = []

    @property
    def session(self):
        return self._session

    def add_dock(self, title, widget, area):
        from PySide6.QtWidgets import QDockWidget

        dock = QDockWidget(title, self)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def select_node(self, node_id: int) -> None:
        self.selected.append(node_id)

    def set_overlay(self, colors, legend=()) -> None:
        self.overlays.append((colors, list(legend)))


def _graph() -> Graph:
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 3, 5, 40), 1)])
    g.append_node(0x101, "Nop", inputs=[(0x100, 0)], outputs=1)
    g.append_node(0x102, "OUTPUT", inputs=[(0x101, 0)])
    return g


def test_views_follow_session_and_selected_node(qtbot):
    g = _graph()
    w = ContractWindow(g)
    qtbot.addWidget(w)
    views = install_views(w)
    assert set(views.docks) == {"tensor", "d32", "fill", "check", "ranges"}
    x = np.arange(3 * 5 * 40, dtype=np.uint8).reshape(1, 3, 5, 40)
    d32 = Tensor.from_array(x).to_d32(D32Padding(1, 1, 4, 3, 0, 24), fill=0x77)
    s = Session(g)
    s.execute([d32])                 # Nop copies the d32 tensor: input and output are d32
    w._session = s
    w.session_changed.emit(s)
    w.node_selected.emit(0x101)
    np.testing.assert_array_equal(views.inspector.heatmap.image_data, x[0, :, :, 0])
    assert views.d32.tensor is not None and views.d32.picture.image_data.shape == (5 * 2, 12 * 32)
    # The Nop's input and output are the same bytes: nothing marked as changed.
    assert views.fill.changed_mask is not None and not views.fill.changed_mask.any()
    # Linked selection: an element picked in the d32 view is highlighted in the inspector.
    views.d32.element_selected.emit((0, 2, 3, 7))
    assert views.inspector.heatmap.choice.fixed[3] == 7
    views.range_panel.node_activated.emit(0x101)
    assert w.selected == [0x101]
    w.node_selected.emit(-1)
    assert views.inspector.tensor is None and views.d32.tensor is None


def test_padding_check_overlay_reaches_the_window(qtbot):
    g = _graph()
    w = ContractWindow(g)
    qtbot.addWidget(w)
    views = install_views(w)
    x = Tensor.from_array(np.ones((1, 3, 5, 40), np.uint8)).to_d32()
    s = Session(g)
    s.set_inputs([x])
    w._session = s
    w.session_changed.emit(s)
    report = views.check.run_check()
    assert report is not None and report.readers == []
    colors, legend = w.overlays[-1]
    assert colors == {} and legend[0][0] == "reads padding"
    assert Qt.DockWidgetArea.BottomDockWidgetArea == w.dockWidgetArea(views.docks["tensor"])


def _two_output_graph() -> Graph:
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 16, 16, 64), 1),
                                           OutputDef((1, 3, 5, 7), 1)])
    g.append_node(0x101, "OUTPUT", inputs=[(0x100, 0), (0x100, 1)])
    return g


def test_a_selection_is_shared_only_while_both_views_show_the_same_tensor(qtbot):
    """The inspector can switch to an output the d32 view does not show; an index of that
    output could lie outside the d32 tensor (it once reached the layout strip's paint and
    took the process down), so it is not passed on."""
    w = ContractWindow(_two_output_graph())
    qtbot.addWidget(w)
    views = install_views(w)
    big = Tensor.from_array(np.zeros((1, 16, 16, 64), np.uint8))
    small = Tensor.from_array(np.ones((1, 3, 5, 7), np.uint8)).to_d32()
    s = Session(w.graph)
    s.execute([big, small])
    w._session = s
    w.session_changed.emit(s)
    w.node_selected.emit(0x100)
    assert views.inspector.tensor is views.d32.tensor            # output 1, the d32 one
    views.inspector.element_selected.emit((0, 2, 3, 6))
    assert views.d32._selected == (0, 2, 3, 6)
    views.inspector._output.setCurrentIndex(0)                   # the flat 16x16x64 output
    assert views.d32.tensor is small_out(s)                      # stays on the d32 output
    views.inspector.element_selected.emit((0, 15, 15, 0))
    assert views.d32._selected == (0, 2, 3, 6)                   # unchanged
    views.d32.grab()                                             # paints without an error


def small_out(s: Session) -> Tensor:
    return s.result(0x100).outputs[1]


def test_the_d32_view_follows_the_d32_output_picked_in_the_tensor_view(qtbot):
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 2, 3, 40), 1),
                                           OutputDef((1, 3, 5, 7), 1)])
    g.append_node(0x101, "OUTPUT", inputs=[(0x100, 0), (0x100, 1)])
    w = ContractWindow(g)
    qtbot.addWidget(w)
    views = install_views(w)
    first = Tensor.from_array(np.zeros((1, 2, 3, 40), np.uint8)).to_d32()
    second = Tensor.from_array(np.ones((1, 3, 5, 7), np.uint8)).to_d32()
    s = Session(g)
    s.execute([first, second])
    w._session = s
    w.session_changed.emit(s)
    w.node_selected.emit(0x100)
    outputs = s.result(0x100).outputs
    assert views.d32.tensor is outputs[0]
    views.inspector._output.setCurrentIndex(1)
    assert views.d32.tensor is outputs[1]
    views.inspector.element_selected.emit((0, 2, 4, 6))          # shared again
    assert views.d32._selected == (0, 2, 4, 6)


def test_a_view_that_fails_does_not_leave_the_others_on_the_previous_node(qtbot, caplog,
                                                                          monkeypatch):
    w = ContractWindow(_graph())
    qtbot.addWidget(w)
    views = install_views(w)
    x = Tensor.from_array(np.ones((1, 3, 5, 40), np.uint8)).to_d32()
    s = Session(w.graph)
    s.execute([x])
    w._session = s
    w.session_changed.emit(s)

    def broken(*_args) -> None:
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(views.inspector.heatmap, "set_tensor", broken)
    with caplog.at_level("WARNING", logger="hexscope.views"):
        w.node_selected.emit(0x101)
    assert views.d32.tensor is s.result(0x101).outputs[0]
    assert views.fill.changed_mask is not None
    assert "the Tensor view could not show this node: ZeroDivisionError" in caplog.text
