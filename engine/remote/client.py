"""AgentClient: one connection to a device agent, with timeouts on connect and every reply."""

from __future__ import annotations

import itertools
import socket
import time
from collections.abc import Callable, Sequence

from hexscope.engine.errors import BackendError
from hexscope.engine.remote import protocol as p
from hexscope.engine.remote.wire import ConnectionClosed, read_frame, send

CONNECT_TIMEOUT = 5.0
REPLY_TIMEOUT = 30.0
EXECUTE_TIMEOUT = 300.0      # a device may run a long graph before its first TAP frame


class AgentError(BackendError):
    """The agent answered with a typed ERROR."""

    def __init__(self, message: str, code: int = 0, node_id: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.node_id = node_id


class AgentAuthError(AgentError):
    """The agent refused the token."""


class AgentBusy(AgentError):
    """The agent is serving another client."""


class ConnectionLost(BackendError):
    """The connection broke or timed out; what was received before is kept by the caller."""


class AgentClient:
    """Speaks docs/protocol.md to one agent. Not thread-safe: one request at a time."""

    def __init__(self, host: str, port: int, token: str | bytes | None = None, *,
                 connect_timeout: float = CONNECT_TIMEOUT, reply_timeout: float = REPLY_TIMEOUT,
                 execute_timeout: float = EXECUTE_TIMEOUT, label: str = "") -> None:
        self.host, self.port = host, port
        self.label = label or f"agent {host}:{port}"  # how messages name it
        self.token = token.encode() if isinstance(token, str) else (token or b"")
        self.connect_timeout = connect_timeout
        self.reply_timeout = reply_timeout
        self.execute_timeout = execute_timeout
        self.hello: p.HelloOk | None = None
        # whose graph the agent holds (a backend's key and prefix), for backends that share
        # this connection; any new connection holds none
        self.on_agent: tuple[int, int] | None = None
        self._sock: socket.socket | None = None
        self._ids = itertools.count(1)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def connected(self) -> bool:
        return self._sock is not None

    # connection ----------------------------------------------------------------------------
    def connect(self, busy_wait: float = 1.5) -> p.HelloOk:
        """Connect and say HELLO. A BUSY agent is asked again for ``busy_wait`` seconds: it
        may still be finishing a connection of ours that just closed."""
        deadline = time.monotonic() + busy_wait
        while True:
            try:
                return self._connect_once()
            except AgentBusy:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)

    def _connect_once(self) -> p.HelloOk:
        self.close()
        try:
            sock = socket.create_connection((self.host, self.port), self.connect_timeout)
        except TimeoutError:
            raise ConnectionLost(f"{self.label}: no answer within "
                                 f"{self.connect_timeout:g} s") from None
        except OSError as exc:
            raise ConnectionLost(f"{self.label}: cannot connect: "
                                 f"{exc.strerror or exc}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        try:
            reply = self._request(p.Hello(self.token))
        except BaseException:
            self.close()
            raise
        assert isinstance(reply, p.HelloOk)
        self.hello = reply
        return reply

    def abort(self) -> None:
        """Break the connection from any thread: a call blocked on the agent's reply (in
        another thread) ends at once with ConnectionLost instead of at its timeout. The
        client is closed by its own thread afterwards (``close`` alone would not wake a
        thread blocked in ``recv``)."""
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass                      # closed meanwhile: nothing to break

    def close(self) -> None:
        self.on_agent = None
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def __enter__(self) -> AgentClient:
        if not self.connected:
            self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # requests ------------------------------------------------------------------------------
    def upload(self, nodes: Sequence[p.WireNode]) -> int:
        """Append ``nodes`` to a new graph, in as many UPLOAD frames as the agent's frame
        limit needs. Returns the agent's node count."""
        limit = (self.hello.max_frame if self.hello else p.DEFAULT_MAX_FRAME) // 2
        chunk: list[p.WireNode] = []
        size, total, first = 0, 0, True
        for node in nodes:
            cost = 128 + len(node.inputs) * 8 + len(node.outputs) * 48 + len(node.const or b"")
            if chunk and (size + cost > limit or len(chunk) >= p.MAX_COUNT // 2):
                total = self._upload(chunk, first)
                chunk, size, first = [], 0, False
            chunk.append(node)
            size += cost
        if chunk or first:
            total = self._upload(chunk, first)
        return total

    def _upload(self, nodes: list[p.WireNode], first: bool) -> int:
        reply = self._request(p.Upload(tuple(nodes), new_graph=first))
        assert isinstance(reply, p.UploadOk)
        return reply.nodes_total

    def prepare(self, output_node_id: int, taps: Sequence[tuple[int, int, int]],
                debug_level: int = 0) -> p.PrepareOk:
        reply = self._request(p.Prepare(output_node_id, tuple(taps), debug_level))
        assert isinstance(reply, p.PrepareOk)
        return reply

    def execute(self, inputs: Sequence[p.WireTensor], taps: Sequence[tuple[int, int]] = (),
                on_tap: Callable[[p.Tap], None] | None = None) -> p.ExecuteDone:
        """Run the prepared graph; ``on_tap`` sees every TAP frame as it arrives, so whatever
        came before a broken connection has been handed over."""
        rid = self._send(p.Execute(tuple(inputs), tuple(taps)))
        while True:
            reply = self._receive(rid, self.execute_timeout)
            if isinstance(reply, p.Tap):
                if on_tap is not None:
                    on_tap(reply)
                continue
            assert isinstance(reply, p.ExecuteDone), reply
            return reply

    def perfinfo(self, reset: bool = False) -> p.PerfInfo:
        reply = self._request(p.PerfRequest(reset))
        assert isinstance(reply, p.PerfInfo)
        return reply

    def getlog(self, max_bytes: int = 0) -> str:
        reply = self._request(p.LogRequest(max_bytes))
        assert isinstance(reply, p.LogText)
        return reply.text

    def teardown(self) -> None:
        self._request(p.Teardown())

    # plumbing ------------------------------------------------------------------------------
    def _request(self, message: p.Message) -> p.Message:
        rid = self._send(message)
        return self._receive(rid, self.reply_timeout)

    def _send(self, message: p.Message) -> int:
        if self._sock is None:
            raise ConnectionLost(f"{self.label}: not connected")
        rid = next(self._ids) & 0xFFFFFFFF or next(self._ids)
        try:
            self._sock.settimeout(self.reply_timeout)
            send(self._sock, message, rid)
        except OSError as exc:
            self.close()
            raise ConnectionLost(f"{self.label}: connection lost while sending: "
                                 f"{exc.strerror or exc}") from None
        return rid

    def _receive(self, rid: int, timeout: float) -> p.Message:
        sock = self._sock
        if sock is None:
            raise ConnectionLost(f"{self.label}: not connected")
        try:
            frame = read_frame(sock, max_frame=p.HARD_MAX_FRAME, idle_timeout=timeout,
                               frame_timeout=max(timeout, p.FRAME_TIMEOUT))
            reply = frame.message()
        except (ConnectionClosed, OSError) as exc:
            self.close()
            what = "timed out" if isinstance(exc, TimeoutError) else "lost"
            raise ConnectionLost(f"{self.label}: connection {what}"
                                 + (f" ({exc})" if not isinstance(exc, TimeoutError) else
                                    f" (no reply within {timeout:g} s)")) from None
        except p.ProtocolError as exc:
            self.close()
            raise ConnectionLost(f"{self.label}: bad reply: {exc}") from None
        if isinstance(reply, p.Busy):
            self.close()
            raise AgentBusy(f"{self.label} is busy: {reply.message}")
        if isinstance(reply, p.ErrorReply):
            if reply.code in p.FATAL_CODES:
                self.close()
            if reply.code == p.ErrorCode.AUTH:
                raise AgentAuthError(f"{self.label} refused the connection (AUTH: "
                                     f"{reply.message}); give its token with --token or "
                                     "HEXSCOPE_AGENT_TOKEN", reply.code)
            raise AgentError(f"{self.label}: {reply.name}: {reply.message}",
                             reply.code, reply.node_id)
        if frame.header.request_id != rid:
            self.close()
            raise ConnectionLost(f"{self.label}: reply to request "
                                 f"{frame.header.request_id}, expected {rid}")
        return reply
