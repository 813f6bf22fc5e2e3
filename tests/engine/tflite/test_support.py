"""The delegate's support rules and partitions (tensorflow/lite/delegates/hexagon/utils.cc
CheckOpVersion, IsNodeSupportedByHexagon)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.errors import GraphFileError
from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.model import Quantization, TfModel, TfOperator, TfTensor
from hexscope.engine.io.tflite.support import delegation, refusal

Q = Quantization((0.1,), (0,))


def _t(i, shape=(1, 4, 4, 4), dtype="int8", data=None):
    return TfTensor(i, f"t{i}", shape, dtype, Q, data)


def _model(ops, tensors):
    return TfModel("m.tflite", tuple(tensors), tuple(ops), (0,), (ops[-1].outputs[0],))


def _conv(index, x, y, **options):
    opts = {"StrideH": 1, "StrideW": 1, "DilationHFactor": 1, "DilationWFactor": 1,
            "FusedActivationFunction": 0, "Padding": 0, **options}
    return TfOperator(index, "CONV_2D", 3, (x, 10, 11), (y,), opts)


TENSORS = [_t(i) for i in range(6)] + [_t(i) for i in range(6, 10)] + [
    _t(10, (4, 1, 1, 4), data=np.zeros((4, 1, 1, 4), np.int8)),
    _t(11, (4,), "int32", np.zeros(4, np.int32))]


@pytest.mark.parametrize(("options", "reason"), [
    ({"StrideH": 4}, "stride 4x1: at most 3"),
    ({"DilationHFactor": 2}, "dilation 2x1"),
    ({"FusedActivationFunction": 4}, "fused activation TANH"),
])
def test_refusal_conv_rules(options, reason):
    m = _model([_conv(0, 0, 1, **options)], TENSORS)
    assert reason in refusal(m, m.operators[0])


def test_refusal_versions_and_rank():
    relu1 = TfOperator(0, "RELU", 1, (0,), (1,))
    big = TfOperator(0, "ADD", 3, (0, 1), (2,))
    m = _model([relu1], TENSORS)
    assert refusal(m, relu1) == "version 1: the delegate takes RELU v2"
    assert refusal(m, big) == "version 3: the delegate takes ADD up to v2"
    t5 = list(TENSORS)
    t5[1] = _t(1, (1, 2, 2, 2, 2))
    m5 = _model([TfOperator(0, "RELU", 2, (0,), (1,))], t5)
    assert "tensor 1 't1' int8[1, 2, 2, 2, 2] has 5 dimensions" in refusal(m5, m5.operators[0])
    sum_op = TfOperator(0, "SUM", 1, (0, 11), (1,))
    assert "SUM recomputes" in refusal(m, sum_op)
    assert refusal(m, TfOperator(0, "GATHER", 1, (0, 11), (1,))) == \
        "GATHER is not among the operators the delegate takes"
    # op_builder.cc maps SQUARED_DIFFERENCE, but IsNodeSupportedByHexagon refuses it
    squared = TfOperator(0, "SQUARED_DIFFERENCE", 1, (0, 1), (2,))
    assert refusal(m, squared) == "SQUARED_DIFFERENCE is not among the operators the delegate takes"


def test_delegation_partitions_cut_at_a_refused_operator():
    ops = [_conv(0, 0, 1), _conv(1, 1, 2), TfOperator(2, "RELU", 1, (2,), (3,)),
           _conv(3, 3, 4), _conv(4, 4, 5), _conv(5, 5, 6)]
    m = _model(ops, TENSORS)
    d = delegation(m)
    assert d.refused == {2: "version 1: the delegate takes RELU v2"}
    assert [p.operators for p in d.partitions] == [(3, 4, 5), (0, 1)]
    big, small = d.partitions
    assert (big.inputs, big.outputs) == ((3,), (6,))
    assert (small.inputs, small.outputs) == ((0,), (2,))


def test_import_refused_ops_are_reported(model_path):
    notes: list[str] = []
    g = import_tflite(model_path("resize_pad_mean").with_name("pools.tflite"), notes)
    assert g.meta["tflite"]["refused"] == [] and notes == []


def test_import_float_model_is_one_clear_error(model_path):
    with pytest.raises(GraphFileError, match="it is a float model .*'serving_default"):
        import_tflite(model_path("bad_float"))


def test_import_rank_above_4_names_the_tensor(model_path):
    with pytest.raises(GraphFileError, match=r"int8\[1, 2, 2, 2, 2, 4\] has 6 dimensions"):
        import_tflite(model_path("bad_rank5"))


def test_import_unsupported_version_is_listed(model_path):
    from hexscope.engine.io.tflite.model import read_model

    m = read_model(model_path("resize_pad_mean"))
    d = delegation(m)
    assert d.refused == {0: "version 3: the delegate takes RESIZE_BILINEAR up to v2"}


def test_real_wakeword_model_cut_at_its_stateful_operators(model_path):
    # pymicro-wakeword's "hey jarvis" (Apache-2.0): VAR_HANDLE / READ_VARIABLE /
    # ASSIGN_VARIABLE / CALL_ONCE stay on the CPU in their order (graph_info.cc chains
    # operators with side effects); greedily, every delegated operator gathers in one
    # partition between the reads and the assigns, fed by the model input and the variables
    from hexscope.engine.io.tflite.model import read_model

    path = model_path("wakeword_hey_jarvis")
    m = read_model(path)
    d = delegation(m)
    refused = {m.operators[i].code for i in d.refused}
    assert refused == {"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"}
    (part,) = d.partitions
    assert len(part.operators) == len(m.operators) - len(d.refused) == 26
    assert m.inputs[0] in part.inputs and len(part.inputs) > 1
    assert list(part.inputs) == sorted(part.inputs)
    notes: list[str] = []
    g = import_tflite(path, notes)
    assert g.meta["tflite"]["partition"] == list(part.operators)
    assert any("stays on the CPU: VAR_HANDLE is not among the operators" in n for n in notes)
    inp = next(n for n in g if n.op == "INPUT")
    assert len(inp.outputs) == len(part.inputs)


def test_partition_greedy_gathers_independent_branches():
    # graph_info.cc (greedy): a supported operator whose inputs are ready joins the current
    # delegated subset even after a refused one in the execution order
    ops = [_conv(0, 0, 1), TfOperator(1, "RELU", 1, (1,), (2,)), _conv(2, 0, 3),
           _conv(3, 2, 4)]
    m = TfModel("m.tflite", tuple(TENSORS), tuple(ops), (0,), (3, 4))
    d = delegation(m)
    parts = [p.operators for p in (*d.partitions, *d.too_small)]
    assert parts == [(0, 2), (3,)]
    first = d.partitions[0]
    assert first.inputs == (0,) and first.outputs == (1, 3)
