"""Delegate graphs that nnlib's own C refuses: the importer builds them as the delegate does,
warns, and Hexscope stops where nnlib (XiaoMi/nnlib, the tree Hexscope follows) would."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.errors import GraphFileError
from hexscope.engine.io.tflite.importer import import_tflite
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
    # the run goes on to the first DEPTHWISE_CONV_2D, whose 5x1 filter nnlib has no kernel
    # for (op_dwise_snode_8bit.c: "filter width currently only 3,5, 7")
    path = model_path("wakeword_hey_jarvis")
    graph, notes = _import(path)
    assert not [n for n in notes if "QuantizedConcat_8 on axis 1" in n]
    x = np.load(path.with_suffix(".input.npy"))
    with pytest.raises(GraphFileError, match=r"the run failed: node 0x31 "
                                             r"\(DepthwiseSupernode_8x8p32to8_d32\): "
                                             r".*filter width"):
        compare_with_tflite(graph, path, [x])


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
