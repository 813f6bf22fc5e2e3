"""The dsp:// backend against hexscope-agent as a real process: the same results as the
in-process simulator, runs up to a target with taps, re-upload after an edit, a device-side
failure, a connection lost mid-run, reconnecting."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine import Graph, RunStatus, Session
from hexscope.engine.errors import BackendError
from hexscope.engine.executor import NodeStatus
from hexscope.engine.inputs import make_inputs
from hexscope.engine.plugins import load_standard_plugins, unload_plugin
from hexscope.engine.remote.client import AgentAuthError
from support.agent_process import running_agent, start_agent

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.hexgraph"))
CLASSIC = ROOT / "resources" / "examples" / "classic_quantized.hexgraph"


@pytest.fixture(scope="module", autouse=True)
def bundled_plugins():
    """Some examples use the bundled user ops; the agent loads them at start too."""
    specs = load_standard_plugins()
    yield
    unload_plugin(specs)


@pytest.fixture(scope="module")
def agent():
    with running_agent() as a:
        yield a


def _pair(path: Path, address: str) -> tuple[Session, Session, Graph]:
    g = Graph.load(path)
    inputs = make_inputs(g, base_dir=path.parent)
    sim, dsp = Session(g), Session(g, address)
    sim.set_inputs(inputs)
    dsp.set_inputs(inputs)
    return sim, dsp, g


def _same(a, b) -> bool:
    return (a.shape, a.dtype, a.layout, tuple(a.padding)) == \
        (b.shape, b.dtype, b.layout, tuple(b.padding)) and \
        a.raw[:a.nbytes].tobytes() == b.raw[:b.nbytes].tobytes()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_gives_the_simulators_bytes(agent, path):
    sim, dsp, _ = _pair(path, agent.address)
    try:
        assert sim.run().status is RunStatus.FINISHED
        finished = dsp.run()
        assert finished.status is RunStatus.FINISHED, finished.message
        assert dsp.backend.remote_runs == 1                 # one upload, one execute
        compared = 0
        for node_id in sim.plan:
            assert dsp.status(node_id) is NodeStatus.DONE
            for k, tensor in enumerate(sim.result(node_id).outputs):
                assert _same(tensor, dsp.output(node_id, k)), f"0x{node_id:x}:{k}"
                compared += 1
        assert compared > len(sim.plan) // 2
    finally:
        dsp.close()


def test_run_to_runs_the_graph_up_to_the_target_only(agent):
    sim, dsp, g = _pair(CLASSIC, agent.address)
    try:
        target = 0x1001b                                    # the Supernode
        dsp.run_to(target)
        backend = dsp.backend
        assert backend.remote_runs == 1
        assert set(backend.cache) == {0x10000, 0x10006, 0x1001b}   # taps up to the target
        assert dsp.status(0x10023) is NodeStatus.PENDING
        dsp.step()                                          # the next node: a second run
        assert backend.remote_runs == 2 and backend.uploads == 2
        assert dsp.status(0x10023) is NodeStatus.DONE
        sim.run()
        assert _same(sim.output(0x10023), dsp.output(0x10023))
    finally:
        dsp.close()


def test_breakpoints_stop_before_the_node_and_continue(agent):
    _, dsp, _ = _pair(CLASSIC, agent.address)
    try:
        dsp.breakpoints.add(0x10026)
        first = dsp.run()
        assert first.status is RunStatus.PAUSED and first.next_node == 0x10026
        assert dsp.status(0x10026) is NodeStatus.PENDING
        assert 0x10026 not in dsp.backend.cache             # the device ran up to 0x10024
        assert dsp.run().status is RunStatus.FINISHED
    finally:
        dsp.close()


def test_an_edit_uploads_again_and_matches_the_edited_simulation(agent):
    sim, dsp, g = _pair(CLASSIC, agent.address)
    try:
        dsp.run()
        uploads = dsp.backend.uploads
        g.set_padding(0x10023, "SAME")                      # was VALID
        dsp.restart()
        assert dsp.run().status is RunStatus.FINISHED
        assert dsp.backend.uploads == uploads + 1
        sim.restart()
        sim.run()
        assert _same(sim.output(0x10027), dsp.output(0x10027))
    finally:
        dsp.close()


def test_a_node_failing_on_the_device_fails_there_with_its_message(agent, tmp_path):
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_const_node(2, np.array([[[[1.0, 2.0]]]], np.float32))
    g.append_node(3, "Tanh_f", [(1, 0)], outputs=1)
    g.append_node(4, "Close_f", [(3, 0), (2, 0)])
    x = np.array([[[[5.0, 5.0]]]], np.float32)
    sim, dsp = Session(g), Session(g, agent.address)
    try:
        sim.set_inputs([x])
        dsp.set_inputs([x])
        expected = sim.run()
        got = dsp.run()
        assert expected.status is got.status is RunStatus.FAILED
        assert got.failed_node == expected.failed_node == 4
        assert "failed on the device" in got.message
        assert dsp.status(3) is NodeStatus.DONE             # the tap before the failure
    finally:
        dsp.close()


def test_a_wrong_token_is_refused_clearly(monkeypatch):
    with running_agent("--token", "right") as a:
        monkeypatch.setenv("HEXSCOPE_AGENT_TOKEN", "wrong")
        with pytest.raises(AgentAuthError, match="AUTH: wrong token"):
            Session(Graph.load(CLASSIC), a.address)


def test_a_lost_connection_fails_the_run_keeps_what_came_and_reconnects():
    agent = start_agent("--slow-ms", "400")
    port = agent.port
    try:
        sim, dsp, _ = _pair(CLASSIC, agent.address)
        box: dict[str, object] = {}
        runner = threading.Thread(target=lambda: box.update(done=dsp.run()))
        runner.start()
        deadline = time.monotonic() + 20
        while len(dsp.backend.cache) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        agent.kill()                                        # mid-run
        runner.join(30)
        finished = box["done"]
        assert finished.status is RunStatus.FAILED
        assert "connection to dsp://127.0.0.1" in finished.message
        assert "lost" in finished.message and "kept" in finished.message
        done = [i for i in dsp.plan if dsp.status(i) is NodeStatus.DONE]
        assert len(done) >= 2                               # what came before the loss stays
        sim.run()
        for node_id in done:
            assert _same(sim.output(node_id), dsp.output(node_id))
        # the agent comes back on the same port: the next run reconnects by itself
        agent = start_agent_on(port)
        dsp.restart()
        assert dsp.run().status is RunStatus.FINISHED
        assert _same(sim.output(0x10027), dsp.output(0x10027))
        dsp.close()
    finally:
        agent.kill()


def start_agent_on(port: int):
    import subprocess
    import sys

    from support.agent_process import AgentProcess

    proc = subprocess.Popen([sys.executable, "-m", "hexscope.engine.remote.agent", "--listen",
                             f"127.0.0.1:{port}"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None and str(port) in proc.stdout.readline()
    return AgentProcess(proc, port)


def test_an_address_that_is_not_host_port_is_refused():
    with pytest.raises(BackendError, match="dsp://HOST:PORT"):
        Session(Graph.load(CLASSIC), "dsp://nohost")
