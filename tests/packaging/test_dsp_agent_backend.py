"""Hexscope's dsp:// backend (engine/backends/remote.py) against the C device agent and its
host stand-in: a graph of data-movement ops (which the stand-in computes exactly) gives the
same bytes and shapes as the simulator, whole runs and step-through alike, and the device's
per-node counters reach the backend."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.backends.remote import RemoteBackend
from hexscope.engine.errors import NodeError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.remote import protocol as p
from support.dsp_agent_process import build, running

TOKEN = "s3cret"


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    binary = build("host")
    with running(binary, tmp_path_factory.mktemp("dsp-b") / "calls.log", "--token", TOKEN) as a:
        yield a


def _graph(declared: bool = True) -> Graph:
    """INPUT → Nop (with a Const) → Flatten → OUTPUT; ``declared``: output sizes given, as a
    device needs them (spec §1.4: an output without sizes has no buffer)."""
    def out(n: int) -> list[OutputDef] | int:
        return [OutputDef((1, 1, 1, n), 1)] if declared else 1

    g = Graph()
    g.append_node(0x100, "INPUT", outputs=out(256))
    g.append_const_node(0x10, np.arange(4, dtype=np.uint8).reshape(1, 1, 1, 4) + 200)
    g.append_node(0x200, "Nop", inputs=[(0x100, 0), (0x10, 0)],
                  outputs=out(256) + out(4) if declared else 2)
    g.append_node(0x300, "Flatten", inputs=[(0x200, 0)], outputs=out(256))
    g.append_node(0x400, "OUTPUT", inputs=[(0x300, 0), (0x200, 1)])
    return g


def _bytes_and_shapes(s: Session) -> dict:
    return {(n, k): (s.output(n, k).shape, bytes(s.output(n, k).raw[:s.output(n, k).nbytes]))
            for n, k in [(0x100, 0), (0x200, 0), (0x200, 1), (0x300, 0)]}


def _backend(agent) -> RemoteBackend:
    return RemoteBackend("127.0.0.1", agent.port, TOKEN)


def test_the_c_agent_gives_the_simulators_bytes(agent, rng):
    x = rng.integers(0, 256, (1, 3, 5, 7), dtype=np.uint8)
    sim = Session(_graph())
    sim.execute([x])
    backend = _backend(agent)
    dsp = Session(_graph(), backend)
    try:
        dsp.execute([x])
        assert _bytes_and_shapes(dsp) == _bytes_and_shapes(sim)
        assert bytes(dsp.output(0x300).raw[:x.size]) == x.tobytes()
        assert backend.remote_runs == 1 and backend.uploads == 1   # one graph run, not per node
        assert backend.counter_kind == p.COUNTER_SIMULATED_NS
        assert {0x100, 0x200, 0x300} <= set(backend.counters)
        assert backend.connection_status().hexagon_nn_version == 0x00021401
    finally:
        dsp.close()


def test_step_run_to_and_an_edit_on_the_c_agent(agent, rng):
    x = rng.integers(0, 256, (2, 2, 2, 3), dtype=np.uint8)
    graph = _graph()
    backend = _backend(agent)
    dsp = Session(graph, backend)
    try:
        dsp.set_inputs([x])
        dsp.run_to(0x200)
        assert bytes(dsp.output(0x200, 1).raw[:4]) == bytes([200, 201, 202, 203])
        dsp.run()
        sim = Session(_graph())
        sim.execute([x])
        assert _bytes_and_shapes(dsp) == _bytes_and_shapes(sim)
        uploads = backend.uploads
        # an edit re-prepares; the next run uploads the graph again and sees the new const
        graph.set_const(0x10, np.full((1, 1, 1, 4), 9, np.uint8))
        dsp.execute([x])
        assert backend.uploads == uploads + 1
        assert bytes(dsp.output(0x200, 1).raw[:4]) == bytes([9, 9, 9, 9])
    finally:
        dsp.close()


def test_an_output_without_declared_sizes_fails_on_the_device_as_hexagon_nn_does(agent, rng):
    # the simulator sizes outputs itself; hexagon_nn allocates what the definition declares
    # (spec §1.4: elementsize 0 gives no buffer), so INPUT cannot take the data (spec §4.1)
    x = rng.integers(0, 256, (1, 1, 1, 8), dtype=np.uint8)
    Session(_graph(declared=False)).execute([x])
    dsp = Session(_graph(declared=False), _backend(agent))
    try:
        with pytest.raises(NodeError) as err:
            dsp.execute([x])
        assert err.value.node_id == 0x100
        assert "out 0 too small (8 > 0)" in str(err.value)
    finally:
        dsp.close()


def test_killing_the_c_agent_mid_run_fails_the_run_with_a_clear_message(tmp_path, rng):
    import threading

    from hexscope.engine.errors import EngineError

    x = rng.integers(0, 256, (1, 2, 2, 2), dtype=np.uint8)
    with running(build("host"), tmp_path / "calls.log", node_ms=400) as slow:
        dsp = Session(_graph(), RemoteBackend("127.0.0.1", slow.port))
        killer = threading.Timer(0.5, slow.kill)
        killer.start()
        try:
            with pytest.raises(EngineError) as err:
                dsp.execute([x])
        finally:
            killer.join()
            dsp.close()
    # a device agent sends its taps only after execute_new returns: nothing was received
    assert "lost during the run" in str(err.value)
