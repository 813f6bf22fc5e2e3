"""TFLite as the reference (engine/io/tflite/reference.py): every TFLite tensor a node computes,
in LSB of that tensor's scale, first divergence first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexscope.app.cli import main
from hexscope.engine.errors import GraphFileError
from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.reference import compare_with_tflite, run_tflite

pytest.importorskip("ai_edge_litert", reason="the 'tflite' extra is not installed")
DATA = Path(__file__).resolve().parents[2] / "data" / "tflite"
U8 = DATA / "u8_relu_pools_concat.tflite"


def test_run_tflite_keeps_every_tensor_and_matches_the_saved_output():
    x = np.load(DATA / "u8_relu_pools_concat.input.npy")
    tensors = run_tflite(U8, [x])
    out = np.load(DATA / "u8_relu_pools_concat.output.npy")
    assert any(np.array_equal(v, out) for v in tensors.values())
    assert len(tensors) >= 5      # input, relu, two pools, concat


def test_compare_with_tflite_rows_per_tensor_in_its_lsb():
    graph = import_tflite(U8)
    x = np.load(DATA / "u8_relu_pools_concat.input.npy")
    c = compare_with_tflite(graph, U8, [x], tolerance_lsb=1.0)
    assert [d.title.split(" ")[1] for d in c.outputs] == ["'Relu'", "'MaxPool2d'",
                                                          "'MaxPool2d_1'", "'out'"]
    assert c.first_divergence is None
    # the Relu node keeps its input's range ([-1.008, 1]), the TFLite tensor has [-1, 1]:
    # half a step apart, which a tolerance of 0.25 LSB shows as the first divergence
    relu = c.outputs[0]
    assert relu.metrics.max_lsb == pytest.approx(0.5, abs=0.01)
    strict = compare_with_tflite(graph, U8, [x], tolerance_lsb=0.25)
    assert strict.first_divergence.node_id == relu.node_id
    assert "operator 0" in strict.first_divergence.note


def test_a_one_code_difference_on_the_tensors_grid_is_exactly_one_lsb():
    # the delegate's min/max Consts are float32 values of the tensor's scale: read by them, a
    # one-code difference was 1.0000001 LSB and 3 outputs were "beyond 1 LSB" at max 1.000
    model = DATA / "concat.tflite"
    c = compare_with_tflite(import_tflite(model), model, [np.load(DATA / "concat.input.npy")])
    worst = [d.metrics.max_lsb for d in c.outputs]
    assert set(worst) <= {0.0, 1.0} and worst.count(1.0) >= 3
    assert c.first_divergence is None and all(d.metrics.beyond == 0 for d in c.outputs)


def test_the_first_divergence_gives_a_then_b_as_the_comparison_names_them():
    # "A: sim   B: TFLite": the worst element's A value is Hexscope's, B TFLite's
    model = DATA / "pad_slice_pack.tflite"
    c = compare_with_tflite(import_tflite(model), model,
                            [np.load(DATA / "pad_slice_pack.input.npy")])
    d = c.first_divergence
    a, b = d.values()
    assert (c.a_name, c.b_name) == ("sim", "TFLite CPU (ai-edge-litert)")
    assert (d.metrics.worst_a, d.metrics.worst_b) == (a[d.metrics.worst_index],
                                                      b[d.metrics.worst_index])
    assert d.metrics.worst_a != d.metrics.worst_b


def test_compare_with_tflite_float_input_is_quantized():
    graph = import_tflite(U8)
    values = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 8, 8, 4)
    c = compare_with_tflite(graph, U8, [values])
    assert len(c.outputs) == 4 and c.first_divergence is None


def test_compare_with_tflite_names_the_missing_ops():
    # an op Hexscope does not declare (the 8-bit-bias transpose conv, in the delegate's place)
    path = DATA / "transpose_conv.tflite"
    graph = import_tflite(path)
    node = next(n for n in graph if n.op == "QuantizedTransposeConv2d_8x8p32to8")
    graph.replace_node(node.with_(op="QuantizedTransposeConv2d_8x8p8to8"))
    with pytest.raises(GraphFileError, match="transpose_conv.tflite: .*needs the hexagon_nn ops "
                                             "QuantizedTransposeConv2d_8x8p8to8 "
                                             "\\(not simulated\\)"):
        compare_with_tflite(graph, path)


def test_cli_compare_reference_tflite(capsys):
    assert main(["compare", str(U8), "--reference", "tflite"]) == 0
    out = capsys.readouterr().out
    assert "B: TFLite CPU" in out and "compare passed" in out
    assert main(["compare", str(U8), "--reference", "tflite", "--tolerance-lsb", "0.25"]) == 1
    assert "first divergence: 0x2 'Relu'" in capsys.readouterr().out


def test_a_model_tflite_cannot_run_is_one_clear_error(tmp_path, capsys):
    # MediaPipe's selfie segmentation ends in the custom Convolution2DTransposeBias, which
    # TFLite's stock resolver lacks: the interpreter's RuntimeError came out as a traceback
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model(str(U8))
    code = schema.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
    code.customCode = "NoSuchKernel"
    code.version = 1
    model.operatorCodes.append(code)
    model.subgraphs[0].operators[-1].opcodeIndex = len(model.operatorCodes) - 1
    path = tmp_path / "custom.tflite"
    path.write_bytes(flatbuffer_utils.convert_object_to_bytearray(model))
    x = np.load(DATA / "u8_relu_pools_concat.input.npy")
    with pytest.raises(GraphFileError, match=r"custom.tflite: TFLite cannot run the model: "
                                             r".*NoSuchKernel"):
        run_tflite(path, [x])
    assert main(["compare", str(path), "--reference", "tflite"]) == 2
    err = capsys.readouterr().err
    assert "TFLite cannot run the model" in err and "Traceback" not in err
