"""The one-file HTML reports (issue 31): what they say, that they fetch nothing, and that a
browser renders them (headless Chromium, when installed)."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

from hexscope.engine import Graph, Session
from hexscope.engine.analysis.compare import compare_reference, run_trace
from hexscope.engine.analysis.compare_report import CompareResult, CompareRun
from hexscope.engine.inputs import make_inputs
from hexscope.engine.report import drawn_nodes
from hexscope.engine.report.graph_drawing import error_colour, layered_positions
from hexscope.engine.report.html import external_references, render
from hexscope.engine.report.html_compare import compare_page, write_compare_html
from hexscope.engine.report.html_diff import write_diff_html
from hexscope.engine.report.model_explorer import compare_values, node_data
from hexscope.engine.structural_diff import structural_diff
from support.diff_graphs import three_edits


def _example() -> Graph:
    from importlib.resources import files

    return Graph.load(files("hexscope.resources.examples") / "classic_quantized.hexgraph")


@pytest.fixture(scope="module")
def compared() -> tuple[CompareResult, Graph]:
    graph = _example()
    session = Session(graph, "sim", seed=0)
    try:
        run_trace(session, make_inputs(graph))
        comparison = compare_reference(session, "isolated", 1.0)
    finally:
        session.close()
    result = CompareResult("classic_quantized.hexgraph", "isolated", "sim", "float", 1.0)
    result.runs.append(CompareRun("inputs", comparison))
    return result, graph


def test_diff_report_names_the_three_changes_and_fetches_nothing(tmp_path):
    a, b = three_edits()
    out = tmp_path / "diff.html"
    write_diff_html(structural_diff(a, b, "a", "b"), a, b, out)
    html = out.read_text(encoding="utf-8")
    assert external_references(html) == []
    for text in ("0x1005", "1 of 64 byte(s) differ", "0x100d", "input 4: 0x100d:0 → 0x1006:0",
                 "2 changed, 1 removed, 0 added"):
        assert text in html
    assert html.count("<svg") == 2 and "<table class=\"sortable\">" in html


def test_compare_report_has_summary_first_divergence_graph_plots_and_table(compared,
                                                                           tmp_path):
    result, graph = compared
    out = tmp_path / "compare.html"
    write_compare_html(result, drawn_nodes(graph), out)
    html = out.read_text(encoding="utf-8")
    assert external_references(html) == []
    comparison = result.runs[0].comparison
    assert "no output beyond 1 LSB" in html          # the first divergence, in words
    assert html.count("<svg") == 3           # the graph, the error by node, the worst tensor
    assert html.count("<tr") == len(comparison.outputs) + 1
    assert "A − B" in html and "Error by node output" in html


def test_compare_page_escapes_what_it_shows():
    result = CompareResult("<script>alert(1)</script>.hexgraph", "trace", "a", "b", 0.0)
    result.runs.append(CompareRun("x", None, error="<b>bad</b>", exit_code=2))
    html = render(compare_page(result, []))
    assert "<script>alert(1)" not in html and "&lt;b&gt;bad&lt;/b&gt;" in html


def test_model_explorer_node_data_holds_each_nodes_error(compared):
    result, graph = compared
    nodes = {n.node_id: n for n in drawn_nodes(graph)}
    doc = json.loads(json.dumps(node_data(compare_values(result), nodes)))
    errors = compare_values(result)
    assert set(doc) == {"results", "gradient"}
    assert [g["stop"] for g in doc["gradient"]] == [0, 0.5, 1]
    for node_id, value in errors.items():
        assert doc["results"][f"0x{node_id:x}"] == {"value": value}
        if nodes[node_id].label:
            assert doc["results"][nodes[node_id].label] == {"value": value}


def test_layout_puts_every_node_once_and_consts_off_the_node_rows():
    a, _ = three_edits()
    pos = layered_positions(list(a))
    assert set(pos) == {n.node_id for n in a}
    taken = {p for i, p in pos.items() if not a.node(i).is_const}
    assert len(taken) == len([n for n in a if not n.is_const])
    assert all(pos[n.node_id][1] % 1 != 0 for n in a if n.is_const)


def test_error_colour_runs_green_to_red():
    assert error_colour(0.0, 10.0) == "#8fd19e"
    assert error_colour(10.0, 10.0) == "#e53935"
    assert error_colour(None, 10.0) == error_colour(float("nan"), 10.0)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_diff_report_renders_in_headless_chromium(tmp_path):
    a, b = three_edits()
    page, shot = tmp_path / "diff.html", tmp_path / "diff.png"
    write_diff_html(structural_diff(a, b, "a", "b"), a, b, page)
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--window-size=1000,900", f"--screenshot={shot}",
                    page.as_uri()], check=True, capture_output=True, timeout=60)
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    assert pixels.shape[:2] == (900, 1000)
    # drawn: not a blank page, and the changed node's amber is on it
    assert (pixels.min(axis=2) < 200).mean() > 0.01
    amber = (np.abs(pixels.astype(int) - (0xFF, 0xC4, 0x6B)).sum(axis=2) < 30).sum()
    assert amber > 20


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_report_table_sorts_on_a_click_in_headless_chromium(compared, tmp_path):
    result, graph = compared
    page = tmp_path / "compare.html"
    write_compare_html(result, drawn_nodes(graph), page)
    # a user's two clicks on "max LSB": ascending, then descending
    clicks = ("<script>var th = document.querySelectorAll('th')[3]; th.click(); th.click();"
              "</script></body>")
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", clicks),
                    encoding="utf-8")
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                          "--dump-dom", page.as_uri()], check=True, capture_output=True,
                         text=True, timeout=60).stdout
    first_row = dom.split("<tbody>", 1)[1].split("</tr>", 1)[0]
    worst = max(d.metrics.max_lsb for d in result.runs[0].comparison.outputs
                if d.metrics and d.metrics.max_lsb is not None)
    assert f"{worst:.3f}" in first_row and 'aria-sort="descending"' in dom
