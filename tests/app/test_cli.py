"""The ``hexscope`` command line, run as a subprocess: exit codes for passing, failing,
invalid and broken-backend runs, the JSON report against its schema, the JUnit file parsed
back, dumps, import/export/compile round trip. In-process tests cover the gui and
check-padding wiring with stand-in modules."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from hexscope.app import cli
from hexscope.engine.graph import Graph
from hexscope.engine.io.c_import import import_c
from hexscope.engine.nodes import OutputDef

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "c"
SCHEMA = json.loads((ROOT / "resources" / "schemas" / "report.schema.json").read_text())


def hexscope(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hexscope.app", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture
def check_graph(tmp_path: Path) -> Path:
    """INPUT -> Nop -> Close_f against a const of 0..5; inputs: one equal, one off by 50."""
    ref = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    g = Graph()
    g.append_node(0x2024A, "INPUT", outputs=[OutputDef(ref.shape, 4)])
    g.append_const_node(0x11, ref)
    g.append_node(0x12, "Nop", inputs=[(0x2024A, 0)], outputs=[OutputDef(ref.shape, 4)])
    g.append_node(0x13, "Close_f", inputs=[(0x12, 0), (0x11, 0)])
    g.append_node(0x14, "OUTPUT", inputs=[(0x12, 0)])
    g.save(tmp_path / "g.hexgraph")
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    np.save(good / "a.npy", ref)
    np.save(good / "b.npy", ref)
    np.save(bad / "a.npy", ref)
    np.save(bad / "b.npy", ref + 50)
    return tmp_path / "g.hexgraph"


@pytest.mark.parametrize("command", [[], ["run"], ["validate"], ["info"], ["import"],
                                     ["export"], ["check-padding"], ["gui"], ["compare"]])
def test_help_on_every_subcommand(command):
    result = hexscope(*command, "--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: hexscope")


def test_passing_run_writes_valid_reports(check_graph, tmp_path):
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    result = hexscope("run", check_graph, "--inputs-dir", f"0x2024a:0={tmp_path / 'good'}",
                      "--report", report, "--junit", junit)
    assert result.returncode == 0, result.stdout + result.stderr
    # plain lines off a terminal, one per run as it ends: "run <ended>/<total> <set>";
    # the sets run in parallel (--jobs defaults to the cores), so in either order
    lines = sorted(line.split(" (")[0] for line in result.stdout.splitlines()
                   if line.startswith("run "))
    assert lines in (["run 1/2 a.npy: passed", "run 2/2 b.npy: passed"],
                     ["run 1/2 b.npy: passed", "run 2/2 a.npy: passed"])
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert (doc["exit_code"], doc["summary"]["runs"], doc["summary"]["checks"]) == (0, 2, 2)
    ranges = {(r["node"], r["index"]): r for r in doc["ranges"]}
    assert ranges[("0x12", 0)]["min"] == 0.0 and ranges[("0x12", 0)]["max"] == 5.0
    root = ET.parse(junit).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "0", "0")


def test_failing_check_exits_1(check_graph, tmp_path):
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    result = hexscope("run", check_graph, "--inputs-dir", tmp_path / "bad", "--report",
                      report, "--junit", junit)
    assert result.returncode == 1, result.stdout + result.stderr
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert [r["outcome"] for r in doc["runs"]] == ["passed", "check-failed"]
    check = doc["runs"][1]["checks"][0]
    assert (check["node"], check["status"]) == ("0x13", "failed") and check["log"]
    root = ET.parse(junit).getroot()
    failures = root.findall(".//failure")
    assert len(failures) == 1 and root.get("failures") == "1"


def test_single_input_by_decimal_node_id(check_graph, tmp_path):
    result = hexscope("run", check_graph, "--input", f"{0x2024A}:0={tmp_path / 'good/a.npy'}")
    assert result.returncode == 0, result.stdout + result.stderr


def test_invalid_graph_and_inputs_exit_2(tmp_path, check_graph):
    g = Graph()
    g.append_node(0x1, "INPUT", outputs=1)
    g.append_node(0x2, "OUTPUT", inputs=[(0x7, 0)])
    g.save(tmp_path / "bad.hexgraph")
    report = tmp_path / "r.json"
    result = hexscope("run", tmp_path / "bad.hexgraph", "--report", report)
    assert result.returncode == 2
    assert "0x7" in result.stdout
    jsonschema.validate(json.loads(report.read_text()), SCHEMA)
    assert hexscope("run", check_graph, "--input", "0x2024a:0=missing.npy").returncode == 2
    wrong_node = hexscope("run", check_graph, "--input", "0x99:0=x.npy")
    assert wrong_node.returncode == 2 and "not the graph's INPUT node" in wrong_node.stderr
    assert hexscope("run", tmp_path / "nothing.hexgraph").returncode == 2
    assert hexscope("validate", tmp_path / "bad.hexgraph").returncode == 2


def test_damaged_input_settings_and_a_bad_dump_path_exit_2_with_a_message(check_graph,
                                                                            tmp_path):
    """Settings saved in the graph that numpy cannot use, and a --dump path that is a file,
    are input problems (exit 2) with a one-line reason, not a traceback (exit 1)."""
    g = Graph.load(check_graph)
    g.meta["inputs"] = [{"kind": "random", "dtype": "bogus"}]
    g.save(tmp_path / "bad_inputs.hexgraph")
    result = hexscope("run", tmp_path / "bad_inputs.hexgraph")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "hexscope: invalid: input 0: the saved 'dtype' 'bogus'" in result.stderr
    (tmp_path / "a_file").write_text("")
    result = hexscope("run", check_graph, "--dump", tmp_path / "a_file")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "cannot write the dump" in result.stderr and "not a folder" in result.stderr


def test_an_unreachable_dsp_agent_exits_3_naming_it(check_graph, tmp_path):
    report = tmp_path / "r.json"
    result = hexscope("run", check_graph, "--backend", "dsp://127.0.0.1:1", "--report",
                      report)
    assert result.returncode == 3
    assert "dsp://127.0.0.1:1: cannot connect" in result.stderr
    assert json.loads(report.read_text())["outcome"] == "backend-error"


def test_dump_is_byte_for_byte_reproducible(check_graph, tmp_path):
    for name in ("d1", "d2"):
        result = hexscope("run", check_graph, "--inputs-dir", tmp_path / "good", "--dump",
                          tmp_path / name)
        assert result.returncode == 0
    files = sorted(p.relative_to(tmp_path / "d1") for p in (tmp_path / "d1").rglob("*")
                   if p.is_file())
    assert Path("run-0002/0x12_0.npy") in files
    for rel in files:
        assert (tmp_path / "d1" / rel).read_bytes() == (tmp_path / "d2" / rel).read_bytes()


def test_med_style_c_file_fails_on_the_conv_whose_declared_size_is_too_small(tmp_path):
    """graph spec §3.3: the file declares an int32 conv output with element size 1. Its conv
    feeds a requantize with no bias add, which hexagon_nn's prepare does not fuse into a
    Supernode (prepare.c, try_make_supernode_flavored: "don't convert if no bias"), so the
    conv fails as tensor_out_prepare_normal (nn_graph_types.h) makes it fail; the message
    names the node and both sizes, and prepare's AutoQuantize rewrite is still reported."""
    report = tmp_path / "r.json"
    result = hexscope("run", DATA / "med_style.c", "--report", report)
    if "not simulated yet" in result.stdout + result.stderr:
        pytest.skip("an op of the file has no kernel yet")
    assert result.returncode == 2, result.stdout + result.stderr
    assert ("node 0x3024f (QuantizedConv2d_8x8to32): out too small: output 0 needs 1024 "
            "bytes (qint32 1x4x4x16), but its declared size holds 256 bytes") in result.stderr
    doc = json.loads(report.read_text())
    assert {r["node"] for r in doc["rewrites"]} >= {"0x3024c", "0x3024d"}


def test_import_export_compile_round_trip(tmp_path):
    graph_file, c_file = tmp_path / "med.hexgraph", tmp_path / "med_out.c"
    assert hexscope("import", DATA / "med_style.c", "-o", graph_file).returncode == 0
    assert hexscope("export", graph_file, "-o", c_file).returncode == 0
    a, b = import_c(DATA / "med_style.c"), import_c(c_file)
    assert [(n.node_id, n.op, n.inputs, n.outputs, n.label) for n in a] == [
        (n.node_id, n.op, n.inputs, n.outputs, n.label) for n in b]
    if shutil.which("gcc"):
        gcc = subprocess.run(["gcc", "-fsyntax-only", "-Wall", "-I", str(DATA), str(c_file)],
                             capture_output=True, text=True)
        assert gcc.returncode == 0, gcc.stderr
    broken = tmp_path / "broken.c"
    line = "  APPEND_NODE(0x1, OP_Nope, NN_PAD_NA, NULL, 0, NULL, 0);"
    broken.write_text(f"void init_graph(int nn_id) {{\n{line}\n}}\n")
    result = hexscope("import", broken)
    column = line.index("OP_Nope") + 1
    assert result.returncode == 2 and f"{broken}:2:{column}: unknown op" in result.stderr
    assert not (tmp_path / "broken.hexgraph").exists()


def test_info_and_validate(tmp_path):
    result = hexscope("info", DATA / "med_style.c")
    assert result.returncode == 0
    assert ("node 0x3024f 'conv': type=0xf(QuantizedConv2d_8x8to32) n_inputs=7 n_outputs=3 "
            "padding=0x2(VALID)") in result.stdout
    assert "    output 0: 1x4x4x16 x1 bytes (max 256 bytes)" in result.stdout
    assert "shape-only 1x2x2x1" in result.stdout
    assert "15 nodes total." in result.stdout
    valid = hexscope("validate", DATA / "small_style.c")
    assert valid.returncode == 0 and "0 error(s)" in valid.stdout


def test_cli_module_does_not_import_qt():
    code = ("import sys, hexscope.app.cli, hexscope.app.cli_run; "
            "sys.exit(any(m.startswith(('PySide6', 'pyqtgraph')) for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


# in-process wiring -------------------------------------------------------------------------
def test_gui_is_the_default_and_gets_the_path(monkeypatch):
    calls = []
    fake = types.ModuleType("hexscope.app.gui")
    errors = []
    fake.run_gui = lambda path, plugin_errors=None: (
        calls.append(path) or errors.append(plugin_errors) or 7)
    monkeypatch.setitem(sys.modules, "hexscope.app.gui", fake)
    assert cli.main([]) == 7
    assert cli.main(["gui", "x.hexgraph"]) == 7
    assert calls == [None, "x.hexgraph"]
    # the plugin failures the command line met are handed to the app (none here)
    assert errors == [[], []]


def test_check_padding_wiring(monkeypatch, check_graph, capsys):
    seen = {}

    def check_padding(graph, inputs=None):
        seen["nodes"], seen["inputs"] = len(graph), inputs
        return types.SimpleNamespace(readers=readers, lines=lambda: ["node 0x12 reads pad"])

    fake = types.ModuleType("hexscope.engine.analysis.padding_check")
    fake.check_padding = check_padding
    monkeypatch.setitem(sys.modules, "hexscope.engine.analysis.padding_check", fake)
    readers = [0x12]
    assert cli.main(["check-padding", str(check_graph)]) == 1
    assert "node 0x12 reads pad" in capsys.readouterr().out
    assert seen["nodes"] == 5 and len(seen["inputs"]) == 1
    readers = []
    assert cli.main(["check-padding", str(check_graph)]) == 0
    monkeypatch.setitem(sys.modules, "hexscope.engine.analysis.padding_check", None)
    assert cli.main(["check-padding", str(check_graph)]) == 2
    assert "not available" in capsys.readouterr().err


EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


def test_check_padding_finds_the_bundled_plugin_op_that_peeks():
    # the plugin in resources/plugins loads by itself; its op reads its left padding
    found = hexscope("check-padding", EXAMPLES / "padding_demo.hexgraph")
    assert found.returncode == 1, found.stderr
    assert "0x1002 PeekLeft_8_d32" in found.stdout
    clean = hexscope("check-padding", EXAMPLES / "d32_pipeline.hexgraph")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "no node reads padding" in clean.stdout


def test_a_broken_plugin_is_reported_and_does_not_stop_the_tool(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\nraise RuntimeError('nope')\n")
    done = hexscope("--plugin", broken, "validate", EXAMPLES / "classic_quantized.hexgraph")
    assert done.returncode == 0
    assert f"{broken}:2" in done.stderr and "nope" in done.stderr


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    g = Graph()                     # info prints far more than a pipe buffer holds
    g.append_node(1, "INPUT", outputs=1)
    for k in range(2, 3000):
        g.append_node(k, "Nop", inputs=[(k - 1, 0)], outputs=1)
    g.save(tmp_path / "long.hexgraph")
    proc = subprocess.Popen([sys.executable, "-m", "hexscope.app", "info",
                             str(tmp_path / "long.hexgraph")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()          # read one line, then hang up, as `| head -1` does
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_the_fused_chain_of_a_generated_file_runs_as_on_the_device(tmp_path):
    """graph spec §2.5 / prepare.c try_make_supernode_flavored: med_chain_style.c declares
    its conv and bias-add outputs with element size 1, too small for their int32 sums, as
    nnlib's test/graphinit_med.c does. Prepare fuses the chain into a Supernode whose
    output (the relu's) fits, so the run passes without a size warning; run as authored,
    the conv fails and the message names the Supernode the device would make."""
    report = tmp_path / "r.json"
    result = hexscope("run", DATA / "med_chain_style.c", "--report", report)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "too small" not in result.stdout + result.stderr
    doc = json.loads(report.read_text())
    assert all(not node.get("warnings") for run in doc["runs"] for node in run["nodes"])
    kinds = {r["node"]: r["kind"] for r in doc["rewrites"]}
    assert kinds["0x30254"] == "replaced"
    assert all(kinds[n] == "fused" for n in ("0x3024f", "0x30251", "0x30252", "0x30253"))
    info = hexscope("info", "--prepared", DATA / "med_chain_style.c")
    assert ("node 0x30254 'relu': type=0xb1(InputSupernode_8x8p8to8_outd32) n_inputs=12"
            in info.stdout)
    assert "prepare: 0x3024f fused: fused into Supernode_8x8p8to8 0x30254" in info.stdout
    authored = hexscope("run", DATA / "med_chain_style.c", "--as-authored")
    assert authored.returncode == 2
    assert ("prepare fuses this convolution chain into Supernode_8x8p8to8 0x30254"
            in authored.stdout)


def test_version_prints_the_package_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"hexscope {version('hexscope')}"


@pytest.mark.parametrize("content", [b"\x1c\x00\x17binary", b"PK\x03\x04\x14\x00\x00\x00"])
def test_import_of_a_binary_file_says_it_is_not_graph_init_c(tmp_path, capsys, content):
    source = tmp_path / "weights.c"
    source.write_bytes(content)
    assert cli.main(["import", str(source)]) == cli.EXIT_INVALID
    message = capsys.readouterr().err
    assert f"{source}: not a hexagon_nn graph-init C file" in message
    assert "unexpected character" not in message
    assert ("zip archive" in message) == content.startswith(b"PK")
    assert not (tmp_path / "weights.hexgraph").exists()
