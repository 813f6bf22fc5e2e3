"""The C device agent (packaging/dsp-agent), built with one command against the host stand-in
for hexagon_nn and driven end to end as a process on loopback by Hexscope's own client
(engine/remote/client.py) and, for broken frames, by raw sockets. The stand-in computes the
data-movement ops exactly (INPUT, OUTPUT, Nop, Flatten, Check), so every byte is checkable.
Protocol sections: docs/protocol.md; hexagon_nn facts: /work/shared/spec (spec §...)."""

from __future__ import annotations

import socket
import struct
import time

import numpy as np
import pytest

from hexscope.engine.remote import protocol as p
from hexscope.engine.remote.client import AgentAuthError, AgentBusy, AgentClient, AgentError
from support.agent_process import (
    connected_client,
    greeted_connection,
    raw_connection,
    read_reply,
)
from support.dsp_agent_process import build, running

TOKEN = "s3cret"
OUT_ID = 0x7FFFFFF0
DATA = np.arange(2 * 3 * 4 * 5, dtype=np.uint8).tobytes()      # a 2x3x4x5 uint8 input


# the host build, and the same code for 64-bit ARM (the device's CPU) under qemu when the
# cross compiler is installed (glibc there, not Android's bionic: see README.md)
@pytest.fixture(scope="module", params=["host", "cross-aarch64"])
def binary(request):
    return build(request.param)


@pytest.fixture(scope="module")
def agent(binary, tmp_path_factory):
    trace = tmp_path_factory.mktemp("dsp") / "calls.log"
    with running(binary, trace, "--token", TOKEN, "--frame-timeout", "0.3") as a:
        yield a


def _client(port: int, token: str | None = TOKEN, timeout: float = 5.0) -> AgentClient:
    """A connected client (waiting while the agent still finishes the last connection)."""
    return connected_client(port, token, timeout, reply_timeout=timeout)


def _out(*shape: int, size: int = 1) -> p.WireOutput:
    return p.WireOutput(shape, size)


def _passthrough() -> list[p.WireNode]:
    """INPUT 0x100 → Nop 0x200 (two in, two out) → Flatten 0x300, plus a Const 0x10 that the
    Nop also passes through, and an unused Const 0x11 that prepare removes (spec §2.5)."""
    return [
        p.WireNode(0x100, "INPUT", 0, outputs=(_out(2, 3, 4, 5),)),
        p.WireNode(0x10, "Const", 3, outputs=(_out(1, 1, 1, 4),), const=b"\x07\x08\x09\x0a"),
        p.WireNode(0x11, "Const", 3, outputs=(_out(1, 1, 1, 2),), const=b"\xff\xfe"),
        p.WireNode(0x200, "Nop", 2, inputs=((0x100, 0), (0x10, 0)),
                   outputs=(_out(2, 3, 4, 5), _out(1, 1, 1, 4))),
        p.WireNode(0x300, "Flatten", 14, inputs=((0x200, 0),), outputs=(_out(1, 1, 1, 120),)),
    ]


TAPS = [(0x100, 0, 128), (0x200, 0, 128), (0x200, 1, 128), (0x300, 0, 128)]


def _run(client: AgentClient, taps=()) -> tuple[p.ExecuteDone, dict]:
    got: dict = {}
    done = client.execute([p.WireTensor((2, 3, 4, 5), DATA, 2)], taps,
                          lambda t: got.__setitem__((t.node_id, t.output_idx), t))
    return done, got


def test_dsp_agent_builds_with_one_command_and_says_what_it_runs_on(agent):
    client = _client(agent.port)
    with client:
        hello = client.hello
    assert hello.hexagon_nn_version == 0x00021401          # the stand-in's version (spec §2.11)
    assert hello.agent_kind == p.AGENT_DEVICE
    assert hello.counter_kind == p.COUNTER_SIMULATED_NS     # host nanoseconds, not DSP cycles
    assert "stand-in" in hello.description and "not a DSP" in hello.description
    assert hello.max_meta == p.MAX_META


def test_dsp_agent_refuses_a_wrong_or_missing_token(agent):
    for token in ("s3creT", "s3cret-and-more", None):
        with pytest.raises(AgentAuthError) as err:
            _client(agent.port, token)
        assert err.value.code == p.ErrorCode.AUTH
    _client(agent.port).close()                                   # the right one works


def test_dsp_agent_refuses_anything_before_hello(agent):
    sock = raw_connection(agent.port)
    with sock:
        sock.sendall(p.encode(p.LogRequest(), 1))
        reply = read_reply(sock)
        assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.AUTH
        assert sock.recv(1) == b""                                # and closed


def test_dsp_agent_serves_one_client_and_tells_others_it_is_busy(agent):
    first = _client(agent.port)
    try:
        with pytest.raises(AgentBusy, match="busy"):
            AgentClient("127.0.0.1", agent.port, TOKEN).connect()
        assert first.getlog() == ""                               # the first is still served
    finally:
        first.close()


def test_dsp_agent_runs_a_passthrough_graph_and_returns_the_exact_bytes(agent):
    with _client(agent.port) as client:
        assert client.upload(_passthrough()) == 5
        ok = client.prepare(OUT_ID, TAPS)
        # after prepare: the dead Const 0x11 is gone, the tap OUTPUT node is there
        assert ok.n_nodes == 5
        done, got = _run(client)
        client.teardown()
    assert done.status == 0 and done.n_taps_sent == 4
    assert got[(0x100, 0)].tensor.data == DATA
    assert got[(0x100, 0)].tensor.shape == (2, 3, 4, 5)
    assert got[(0x200, 0)].tensor.data == DATA
    assert got[(0x200, 1)].tensor.data == b"\x07\x08\x09\x0a"
    assert got[(0x200, 1)].tensor.shape == (1, 1, 1, 4)
    assert got[(0x300, 0)].tensor.data == DATA
    assert got[(0x300, 0)].tensor.shape == (1, 1, 1, 120)       # Flatten's shape rule (§4.14)
    # execute_new carries neither type nor layout (spec §4.2): the agent says it cannot know
    assert {t.tensor.dtype for t in got.values()} == {p.UNKNOWN}
    assert {t.tensor.layout for t in got.values()} == {p.UNKNOWN}


def test_dsp_agent_appends_one_output_node_of_the_tap_slots_at_prepare(agent):
    start = len(agent.calls())
    with _client(agent.port) as client:
        client.upload(_passthrough())
        client.prepare(OUT_ID, TAPS)
        _run(client)
    time.sleep(0.2)
    calls = agent.calls()[start:]
    names = [c.split()[0] for c in calls]
    output = next(c for c in calls if "op=1(OUTPUT)" in c)
    assert f"node=0x{OUT_ID:x}" in output
    assert "inputs=[0x100:0,0x200:0,0x200:1,0x300:0] n_outputs=0 -> 0" in output
    # the OUTPUT node comes after every uploaded node and before prepare, execute after that
    assert names.index("prepare") > calls.index(output) > names.index("append_const_node")
    assert any(c.startswith("execute_new") and "n_inputs=1 n_outputs=4 -> 0" in c
               for c in calls)
    # consts go to append_const_node with their shape and bytes (spec §2.4)
    assert any("node=0x10 shape=1x1x1x4 len=4 -> 0" in c for c in calls)
    # a connection that ends without TEARDOWN has its graph torn down (protocol §2.2)
    assert names[-1] == "teardown" and calls[-1].endswith("-> 0")


def test_dsp_agent_sends_only_the_taps_asked_for_and_refuses_unprepared_ones(agent):
    with _client(agent.port) as client:
        client.upload(_passthrough())
        client.prepare(OUT_ID, TAPS)
        done, got = _run(client, [(0x300, 0)])
        assert done.n_taps_sent == 1 and list(got) == [(0x300, 0)]
        with pytest.raises(AgentError) as err:
            _run(client, [(0x300, 0), (0x300, 1)])
        assert err.value.code == p.ErrorCode.BAD_TAP and err.value.node_id == 0x300
        assert _run(client)[0].n_taps_sent == 4                  # the connection is still good


def test_dsp_agent_reports_perfinfo_per_node_and_resets_it(agent):
    with _client(agent.port) as client:
        client.upload(_passthrough())
        client.prepare(OUT_ID, TAPS)
        _run(client)
        _run(client)
        perf = client.perfinfo(reset=True)
        after = client.perfinfo()
    # one record per non-Const node in list order, the agent's OUTPUT node included (§2.9)
    assert [r[0] for r in perf.records] == [0x100, 0x200, 0x300, OUT_ID]
    assert [r[1] for r in perf.records] == [2, 2, 2, 2]
    assert all(r[2] > 0 for r in perf.records)                   # host nanoseconds
    assert perf.counter_kind == p.COUNTER_SIMULATED_NS
    assert [r[1:] for r in after.records] == [(0, 0)] * 4


def test_dsp_agent_getlog_returns_the_graph_log_once(agent):
    with _client(agent.port) as client:
        client.upload(_passthrough())
        client.prepare(OUT_ID, TAPS, debug_level=2)               # level 2 logs the removals
        first = client.getlog()
        second = client.getlog()
    assert "removed dead node 0x11" in first
    assert second == ""                                           # reading clears (spec §2.8)


def test_dsp_agent_reports_a_failing_node_with_its_id_and_no_taps(agent):
    nodes = _passthrough() + [p.WireNode(0x400, "Check", 4, inputs=((0x300, 0), (0x100, 0)))]
    with _client(agent.port) as client:
        client.upload(nodes)
        client.prepare(OUT_ID, TAPS)
        done, got = _run(client)
    # Check compares shapes first: Flatten's 1x1x1x120 is not the input's 2x3x4x5 (§4.5)
    assert done.status == -1 and done.failed_node_id == 0x400
    assert "check fail batches 1 != 2" in done.message
    assert got == {} and done.n_taps_sent == 0                    # OUTPUT never ran (§2.6)


def test_dsp_agent_teardown_and_state_errors(agent):
    with _client(agent.port) as client:
        with pytest.raises(AgentError) as err:
            client.perfinfo()
        assert err.value.code == p.ErrorCode.STATE
        client.upload(_passthrough())
        client.prepare(OUT_ID, TAPS)
        start = len(agent.calls())
        client.teardown()
        assert [c for c in agent.calls()[start:] if c.startswith("teardown")]
        for call in (lambda: _run(client), lambda: client.prepare(OUT_ID, TAPS)):
            with pytest.raises(AgentError) as err:
                call()
            assert err.value.code == p.ErrorCode.STATE
        client.teardown()                                         # without a graph: fine too
        assert client.getlog() == ""


def test_dsp_agent_unknown_op_fails_the_append_naming_the_node(agent):
    bad = p.WireNode(0x500, "NoSuchOp_8", 9999, inputs=((0x300, 0),),
                     outputs=(_out(1, 1, 1, 1),))
    with _client(agent.port) as client:
        client.upload(_passthrough())                             # a graph under construction
        with pytest.raises(AgentError) as err:
            client._upload([bad], first=False)
        assert err.value.code == p.ErrorCode.APPEND_FAILED and err.value.node_id == 0x500
        assert "NoSuchOp_8" in str(err.value)
        # the graph is dead (protocol §3.8): only a NEW_GRAPH upload goes on
        with pytest.raises(AgentError) as err:
            client._upload(_passthrough()[:1], first=False)
        assert err.value.code == p.ErrorCode.STATE
        assert client.upload(_passthrough()) == 5


def test_dsp_agent_prepare_failure_is_typed_and_kills_the_graph(agent):
    # the stand-in refuses ops it does not compute at prepare, with a log line saying so
    nodes = _passthrough()[:1] + [
        p.WireNode(0x600, "Sigmoid_f", 62, inputs=((0x100, 0),), outputs=(_out(2, 3, 4, 5),))]
    with _client(agent.port) as client:
        client.upload(nodes)
        with pytest.raises(AgentError) as err:
            client.prepare(OUT_ID, [(0x600, 0, 128)])
        assert err.value.code == p.ErrorCode.PREPARE_FAILED
        assert "not computed by the host stand-in" in str(err.value)
        # the graph is dead: only a NEW_GRAPH upload goes on (protocol §3.3)
        with pytest.raises(AgentError) as err:
            client._upload(_passthrough(), first=False)
        assert err.value.code == p.ErrorCode.STATE
        assert client.upload(_passthrough()) == 5


def _header(version=1, msg_type=2, meta=0, data=0, magic=b"HXSP", rid=9) -> bytes:
    return p.HEADER.pack(magic, version, msg_type, rid, meta, data, 0)


def _greeted(port: int) -> socket.socket:
    return greeted_connection(port, TOKEN.encode())


def test_dsp_agent_malformed_metadata_is_typed_and_the_connection_stays(agent):
    with _greeted(agent.port) as sock:
        body = struct.pack("<6I", 1, 5, 0, 0, 0, 0)               # says 5 nodes, carries none
        sock.sendall(_header(meta=len(body)) + body)
        reply = read_reply(sock)
        assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.MALFORMED
        sock.sendall(_header(msg_type=0x81))                      # a reply type, not a request
        reply = read_reply(sock)
        assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.BAD_TYPE
        sock.sendall(p.encode(p.LogRequest(), 3))                 # still served
        assert isinstance(read_reply(sock), p.LogText)


@pytest.mark.parametrize("frame, code", [
    (_header(magic=b"HXSQ"), p.ErrorCode.BAD_MAGIC),
    (_header(version=2), p.ErrorCode.BAD_VERSION),
    (_header(meta=p.MAX_META + 1), p.ErrorCode.TOO_LARGE),
    (_header(meta=8, data=2**32 - 1), p.ErrorCode.TOO_LARGE),
    (_header(meta=8) + b"\x01\x00", p.ErrorCode.TIMEOUT),           # truncated, then silence
], ids=["magic", "version", "meta", "frame", "truncated"])
def test_dsp_agent_lost_framing_gets_a_typed_error_then_close(agent, frame, code):
    with _greeted(agent.port) as sock:
        sock.sendall(frame)
        reply = read_reply(sock)
        assert isinstance(reply, p.ErrorReply) and reply.code == code
        sock.settimeout(2.0)
        assert sock.recv(1) == b""
    assert agent.alive()
    _client(agent.port).close()


def test_dsp_agent_takes_a_slow_frame_that_keeps_arriving(agent):
    """Protocol §2.1 (changed at 07:01): the frame deadline is a time without progress. A
    frame trickled over 0.9 s, three times the agent's 0.3 s window, is served."""
    frame = p.encode(p.Upload(tuple(_passthrough())), 2)
    with _greeted(agent.port) as sock:
        step = max(1, len(frame) // 9)
        for k in range(0, len(frame), step):
            sock.sendall(frame[k:k + step])
            time.sleep(0.1)
        reply = read_reply(sock)
        assert not isinstance(reply, p.ErrorReply), reply
    assert agent.alive()


def test_dsp_agent_survives_a_client_that_vanishes_mid_frame(agent):
    frame = p.encode(p.Upload(tuple(_passthrough())), 2)
    for cut in (1, p.HEADER_SIZE, len(frame) // 2, len(frame) - 1):
        with _greeted(agent.port) as sock:
            sock.sendall(frame[:cut])
    assert agent.alive()
    with _client(agent.port) as client:
        assert client.upload(_passthrough()) == 5


def test_dsp_agent_binds_loopback_by_default_and_closes_idle_connections(binary, tmp_path):
    with running(binary, tmp_path / "calls.log", "--listen", ":0", "--token", TOKEN,
                 "--idle-timeout", "0.3") as quiet:
        with _greeted(quiet.port) as sock:
            assert sock.getpeername()[0] == "127.0.0.1"
            sock.settimeout(5.0)
            assert sock.recv(1) == b""            # idle past the limit: closed, no reply
        assert quiet.alive()
        _client(quiet.port).close()


def test_dsp_agent_says_busy_at_once_while_a_graph_runs(binary, tmp_path):
    import threading

    with running(binary, tmp_path / "calls.log", node_ms=400) as slow:
        client = _client(slow.port, None)
        client.upload(_passthrough())
        client.prepare(OUT_ID, TAPS)
        result: list = []
        runner = threading.Thread(target=lambda: result.append(_run(client)))
        runner.start()
        time.sleep(0.3)                           # the graph is running: 4 nodes x 400 ms
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", slow.port), 5) as other:
            other.sendall(p.encode(p.Hello(), 1))     # BUSY answers an accepted HELLO
            reply = read_reply(other)
        waited = time.monotonic() - started
        assert isinstance(reply, p.Busy) and "one client at a time" in reply.message
        runner.join(10)
        client.close()
    # the accepting thread answers, not the one waiting for the DSP
    assert waited < 1.0 and runner.is_alive() is False
    assert result and result[0][0].status == 0 and result[0][1][(0x300, 0)].tensor.data == DATA


def test_dsp_agent_tears_down_when_the_client_vanishes_mid_run(binary, tmp_path):
    with running(binary, tmp_path / "calls.log", node_ms=300) as slow:
        sock = raw_connection(slow.port)
        for k, message in enumerate([p.Hello(), p.Upload(tuple(_passthrough())),
                                     p.Prepare(OUT_ID, tuple(TAPS))], 1):
            sock.sendall(p.encode(message, k))
            read_reply(sock)
        sock.sendall(p.encode(p.Execute((p.WireTensor((2, 3, 4, 5), DATA, 2),)), 4))
        time.sleep(0.2)
        sock.close()                              # gone while the graph runs
        with _client(slow.port, None) as client:  # served again once the run ended
            assert client.getlog() == ""
        calls = slow.calls()
        assert slow.alive()
    executes = [i for i, c in enumerate(calls) if c.startswith("execute_new")]
    teardowns = [i for i, c in enumerate(calls) if c.startswith("teardown")]
    assert executes and teardowns and teardowns[0] > executes[0]
