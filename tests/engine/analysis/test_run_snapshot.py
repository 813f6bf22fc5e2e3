"""A run frozen for the analyses on another thread (engine/analysis/run_snapshot.py), a
graph rebuilt from a snapshot, and a device connection broken from another thread."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from hexscope.engine.analysis.compare import compare_reference
from hexscope.engine.analysis.run_snapshot import RunSnapshot
from hexscope.engine.errors import Cancelled
from hexscope.engine.executor import CancelToken
from hexscope.engine.graph import Graph
from hexscope.engine.session import Session
from support.compare_graphs import RELU_ID, chain, chain_input


def _stepped(n: int) -> Session:
    session = Session(chain())
    session.set_inputs([chain_input()])
    for _ in range(n):
        session.step()
    return session


def _rows(comparison) -> list[tuple]:
    return [(d.node_id, d.index, d.exceeds, d.metrics.max_abs if d.metrics else None)
            for d in comparison.outputs]


@pytest.mark.parametrize("mode", ["isolated", "accumulated"])
def test_a_snapshot_is_the_run_as_it_was_when_taken(mode):
    session = _stepped(3)                              # INPUT, quantize, relu
    view = RunSnapshot.of(session, CancelToken())
    before = compare_reference(session, mode, 1.0)
    session.run()                                      # the live run moves on
    after = compare_reference(session, mode, 1.0)
    frozen = compare_reference(view, mode, 1.0)
    assert _rows(frozen) == _rows(before)
    assert RELU_ID in {d.node_id for d in frozen.outputs}
    assert len(after.outputs) > len(frozen.outputs)    # the run did move on
    assert frozen.b_name == session.backend.name


def test_a_cancelled_snapshot_stops_the_float_reference():
    session = _stepped(3)
    token = CancelToken()
    view = RunSnapshot.of(session, token)
    token.cancel()
    with pytest.raises(Cancelled):
        compare_reference(view, "isolated", 1.0)
    with pytest.raises(Cancelled):
        compare_reference(view, "accumulated", 1.0)



def test_a_graph_from_a_snapshot_is_the_graph_and_does_not_follow_its_edits():
    graph = chain()
    copy = Graph.from_snapshot(graph.snapshot())
    assert copy.to_bytes() == graph.to_bytes()
    graph.remove_node(RELU_ID)
    assert RELU_ID in copy.order and copy.to_bytes() != graph.to_bytes()


def test_abort_wakes_a_thread_blocked_on_the_agent_s_reply():
    from hexscope.engine.remote.client import AgentClient

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = AgentClient("127.0.0.1", server.getsockname()[1])
    client._sock = socket.create_connection(server.getsockname())   # noqa: SLF001
    peer, _ = server.accept()                       # an agent that never answers
    failed: list[BaseException] = []

    def wait_for_reply() -> None:
        try:
            client._sock.recv(16)                   # noqa: SLF001 - what a request blocks on
        except OSError as exc:
            failed.append(exc)

    reader = threading.Thread(target=wait_for_reply)
    reader.start()
    time.sleep(0.1)
    start = time.monotonic()
    client.abort()
    reader.join(5)
    assert not reader.is_alive() and time.monotonic() - start < 1
    client.close()
    peer.close()
    server.close()
