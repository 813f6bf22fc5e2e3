"""hexscope diff A B: text, --json, --prepared and the exit codes (issue 31)."""

from __future__ import annotations

import json

from hexscope.app.cli import main
from support.diff_graphs import three_edits


def _saved(tmp_path):
    a, b = three_edits()
    pa, pb = tmp_path / "a.hexgraph", tmp_path / "b.hexgraph"
    a.save(pa)
    b.save(pb)
    return str(pa), str(pb)


def test_cli_diff_lists_the_three_changes_and_exits_1(tmp_path, capsys):
    pa, pb = _saved(tmp_path)
    assert main(["diff", pa, pb]) == 1
    out = capsys.readouterr().out
    assert "changed  0x1005 (Const)" in out and "1 of 64 byte(s) differ" in out
    assert "removed  0x100d (Const)" in out
    assert "input 4: 0x100d:0 → 0x1006:0 (rewired)" in out
    assert out.rstrip().endswith("2 changed, 1 removed, 0 added (24 nodes in A, 23 in B, "
                                 "23 matched)")


def test_cli_diff_json_of_a_graph_with_itself_is_empty_and_exits_0(tmp_path, capsys):
    pa, _ = _saved(tmp_path)
    assert main(["diff", pa, pa, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "hexscope-diff" and doc["same"] is True and doc["nodes"] == []


def test_cli_diff_json_names_each_node(tmp_path, capsys):
    pa, pb = _saved(tmp_path)
    assert main(["diff", pa, pb, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [(n["kind"], n["a"], n["b"]) for n in doc["nodes"]] == [
        ("changed", "0x1005", "0x1005"), ("removed", "0x100d", None),
        ("changed", "0x1010", "0x1010")]
    assert doc["nodes"][0]["changes"][0]["differing_bytes"] == 1


def test_cli_diff_bad_input_exits_2_with_one_line(tmp_path, capsys):
    pa, _ = _saved(tmp_path)
    bad = tmp_path / "bad.hexgraph"
    bad.write_text("not a graph")
    assert main(["diff", pa, str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.hexgraph" in err and "Traceback" not in err
    assert main(["diff", pa, str(tmp_path / "missing.hexgraph")]) == 2
    assert main(["diff", pa]) == 2          # neither B nor --prepared


def test_cli_diff_prepared_compares_authored_with_prepared(tmp_path, capsys):
    pa, _ = _saved(tmp_path)
    assert main(["diff", pa, "--prepared"]) == 1
    assert "op: Quantize → AutoQuantize" in capsys.readouterr().out


def test_cli_diff_compare_and_run_write_html_and_model_explorer(tmp_path, capsys):
    from importlib.resources import files

    from hexscope.engine.report.html import external_references

    pa, pb = _saved(tmp_path)
    example = str(files("hexscope.resources.examples") / "classic_quantized.hexgraph")
    assert main(["diff", pa, pb, "--html", str(tmp_path / "d.html")]) == 1
    assert main(["compare", example, "-q", "--html", str(tmp_path / "c.html"),
                 "--model-explorer", str(tmp_path / "c.json")]) == 0
    assert main(["run", example, "-q", "-j", "1", "--html", str(tmp_path / "r.html"),
                 "--model-explorer", str(tmp_path / "r.json")]) == 0
    for name, heading in (("d", "Structural diff"), ("c", "Compare"), ("r", "Run")):
        html = (tmp_path / f"{name}.html").read_text(encoding="utf-8")
        assert f"<h1>{heading}" in html and external_references(html) == []
    times = json.loads((tmp_path / "r.json").read_text())["results"]
    assert times and all(v["value"] > 0 for v in times.values())
    assert json.loads((tmp_path / "c.json").read_text())["results"]


def test_cli_diff_html_into_a_missing_folder_exits_2_before_work(tmp_path, capsys):
    pa, pb = _saved(tmp_path)
    assert main(["diff", pa, pb, "--html", str(tmp_path / "no" / "d.html")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_compare_against_html_names_what_differs_between_the_graphs(tmp_path, capsys):
    from importlib.resources import files

    import numpy as np

    from hexscope.engine import Graph

    example = str(files("hexscope.resources.examples") / "classic_quantized.hexgraph")
    other = Graph.load(example)
    weights = np.array(other.node(0x10010).const.array)
    weights[0, 0, 0, 0] ^= 0x40
    other.set_const(0x10010, weights)
    other.save(tmp_path / "v2.hexgraph")
    out = tmp_path / "c.html"
    assert main(["compare", example, "--against", str(tmp_path / "v2.hexgraph"), "-q",
                 "--html", str(out)]) == 1
    html = out.read_text(encoding="utf-8")
    assert "What differs between the graphs" in html
    assert "0x10010" in html and "1 of 216 byte(s) differ" in html
    assert "first divergence: 0x1001b" in html
