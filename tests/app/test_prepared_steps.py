"""Stepping says what prepare did: the nodes it skipped and the op the next node runs as."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

EXAMPLE = Path(__file__).parents[2] / "resources" / "examples" / "classic_quantized.hexgraph"


def test_f10_names_the_nodes_prepare_removed_or_fused_and_the_fused_op(qtbot, shown):
    w = shown
    w.files.open_graph(str(EXAMPLE))
    w.canvas.setFocus()
    with qtbot.waitSignal(w.controller.idle, timeout=10000):
        qtbot.keyClick(w.canvas, Qt.Key.Key_F10)
    text = w.statusBar().currentMessage()
    assert text.startswith("Next: 0x10006 (Quantize runs as AutoQuantize)")
    for node_id, op in ((0x10002, "Flatten"), (0x10004, "Min_f"), (0x10005, "Max_f")):
        assert f"0x{node_id:x} {op}" in text
    assert "0x10003" not in text                     # a const is not a step
    assert "removed or fused by prepare" in text
    with qtbot.waitSignal(w.controller.idle, timeout=10000):
        qtbot.keyClick(w.canvas, Qt.Key.Key_F10)
    # the next step is the convolution chain, which prepare fuses into one Supernode under
    # the relu's id (prepare.c try_make_supernode_flavored)
    text = w.statusBar().currentMessage()
    assert "runs as InputSupernode_8x8p8to8_outd32" in text        # (then its d32 form)
    assert "0x10014 QuantizedConv2d_8x8to32" in text and "0x10019 QuantizedBiasAdd_8p8to32" in text


def test_a_replaced_node_is_labelled_with_the_op_it_runs_as(shown):
    """The canvas names what a replaced node runs as: the Quantize AutoQuantize, the relu that
    takes the convolution chain's place Supernode_8x8p8to8; fused nodes name the Supernode."""
    w = shown
    w.files.open_graph(str(EXAMPLE))
    looks = w.scene.looks
    replaced = {w.graph.node(i).op: look.runs_as for i, look in looks.items()
                if look.rewrite == "replaced"}
    # and the depth concat and the average pool their d32 forms, as every QuantizedConcat_8
    # not 1x1xD and every QuantizedAvgPool_8 on a device
    assert replaced == {"Quantize": "AutoQuantize",
                        "QuantizedRelu_8": "InputSupernode_8x8p8to8_outd32",
                        "QuantizedAvgPool_8": "QuantizedAvgPool_8_d32",
                        "QuantizedConcat_8": "QuantizedConcat_8_d32"}
    assert "Supernode_8x8p8to8" in looks[0x10014].rewrite_reason
    assert looks[0x10014].rewrite == "fused" and looks[0x10014].runs_as == ""


def test_while_an_edit_leaves_errors_only_the_touched_rewrites_lose_their_marks(shown):
    """Deleting the chain's convolution leaves its reader dangling, so the graph cannot be
    prepared: the chain's marks go, the AutoQuantize's stay (they used to all go, and come
    back on undo: thousands of repaints at 5,000 nodes); undo brings the chain's back."""
    w = shown
    w.files.open_graph(str(EXAMPLE))
    marked = {i: (look.rewrite, look.runs_as) for i, look in w.scene.looks.items()
              if look.rewrite}
    w.select_node(0x10014)
    w.edits.delete_selected()
    w.revalidate()
    assert w.issues and any(i.node_id != 0x10014 for i in w.issues)
    now = {i: (look.rewrite, look.runs_as) for i, look in w.scene.looks.items() if look.rewrite}
    assert now[0x10006] == ("replaced", "AutoQuantize") and now[0x10004][0] == "fused"
    supernode = [i for i, (kind, runs_as) in marked.items()
                 if runs_as == "InputSupernode_8x8p8to8_outd32"]
    assert supernode and all(i not in now for i in supernode)
    assert 0x10019 not in now                       # the chain's bias add: unmarked
    w.undo_stack.undo()
    w.revalidate()
    assert {i: (look.rewrite, look.runs_as) for i, look in w.scene.looks.items()
            if look.rewrite} == marked


def test_marks_of_a_quantize_fused_then_removed_as_dead():
    """A Quantize that becomes AutoQuantize and is then dead (nothing reads it) is marked
    removed, not "runs as" (marks_of once raised KeyError on it: an autosave test found it)."""
    import numpy as np

    from hexscope.engine import Graph
    from hexscope.engine.prepare import prepare
    from hexscope.engine.prepare.marks import marks_of

    graph = Graph()
    graph.append_node(0x10, "INPUT", outputs=1)
    graph.append_const_node(0x11, np.array([0, 1, 2, 3], np.int32))
    graph.append_const_node(0x12, np.array([0], np.int32))
    graph.append_node(0x13, "Min_f", [(0x10, 0), (0x11, 0), (0x12, 0)], outputs=1)
    graph.append_node(0x14, "Max_f", [(0x10, 0), (0x11, 0), (0x12, 0)], outputs=1)
    graph.append_node(0x15, "Quantize", [(0x10, 0), (0x13, 0), (0x14, 0)], outputs=3)
    graph.append_node(0x20, "OUTPUT", [(0x10, 0)])
    marks = marks_of(graph, prepare(graph))
    assert marks[0x15].kind == "removed" and marks[0x15].runs_as == ""
