"""``hexscope reduce`` (issue 28): each way of saying what fails, the files it writes, the
timeout, the replay and the option errors."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hexscope.app import cli
from hexscope.app.cli_reduce import MODES as CLI_MODES
from hexscope.engine import Graph, Session
from hexscope.engine.errors import NodeError
from hexscope.engine.inputs import make_inputs
from hexscope.engine.io.c_import import import_c
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.reduce import MODES
from support.compare_graphs import RELU_ID, chain, chain_input
from support.large_graph import input_tensor

POOL_ID = 0x107
TRAP_PLUGIN = Path(__file__).resolve().parents[1] / "engine" / "reduce" / "trap_plugin.py"

#: a check command: exits 3 printing its word when the candidate holds the op it names,
#: sleeps instead when told to hang, and counts its runs in a file
CHECK_SCRIPT = """\
import json, sys, time, zipfile
op, word, counter, path = sys.argv[1:5]
with open(counter, "a") as f:
    f.write("x")
ops = [n["op"] for n in json.loads(zipfile.ZipFile(path).read("graph.json"))["nodes"]]
if op in ops:
    if word == "hang":
        time.sleep(60)
    print(word)
    sys.exit(3)
print("fine")
"""


@pytest.fixture
def files(tmp_path):
    chain().save(tmp_path / "chain.hexgraph")
    np.save(tmp_path / "x.npy", chain_input())
    (tmp_path / "check.py").write_text(CHECK_SCRIPT)
    yield tmp_path
    for op in ("TrapRelu_8", "SkewRelu_8", "PadTrap_8_d32"):
        if op in REGISTRY:            # loaded by --plugin: leave the registry clean
            REGISTRY.unregister(op)


def _check(files: Path, op: str = "QuantizedMaxPool_8", word: str = "BOOM") -> str:
    return " ".join(shlex.quote(a) for a in (sys.executable, str(files / "check.py"), op, word,
                                             str(files / "runs.txt"))) + " {}"


def _reduce(files: Path, *options: str, graph: str = "chain.hexgraph") -> int:
    return cli.main(["reduce", str(files / graph), "-o", str(files / "out" / "red.hexgraph"),
                     "--input", str(files / "x.npy"), "-q", *options])


def _runs(files: Path) -> int:
    path = files / "runs.txt"
    return len(path.read_text()) if path.exists() else 0


def test_cli_modes_are_the_engines():
    assert CLI_MODES == MODES


def test_a_check_command_reduces_to_the_node_and_writes_graph_c_inputs_and_report(files):
    (files / "out").mkdir()
    assert _reduce(files, "--check", _check(files), "--fail-regex", "BO+M") == 0
    out = files / "out"
    reduced = Graph.load(out / "red.hexgraph")
    ops = sorted(n.op for n in reduced)
    assert ops == ["Const", "Const", "Const", "INPUT", "OUTPUT", "QuantizedMaxPool_8"]
    assert POOL_ID in reduced and reduced.node(POOL_ID).op == "QuantizedMaxPool_8"
    # the C file reads back as the same graph
    assert [n.op for n in import_c(out / "red.c")] == [n.op for n in reduced]
    # the inputs beside it reproduce the relu's output the pool read
    inputs = make_inputs(reduced, out)
    original = Session(chain())
    original.execute([chain_input()])
    assert np.array_equal(inputs[0].array, original.output(RELU_ID).array)
    report = json.loads((out / "reduce.json").read_text())
    assert report["original_nodes"] == len(chain()) and report["reduced_nodes"] == len(reduced)
    assert report["kept_units"] == [f"0x{POOL_ID:x}"]
    assert {e["verdict"] for e in report["log"]} <= {"fail", "pass", "invalid"}
    assert all(e["prepared"] for e in report["log"] if e["source"] == "run")


def test_output_not_matching_the_fail_regex_does_not_fail(files, capsys):
    (files / "out").mkdir()
    assert _reduce(files, "--check", _check(files), "--fail-regex", "^NOPE") == 1
    assert "does not fail" in capsys.readouterr().err


def test_a_hanging_candidate_is_killed_by_the_timeout_and_counts_as_failing(files, capsys):
    (files / "out").mkdir()
    start = time.perf_counter()
    assert _reduce(files, "--check", _check(files, word="hang"), "--timeout", "0.25") == 0
    assert time.perf_counter() - start < 10
    reduced = Graph.load(files / "out" / "red.hexgraph")
    assert POOL_ID in reduced and RELU_ID not in reduced
    log = json.loads((files / "out" / "reduce.json").read_text())["log"]
    assert any("timed out after 0.25 s (killed; counted as failing)" in e["detail"] for e in log)
    # counted as passing instead, the whole graph passes: nothing to reduce
    assert _reduce(files, "--check", _check(files, word="hang"), "--timeout", "0.25",
                   "--timeout-passes") == 1


def test_the_replay_file_resumes_without_running_the_check_again(files):
    (files / "out").mkdir()
    replay = files / "replay.json"
    assert _reduce(files, "--check", _check(files), "--replay", str(replay)) == 0
    first = _runs(files)
    assert first > 2 and replay.exists()
    assert _reduce(files, "--check", _check(files), "--replay", str(replay)) == 0
    assert _runs(files) == first            # every verdict came from the replay
    # an interrupted reduction: only the verdicts it had reached are replayed
    document = json.loads(replay.read_text())
    keys = list(document["verdicts"])
    document["verdicts"] = {k: document["verdicts"][k] for k in keys[:2]}
    replay.write_text(json.dumps(document))
    (files / "runs.txt").unlink()
    assert _reduce(files, "--check", _check(files), "--replay", str(replay)) == 0
    assert 0 < _runs(files) < first
    log = json.loads((files / "out" / "reduce.json").read_text())["log"]
    assert "replay" in {e["source"] for e in log}


def test_a_node_error_deep_in_a_graph_reduces_to_that_node(files, capsys):
    from .reduce_graphs import trapped_file

    graph_path, trap = trapped_file(files, 200)
    np.save(files / "x.npy", input_tensor())
    (files / "out").mkdir()
    assert _reduce(files, graph=graph_path.name) == 2      # TrapRelu_8 is unknown: invalid
    capsys.readouterr()
    assert cli.main(["--plugin", str(TRAP_PLUGIN), "reduce", str(graph_path), "-o",
                     str(files / "out" / "red.hexgraph"), "--input", str(files / "x.npy"),
                     "-q", "--node-error"]) == 0
    reduced = Graph.load(files / "out" / "red.hexgraph")
    assert [n.node_id for n in reduced if n.op == "TrapRelu_8"] == [trap] and len(reduced) == 5
    with pytest.raises(NodeError) as caught:
        Session(reduced).execute(make_inputs(reduced, files / "out"))
    assert caught.value.node_id == trap
    # OUT.c names the plugin op as the user's own hexagon_nn build defines it
    c_file = files / "out" / "red.c"
    text = c_file.read_text()
    assert f"0x{trap:x},OP_TrapRelu_8," in text
    assert "must define\n * them (in its ops.def, which makes OP_TrapRelu_8" in text
    report = json.loads((files / "out" / "reduce.json").read_text())
    assert report["c_export"] == "written" and "TrapRelu_8" in report["c_notes"][0]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"hexscope: {c_file}: needs TrapRelu_8 in your hexagon_nn")
    _compiles_with_user_ops(c_file, files, ["TrapRelu_8"])


C_DATA = Path(__file__).resolve().parents[1] / "data" / "c"


def _compiles_with_user_ops(c_file: Path, folder: Path, ops: list[str]) -> None:
    """OUT.c compiles against the stand-in hexagon_nn.h once the user's build defines
    ``ops`` (ops.def adds them to hexagon_nn_ops.h's enum), and only then."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed")

    def compile_with(include: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([gcc, "-fsyntax-only", "-Wall", "-Werror", "-I", str(include),
                               "-I", str(C_DATA), str(c_file)], capture_output=True, text=True)

    stock = compile_with(C_DATA)
    assert stock.returncode != 0
    assert set(re.findall(r"['‘](\w+)['’] undeclared", stock.stderr)) == {f"OP_{o}" for o in ops}
    user = folder / "user_build"
    user.mkdir()
    header = (C_DATA / "hexagon_nn_ops.h").read_text()
    added = "".join(f"\tOP_{o},\n" for o in ops)
    (user / "hexagon_nn_ops.h").write_text(header.replace("\tNN_OPS_MAX", added + "\tNN_OPS_MAX"))
    built = compile_with(user)
    assert built.returncode == 0, built.stderr


def test_a_float_reference_divergence_reduces_on_the_command_line(files):
    from hexscope.engine.plugins import load_plugin, unload_plugin

    specs = load_plugin(TRAP_PLUGIN)
    try:
        chain("SkewRelu_8").save(files / "skew.hexgraph")
    finally:
        unload_plugin(specs)
    (files / "out").mkdir()
    assert cli.main(["--plugin", str(TRAP_PLUGIN), "reduce", str(files / "skew.hexgraph"),
                     "-o", str(files / "out" / "red.hexgraph"), "--input",
                     str(files / "x.npy"), "-q", "--reference", "float",
                     "--tolerance", "1"]) == 0
    report = json.loads((files / "out" / "reduce.json").read_text())
    assert report["kept_units"] == [f"0x{RELU_ID:x}"]
    assert "first divergence" in report["original_failure"]


def test_against_another_graph_reduces_to_the_node_that_differs(files):
    other = chain()
    other.set_const(0x106, None, shape=(1, 1, 1, 1))     # the pool's window: 1x1, not 2x2
    other.save(files / "other.hexgraph")
    (files / "out").mkdir()
    assert _reduce(files, "--against", str(files / "other.hexgraph")) == 0
    report = json.loads((files / "out" / "reduce.json").read_text())
    assert report["kept_units"] == [f"0x{POOL_ID:x}"]


@pytest.mark.parametrize("options, words", [
    (["--timeout", "3"], "go with --check"),
    (["--check", "true", "--timeout", "0"], "above 0"),
    (["--check", "no-such-command-here"], "was not found"),
])
def test_bad_options_are_one_clear_line(files, capsys, options, words):
    (files / "out").mkdir()
    assert _reduce(files, *options) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]


def test_a_failing_check_reduces_to_the_check_and_its_frozen_inputs(files):
    graph = chain()
    pool = graph.node(POOL_ID)
    graph.append_const_node(0x200, np.zeros((1, 2, 2, 8), np.uint8))
    graph.append_node(0x201, "Check", inputs=[(POOL_ID, 0), (0x200, 0)])
    assert pool.op == "QuantizedMaxPool_8"
    graph.save(files / "checked.hexgraph")
    (files / "out").mkdir()
    assert _reduce(files, "--check-failed", graph="checked.hexgraph") == 0
    report = json.loads((files / "out" / "reduce.json").read_text())
    assert report["kept_units"] == ["0x201"] and "data mismatch" in report["original_failure"]
    reduced = Graph.load(files / "out" / "red.hexgraph")
    assert sorted(n.op for n in reduced) == ["Check", "Const", "INPUT"]


def test_the_same_backend_as_b_does_not_fail(files, capsys):
    (files / "out").mkdir()
    assert _reduce(files, "--backend-b", "sim") == 1
    assert "does not fail" in capsys.readouterr().err


def test_against_a_graph_with_other_ids_is_refused(files, capsys):
    from hexscope.engine.graph import GraphSnapshot

    nodes = [n.with_(node_id=n.node_id + 0x1000,
                     inputs=tuple((s + 0x1000, i) for s, i in n.inputs)) for n in chain()]
    Graph.from_snapshot(GraphSnapshot(tuple(nodes), (), {})).save(files / "other.hexgraph")
    (files / "out").mkdir()
    assert _reduce(files, "--against", str(files / "other.hexgraph")) == 2
    assert "none of this graph's node ids" in capsys.readouterr().err


def test_a_padding_dependent_failure_reproduces_from_the_written_files(files, capsys):
    """The trap reads a cut d32 tensor's padding (FillPadding_8_d32 wrote 255 there): the
    INPUT file holds the d32 memory, so `hexscope run OUT.hexgraph` fails as the original."""
    from hexscope.engine.plugins import load_plugin, unload_plugin

    examples = Path(__file__).resolve().parents[2] / "resources" / "examples"
    specs = load_plugin(TRAP_PLUGIN)
    try:
        graph = Graph.load(examples / "d32_pipeline.hexgraph")
        graph.append_node(0x20010, "PadTrap_8_d32", inputs=[(0x20002, 0)], outputs=1)
        graph.set_input(0x20003, 0, (0x20010, 0))
        graph.save(files / "padded.hexgraph")
    finally:
        unload_plugin(specs)
    out = files / "out" / "red.hexgraph"
    (files / "out").mkdir()
    plugin = ["--plugin", str(TRAP_PLUGIN)]
    assert cli.main([*plugin, "reduce", str(files / "padded.hexgraph"), "-o", str(out),
                     "-q"]) == 0
    reduced = Graph.load(out)
    assert [n.op for n in reduced if n.op not in ("Const", "OUTPUT")] == ["INPUT",
                                                                          "PadTrap_8_d32"]
    notes = json.loads((files / "out" / "reduce.json").read_text())["c_notes"]
    assert any(n.startswith("input 0 is d32 memory with its padding bytes") for n in notes)
    saved = np.load(out.with_name("red.input0.npy"))
    assert saved.ndim == 5 and saved.shape[-1] == 32 and (saved == 255).any()
    capsys.readouterr()
    assert cli.main([*plugin, "run", str(out)]) != 0
    assert "pad trap: a padding byte is 255" in capsys.readouterr().err
