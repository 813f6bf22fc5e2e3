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


@pytest.fixture(scope="module")
def device_like():
    """The agent answering as a device must: taps without types or d32 padding, none of a
    failed run. The client then infers them as docs/connected-dsp.md says."""
    with running_agent("--device-like") as a:
        yield a


@pytest.mark.parametrize("kind", ["agent", "device-like"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_gives_the_simulators_bytes(request, path, kind):
    agent = request.getfixturevalue("agent" if kind == "agent" else "device_like")
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


def test_a_broadcast_adds_qint8_tag_comes_back_from_the_agent(agent, tmp_path):
    """op_add.c tags the broadcast path's output qint8 over quint8 codes: the agent sends the
    device's tag and the client keeps the codes' type, so the tensor equals the simulator's,
    tag included (a device agent cannot send a type: see docs/connected-dsp.md). The two
    inputs declare the same dims, so prepare keeps the flat add (prepare.c:1708-1740
    converts an add whose sources' declared dims differ to QuantizedAdd_8p8to8_d32); the
    second is fed smaller, which takes the broadcast."""
    from hexscope.engine.dtypes import DType
    from hexscope.engine.nodes import OutputDef

    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 2, 2, 4), 1)] * 2)
    for node_id, value in ((0x12, -1.0), (0x13, 1.0)):
        g.append_const_node(node_id, np.array([value], np.float32))
    g.append_node(0x20, "QuantizedAdd_8p8to8", inputs=[(0x10, 0), (0x10, 1), (0x12, 0),
                                                       (0x13, 0), (0x12, 0), (0x13, 0)],
                  outputs=[OutputDef((1, 2, 2, 4), 1), OutputDef(), OutputDef()])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    path = tmp_path / "broadcast_add.hexgraph"
    g.save(path)
    sim, dsp, _ = _pair(path, agent.address)
    x = np.arange(16, dtype=np.uint8).reshape(1, 2, 2, 4) * 10
    y = np.arange(4, dtype=np.uint8).reshape(1, 1, 1, 4) * 60
    try:
        for session in (sim, dsp):
            session.set_inputs([x, y])
        assert [sim.prepared.nodes[n].op for n in sim.plan][1] == "QuantizedAdd_8p8to8"
        assert sim.run().status is RunStatus.FINISHED
        assert dsp.run().status is RunStatus.FINISHED
        a, b = sim.output(0x20), dsp.output(0x20)
        assert a.device_dtype is DType.QINT8 and a.dtype is DType.QUINT8
        assert _same(a, b) and b.device_dtype is DType.QINT8
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
        while dsp.status(0x10023) is NodeStatus.PENDING:   # the next authored node (after
            dsp.step()                                      # prepare's Convert_from_d32)
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
        deadline = time.monotonic() + 90       # a loaded CI machine starts agents slowly
        # every output of the first two nodes of the plan received: each output is its own
        # TAP frame, so a node with its first output in the cache may still lose the others
        # to the kill, and the executor then has one node to keep (CI saw it, stop 37)
        nodes = dsp.backend.prepared.nodes

        def first_two_complete() -> bool:
            cache = dsp.backend.cache
            return all(len(cache.get(i, ())) == len(nodes[i].outputs) for i in dsp.plan[:2])

        while not first_two_complete() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert first_two_complete(), "the agent sent nothing"
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


def test_pass_through_ops_carry_the_simulators_types_from_a_device(device_like):
    """INPUT, Nop and Flatten declare no output type: from a device (no types in taps) the
    client carries the graph input's type on, as the simulator does (quint8 for a 1-byte
    input, spec §1.2), instead of a bare uint8."""
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_node(2, "Nop", [(1, 0)], outputs=1)
    g.append_const_node(3, np.array([[[[-1]]]], np.int32))
    g.append_node(4, "Flatten", [(2, 0), (3, 0)], outputs=1)
    g.append_node(5, "OUTPUT", [(4, 0)])
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    sim, dsp = Session(g), Session(g, device_like.address)
    try:
        for s in (sim, dsp):
            s.set_inputs([x])
            assert s.run().status is RunStatus.FINISHED
        for node_id in (1, 2, 4):
            assert _same(sim.output(node_id), dsp.output(node_id)), hex(node_id)
        assert dsp.output(4).dtype is sim.output(4).dtype
    finally:
        dsp.close()


def test_a_device_returns_nothing_of_a_failed_run_and_says_where_it_failed(device_like):
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_const_node(2, np.array([[[[1.0, 2.0]]]], np.float32))
    g.append_node(3, "Tanh_f", [(1, 0)], outputs=1)
    g.append_node(4, "Close_f", [(3, 0), (2, 0)])
    dsp = Session(g, device_like.address)
    try:
        dsp.set_inputs([np.array([[[[5.0, 5.0]]]], np.float32)])
        finished = dsp.run()
        assert finished.status is RunStatus.FAILED and finished.failed_node == 1
        assert "the device's run failed at node 0x4" in finished.message
        assert "no outputs of a failed run" in finished.message
    finally:
        dsp.close()


def test_an_output_without_sizes_is_flagged_on_a_device(device_like, agent):
    """hexagon_nn gives an output declared without sizes no buffer (spec §1.4): on a device
    agent the node carries a warning; the simulator's agent has no such limit."""
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)                  # a count: no declared sizes
    g.append_node(2, "OUTPUT", [(1, 0)])
    for address, warned in ((device_like.address, True), (agent.address, False)):
        dsp = Session(g, address)
        try:
            dsp.set_inputs([np.zeros((1, 1, 1, 2), np.float32)])
            assert dsp.run().status is RunStatus.FINISHED
            warnings = dsp.result(1).warnings
            assert bool(warnings) is warned
            assert not warned or "declared without sizes" in warnings[0]
        finally:
            dsp.close()


def test_a_sibling_shares_the_connection_and_the_first_uploads_again(agent):
    """A comparison in the app runs a second session on the device the first one uses: an
    agent serves one client, so it shares the connection instead of being refused."""
    sim, dsp, g = _pair(CLASSIC, agent.address)
    try:
        assert dsp.run().status is RunStatus.FINISHED
        other = Session(Graph.load(CLASSIC), dsp.backend.sibling())
        other.set_inputs(dsp.inputs)
        assert other.run().status is RunStatus.FINISHED
        assert _same(other.output(0x10027), dsp.output(0x10027))
        other.close()
        assert dsp.backend.connected                      # the sibling did not close it
        uploads = dsp.backend.uploads
        dsp.restart()
        assert dsp.run().status is RunStatus.FINISHED
        assert dsp.backend.uploads == uploads + 1         # the agent held the sibling's graph
    finally:
        dsp.close()
