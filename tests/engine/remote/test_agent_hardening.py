"""hexscope-agent against hostile and unlucky peers (issue 33): connections that never say
HELLO, or trickle it a byte at a time, or declare a huge first frame, cannot take the client
slot or the agent's memory; an authenticated client is served beside them; a graph has a size
cap; an empty token is refused; PREPARE's tap sizes are honoured (status 2, protocol §3.4)."""

from __future__ import annotations

import select
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine import Graph, RunStatus, Session
from hexscope.engine.nodes import OutputDef
from hexscope.engine.remote import protocol as p
from hexscope.engine.remote.agent import Agent
from hexscope.engine.remote.client import AgentBusy, AgentClient, AgentError
from hexscope.engine.remote.wire import send
from support.agent_process import closed_after, connected_client, read_reply, running_agent

HELLO_S = 1.0


@pytest.fixture(scope="module")
def agent():
    with running_agent("--hello-timeout", str(HELLO_S), "--frame-timeout", "0.5",
                       "--token", "s3cret", "--max-graph-bytes", "100000") as a:
        yield a


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), 5)


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _float_graph(const_bytes: int = 8) -> list[p.WireNode]:
    f = (p.WireOutput((1, 1, 1, 2), 4),)
    n = const_bytes // 4
    return [p.WireNode(0x1, "INPUT", 0, outputs=f),
            p.WireNode(0x10, "Const", 3, outputs=(p.WireOutput((1, 1, 1, n), 4),),
                       const=bytes(4 * n), const_dtype=8),
            p.WireNode(0x20, "Tanh_f", 61, inputs=((0x1, 0),), outputs=f)]


# --- the client slot ----------------------------------------------------------------------------
def test_a_silent_connection_does_not_take_the_client_slot(agent):
    silent = _connect(agent.port)
    try:
        time.sleep(0.2)                                     # accepted, saying nothing
        start = time.monotonic()
        client = AgentClient("127.0.0.1", agent.port, "s3cret")
        client.connect(busy_wait=0)                         # no BUSY: served at once
        assert time.monotonic() - start < 0.5
        assert client.getlog() == ""
        client.close()
        reply, waited = closed_after(silent)
    finally:
        silent.close()
    # told why, and closed at the HELLO deadline, not the 900 s idle timeout
    assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.TIMEOUT
    assert f"no whole HELLO within {HELLO_S:g} s" in reply.message
    assert waited < HELLO_S + 1.0


def test_a_trickled_hello_is_cut_at_the_deadline_though_each_byte_is_in_time(agent):
    """A byte every 0.3 s keeps under the 0.5 s stall limit (the whole HELLO would take
    11 s); the first frame still has HELLO_S seconds in all."""
    reply: p.Message | None = None
    with _connect(agent.port) as sock:
        start = time.monotonic()
        for byte in p.encode(p.Hello(b"s3cret"), 1):
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


def test_busy_goes_to_authenticated_clients_only(agent):
    first = connected_client(agent.port, "s3cret")
    try:
        with pytest.raises(AgentBusy, match="serving 127.0.0.1"):
            AgentClient("127.0.0.1", agent.port, "s3cret").connect(busy_wait=0)
        with _connect(agent.port) as sock:                  # a wrong token learns nothing
            send(sock, p.Hello(b"guess"), 1)
            reply = read_reply(sock)
        assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.AUTH
        assert "serving" not in reply.message
        assert first.getlog() == ""
    finally:
        first.close()


def test_slow_and_silent_connections_beside_a_real_client(agent):
    """The issue's case: peers without the token (silent, trickling, a huge header, garbage,
    reconnecting in a loop) while a real client works through whole sessions."""
    stop = threading.Event()
    opened = [0]

    def silent() -> None:
        while not stop.is_set():
            with _connect(agent.port) as s:
                opened[0] += 1
                s.settimeout(HELLO_S + 2)
                try:
                    s.recv(100)                             # until the agent closes it
                except OSError:
                    pass

    def trickle() -> None:
        while not stop.is_set():
            with _connect(agent.port) as s:
                opened[0] += 1
                try:
                    for byte in p.encode(p.Hello(b"guess"), 1):
                        s.sendall(bytes([byte]))
                        time.sleep(0.25)
                except OSError:
                    pass

    def hostile() -> None:
        while not stop.is_set():
            with _connect(agent.port) as s:
                opened[0] += 1
                try:
                    s.sendall(p.HEADER.pack(p.MAGIC, p.VERSION, p.MsgType.UPLOAD, 1,
                                            8, 255 * 1024 * 1024, 0) + b"x" * 4096)
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
            client = AgentClient("127.0.0.1", agent.port, "s3cret")
            client.connect(busy_wait=0.5)
            assert time.monotonic() - start < 1.0
            try:
                client.upload(_float_graph())
                client.prepare(0x7000, [(0x20, 0, 128)])
                taps: list[p.Tap] = []
                x = p.WireTensor((1, 1, 1, 2), struct.pack("<2f", 0.5, 0.25), 8)
                assert client.execute([x], (), taps.append).status == 0
                assert taps[0].tensor.data == np.tanh(np.float32([0.5, 0.25])).tobytes()
            finally:
                client.close()
            sessions += 1
    finally:
        stop.set()
        for t in peers:
            t.join(HELLO_S + 5)
    assert sessions >= 3 and opened[0] >= 14
    assert agent.alive()


def test_a_full_greeting_table_pushes_out_the_oldest_not_the_new_client():
    agent = Agent(port=0, token="s3cret", hello_timeout=30.0, max_greeting=3,
                  log=lambda text: None)
    threading.Thread(target=agent.serve_forever, daemon=True).start()
    port = agent.address[1]
    socks = []
    try:
        for _ in range(4):
            socks.append(_connect(port))
            time.sleep(0.1)
        reply, waited = closed_after(socks[0], 3.0)       # the oldest: pushed out
        assert reply is None and waited < 1.0
        client = AgentClient("127.0.0.1", port, "s3cret")  # pushes out the second, served
        client.connect(busy_wait=0)
        assert client.getlog() == ""
        client.close()
        for s in socks[2:]:                                 # still waiting to greet
            s.settimeout(0.2)
            with pytest.raises(TimeoutError):
                s.recv(1)
    finally:
        for s in socks:
            s.close()
        agent.close()


# --- memory before HELLO ------------------------------------------------------------------------
@pytest.mark.parametrize("msg_type", [p.MsgType.UPLOAD, p.MsgType.HELLO])
def test_a_huge_first_frame_is_refused_from_its_header(agent, msg_type):
    before = _rss(agent.proc.pid)
    with _connect(agent.port) as sock:
        sock.sendall(p.HEADER.pack(p.MAGIC, p.VERSION, msg_type, 1, 8, 255 * 1024 * 1024, 0))
        reply, waited = closed_after(sock)
    grown = _rss(agent.proc.pid) - before
    assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.TOO_LARGE
    assert f"before HELLO a frame holds at most {p.MAX_HELLO_FRAME} bytes" in reply.message
    assert waited < 0.5                                     # not read: no wait for the body
    assert grown < 16 * 1024 * 1024, f"the agent grew by {grown:,} bytes"


def test_an_upload_before_hello_is_refused_unread(agent):
    frame = p.encode(p.Upload(tuple(_float_graph(4096))), 1)
    with _connect(agent.port) as sock:
        sock.sendall(frame)
        reply, _ = closed_after(sock)
    assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.TOO_LARGE


# --- the graph cap ------------------------------------------------------------------------------
def test_a_graph_over_max_graph_bytes_is_refused_and_the_connection_stays(agent):
    client = connected_client(agent.port, "s3cret")
    try:
        with pytest.raises(AgentError) as err:
            client.upload(_float_graph(120_000))
        assert err.value.code == p.ErrorCode.APPEND_FAILED
        assert "over this agent's limit of 100,000" in str(err.value)
        assert "--max-graph-bytes" in str(err.value)
        client.upload(_float_graph(60_000))                 # two frames that add up: refused
        with pytest.raises(AgentError, match="limit of 100,000"):
            client._upload(_float_graph(60_000)[1:2], first=False)
        with pytest.raises(AgentError) as err:              # torn down: dead until NEW_GRAPH
            client._upload([], first=False)
        assert err.value.code == p.ErrorCode.STATE
        assert client.upload(_float_graph()) == 3           # a small graph: fine
    finally:
        client.close()


def test_the_graph_cap_reaches_the_user_on_the_command_line(agent, tmp_path):
    g = Graph()
    g.append_node(1, "INPUT", outputs=[OutputDef((1, 1, 1, 2), 4)])
    g.append_const_node(0x10, np.zeros((1, 1, 1, 40_000), np.float32))
    g.append_node(0x20, "Tanh_f", [(1, 0)], outputs=[OutputDef((1, 1, 1, 2), 4)])
    g.append_node(0x30, "OUTPUT", [(0x20, 0)])
    g.save(tmp_path / "big.hexgraph")
    done = subprocess.run([sys.executable, "-m", "hexscope.app", "run",
                           tmp_path / "big.hexgraph", "--backend", agent.address,
                           "--token", "s3cret"],
                          capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in out
    assert "over this agent's limit of 100,000" in out, out


# --- the token ----------------------------------------------------------------------------------
def test_an_empty_token_is_refused_in_one_line():
    done = subprocess.run([sys.executable, "-m", "hexscope.engine.remote.agent", "--listen",
                           "0.0.0.0:0", "--token", ""], capture_output=True, text=True,
                          timeout=15)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "hexscope-agent: --token is empty: give a token, or leave --token out to accept "
        "any client"]
    with pytest.raises(ValueError, match="the token is empty"):
        Agent(port=0, token="")


# --- PREPARE's tap sizes ------------------------------------------------------------------------
@pytest.mark.parametrize("device_like", [False, True])
def test_a_tap_over_its_slot_is_not_sent_and_the_run_returns_2(device_like):
    with running_agent(*(["--device-like"] if device_like else [])) as a:
        client = connected_client(a.port)
        try:
            client.upload(_float_graph())
            # the INPUT's 8 bytes fit; Tanh_f's 8 bytes do not fit 4
            client.prepare(0x7000, [(0x1, 0, 8), (0x20, 0, 4)])
            taps: list[p.Tap] = []
            x = p.WireTensor((1, 1, 1, 2), struct.pack("<2f", 0.5, 0.25), 8)
            done = client.execute([x], (), taps.append)
            log = client.getlog()
        finally:
            client.close()
    assert [(t.node_id, t.tensor.data) for t in taps] == [(0x1, x.data)]
    assert (done.status, done.failed_node_id, done.n_taps_sent) == (2, 0x7000, 1)
    assert done.message == "output 1 too small (8 > 4)"
    assert "output 1 too small (8 > 4)" in log and "node id=7000 err=2" in log


def test_a_too_small_output_fails_its_node_through_the_backend_and_keeps_the_rest():
    """The client's side of status 2: the node whose output did not fit fails, naming the
    size; the nodes whose outputs fit keep them."""
    g = Graph()
    g.append_node(1, "INPUT", outputs=[OutputDef((1, 1, 1, 4), 1), OutputDef((1, 1, 1, 8), 4)])
    g.append_node(2, "Tanh_f", [(1, 1)], outputs=[OutputDef((1, 1, 1, 8), 4)])
    g.append_node(3, "OUTPUT", [(2, 0)])
    x = [np.arange(200, dtype=np.uint8).reshape(1, 1, 1, 200),   # 200 bytes > 128 declared
         np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 1, 1, 8)]
    sim = Session(g)
    sim.set_inputs(x)
    assert sim.run().status is RunStatus.FINISHED                  # the simulator sizes itself
    with running_agent() as a:
        dsp = Session(g, a.address)
        try:
            dsp.set_inputs(x)
            finished = dsp.run()
            assert finished.status is RunStatus.FAILED and finished.failed_node == 1
            assert "output 0 did not fit the 128 bytes its declared sizes give" in \
                finished.message
            assert "status 2, output too small (output 0 too small (200 > 128))" in \
                finished.message
            assert dsp.backend.cache[2][0].raw.tobytes() == sim.output(2).raw.tobytes()
        finally:
            dsp.close()


def test_nothing_but_a_hello_is_decoded_before_the_token(agent):
    """A small malformed UPLOAD before HELLO is AUTH (not decoded: MALFORMED would say it
    was); a malformed HELLO is told so and the connection may still greet in time."""
    with _connect(agent.port) as sock:
        sock.sendall(p.encode_frame(p.MsgType.UPLOAD, 1, b"\x01" * 30))
        reply, _ = closed_after(sock)
    assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.AUTH
    with _connect(agent.port) as sock:
        sock.sendall(p.encode_frame(p.MsgType.HELLO, 1, b"\x01\x00"))    # 2 bytes, not 8
        reply = read_reply(sock)
        assert isinstance(reply, p.ErrorReply) and reply.code == p.ErrorCode.MALFORMED
        send(sock, p.Hello(b"s3cret"), 2)
        assert isinstance(read_reply(sock), (p.HelloOk, p.Busy))
