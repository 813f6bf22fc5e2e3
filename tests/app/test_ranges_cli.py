"""``hexscope calibrate``, ``apply-ranges`` and ``sensitivity`` on the command line (issue 29):
files written, exit codes, one clear message for bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hexscope.app import cli
from support.range_graphs import data_set, four_patterns


@pytest.fixture
def folder(tmp_path):
    four_patterns().save(tmp_path / "g.hexgraph")
    images = tmp_path / "images"
    images.mkdir()
    for k, s in enumerate(data_set(3)):
        np.save(images / f"x{k}.npy", s.tensors[0].array)
    return tmp_path


def test_calibrate_writes_an_encodings_file(folder, capsys):
    out = folder / "r.json"
    code = cli.main(["calibrate", str(folder / "g.hexgraph"), "--inputs-dir",
                     str(folder / "images"), "-o", str(out), "-j", "1", "-q",
                     "--method", "percentile:99"])
    assert code == 0
    doc = json.loads(out.read_text())
    assert "0x40:0" in doc["activation_encodings"]
    assert doc["hexscope"]["method"] == "percentile:99" and doc["hexscope"]["runs"] == 3
    assert "3 run(s)" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--method", "median"], "--method 'median'"),
    (["--inputs-dir", "nowhere"], "nowhere: not a directory"),
])
def test_calibrate_refuses_bad_input_with_one_line(folder, capsys, args, message):
    argv = ["calibrate", str(folder / "g.hexgraph"), "-o", str(folder / "r.json"), *args]
    if "--inputs-dir" not in args:
        argv += ["--inputs-dir", str(folder / "images")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (folder / "r.json").exists()


def test_apply_ranges_writes_a_graph_without_run_time_ranges(folder, capsys):
    ranges, out = folder / "r.json", folder / "out.hexgraph"
    assert cli.main(["calibrate", str(folder / "g.hexgraph"), "--inputs-dir",
                     str(folder / "images"), "-o", str(ranges), "-j", "1", "-q"]) == 0
    assert cli.main(["apply-ranges", str(folder / "g.hexgraph"), str(ranges), "-o",
                     str(out)]) == 0
    text = capsys.readouterr().out
    assert "0x24 QuantizeDownAndShrinkRange_32to8 → Requantize_32to8" in text
    assert "4 node(s) given fixed ranges" in text and "left finding" not in text
    assert cli.main(["run", str(out), "--inputs-dir", str(folder / "images"), "-q",
                     "-j", "1"]) == 0


def test_apply_ranges_names_a_bad_file(folder, capsys):
    (folder / "r.json").write_text('{"activation_encodings": {"nobody": []}}')
    assert cli.main(["apply-ranges", str(folder / "g.hexgraph"), str(folder / "r.json"),
                     "-o", str(folder / "out.hexgraph")]) == 2
    err = capsys.readouterr().err
    assert "r.json" in err and "'nobody'" in err and "Traceback" not in err


def test_sensitivity_prints_the_ranking_and_writes_the_report(folder, capsys):
    report = folder / "s.json"
    assert cli.main(["sensitivity", str(folder / "g.hexgraph"), "--inputs-dir",
                     str(folder / "images"), "-j", "1", "--top", "2", "--report",
                     str(report)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "3 input set(s)" in lines[0] and lines[1].split()[:2] == ["rank", "node"]
    assert len(lines) == 4                                  # the top 2
    doc = json.loads(report.read_text())
    assert doc["nodes"][0]["rank"] == 1 and len(doc["nodes"]) >= 4
    assert lines[2].split()[1] == doc["nodes"][0]["node"]


def test_sensitivity_of_a_graph_without_output_says_so(folder, capsys):
    from hexscope.engine import Graph
    from hexscope.engine.nodes import OutputDef

    g = Graph()
    g.append_node(1, "INPUT", outputs=[OutputDef((1, 4, 4, 4), 4)])
    g.save(folder / "bare.hexgraph")
    assert cli.main(["sensitivity", str(folder / "bare.hexgraph"), "--inputs-dir",
                     str(folder / "images"), "-j", "1"]) == 2
    assert "no OUTPUT node" in capsys.readouterr().err


BAD = [
    (["calibrate", "{d}/missing.hexgraph", "--inputs-dir", "{d}/images", "-o", "{d}/r.json"]),
    (["calibrate", "{d}/garbage.hexgraph", "--inputs-dir", "{d}/images", "-o", "{d}/r.json"]),
    (["calibrate", "{d}/g.hexgraph", "--inputs-dir", "{d}/bad", "-o", "{d}/r.json", "-j",
      "1"]),
    (["calibrate", "{d}/g.hexgraph", "--inputs-dir", "{d}/images", "-o",
      "{d}/nowhere/r.json"]),
    (["calibrate", "{d}/g.hexgraph", "--inputs-dir", "{d}/images", "-o", "{d}/r.json",
      "-j", "0"]),
    (["calibrate", "{d}/g.hexgraph", "--inputs-dir", "{d}/images", "-o", "{d}/r.json",
      "--scheduler", "garbage"]),
    (["apply-ranges", "{d}/g.hexgraph", "{d}/garbage.hexgraph", "-o", "{d}/o.hexgraph"]),
    (["apply-ranges", "{d}/g.hexgraph", "{d}/images", "-o", "{d}/o.hexgraph"]),
    (["apply-ranges", "{d}/g.hexgraph", "{d}/missing.json", "-o", "{d}/o.hexgraph"]),
    (["apply-ranges", "{d}/g.hexgraph", "{d}/r.json", "-o", "{d}/nowhere/o.hexgraph"]),
    (["sensitivity", "{d}/missing.hexgraph", "--inputs-dir", "{d}/images"]),
    (["sensitivity", "{d}/g.hexgraph", "--inputs-dir", "{d}/bad", "-j", "1"]),
    (["sensitivity", "{d}/g.hexgraph", "--inputs-dir", "{d}/images", "--report",
      "{d}/nowhere/s.json"]),
    (["sensitivity", "{d}/g.hexgraph", "--inputs-dir", "{d}/images", "--reference", "tflite"]),
]


@pytest.mark.parametrize("argv", BAD, ids=lambda a: " ".join(a[:1] + a[1:2]).replace("{d}/", ""))
def test_bad_files_and_arguments_give_one_line_and_exit_2(folder, capsys, argv):
    (folder / "garbage.hexgraph").write_text("garbage")
    (folder / "bad").mkdir(exist_ok=True)
    (folder / "bad" / "text.npy").write_text("hello")
    (folder / "r.json").write_text('{"activation_encodings": {}}')
    args = [a.replace("{d}", str(folder)) for a in argv]
    try:
        code = cli.main(args)
    except SystemExit as exc:           # argparse: usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and "Traceback" not in out + err
    assert len(lines) == 1 and lines[0].startswith("hexscope"), err
