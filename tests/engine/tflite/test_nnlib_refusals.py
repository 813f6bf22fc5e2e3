"""Delegate graphs that nnlib's own C refuses: the importer builds them as the delegate does,
warns, and Hexscope stops where nnlib (XiaoMi/nnlib, the tree Hexscope follows) would."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hexscope.engine.io.tflite.device_limits import depthwise_problem
from hexscope.engine.io.tflite.importer import delegation_report, import_tflite
from hexscope.engine.io.tflite.model import TfOperator
from hexscope.engine.io.tflite.reference import compare_with_tflite
from hexscope.engine.io.tflite.simple_builders import off_depth_concat_note
from hexscope.engine.validate import validate
from support.tflite_graphs import one


def _import(path):
    notes: list[str] = []
    return import_tflite(path, notes), notes


def test_concat_off_depth_runs_as_the_d32_concat_and_stops_at_the_5x1_depthwise(model_path):
    # concat_builder.cc counts the axis in 4-D: the wake word's axis 1 stays 1. op_concat.c
    # concat_execute: "only depth" for axis != 3; prepare.c do_convert_concat_depth32 makes it
    # QuantizedConcat_8_d32 (output 1x5x1x40 is not 1x1xD), and so does Hexscope's prepare:
    # the run goes on to the first DEPTHWISE_CONV_2D, which reads the width-1 concat's d32
    # output directly (prepare.c remove_unnecessary_d32_converts), without left padding
    # (op_concat_d32.c:496): "Need at least 1 left pad" (op_dwise_snode_8bit.c:716), checked
    # before its 5x1 filter, for which nnlib has no kernel either ("filter width currently
    # only 3,5, 7")
    path = model_path("wakeword_hey_jarvis")
    graph, notes = _import(path)
    assert not [n for n in notes if "QuantizedConcat_8 on axis 1" in n]
    x = np.load(path.with_suffix(".input.npy"))
    comparison = compare_with_tflite(graph, path, [x])
    # compared up to the node nnlib cannot run, which is named with its TFLite operator
    assert re.match(r"the run stopped at node 0x31 \(DepthwiseSupernode_8x8p32to8_d32, "
                    r"TFLite operator 21 DEPTHWISE_CONV_2D \(v3\) -> tensor 50 .*\): "
                    r".*Need at least 1 left pad.*Compared the 6 TFLite tensor\(s\) before it; 26 "
                    r"after it not compared\.$", comparison.stopped), comparison.stopped
    assert 0x31 in comparison.skipped
    assert len(comparison.outputs) == 6 and comparison.first_divergence is None
    # the first conv (operator 17, a 5x1 CONV_2D: a Supernode, which has no such limit) is
    # exact since its d32 form keeps the per-channel scales (1 LSB while prepare folded
    # them into the weights); the concats and slices before it are exact
    worst = {d.op: d.metrics.max_lsb for d in comparison.outputs}
    assert worst["Supernode_8x8p32to8"] == 0.0 and worst["Reshape"] == 0.0


def test_split_depthwise_concat_has_3n_plus_3_inputs(model_path):
    # conv_2d_builder.cc BuildSplittedDwConv appends the conv's output min/max to the
    # QuantizedConcat_8: 1 + 3*2 + 2 = 9 inputs; op_concat.c concat_check takes 3N+1 only
    graph, notes = _import(model_path("depthwise_5x5_s2"))
    concat = one(graph, "QuantizedConcat_8")
    assert len(concat.inputs) == 9
    assert any("gives QuantizedConcat_8 9 inputs" in n and "concat_check" in n for n in notes)
    (issue,) = validate(graph)
    assert issue.node_id == concat.node_id and issue.code == "arity"
    assert "3N+1" in issue.message


def test_resize_nearest_with_half_pixel_centers_has_6_inputs(model_path):
    # resize_nearest_neighbor_builder.cc passes data, size, min, max, align_corners,
    # half_pixel_centers; op_resizenear.c declares NN_IOCOUNT_RANGE(4,5), which
    # newnode.c checks when the node is appended ("bad input count")
    graph, notes = _import(model_path("resize"))
    resize = one(graph, "ResizeNearestNeighbor_8")
    assert len(resize.inputs) == 6
    assert any("ResizeNearestNeighbor_8 6 inputs" in n and "NN_IOCOUNT_RANGE(4,5)" in n
               for n in notes)
    (issue,) = validate(graph)
    assert issue.node_id == resize.node_id and issue.code == "arity"
    assert "4 to 5 inputs, has 6" in issue.message


def test_depth_concat_and_other_models_get_no_refusal_note(model_path):
    for name in ("concat", "u8_relu_pools_concat", "depthwise"):
        _, notes = _import(model_path(name))
        assert not [n for n in notes if "nnlib" in n], name


def test_off_depth_concat_note_says_when_the_device_fails_too():
    # prepare.c do_convert_concat_depth32: "Don't try and convert 1x1xD tensors to D32 format"
    op = TfOperator(3, "CONCATENATION", 1, (1, 2), (3,))
    flat = off_depth_concat_note(op, 0, (2, 1, 1, 8))
    assert flat.startswith("operator 3 CONCATENATION (v1): QuantizedConcat_8 on axis 0")
    assert "1x1xD" in flat and "the device fails too" in flat
    assert off_depth_concat_note(op, 2, (1, 4, 6, 8)) == ""    # prepare runs it in d32


def test_width_one_depthwise_is_named_at_import_with_its_filter(model_path):
    # conv_2d_builder.cc makes every DEPTHWISE_CONV_2D a DepthwiseSupernode_8x8p32to8 and
    # utils.cc never looks at the filter; op_dwise_snode_8bit.c has kernels for widths 3, 5, 7
    # only, so the wake word's four (H, 1) filters are said up front, before any run
    path = model_path("wakeword_hey_jarvis")
    graph, notes = _import(path)
    said = [n for n in notes if "the DSP cannot run it" in n]
    assert [n.split(":")[0] for n in said] == [
        f"operator {i} DEPTHWISE_CONV_2D (v3)" for i in (21, 26, 31, 36)]
    for note, h in zip(said, (5, 9, 13, 21), strict=True):
        assert f"its {h}x1 filter (height x width" in note
        assert "filter width 1" in note and "op_dwise_snode_8bit.c" in note
    assert [row[:2] for row in graph.meta["tflite"]["device_refused"]] == [
        [21, "DEPTHWISE_CONV_2D"], [26, "DEPTHWISE_CONV_2D"], [31, "DEPTHWISE_CONV_2D"],
        [36, "DEPTHWISE_CONV_2D"]]
    report = delegation_report(path)
    assert report[0].endswith("1 partition(s), 4 the DSP cannot run")
    k = report.index("  operator 21 DEPTHWISE_CONV_2D (v3): partition 0")
    assert report[k + 1].startswith("    the DSP cannot run it: its 5x1 filter")


def test_depthwise_models_the_dsp_runs_get_no_device_note(model_path):
    for name in ("depthwise", "depthwise_dilated", "depthwise_5x5_s2"):
        graph, notes = _import(model_path(name))
        assert not [n for n in notes if "the DSP cannot run it" in n], name
        assert graph.meta["tflite"]["device_refused"] == []


@pytest.mark.parametrize(("hw", "stride_w", "said"), [
    ((3, 3), 1, ""), ((5, 5), 2, ""), ((7, 7), 1, ""), ((2, 3), 1, ""),
    ((5, 1), 1, "filter width 1: nnlib's depthwise kernels take filter widths 3, 5 and 7"),
    ((3, 4), 1, "filter width 4"),
    ((3, 9), 1, "filter width 9 > 7"),
    ((1, 3), 1, "filter height 1"),
    ((3, 3), 3, "stride width 3"),
])
def test_depthwise_problem_restates_the_kernels_refusals(hw, stride_w, said):
    # op_dwise_snode_8bit.c: dwise_supernode_check ("filt width > 7", "filter height >= 2")
    # and dwise_supernode_recalculate_strategy (widths 3, 5, 7; stride width 1 or 2)
    got = depthwise_problem(hw, stride_w)
    assert got.startswith(said) if said else got == ""
