"""The device's per-node cycles: --perfdump and the TFLite delegate's table parsed and
attached to nodes, stored beside the graph, and `hexscope import-profile` (issue 30)."""

# ruff: noqa: UP031  (the perfdump lines are built with graph_perfdump's own printf format)
from __future__ import annotations

import json

import pytest

from hexscope.app.cli import main
from hexscope.engine.device.perfdump import parse_profile
from hexscope.engine.device.profile import (
    ProfileError,
    attach,
    load_profile,
    profile_path,
    save_profile,
)
from support.supernode_graphs import chain_graph

LINE = "node,0x%x,%s,%s,executions,%d,cycles,%d,%f %%,cum_cycles,%d,%f %%\n"


def perfdump(rows: list[tuple[int, str, str, int]]) -> str:
    """What graph_perfdump prints: sorted by cycles, with totals and running sums."""
    rows = sorted(rows, key=lambda r: r[3])
    total = sum(r[3] for r in rows)
    out = ["Perf dump follows:\n", "Total %d nodes.\n" % len(rows),
           "Total %d cycles.\n" % total]
    cum = 0
    for node_id, name, op, cycles in rows:
        cum += cycles
        out.append(LINE % (node_id, name, op, 1, cycles, 100 * cycles / total, cum,
                           100 * cum / total))
    return "".join(out)


# the device names the op its prepare made: the chain's Supernode in its d32 form (filter
# depth 3: the flat-input one), under the Relu's id
SN = "InputSupernode_8x8p8to8_outd32"
ROWS = [(0x10, "input", "INPUT", 1200), (0x24, "conv,relu", SN, 812345),
        (0x30, "?", "OUTPUT", 800)]


def test_perfdump_lines_are_parsed_with_names_holding_commas():
    text = parse_profile(perfdump(ROWS), "perf.txt")
    assert text.kind == "perfdump" and text.problems == []
    by_id = {r.node_id: r for r in text.perf}
    assert by_id[0x24].cycles == 812345 and by_id[0x24].name == "conv,relu"
    assert by_id[0x24].op == SN and by_id[0x30].executions == 1


def test_perfdump_totals_that_disagree_are_reported():
    text = perfdump(ROWS)
    cut = text[:text.rindex("node,")]            # the last line lost
    problems = parse_profile(cut, "perf.txt").problems
    assert "perf.txt: 'Total 3 nodes.' but 2 node lines (the output is cut?)" in problems
    assert any("'Total 814345 cycles.' but the node lines add up to 2000" in p
               for p in problems)


def test_a_fused_chain_reports_under_the_surviving_node_with_what_it_absorbed():
    profile = attach(chain_graph(), parse_profile(perfdump(ROWS)), "perf.txt")
    node = profile.nodes[0x24]
    assert node.cycles == 812345 and node.op == SN and node.note == ""
    assert node.absorbed == (0x20, 0x21, 0x22, 0x23)
    assert profile.total == 814345 and profile.unmatched == []


def test_a_device_that_ran_another_form_of_the_op_is_noted():
    rows = [(0x24, "conv,relu", "Supernode_8x8p8to8", 812345)]
    node = attach(chain_graph(), parse_profile(perfdump(rows)), "perf.txt").nodes[0x24]
    assert node.cycles == 812345 and node.note == (
        f"the device ran Supernode_8x8p8to8 here (Hexscope's prepare makes {SN} of the same op)")
    rows = [(0x24, "conv,relu", "QuantizedRelu_8", 5)]
    node = attach(chain_graph(), parse_profile(perfdump(rows)), "perf.txt").nodes[0x24]
    assert node.note == "the device ran QuantizedRelu_8 here"


def test_rows_of_nodes_only_the_device_made_are_unmatched():
    rows = [*ROWS, (0x7F000010, "?", "Requantize_32to8", 4000)]
    profile = attach(chain_graph(), parse_profile(perfdump(rows)), "perf.txt")
    assert profile.unmatched == ["0x7f000010 (Requantize_32to8, 4000 cycles)"]


def delegate_table() -> str:
    """TFLite's stats table (stats_calculator's fields: tab, right-aligned, 3 decimals)."""
    def row(kind: str, start: float, first: float, avg: float, pct: float, cdf: float,
            calls: int, name: str) -> str:
        return ("\t%24s\t%17.3f\t%9.3f\t%9.3f\t%7.3f%%\t%7.3f%%\t%10.3f\t%9d\t%s\n"
                % (kind, start, first, avg, pct, cdf, 0.0, calls, name))
    head = ("\t%24s\t%17s\t%9s\t%9s\t%8s\t%8s\t%10s\t%9s\t[Name]\n"
            % ("[node type]", "[start]", "[first]", "[avg ms]", "[%]", "[cdf%]",
               "[mem KB]", "[times called]"))
    body = (row("Supernode_8x8p8to8", 0.0, 406.170, 406.172, 99.8, 99.8, 2, "[conv]:0")
            + row("INPUT", 0.1, 1.2, 1.2, 0.2, 100.0, 1, "[input]:1"))
    return ("============================== Run Order ==============================\n"
            + head + body + "\n"
            + "============================== Top by Computation Time ======\n"
            + head + body)


def test_the_delegates_table_gives_cycles_per_tflite_operator():
    text = parse_profile(delegate_table(), "bench.txt")
    assert text.kind == "tflite-delegate"
    rows = {r.tflite_index: r for r in text.delegate}
    assert len(text.delegate) == 2                 # the second table repeats the rows
    # 406.172 "ms" is the mean of the operator's 2 nodes, in cycles / 1000
    assert rows[0].cycles == 812344 and rows[0].calls == 2 and rows[0].name == "[conv]"
    graph = chain_graph()
    graph.meta["tflite"] = {"op_index": {"0x20": 0, "0x21": 0, "0x24": 0, "0x10": 1}}
    profile = attach(graph, text, "bench.txt")
    assert profile.nodes[0x24].cycles == 812344
    assert "2 hexagon_nn node(s) together, not split" in profile.nodes[0x24].note
    # the row's op (flat here) is the Supernode's, though it now runs as its d32 form and
    # is not the operator's last node
    graph.meta["tflite"] = {"op_index": {"0x24": 0, "0x30": 0, "0x10": 1}}
    assert set(attach(graph, text, "bench.txt").nodes) == {0x24, 0x10}
    bare = attach(chain_graph(), text, "bench.txt")
    assert bare.nodes == {} and "not imported from a .tflite model" in bare.problems[0]


def test_a_stored_profile_round_trips_and_a_bad_one_is_named(tmp_path):
    profile = attach(chain_graph(), parse_profile(perfdump(ROWS)), "perf.txt")
    path = tmp_path / "g.cycles.json"
    save_profile(profile, path)
    back = load_profile(path)
    assert back.nodes == profile.nodes and back.source == "perf.txt"
    path.write_text('{"format": "hexscope-cycles/1", "nodes": {"0xzz": 1}}')
    with pytest.raises(ProfileError, match="g.cycles.json: not a valid cycles file"):
        load_profile(path)


def test_cli_import_profile_stores_the_cycles_beside_the_graph(tmp_path, capsys):
    graph = tmp_path / "g.hexgraph"
    chain_graph().save(graph)
    perf = tmp_path / "perf.txt"
    perf.write_text(perfdump(ROWS))
    assert main(["import-profile", str(graph), str(perf)]) == 0
    out = capsys.readouterr().out
    assert "0x24" in out and "812345" in out and "99.8%" in out
    assert "reports for 0x20, 0x21, 0x22, 0x23 (fused here)" in out
    doc = json.loads(profile_path(graph).read_text())
    assert doc["nodes"]["0x24"]["cycles"] == 812345 and doc["total_cycles"] == 814345
    perf.write_text(perfdump([*ROWS, (0x999, "?", "Add_f", 5)]))
    assert main(["import-profile", str(graph), str(perf)]) == 1
    assert "1 row(s) name no node" in capsys.readouterr().out
    perf.write_text("nothing here\n")
    assert main(["import-profile", str(graph), str(perf)]) == 2
    assert "neither --perfdump lines" in capsys.readouterr().err


def test_the_delegates_table_on_a_graph_imported_from_its_model():
    pytest.importorskip("tflite")
    from pathlib import Path

    from hexscope.engine.io.any_graph import load_any

    model = Path(__file__).resolve().parents[2] / "data" / "tflite" / "pools.tflite"
    graph = load_any(str(model))          # MAX_POOL_2D -> 0x5; AVERAGE_POOL_2D -> 0x7, 0x9
    row = "\t%24s\t%17.3f\t%9.3f\t%9.3f\t%7.3f%%\t%7.3f%%\t%10.3f\t%9d\t%s\n"
    table = (row % ("QuantizedMaxPool_8", 0.0, 12.5, 12.5, 40.0, 40.0, 0.0, 1, "[max]:0")
             + row % ("QuantizedAvgPool_8", 0.1, 9.0, 9.375, 60.0, 100.0, 0.0, 2, "[avg]:1"))
    profile = attach(graph, parse_profile(table, "bench.txt"), "bench.txt")
    assert profile.unmatched == []
    assert profile.nodes[0x5].cycles == 12500 and profile.nodes[0x5].note == \
        "TFLite op 0 ([max])"
    # the node as the device runs it: prepare makes every QuantizedAvgPool_8 its d32 form
    assert profile.nodes[0x7].cycles == 18750 and \
        profile.nodes[0x7].op == "QuantizedAvgPool_8_d32"
    assert "2 hexagon_nn node(s) together, not split" in profile.nodes[0x7].note
    assert 0x9 not in profile.nodes
