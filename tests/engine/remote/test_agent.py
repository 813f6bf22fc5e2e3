"""hexscope-agent as a real process on loopback (docs/protocol.md §2.2, §3)."""

from __future__ import annotations

import socket
import struct
import time

import numpy as np
import pytest

from hexscope.engine.remote import protocol as p
from hexscope.engine.remote.client import AgentAuthError, AgentBusy, AgentClient, AgentError
from hexscope.engine.remote.wire import send
from support.agent_process import (
    connected_client,
    hello,
    raw_connection,
    read_reply,
    running_agent,
)


@pytest.fixture(scope="module")
def agent():
    with running_agent("--frame-timeout", "0.5") as a:
        yield a


@pytest.fixture(scope="module")
def guarded():
    with running_agent("--token", "s3cret") as a:
        yield a


def _client(port: int, token: str | None = None) -> AgentClient:
    return connected_client(port, token)


def test_hello_reports_the_simulated_hexagon_nn_version(agent):
    reply = hello(agent.port)
    assert isinstance(reply, p.HelloOk)
    assert reply.hexagon_nn_version == 0x00021401          # spec §2.11
    assert reply.agent_kind == p.AGENT_SIMULATOR
    assert reply.counter_kind == p.COUNTER_SIMULATED_NS
    assert "simulator" in reply.description


def test_the_token_is_required_and_checked(guarded):
    ok = hello(guarded.port, b"s3cret")
    assert isinstance(ok, p.HelloOk)
    for token in (b"", b"s3creT", b"s3cret-and-more"):
        reply = hello(guarded.port, token)
        assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.AUTH, token
    with pytest.raises(AgentAuthError, match="wrong token"):
        _client(guarded.port, "nope")


def test_a_second_client_gets_busy_and_the_first_keeps_working(agent):
    first = _client(agent.port)
    try:
        with pytest.raises(AgentBusy, match="busy"):
            AgentClient("127.0.0.1", agent.port).connect()
        assert first.getlog() == ""                       # still served
    finally:
        first.close()
    assert isinstance(hello(agent.port), p.HelloOk)       # free again


def test_requests_before_hello_are_refused(agent):
    sock = raw_connection(agent.port)
    with sock:
        send(sock, p.Teardown(), 7)
        reply = read_reply(sock)
    assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.AUTH


def test_state_errors_are_typed_and_keep_the_connection(agent):
    client = _client(agent.port)
    try:
        with pytest.raises(AgentError) as err:
            client.execute([])
        assert err.value.code == p.ErrorCode.STATE
        with pytest.raises(AgentError) as err:
            client.perfinfo()
        assert err.value.code == p.ErrorCode.STATE
        assert client.connected
        client.teardown()                                 # the same connection still works
    finally:
        client.close()


def test_an_unknown_op_fails_the_append_naming_the_node(agent):
    client = _client(agent.port)
    try:
        with pytest.raises(AgentError) as err:
            client.upload([p.WireNode(0x42, "NoSuchOp_8", p.UNKNOWN)])
        assert err.value.code == p.ErrorCode.APPEND_FAILED and err.value.node_id == 0x42
        assert "0x42" in str(err.value)
        with pytest.raises(AgentError) as err:      # the graph is dead until a NEW_GRAPH
            client._request(p.Upload((), new_graph=False))
        assert err.value.code == p.ErrorCode.STATE
    finally:
        client.close()


def _float_graph() -> list[p.WireNode]:
    f = (p.WireOutput((1, 1, 1, 2), 4),)
    return [p.WireNode(0x1, "INPUT", 0, outputs=f),
            p.WireNode(0x10, "Const", 3, outputs=f, const=struct.pack("<2f", 1.0, 2.0),
                       const_dtype=8),
            p.WireNode(0x20, "Tanh_f", 61, inputs=((0x1, 0),), outputs=f)]


def test_a_whole_session_upload_prepare_execute_perfinfo_log(agent):
    client = _client(agent.port)
    try:
        assert client.upload(_float_graph()) == 3
        client.prepare(0x7000, [(0x1, 0, 128), (0x20, 0, 128)])
        taps: list[p.Tap] = []
        x = p.WireTensor((1, 1, 1, 2), struct.pack("<2f", 0.5, 0.25), 8)
        done = client.execute([x], [(0x20, 0)], taps.append)
        assert done.status == 0 and done.n_taps_sent == 1
        assert [(t.node_id, t.output_idx) for t in taps] == [(0x20, 0)]
        expected = np.tanh(np.array([0.5, 0.25], np.float32))
        assert taps[0].tensor.data == expected.tobytes()
        assert taps[0].tensor.dtype == 8 and taps[0].tensor.shape == (1, 1, 1, 2)
        with pytest.raises(AgentError) as err:              # not a prepared slot
            client.execute([x], [(0x10, 0)])
        assert err.value.code == p.ErrorCode.BAD_TAP
        perf = client.perfinfo(reset=True)
        runs = {node: n for node, n, _ in perf.records}
        assert runs[0x20] == 1 and runs[0x1] == 1 and 0x10 not in runs   # no Consts (§2.9)
        assert all(n == 0 for _, n, _ in client.perfinfo().records)      # reset
    finally:
        client.close()


def test_a_failing_node_ends_the_run_with_its_id_and_the_taps_before_it(agent):
    client = _client(agent.port)
    try:
        nodes = _float_graph() + [p.WireNode(0x30, "Close_f", 5, inputs=((0x20, 0), (0x10, 0)))]
        client.upload(nodes)
        client.prepare(0x7000, [(0x20, 0, 128)])
        taps: list[p.Tap] = []
        done = client.execute([p.WireTensor((1, 1, 1, 2), struct.pack("<2f", 9, 9), 8)], (),
                              taps.append)
        assert done.status != 0 and done.failed_node_id == 0x30
        assert [t.node_id for t in taps] == [0x20]       # ran before the failure: kept
        assert "0x30" in client.getlog()
    finally:
        client.close()


def test_a_stalled_frame_times_out_with_a_typed_error(agent):
    sock = raw_connection(agent.port)
    with sock:
        sock.sendall(b"HXSP\x01\x00")                     # and then nothing
        reply = read_reply(sock)
        assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.TIMEOUT
    assert isinstance(hello(agent.port), p.HelloOk)


def test_a_slow_frame_that_keeps_moving_is_not_cut(agent):
    frame = p.encode(p.Hello(b""), 4)                     # 32 bytes, in 8 pieces over ~1.4 s
    sock = raw_connection(agent.port)
    with sock:
        for k in range(0, len(frame), 4):
            sock.sendall(frame[k:k + 4])
            time.sleep(0.2)                               # each gap < the 0.5 s stall limit
        assert isinstance(read_reply(sock), p.HelloOk)


def test_replies_before_hello_are_bad_type_and_keep_the_connection(agent):
    for _ in range(100):                  # BUSY while the agent still ends the last client
        with raw_connection(agent.port) as sock:
            send(sock, p.UploadOk(3), 5)                  # a reply type, not a request
            reply = read_reply(sock)
            assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.BAD_TYPE
            send(sock, p.Hello(b""), 6)
            reply = read_reply(sock)
            if isinstance(reply, p.Busy):
                time.sleep(0.05)
                continue
            assert isinstance(reply, p.HelloOk)
            send(sock, p.Hello(b""), 7)                   # a second HELLO
            reply = read_reply(sock)
            assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.STATE
            return
    raise AssertionError("the agent stayed busy")


def test_the_agent_binds_loopback_by_default():
    from hexscope.engine.remote.agent import Agent

    a = Agent(port=0)
    try:
        assert a.address[0] == "127.0.0.1"
    finally:
        a.close()


def test_a_refused_connection_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]                         # nobody listens here
    from hexscope.engine.remote.client import ConnectionLost

    with pytest.raises(ConnectionLost, match=f"127.0.0.1:{port}: cannot connect"):
        AgentClient("127.0.0.1", port).connect()


def test_a_silent_agent_is_a_timeout_not_a_hang():
    """Something listens but never answers (a wedged device, a wrong forward): HELLO's
    reply times out and says so."""
    from hexscope.engine.remote.client import ConnectionLost

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        client = AgentClient("127.0.0.1", port, reply_timeout=0.5)
        start = time.monotonic()
        with pytest.raises(ConnectionLost, match=r"timed out \(no reply within 0.5 s\)"):
            client.connect()
        assert time.monotonic() - start < 5
        assert not client.connected
