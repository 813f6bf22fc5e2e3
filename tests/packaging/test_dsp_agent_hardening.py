"""The C device agent against hostile and unlucky peers (issue 33), on the host and on 64-bit
ARM under qemu: connections that never say HELLO, trickle it, or declare a huge first frame
cannot take the client slot; an authenticated client is served beside them; a graph has a
size cap; an empty --token is refused. The same rules as hexscope-agent (docs/protocol.md
§2.1-2.2)."""

from __future__ import annotations

import select
import socket
import subprocess
import threading
import time

import pytest

from hexscope.engine.remote import protocol as p
from hexscope.engine.remote.client import AgentBusy, AgentClient, AgentError
from support.agent_process import closed_after, connected_client, read_reply
from support.dsp_agent_process import build, running

TOKEN = "s3cret"
HELLO_S = 1.0
DATA = bytes(range(120))


@pytest.fixture(scope="module", params=["host", "cross-aarch64"])
def binary(request):
    return build(request.param)


@pytest.fixture(scope="module")
def agent(binary, tmp_path_factory):
    trace = tmp_path_factory.mktemp("dsp-h") / "calls.log"
    with running(binary, trace, "--token", TOKEN, "--hello-timeout", str(HELLO_S),
                 "--frame-timeout", "0.5", "--max-graph-bytes", "100000") as a:
        yield a


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), 5)


def _graph(const_bytes: int = 4) -> list[p.WireNode]:
    """INPUT → Nop (with a Const of ``const_bytes``) → Flatten: data the stand-in copies."""
    out = p.WireOutput
    return [
        p.WireNode(0x100, "INPUT", 0, outputs=(out((1, 1, 1, 120), 1),)),
        p.WireNode(0x10, "Const", 3, outputs=(out((1, 1, 1, const_bytes), 1),),
                   const=bytes(const_bytes)),
        p.WireNode(0x200, "Nop", 2, inputs=((0x100, 0), (0x10, 0)),
                   outputs=(out((1, 1, 1, 120), 1), out((1, 1, 1, const_bytes), 1))),
        p.WireNode(0x300, "Flatten", 14, inputs=((0x200, 0),), outputs=(out((1, 1, 1, 120), 1),)),
    ]


def _session(client: AgentClient) -> None:
    client.upload(_graph())
    client.prepare(0x7FFFFFF0, [(0x300, 0, 128)])
    taps: list[p.Tap] = []
    done = client.execute([p.WireTensor((1, 1, 1, 120), DATA, 2)], (), taps.append)
    assert done.status == 0 and [t.tensor.data for t in taps] == [DATA]


def test_dsp_agent_a_silent_connection_does_not_take_the_slot(agent):
    silent = _connect(agent.port)
    try:
        time.sleep(0.2)
        start = time.monotonic()
        client = AgentClient("127.0.0.1", agent.port, TOKEN)
        client.connect(busy_wait=0)                         # served at once, no BUSY
        assert time.monotonic() - start < 1.0
        _session(client)
        client.close()
        reply, waited = closed_after(silent)
    finally:
        silent.close()
    assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.TIMEOUT
    assert "no whole HELLO within 1 s of connecting" in reply.message
    assert waited < HELLO_S + 1.0


def test_dsp_agent_a_trickled_hello_is_cut_at_the_deadline(agent):
    reply: p.Message | None = None
    with _connect(agent.port) as sock:
        start = time.monotonic()
        for byte in p.encode(p.Hello(TOKEN.encode()), 1):   # a byte every 0.3 s < 0.5 s
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            if select.select([sock], [], [], 0.3)[0]:
                reply, _ = closed_after(sock)
                break
        waited = time.monotonic() - start
    assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.TIMEOUT, reply
    assert "no whole HELLO" in reply.message and waited < HELLO_S + 1.0


@pytest.mark.parametrize("msg_type", [p.MsgType.UPLOAD, p.MsgType.HELLO])
def test_dsp_agent_a_huge_first_frame_is_refused_from_its_header(agent, msg_type):
    with _connect(agent.port) as sock:
        sock.sendall(p.HEADER.pack(p.MAGIC, p.VERSION, msg_type, 1, 8, 255 * 1024 * 1024, 0))
        reply, waited = closed_after(sock)
    assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.TOO_LARGE
    assert f"before HELLO a frame holds at most {p.MAX_HELLO_FRAME} bytes" in reply.message
    assert waited < 0.5                                     # no wait for a body
    assert agent.alive()


def test_dsp_agent_busy_goes_to_authenticated_clients_only(agent):
    first = connected_client(agent.port, TOKEN)
    try:
        with pytest.raises(AgentBusy, match="serving 127.0.0.1"):
            AgentClient("127.0.0.1", agent.port, TOKEN).connect(busy_wait=0)
        with _connect(agent.port) as sock:
            sock.sendall(p.encode(p.Hello(b"guess"), 1))
            reply = read_reply(sock)
        assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.AUTH
        assert first.getlog() == ""
    finally:
        first.close()


def test_dsp_agent_slow_and_silent_connections_beside_a_real_client(agent):
    stop = threading.Event()

    def silent() -> None:
        while not stop.is_set():
            with _connect(agent.port) as s:
                s.settimeout(HELLO_S + 2)
                try:
                    s.recv(100)
                except OSError:
                    pass

    def trickle() -> None:
        while not stop.is_set():
            with _connect(agent.port) as s:
                try:
                    for byte in p.encode(p.Hello(b"guess"), 1):
                        s.sendall(bytes([byte]))
                        time.sleep(0.25)
                except OSError:
                    pass

    def hostile() -> None:
        while not stop.is_set():
            with _connect(agent.port) as s:
                try:
                    s.sendall(p.HEADER.pack(p.MAGIC, p.VERSION, p.MsgType.UPLOAD, 1, 8,
                                            255 * 1024 * 1024, 0) + b"x" * 4096)
                    s.recv(100)
                except OSError:
                    pass
            time.sleep(0.05)

    peers = [threading.Thread(target=t, daemon=True)
             for t in [silent] * 6 + [trickle] * 6 + [hostile] * 2]
    for t in peers:
        t.start()
    sessions = 0
    try:
        time.sleep(0.3)
        deadline = time.monotonic() + 3 * HELLO_S
        while time.monotonic() < deadline:
            start = time.monotonic()
            client = AgentClient("127.0.0.1", agent.port, TOKEN)
            client.connect(busy_wait=0.5)
            assert time.monotonic() - start < 1.0
            try:
                _session(client)
            finally:
                client.close()
            sessions += 1
    finally:
        stop.set()
        for t in peers:
            t.join(HELLO_S + 5)
    assert sessions >= 3 and agent.alive()


def test_dsp_agent_a_graph_over_max_graph_bytes_is_refused(agent):
    client = connected_client(agent.port, TOKEN)
    try:
        with pytest.raises(AgentError) as err:
            client.upload(_graph(120_000))
        assert err.value.code == p.ErrorCode.APPEND_FAILED
        assert "over this agent's limit of 100000 (its --max-graph-bytes)" in str(err.value)
        client.upload(_graph(60_000))                       # frames of one graph add up
        with pytest.raises(AgentError, match="limit of 100000"):
            client._upload(_graph(60_000)[1:2], first=False)
        with pytest.raises(AgentError) as err:              # torn down
            client._upload([], first=False)
        assert err.value.code == p.ErrorCode.STATE
        _session(client)                                    # a small graph: served
    finally:
        client.close()


def test_dsp_agent_refuses_an_empty_token_in_one_line(binary):
    done = subprocess.run([*binary, "--listen", "0.0.0.0:0", "--token", ""],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "dsp-agent: --token is empty: give a token, or leave --token out to accept any client"]


def test_dsp_agent_a_full_greeting_table_pushes_out_the_oldest(agent):
    """32 connections may greet at once; the 33rd pushes out the one waiting longest, and a
    real client (the 34th) is still served."""
    socks = [_connect(agent.port)]
    try:
        time.sleep(0.05)
        socks += [_connect(agent.port) for _ in range(32)]
        reply, waited = closed_after(socks[0], 3.0)
        assert reply is None and waited < 0.5                 # closed without a word
        with connected_client(agent.port, TOKEN, timeout=2.0) as client:
            _session(client)
    finally:
        for s in socks:
            s.close()
    assert agent.alive()


def test_dsp_agent_decodes_nothing_but_a_hello_before_the_token(agent):
    with _connect(agent.port) as sock:
        sock.sendall(p.encode_frame(p.MsgType.UPLOAD, 1, b"\x01" * 30))
        reply, _ = closed_after(sock)
    assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.AUTH
    with _connect(agent.port) as sock:
        sock.sendall(p.encode_frame(p.MsgType.HELLO, 1, b"\x01\x00"))    # 2 bytes, not 8
        reply = read_reply(sock)
        assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.MALFORMED
        sock.sendall(p.encode(p.Hello(TOKEN.encode()), 2))
        assert isinstance(read_reply(sock), (p.HelloOk, p.Busy))
