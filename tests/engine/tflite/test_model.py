"""Reading .tflite files into the neutral model (engine/io/tflite/model.py)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from hexscope.engine.errors import GraphFileError
from hexscope.engine.io.tflite.model import EXTRA_MESSAGE, read_model


def test_read_model_tensors_quantization_and_options(model_path):
    m = read_model(model_path("depthwise_dilated"))
    (op,) = m.operators
    assert (op.code, op.version) == ("DEPTHWISE_CONV_2D", 3)
    assert op.options["DilationHFactor"] == 2 and op.options["StrideW"] == 1
    data, weights, bias = (m.tensor(i) for i in op.inputs)
    assert data.dtype == "int8" and data.shape == (1, 10, 10, 8) and not data.is_const
    assert weights.is_const and weights.data.dtype == np.int8 and weights.data.shape == (1, 3, 3, 8)
    # per-channel: one scale per output channel along axis 3
    assert weights.quant.per_channel and len(weights.quant.scale) == 8
    assert weights.quant.axis == 3
    assert bias.dtype == "int32" and bias.data.shape == (8,)
    assert m.inputs == (data.index,) and m.outputs == op.outputs


def test_read_model_every_committed_model(model_path):
    for path in sorted(model_path("x").parent.glob("*.tflite")):
        m = read_model(path)
        assert m.operators, path


def test_read_model_rejects_a_file_that_is_not_tflite(tmp_path):
    bad = tmp_path / "graph.tflite"
    bad.write_text("hello, not a flatbuffer")
    with pytest.raises(GraphFileError, match=r"graph\.tflite: not a TFLite model"):
        read_model(bad)


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9])
def test_read_model_truncated_file_is_one_clear_error(tmp_path, keep, model_path):
    blob = model_path("conv_relu6").read_bytes()
    cut = tmp_path / "cut.tflite"
    cut.write_bytes(blob[: int(len(blob) * keep)])
    with pytest.raises(GraphFileError, match=r"cut\.tflite: (damaged or truncated|tensor)"):
        read_model(cut)


def test_read_model_missing_file(tmp_path):
    with pytest.raises(GraphFileError, match="cannot read"):
        read_model(tmp_path / "none.tflite")


def test_read_model_without_the_extra_names_it(monkeypatch, model_path):
    monkeypatch.setitem(sys.modules, "tflite", None)
    with pytest.raises(GraphFileError) as err:
        read_model(model_path("conv_relu6"))
    assert str(err.value) == EXTRA_MESSAGE and "hexscope[tflite]" in EXTRA_MESSAGE


def test_read_model_any_cut_or_flipped_byte_is_never_a_traceback(tmp_path, model_path):
    blob = model_path("add").read_bytes()
    rng = np.random.default_rng(0)
    path = tmp_path / "m.tflite"
    for cut in list(range(0, len(blob), 97)) + [len(blob) - 1]:
        path.write_bytes(blob[:cut])
        with pytest.raises(GraphFileError):
            read_model(path)
    for _ in range(60):
        mutated = bytearray(blob)
        mutated[int(rng.integers(8, len(blob)))] ^= int(rng.integers(1, 256))
        path.write_bytes(bytes(mutated))
        try:
            read_model(path)
        except GraphFileError:
            pass


def test_short_name_keeps_the_producing_op_of_a_fused_name():
    from hexscope.engine.io.tflite.model import short_name

    assert short_name("MaxPool2d_1") == "MaxPool2d_1"
    assert short_name("m/Conv1_relu_1/Relu6;m/bn_Conv1_1/batchnorm/add_1;m/Conv1_1/conv") \
        == "m/Conv1_relu_1/Relu6…"
    assert short_name("a/l2_normalize;a/Square;a/Rsqrt1 (Quantized_CastUInt8ToInt8)") \
        == "a/l2_normalize… (Quantized_CastUInt8ToInt8)"


def test_imported_labels_are_short_and_the_origin_keeps_the_full_name(model_path):
    # TensorFlow names pad_slice_pack's L2 normalisation after its nine fused ops (300
    # characters): labels, the compare table and its first-divergence line were unreadable
    from hexscope.engine.io.tflite.importer import import_tflite
    from hexscope.engine.io.tflite.origin import tflite_origin

    graph = import_tflite(model_path("pad_slice_pack"))
    assert not any(";" in n.label for n in graph)
    l2 = next(n for n in graph if not n.is_const
              and n.label.startswith("functional_1/lambda_2_1/l2_normalize…"))
    assert "l2_normalize/Rsqrt" in tflite_origin(graph, l2.node_id)


def test_an_operator_code_in_builtin_code_only_is_read_as_tflite_reads_it(model_path):
    """ai-edge-quantizer writes the QUANTIZE it adds as builtin_code 114 with the deprecated
    byte 0; TFLite takes the larger (schema_utils.cc, GetBuiltinCode). The tflite package's
    BuiltinCode() gives the deprecated byte below 127, so these read as ADD with one input."""
    m = read_model(model_path("blazeface"))
    codes = [op.code for op in m.operators]
    assert codes.count("QUANTIZE") == 4 and codes.count("RESHAPE") == 4
    assert all(len(op.inputs) == 2 for op in m.operators if op.code == "ADD")
    assert codes.count("CONCATENATION") == 2


def test_a_sparse_tensor_is_named_as_sparse_not_as_short(tmp_path, model_path):
    # MediaPipe's pose_detection stores float16 weights with TFLite sparsity (192 bytes for
    # 384 values): the error said "holds 192 bytes ... (768 expected)", as for a damaged file
    pytest.importorskip("ai_edge_litert", reason="the 'tflite' extra is not installed")
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model(str(model_path("depthwise_dilated")))
    graph = model.subgraphs[0]
    weights = graph.tensors[graph.operators[0].inputs[1]]
    data = model.buffers[weights.buffer].data
    model.buffers[weights.buffer].data = data[: len(data) // 2]
    weights.sparsity = schema.SparsityParametersT()
    weights.sparsity.traversalOrder = [0, 1, 2, 3]
    path = tmp_path / "sparse.tflite"
    path.write_bytes(flatbuffer_utils.convert_object_to_bytearray(model))
    with pytest.raises(GraphFileError, match=r"sparse\.tflite: tensor \d+ '.*' is stored "
                                             r"sparse \(36 bytes for 72 values of int8\): "
                                             r"Hexscope reads dense tensors only"):
        read_model(path)
