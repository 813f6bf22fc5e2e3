"""hexscope run/compare with --backend dsp://HOST:PORT against hexscope-agent as a process:
byte-identical dumps, compare without differences, device counters in the report, a wrong
token, and the agent killed mid-run."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from support.agent_process import running_agent, start_agent

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "examples"
SCHEMA = json.loads((ROOT / "resources" / "schemas" / "report.schema.json").read_text())


def hexscope(*args: object, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    import os

    environment = {k: v for k, v in os.environ.items() if k != "HEXSCOPE_AGENT_TOKEN"}
    return subprocess.run([sys.executable, "-m", "hexscope.app", *map(str, args)],
                          capture_output=True, text=True, timeout=180,
                          env={**environment, **(env or {})})


@pytest.fixture(scope="module")
def agent():
    with running_agent("--token", "t0ken") as a:
        yield a


def _files(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("example", ["classic_quantized", "d32_pipeline"])
def test_dump_is_byte_identical_on_the_simulator_and_the_agent(agent, tmp_path, example):
    graph = EXAMPLES / f"{example}.hexgraph"
    sim = hexscope("run", graph, "--dump", tmp_path / "sim", "-q")
    dsp = hexscope("run", graph, "--backend", agent.address, "--token", "t0ken", "--dump",
                   tmp_path / "dsp", "-q")
    assert sim.returncode == 0, sim.stdout + sim.stderr
    assert dsp.returncode == 0, dsp.stdout + dsp.stderr
    a, b = _files(tmp_path / "sim"), _files(tmp_path / "dsp")
    assert len(a) > 5 and a.keys() == b.keys()
    if example == "d32_pipeline":
        assert any(p.name.endswith(".d32.npy") for p in a)    # memory order, padding too
    for rel in a:
        assert a[rel] == b[rel], rel


def test_the_report_has_the_device_and_its_counters(agent, tmp_path):
    report = tmp_path / "r.json"
    result = hexscope("run", EXAMPLES / "classic_quantized.hexgraph", "--backend",
                      agent.address, "--report", report, env={"HEXSCOPE_AGENT_TOKEN": "t0ken"})
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["device"]["hexagon_nn_version"] == "0x00021401"
    assert doc["device"]["counter"] == "simulated-ns"          # the agent has no cycles
    nodes = doc["runs"][0]["nodes"]
    counted = [n for n in nodes if n["device_counter"] is not None]
    assert {n["node"] for n in counted} >= {"0x10000", "0x1001b"}
    assert all(n["device_counter"] >= 0 for n in counted)
    sim = tmp_path / "s.json"
    hexscope("run", EXAMPLES / "classic_quantized.hexgraph", "--report", sim)
    doc = json.loads(sim.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["device"] is None
    assert all(n["device_counter"] is None for n in doc["runs"][0]["nodes"])


def test_compare_with_the_agent_finds_no_difference(agent):
    result = hexscope("compare", EXAMPLES / "d32_pipeline.hexgraph", "--backend-b",
                      agent.address, "--token", "t0ken")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 output(s) beyond 0 LSB" in result.stdout


def test_a_wrong_token_exits_3_with_a_clear_message(agent, tmp_path):
    result = hexscope("run", EXAMPLES / "classic_quantized.hexgraph", "--backend",
                      agent.address, "--token", "guess")
    assert result.returncode == 3
    assert "refused the connection (AUTH: wrong token)" in result.stderr
    assert "--token" in result.stderr and "Traceback" not in result.stderr
    result = hexscope("run", EXAMPLES / "classic_quantized.hexgraph", "--backend",
                      agent.address)                              # no token at all
    assert result.returncode == 3 and "needs a token" in result.stderr


def test_killing_the_agent_mid_run_fails_it_and_keeps_what_was_received(tmp_path):
    agent = start_agent("--slow-ms", "500")
    try:
        report, dump = tmp_path / "r.json", tmp_path / "dump"
        cli = subprocess.Popen(
            [sys.executable, "-m", "hexscope.app", "run",
             str(EXAMPLES / "classic_quantized.hexgraph"), "--backend", agent.address,
             "--report", str(report), "--dump", str(dump)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.2)
        _wait_for_taps(agent, 3)
        agent.kill()
        out, errs = cli.communicate(timeout=120)
    finally:
        agent.kill()
    assert cli.returncode == 3, out + errs
    assert "was lost during the run" in out and "received before are kept" in out
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, SCHEMA)
    nodes = doc["runs"][0]["nodes"]
    done = [n["node"] for n in nodes if n["status"] == "done"]
    assert 2 <= len(done) < len(nodes)
    assert [n["status"] for n in nodes][len(done)] == "failed"
    assert (dump / "run-0001" / f"{done[1]}_0.npy").is_file()    # kept and dumped


def _wait_for_taps(agent, count: int) -> None:
    """Wait until the agent has been executing long enough to have sent ``count`` taps
    (each node takes 0.5 s; the agent answers a probe's HELLO with BUSY once the command
    line is served)."""
    import socket

    from hexscope.engine.remote import protocol as p
    from hexscope.engine.remote.wire import send
    from support.agent_process import read_reply

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:      # the run has begun once the agent is busy
        with socket.create_connection(("127.0.0.1", agent.port), 5) as probe:
            send(probe, p.Hello(), 1)
            if isinstance(read_reply(probe), p.Busy):     # serving the command line
                break
        time.sleep(0.05)
    time.sleep(0.5 * count + 0.3)


@pytest.mark.parametrize("example", ["d32_pipeline", "fill_padding_demo"])
def test_a_device_like_agent_gives_the_same_dump_and_no_compare_difference(tmp_path,
                                                                          example):
    """Taps without types or d32 padding (what execute_new gives a device agent): the client
    infers them as the simulator has them, so outputs.json and the d32 memory files match."""
    graph = EXAMPLES / f"{example}.hexgraph"
    with running_agent("--device-like") as device:
        dsp = hexscope("run", graph, "--backend", device.address, "--dump", tmp_path / "dsp",
                       "-q")
        compare = hexscope("compare", graph, "--backend-b", device.address)
    sim = hexscope("run", graph, "--dump", tmp_path / "sim", "-q")
    assert sim.returncode == dsp.returncode == 0, dsp.stdout + dsp.stderr
    a, b = _files(tmp_path / "sim"), _files(tmp_path / "dsp")
    assert a.keys() == b.keys() and all(a[rel] == b[rel] for rel in a)
    assert compare.returncode == 0, compare.stdout + compare.stderr
    assert "0 output(s) beyond 0 LSB" in compare.stdout


def test_as_authored_on_the_agent_gives_the_simulators_unfused_run(agent, tmp_path):
    """The taps on a chain's intermediate outputs give them a second reader, so the agent's
    prepare does not fuse the chain either (docs/connected-dsp.md)."""
    graph = EXAMPLES / "classic_quantized.hexgraph"
    sim = hexscope("run", graph, "--as-authored", "--dump", tmp_path / "sim", "-q")
    dsp = hexscope("run", graph, "--as-authored", "--backend", agent.address, "--token",
                   "t0ken", "--dump", tmp_path / "dsp", "-q")
    assert sim.returncode == dsp.returncode == 0, dsp.stdout + dsp.stderr
    a, b = _files(tmp_path / "sim"), _files(tmp_path / "dsp")
    assert Path("run-0001/0x10014_0.npy") in a                 # the unfused convolution ran
    # and the depth concat 0x10026's d32 memory: a device's prepare makes every
    # QuantizedConcat_8 not 1x1xD its d32 form (prepare.c do_convert_concat_depth32; taps do
    # not stop it), so the agent's comes back d32 too, with the same logical values
    concat_d32 = Path("run-0001/0x10026_0.d32.npy")
    assert concat_d32 not in a and np.load(tmp_path / "dsp" / concat_d32).shape == \
        (1, 16, 1, 12, 32)                 # (b, h, d/32, w, 32): 4 rows above and below
    b.pop(concat_d32)
    # and so is every QuantizedAvgPool_8 (depth32_replacement_op): the pool 0x10024
    pool_d32 = Path("run-0001/0x10024_0.d32.npy")
    assert pool_d32 not in a and np.load(tmp_path / "dsp" / pool_d32).ndim == 5
    b.pop(pool_d32)
    index = Path("run-0001/outputs.json")               # says so: layout d32, its padding
    said = b.pop(index)
    assert b'"memory_file": "0x10026_0.d32.npy"' in said and a.pop(index)
    assert b'"memory_file": "0x10024_0.d32.npy"' in said
    assert a.keys() == b.keys()
    # the d32 pool sums its windows through an integral image and rounds otherwise than the
    # flat op the simulator runs as authored (docs/oracle-shape.md): a code apart at most,
    # there and in the concat after it, and the float output differs where the concat does
    pool, concat, out = (Path(f"run-0001/0x{i:x}_0.npy") for i in (0x10024, 0x10026, 0x10027))
    assert all(a[rel] == b[rel] for rel in a if rel not in (pool, concat, out))
    codes = [np.abs(np.load(tmp_path / "sim" / rel).astype(int)
                    - np.load(tmp_path / "dsp" / rel).astype(int)) for rel in (pool, concat)]
    assert all(d.max() <= 1 for d in codes) and codes[0].any()
    floats = np.load(tmp_path / "sim" / out) != np.load(tmp_path / "dsp" / out)
    assert np.array_equal(floats, codes[1] != 0)
