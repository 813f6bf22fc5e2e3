"""A new graph's INPUT gets its shape and type in the Inspector, where the node is."""

from __future__ import annotations

from hexscope.engine.inputs import input_sources
from hexscope.widgets.input_decl import parse_shape


def _new_input(window) -> int:
    window.files.new_graph()
    node_id = window.edits.add_op("INPUT")
    out = window.edits.add_op("OUTPUT")
    window.edits.connect(node_id, 0, out, 0)
    window.select_node(node_id)
    return node_id


def test_shape_and_type_typed_in_the_inspector_make_the_input_runnable(qtbot, window):
    node_id = _new_input(window)
    decl = window.inspector.input_decl
    assert not decl.isHidden() and decl.shapes[0].text() == ""
    decl.types[0].setCurrentText("uint8")
    decl.shapes[0].setText("1x4x4x3")
    decl.shapes[0].editingFinished.emit()
    node = window.graph.node(node_id)
    assert (node.outputs[0].max_sizes, node.outputs[0].elementsize) == ((1, 4, 4, 3), 1)
    assert input_sources(window.graph)[0].dtype == "uint8"
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions["run"].trigger()
    assert window.session.executor.failed == {} and window.run_errors == []
    out = window.session.output(node_id, 0)
    assert out.shape == (1, 4, 4, 3) and out.array.dtype.name == "uint8"
    window.undo_stack.undo()                        # the shape is an undo step
    assert window.graph.node(node_id).outputs[0].max_sizes == ()


def test_a_shape_that_is_not_one_is_refused_with_a_message(qtbot, window):
    node_id = _new_input(window)
    decl = window.inspector.input_decl
    decl.shapes[0].setText("1,a,3")
    decl.shapes[0].editingFinished.emit()
    assert window.graph.node(node_id).outputs[0].max_sizes == ()
    assert "not a shape" in window.statusBar().currentMessage()


def test_running_without_a_shape_says_where_to_give_one(qtbot, window):
    _new_input(window)
    with qtbot.waitSignal(window.controller.idle, timeout=10000):
        window.debug.actions["run"].trigger()
    assert any("Inspector ▸ Shape" in text for text in window.run_errors)


def test_parse_shape_reads_the_usual_spellings():
    assert parse_shape("1, 224,224 ,3") == (1, 224, 224, 3)
    assert parse_shape("8x8") == (8, 8)
    for bad in ("", "1,2,3,4,5", "1,-2", "0,3", "a"):
        try:
            parse_shape(bad)
        except ValueError:
            continue
        raise AssertionError(bad)


def test_with_nothing_selected_the_inspector_shows_no_values(qtbot, window):
    node_id = _new_input(window)
    window.select_node(node_id)
    window.scene.clearSelection()
    assert window.inspector.padding.currentText() == "" and window.inspector.label.text() == ""
    assert window.inspector.input_decl.isHidden()
