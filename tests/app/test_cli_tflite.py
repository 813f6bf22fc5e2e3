"""hexscope import / info / validate with a .tflite model (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexscope.app.cli import main
from hexscope.engine.graph import Graph

pytest.importorskip("tflite", reason="the 'tflite' extra is not installed")
DATA = Path(__file__).resolve().parents[1] / "data" / "tflite"


def test_cli_import_tflite_writes_a_hexgraph_with_its_meta(tmp_path, capsys):
    out = tmp_path / "add.hexgraph"
    assert main(["import", str(DATA / "add.tflite"), "-o", str(out)]) == 0
    assert "imported 39 nodes" in capsys.readouterr().out
    g = Graph.load(out)
    meta = g.meta["tflite"]
    assert meta["model"] == "add.tflite" and meta["partition"] == [0, 1, 2]
    add = next(n for n in g if n.op == "QuantizedAdd_8p8to8")
    assert meta["op_index"][f"0x{add.node_id:x}"] == 2


def test_cli_info_tflite_lists_refused_operators_with_their_reason(capsys):
    code = main(["info", str(DATA / "resize_pad_mean.tflite")])
    out, err = capsys.readouterr()
    assert "operator 0 RESIZE_BILINEAR (v3): refused: version 3: the delegate takes " \
           "RESIZE_BILINEAR up to v2" in out
    assert "operator 1 PAD (v2): partition 0\n" in out
    assert "tflite refused: operator 0 RESIZE_BILINEAR" in out
    assert code == 0 and "stays on the CPU" in err


def test_cli_validate_bad_files_one_line_each(tmp_path, capsys):
    bad = tmp_path / "x.tflite"
    bad.write_bytes(b"\x00" * 64)
    for path in (bad, DATA / "bad_float.tflite", DATA / "bad_rank5.tflite"):
        assert main(["validate", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
