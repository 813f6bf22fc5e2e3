"""Each TFLite operator on TFLite's own inputs (engine/io/tflite/isolated.py, ``compare
--reference tflite --analysis isolated``): every node after a TFLite tensor's node reads
TFLite's value of it, so a row is what one operator does differently."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexscope.app.cli import main
from hexscope.engine.errors import GraphFileError
from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.reference import compare_with_tflite

pytest.importorskip("ai_edge_litert", reason="the 'tflite' extra is not installed")
DATA = Path(__file__).resolve().parents[2] / "data" / "tflite"
MODEL = DATA / "blazeface.tflite"


def _x():  # noqa: ANN202
    return [np.load(DATA / "blazeface.input.npy")]


def test_each_operator_of_blazeface_is_within_a_code_on_tflites_inputs():
    graph = import_tflite(MODEL)
    whole = compare_with_tflite(graph, MODEL, _x())
    alone = compare_with_tflite(graph, MODEL, _x(), isolated=True)
    assert "each operator on TFLite's inputs" in alone.b_name
    by_row = {(d.node_id, d.index): d.metrics.max_lsb for d in alone.outputs}
    assert set(by_row) == {(d.node_id, d.index) for d in whole.outputs}
    # the last residual ADD: 114 codes after the network, 1 on its own (docs/tflite.md)
    add = next(d for d in whole.outputs if d.title.endswith("'activation_16'"))
    assert add.metrics.max_lsb >= 100 and by_row[(add.node_id, 0)] <= 1
    assert max(by_row.values()) <= 1 and alone.first_divergence is None
    # the rows are the nodes' own outputs, not the TFLite values they passed on
    assert sum(v == 1 for v in by_row.values()) >= 40


def test_isolated_is_the_simulators_alone():
    with pytest.raises(GraphFileError, match="simulator's alone"):
        compare_with_tflite(import_tflite(MODEL), MODEL, _x(), isolated=True,
                            float_mode="accumulated")


def test_the_cli_runs_each_operator_on_tflites_inputs(capsys):
    x = str(DATA / "blazeface.input.npy")
    code = main(["compare", str(MODEL), "--reference", "tflite", "--analysis", "isolated",
                 "--input", x, "--top", "3"])
    out = capsys.readouterr().out
    assert code == 0 and "each operator on TFLite's inputs" in out
    assert "no output beyond 1 LSB" in out
    assert main(["compare", str(MODEL), "--reference", "tflite", "--analysis", "isolated",
                 "--input", x, "--backend-b", "sim"]) == 2
    assert "not with another backend" in capsys.readouterr().err
