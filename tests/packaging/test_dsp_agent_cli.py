"""``hexscope run`` and ``hexscope compare`` with ``--backend dsp://`` against the C device agent
and its host stand-in, on a graph the stand-in computes exactly: the dumped tensors are byte
for byte those of ``--backend sim``, a wrong token exits 3. Two expected failures (strict, so
they flag their own fix) record where the client's labels for a device's taps still differ
from the simulator's (README.md, note 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine import Graph
from hexscope.engine.nodes import OutputDef
from support.dsp_agent_process import build, running

TOKEN = "t0ken"


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    binary = build("host")
    with running(binary, tmp_path_factory.mktemp("dsp-cli") / "calls.log", "--token",
                 TOKEN) as a:
        yield a


def hexscope(*args: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HEXSCOPE_AGENT_TOKEN"}
    return subprocess.run([sys.executable, "-m", "hexscope.app", *map(str, args)],
                          capture_output=True, text=True, timeout=180, env=env)


@pytest.fixture(scope="module")
def graph_and_input(tmp_path_factory):
    """INPUT → Nop (with a Const) → Flatten → OUTPUT, outputs declared as a device needs."""
    folder = tmp_path_factory.mktemp("graph")
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 4, 4, 8), 1)])
    g.append_const_node(0x10, np.arange(8, dtype=np.uint8).reshape(1, 1, 1, 8) * 3)
    g.append_node(0x200, "Nop", inputs=[(0x100, 0), (0x10, 0)],
                  outputs=[OutputDef((1, 4, 4, 8), 1), OutputDef((1, 1, 1, 8), 1)])
    g.append_node(0x300, "Flatten", inputs=[(0x200, 0)], outputs=[OutputDef((1, 1, 1, 128), 1)])
    g.append_node(0x400, "OUTPUT", inputs=[(0x300, 0), (0x200, 1)])
    g.save(folder / "pass.hexgraph")
    x = np.random.default_rng(0).integers(0, 256, (1, 4, 4, 8), dtype=np.uint8)
    np.save(folder / "x.npy", x)
    return folder / "pass.hexgraph", f"0x100:0={folder / 'x.npy'}"


def _files(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _dumps(agent, graph, given, tmp_path) -> tuple[dict, dict]:
    sim = hexscope("run", graph, "--input", given, "--dump", tmp_path / "sim", "-q")
    dsp = hexscope("run", graph, "--input", given, "--backend", agent.address, "--token",
                   TOKEN, "--dump", tmp_path / "dsp", "-q")
    assert sim.returncode == 0, sim.stdout + sim.stderr
    assert dsp.returncode == 0, dsp.stdout + dsp.stderr
    a, b = _files(tmp_path / "sim"), _files(tmp_path / "dsp")
    assert len(a) >= 4 and a.keys() == b.keys()
    return a, b


def test_run_dump_tensors_are_byte_identical_on_the_simulator_and_the_c_agent(
        agent, graph_and_input, tmp_path):
    a, b = _dumps(agent, *graph_and_input, tmp_path)
    tensors = [rel for rel in a if rel.suffix == ".npy"]
    assert len(tensors) == 4
    for rel in tensors:
        assert a[rel] == b[rel], rel
    # a device's tap carries no type: the client infers it as the simulator has it (quint8
    # for a 1-byte input, hexagon_nn's guess, spec §1.2), so the summaries agree too
    summary = Path("run-0001/outputs.json")
    assert a[summary] == b[summary]


def test_run_dump_is_wholly_byte_identical_on_the_simulator_and_the_c_agent(
        agent, graph_and_input, tmp_path):
    a, b = _dumps(agent, *graph_and_input, tmp_path)
    assert a == b


def test_compare_with_the_c_agent_finds_no_difference(agent, graph_and_input):
    graph, given = graph_and_input
    result = hexscope("compare", graph, "--input", given, "--backend-b", agent.address,
                      "--token", TOKEN)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 output(s) beyond 0 LSB" in result.stdout


def test_a_wrong_token_for_the_c_agent_exits_3(agent, graph_and_input):
    graph, given = graph_and_input
    result = hexscope("run", graph, "--input", given, "--backend", agent.address, "--token",
                      "nope")
    assert result.returncode == 3
    # failures are one 'hexscope:' line on stderr (issue 33)
    assert "AUTH: wrong token" in result.stderr and "Traceback" not in result.stderr
