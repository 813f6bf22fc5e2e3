"""TFLite and the float reference in one comparison (engine/io/tflite/float_check.py): each
TFLite tensor's row carries Hexscope's and TFLite's errors against the float reference, and
the text says which side parts from it first (issue 27: "Combine it with the float
reference ... as the other Bs are")."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from hexscope.app.cli import main
from hexscope.engine.dtypes import DType
from hexscope.engine.io.tflite.float_check import float_parting_text, float_table
from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.reference import compare_with_tflite

pytest.importorskip("ai_edge_litert", reason="the 'tflite' extra is not installed")
ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "tflite"


def _compare(name: str, mode: str = "accumulated"):  # noqa: ANN202
    model = DATA / f"{name}.tflite"
    return compare_with_tflite(import_tflite(model), model,
                               [np.load(DATA / f"{name}.input.npy")], float_mode=mode)


def test_each_row_has_both_sides_against_the_float_reference():
    c = _compare("conv_relu6")
    assert c.float_mode == "accumulated"
    assert set(c.against_float) == {(d.node_id, d.index) for d in c.outputs}
    out = next(d for d in c.outputs if d.op == "Requantize_8to8")
    pair = c.pair(out)
    # the conv's output grid is 4 times coarser (its Relu6 bounds) and requantized after:
    # nnlib's output is 1.9 steps from the float meaning beyond the ideal rounding, TFLite's
    # within one step (docs/tflite.md)
    assert pair.error("hexscope") == pytest.approx(1.9089667, abs=1e-6)
    assert pair.error("tflite") < 1.0
    assert c.first_from_float("hexscope") is out and c.first_from_float("tflite") is None
    text = float_parting_text(c)
    assert "sim: 0x16 (Requantize_8to8); TFLite: none (sim parts first" in text
    assert "at the first divergence from TFLite, 0x16 (Requantize_8to8): sim 1.909 LSB " \
           "(excess) from float, TFLite ≤ 0.496 LSB (sim is the farther)" in text


def test_both_sides_are_read_on_the_tensors_grid_through_the_int8_cast():
    # the cast back to int8 has no range outputs: its codes are the tensor's own; read as
    # plain codes they were 128 "LSB" from the float value
    c = _compare("add")
    cast = next(d for d in c.outputs if d.op == "Quantized_CastUInt8ToInt8")
    before = next(d for d in c.outputs if d.op == "Requantize_8to8")
    assert c.pair(cast).error("hexscope") == pytest.approx(c.pair(before).error("hexscope"))
    assert c.pair(cast).error("hexscope") <= 1.0 + 1e-9


def test_tflite_parts_first_where_the_delegate_changes_the_math():
    # per-channel FULLY_CONNECTED weights: the delegate uses the first scale for every
    # channel (matmul_builder.cc), so its graph's float meaning is not TFLite's
    c = _compare("fully_connected")
    assert c.first_from_float("hexscope") is None
    first = c.first_from_float("tflite")
    assert first is not None and first.op == "Requantize_32to8"
    assert "(TFLite parts first: its kernel rounds worse there, or the delegate's graph " \
           "means something else" in float_parting_text(c)


def test_the_fc_bias_is_read_as_qint32_sums_by_the_float_reference():
    # the bias of QuantizedBiasAdd_32p32to32 was an int32 Const: the float reference read
    # its codes as integers and the accumulated run was 255 steps off at the output
    g = import_tflite(DATA / "fully_connected.tflite")
    add = next(n for n in g if n.op == "QuantizedBiasAdd_32p32to32")
    assert g.node(add.inputs[1][0]).const.dtype is DType.QINT32
    c = _compare("fully_connected")
    assert all(p.error("hexscope") < 1.0 for p in c.against_float.values())


def test_isolated_is_the_node_on_hexscopes_inputs():
    c = _compare("conv_relu6", "isolated")
    assert c.float_mode == "isolated"
    assert "from the float reference (isolated)" in float_table(c)


def test_cli_tflite_and_float_together(tmp_path, capsys):
    report = tmp_path / "r.json"
    code = main(["compare", str(DATA / "conv_relu6.tflite"), "--reference", "tflite",
                 "--reference", "float", "--input", str(DATA / "conv_relu6.input.npy"),
                 "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 1
    assert "vs TFLite  sim vs float  TFLite vs float" in out
    assert "first beyond 1 LSB from the float reference (accumulated): sim: 0x16" in out
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, json.loads(
        (ROOT / "resources" / "schemas" / "compare.schema.json").read_text()))
    floats = doc["runs"][0]["against_float"]
    assert floats["analysis"] == "accumulated" and floats["first_a"] == "0x16"
    assert floats["first_tflite"] is None and len(floats["outputs"]) == 2


def test_cli_tflite_float_and_backend_b_quiet(capsys):
    code = main(["compare", str(DATA / "pools.tflite"), "--reference", "tflite",
                 "--reference", "float", "--analysis", "isolated", "--backend-b", "sim",
                 "--input", str(DATA / "pools.input.npy"), "-q"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("from the float reference (isolated): sim: none; TFLite: none") == 2
    assert "first divergence from TFLite: sim: none; sim: none" in out
    # the float reference alone still refuses a second backend
    assert main(["compare", str(DATA / "pools.tflite"), "--reference", "float",
                 "--backend-b", "sim"]) == 2


def test_the_dilated_depthwise_float_run_keeps_space_to_batch_values():
    # SpaceToBatchND_8 / BatchToSpaceND_8's references ran the kernel on the accumulated
    # run's float32 reals as if they were codes: both sides were 207 steps "from float"
    c = _compare("depthwise_dilated")
    assert c.first_from_float("hexscope") is None and c.first_from_float("tflite") is None
    assert all(p.error("hexscope") <= 1.0 for p in c.against_float.values())


def test_no_float_value_for_any_row_is_said_not_taken_for_within():
    # every row without a float value (the reference failed before them): the verdict names
    # why instead of "both stay within it", which nothing measured
    from hexscope.engine.analysis.diff import OutputDiff
    from hexscope.engine.io.tflite.float_check import (
        FloatPair,
        TfliteComparison,
        float_parting_line,
    )

    c = TfliteComparison("tflite", "sim", "TFLite", 1.0, float_mode="accumulated")
    c.outputs = [OutputDiff(0x11, "Reshape", "0x11", 0, (1, 3, 1, 40)),
                 OutputDiff(0x13, "QuantizedConcat_8", "0x13", 0, (1, 5, 1, 40))]
    c.against_float = {(0x11, 0): FloatPair(None, None, "the float reference of Reshape "
                                                        "failed: out too small"),
                       (0x13, 0): FloatPair(None, None, "its input has no float value")}
    assert float_parting_text(c) == ("the float reference (accumulated) gave no value for "
                                     "any TFLite tensor: the float reference of Reshape "
                                     "failed: out too small")
    assert float_parting_line(c) == "Float reference (accumulated): no value for any row"
    c.against_float[(0x13, 0)] = FloatPair(None, None, "")
    c.outputs = c.outputs[1:]
    assert float_parting_text(c).endswith("any TFLite tensor: no float values")


@pytest.mark.parametrize("mode", ["accumulated", "isolated"])
def test_a_reshape_without_a_range_of_its_own_has_float_values(mode):
    # the wake word's first RESHAPE (node 0x11, int8 codes with no min/max outputs): the
    # float reference's own comparison skips it (codes without a range); accumulated, its
    # value is the float run's (the reshaped input in float32, both sides exact to 1e-5
    # LSB); isolated, its
    # reference is Hexscope's own codes, which were read as reals (thousands of LSB)
    c = _compare("wakeword_hey_jarvis", mode)
    row = next(d for d in c.outputs if d.node_id == 0x11)
    assert row.op == "Reshape"
    pair = c.pair(row)
    assert pair.hexscope is not None and pair.tflite is not None, pair.why
    assert pair.error("hexscope") == pytest.approx(0.0, abs=1e-3)
    assert pair.error("tflite") == pytest.approx(0.0, abs=1e-3)
