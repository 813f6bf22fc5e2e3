"""``hexscope-agent``: serves the device-agent protocol (docs/protocol.md) with the simulator.

It is the development peer of the C agent in ``packaging/dsp-agent/`` and the one the tests
drive. One client at a time; others get BUSY once their HELLO is accepted. Every bad frame gets
a typed ERROR; only a lost framing closes the connection, and nothing a client sends stops the
agent. Until its HELLO is accepted a connection is held to a short deadline and a HELLO-sized
frame (see :class:`Agent`).
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import os
import socket
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

from hexscope.engine.remote import protocol as p
from hexscope.engine.remote.sim_device import HEXAGON_NN_VERSION, SimDevice
from hexscope.engine.remote.wire import ConnectionClosed, Frame, read_frame, send

DEFAULT_PORT = 5599
TOKEN_ENV = "HEXSCOPE_AGENT_TOKEN"


def parse_address(text: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT``; IPv6 hosts in brackets (``[::1]:5599``)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or default_host
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"bad address {text!r}: the port must be a number") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"bad address {text!r}: port {number} is out of range")
    return host, number


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class Agent:
    """A listening socket and the loop that serves it.

    A connection is served only once its HELLO carried the right token. Until then it is
    *greeting*: its whole first frame must arrive within ``hello_timeout`` seconds of
    connecting and hold no more than a HELLO can (:data:`~protocol.MAX_HELLO_FRAME`), so a
    silent or trickling peer without the token costs one thread for a few seconds and never
    the client slot. At most ``max_greeting`` connections greet at once; a new one beyond
    that pushes out the one greeting longest (a real client says HELLO within a round trip).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *,
                 token: str | bytes | None = None, max_frame: int = p.DEFAULT_MAX_FRAME,
                 idle_timeout: float | None = 900.0, frame_timeout: float = p.FRAME_TIMEOUT,
                 hello_timeout: float = p.HELLO_TIMEOUT,
                 max_graph_bytes: int = p.DEFAULT_MAX_GRAPH, max_greeting: int = 32,
                 slow_seconds: float = 0.0, device_like: bool = False,
                 log: object = None) -> None:
        self.token = token.encode() if isinstance(token, str) else token
        if self.token is not None and not self.token:
            raise ValueError("the token is empty: give a token, or none to accept any client")
        if self.token is not None and len(self.token) > p.MAX_TOKEN:
            raise ValueError(f"the token is {len(self.token)} bytes, over the protocol's "
                             f"limit of {p.MAX_TOKEN}")
        self.max_frame = min(max_frame, p.HARD_MAX_FRAME)
        self.idle_timeout = idle_timeout
        self.frame_timeout = frame_timeout
        self.hello_timeout = hello_timeout
        self.max_graph_bytes = max_graph_bytes
        self.max_greeting = max(1, max_greeting)
        self.slow_seconds = slow_seconds
        self.device_like = device_like
        self._log = log if callable(log) else (lambda text: print(text, file=sys.stderr,
                                                                 flush=True))
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(64)         # room for a burst of connections saying HELLO
        self.address = self.sock.getsockname()[:2]
        self._busy = threading.Lock()
        self._client = ""
        self._greeting: OrderedDict[socket.socket, str] = OrderedDict()
        self._greeting_lock = threading.Lock()
        self._stop = threading.Event()

    # accepting ---------------------------------------------------------------------------
    def serve_forever(self) -> None:
        while not self._stop.is_set():
            try:
                conn, addr = self.sock.accept()
            except OSError:
                if self._stop.is_set():
                    return
                continue
            peer = f"{addr[0]}:{addr[1]}"
            with self._greeting_lock:
                if len(self._greeting) >= self.max_greeting:
                    oldest, who = self._greeting.popitem(last=False)
                    self._log(f"{who}: pushed out, still without HELLO while "
                              f"{self.max_greeting} others connect")
                    _wake(oldest)
                self._greeting[conn] = peer
            threading.Thread(target=self._connection, args=(conn, peer), daemon=True,
                             name=f"agent-connection-{peer}").start()

    def close(self) -> None:
        self._stop.set()
        self.sock.close()

    def _connection(self, conn: socket.socket, peer: str) -> None:
        """Greet, then serve if the slot is free, else answer BUSY."""
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            greeting = self._greet(conn, peer)
        except OSError:
            greeting = None
        except Exception as exc:  # noqa: BLE001 - a bad greeting must not leak its connection
            self._log(f"{peer}: internal error before HELLO: {type(exc).__name__}: {exc}")
            greeting = None
        with self._greeting_lock:        # pushed out meanwhile: the HELLO came too late
            if self._greeting.pop(conn, None) is None:
                greeting = None
        if greeting is None:
            _linger_close(conn)
            return
        rid, reply = greeting
        if not self._busy.acquire(blocking=False):
            self._refuse(conn, peer)
            return
        self._client = peer
        try:
            conn.settimeout(self.frame_timeout)
            send(conn, reply, rid)
        except OSError as exc:
            self._log(f"client {peer}: {exc}")
            self._busy.release()
            _linger_close(conn)
            return
        self._serve(conn, peer)

    def _greet(self, conn: socket.socket, peer: str) -> tuple[int, p.HelloOk] | None:
        """The HELLO_OK for this connection's HELLO, or None once it was refused (and told
        why) or went away. Nothing but a HELLO is decoded before the token is checked."""
        deadline = time.monotonic() + self.hello_timeout
        while True:
            rid = 0
            try:
                frame = read_frame(conn, max_frame=p.MAX_HELLO_FRAME, deadline=deadline,
                                   frame_timeout=self.frame_timeout)
                rid, kind = frame.header.request_id, frame.header.type
                if kind not in p.REQUESTS:          # told, and still waiting for HELLO
                    raise p.ProtocolError(p.ErrorCode.BAD_TYPE, f"message type "
                                          f"0x{kind:04x} is not a request")
                if kind != p.MsgType.HELLO:
                    raise p.ProtocolError(p.ErrorCode.AUTH, "the first message must be HELLO")
                return rid, self._hello(frame.message())
            except p.ProtocolError as exc:
                if exc.code is p.ErrorCode.TIMEOUT and time.monotonic() >= deadline:
                    exc = p.ProtocolError(exc.code, f"no whole HELLO within "
                                          f"{self.hello_timeout:g} s of connecting ({exc})")
                elif exc.code is p.ErrorCode.TOO_LARGE:
                    exc = p.ProtocolError(exc.code, f"before HELLO a frame holds at most "
                                          f"{p.MAX_HELLO_FRAME} bytes ({exc})")
                self._reply_error(conn, exc, rid)
                if exc.fatal:
                    self._log(f"{peer}: refused before HELLO")
                    return None
            except ConnectionClosed:
                return None

    def _refuse(self, conn: socket.socket, peer: str) -> None:
        self._log(f"busy: refused {peer} (serving {self._client})")
        try:
            conn.settimeout(2.0)
            send(conn, p.Busy(f"agent busy: serving {self._client}; one client at a time"), 0)
        except OSError:
            pass
        _linger_close(conn)

    # serving one client ------------------------------------------------------------------
    def _serve(self, conn: socket.socket, peer: str) -> None:
        self._log(f"client {peer} connected")
        device = SimDevice(self.slow_seconds, self.device_like, self.max_graph_bytes)
        try:
            while True:
                try:
                    frame = read_frame(conn, max_frame=self.max_frame,
                                       idle_timeout=self.idle_timeout,
                                       frame_timeout=self.frame_timeout)
                except p.ProtocolError as exc:          # framing lost: reply, then close
                    self._reply_error(conn, exc, 0)
                    return
                rid = frame.header.request_id
                try:
                    self._handle(conn, device, frame)
                except p.ProtocolError as exc:
                    self._reply_error(conn, exc, rid)
                    if exc.fatal:
                        return
                except (ConnectionClosed, OSError):
                    raise
                except Exception as exc:  # noqa: BLE001 - one bad request must not stop the agent
                    self._reply_error(conn, p.ProtocolError(
                        p.ErrorCode.INTERNAL, f"internal error: {type(exc).__name__}: {exc}"),
                        rid)
                # not held while waiting for the next request: an UPLOAD's bytes would
                # double what the graph keeps (100 MiB of const kept 210 MB, now 105 MB)
                del frame
        except ConnectionClosed as exc:
            self._log(f"client {peer}: {exc}")
        except TimeoutError:
            self._log(f"client {peer}: idle for {self.idle_timeout:g} s, closing")
        except OSError as exc:
            self._log(f"client {peer}: {exc}")
        finally:
            device.teardown()
            _linger_close(conn)
            self._log(f"client {peer} gone")
            self._busy.release()

    def _handle(self, conn: socket.socket, device: SimDevice, frame: Frame) -> None:
        if frame.header.type not in p.REQUESTS:
            raise p.ProtocolError(p.ErrorCode.BAD_TYPE, f"message type "
                                  f"0x{frame.header.type:04x} is not a request")
        self._dispatch(conn, device, frame.message(), frame.header.request_id,
                       frame.header.meta_len + frame.header.data_len)

    def _reply_error(self, conn: socket.socket, exc: p.ProtocolError, rid: int) -> None:
        self._log(f"error {exc.code.name}: {exc}")
        try:
            send(conn, p.ErrorReply.of(exc), rid)
        except OSError:
            pass

    def _hello(self, message: p.Message) -> p.HelloOk:
        if not isinstance(message, p.Hello):
            raise p.ProtocolError(p.ErrorCode.AUTH, "the first message must be HELLO")
        if message.version != p.VERSION:
            raise p.ProtocolError(p.ErrorCode.BAD_VERSION, f"protocol version "
                                  f"{message.version} is not spoken here; this agent speaks "
                                  f"version {p.VERSION}")
        if self.token is not None and not hmac.compare_digest(message.token, self.token):
            raise p.ProtocolError(p.ErrorCode.AUTH, "wrong token" if message.token
                                  else "this agent needs a token")
        from hexscope import engine

        version = getattr(engine, "__version__", "")
        kind = p.AGENT_DEVICE if self.device_like else p.AGENT_SIMULATOR
        what = "simulator answering as a device" if self.device_like else "simulator"
        return p.HelloOk(HEXAGON_NN_VERSION, self.max_frame, p.MAX_META, kind,
                         p.COUNTER_SIMULATED_NS,
                         f"hexscope-agent {version} ({what})".replace("  ", " "))

    def _dispatch(self, conn: socket.socket, device: SimDevice, message: p.Message,
                  rid: int, size: int) -> None:
        if isinstance(message, p.Hello):
            raise p.ProtocolError(p.ErrorCode.STATE, "HELLO was already sent")
        if isinstance(message, p.Upload):
            send(conn, device.upload(message, size), rid)
        elif isinstance(message, p.Prepare):
            send(conn, device.prepare(message), rid)
        elif isinstance(message, p.Execute):
            send(conn, device.execute(message, lambda tap: send(conn, tap, rid)), rid)
        elif isinstance(message, p.PerfRequest):
            send(conn, device.perfinfo(message), rid)
        elif isinstance(message, p.LogRequest):
            send(conn, device.getlog(message), rid)
        elif isinstance(message, p.Teardown):
            device.teardown()
            send(conn, p.TeardownOk(), rid)


def _wake(conn: socket.socket) -> None:
    """End a connection another thread is reading: its read returns at once."""
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _linger_close(conn: socket.socket) -> None:
    """Close so that the last frame we sent is read: closing with unread input would reset
    the connection, and the peer could lose our reply. Half-close, drain briefly, close."""
    deadline = time.monotonic() + 0.5
    try:
        conn.shutdown(socket.SHUT_WR)
        while (left := deadline - time.monotonic()) > 0:
            conn.settimeout(left)
            if not conn.recv(65536):
                break
    except OSError:
        pass
    finally:
        conn.close()


def _warm_up() -> None:
    """Compile the integer GEMM kernel now (a few hundred ms), not inside a client's first
    convolution, where it would be counted as that node's time."""
    try:
        from hexscope.engine.ops.kernels import igemm

        igemm.available()
    except Exception:  # noqa: BLE001 - without it the kernels keep their float32 path
        pass


def _refused_options(args: argparse.Namespace, token: str | None) -> str:
    """Why these options cannot be served, in one line, or ""."""
    if args.token is not None and not args.token:
        # an empty --token would let anyone in while looking guarded
        return "--token is empty: give a token, or leave --token out to accept any client"
    if token is not None and len(token.encode()) > p.MAX_TOKEN:
        return f"the token is {len(token.encode())} bytes, over the protocol's {p.MAX_TOKEN}"
    if not args.hello_timeout > 0:
        return f"--hello-timeout must be above 0 seconds, not {args.hello_timeout:g}"
    if args.max_graph_bytes <= 0:
        return f"--max-graph-bytes must be above 0, not {args.max_graph_bytes}"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hexscope-agent",
        description="Serve Hexscope's device-agent protocol (docs/protocol.md) with the "
                    "simulator: the development peer of the on-device agent.")
    parser.add_argument("--listen", default=f"127.0.0.1:{DEFAULT_PORT}", metavar="HOST:PORT",
                        help="address to listen on (default %(default)s; port 0 "
                             "picks a free port, printed on the first line)")
    parser.add_argument("--token", default=None,
                        help=f"refuse clients without this token (default: ${TOKEN_ENV})")
    parser.add_argument("--idle-timeout", type=float, default=900.0, metavar="SECONDS",
                        help="close a connection idle this long (default %(default)s)")
    parser.add_argument("--frame-timeout", type=float, default=p.FRAME_TIMEOUT,
                        metavar="SECONDS", help="close a connection whose frame under way "
                        "stalls this long (default %(default)s)")
    parser.add_argument("--hello-timeout", type=float, default=p.HELLO_TIMEOUT,
                        metavar="SECONDS", help="a new connection must have sent its whole "
                        "HELLO within this time, or it is closed (default %(default)s)")
    parser.add_argument("--max-frame", type=int, default=p.DEFAULT_MAX_FRAME, metavar="BYTES",
                        help="largest frame accepted (default %(default)s)")
    parser.add_argument("--max-graph-bytes", type=int, default=p.DEFAULT_MAX_GRAPH,
                        metavar="BYTES", help="largest graph a client may upload, counted in "
                        "the bytes of its UPLOAD frames (default %(default)s, 1 GiB)")
    parser.add_argument("--plugin", action="append", default=[], metavar="FILE",
                        help="load a user-op plugin (repeatable), after the bundled plugins "
                             "and the user's plugin folder, as hexscope does")
    parser.add_argument("--device-like", action="store_true",
                        help="testing aid: answer as a device agent must (HELLO says device; "
                             "taps without types or d32 padding, sent after the run, none of a "
                             "failed run; the counters stay simulated ns)")
    parser.add_argument("--slow-ms", type=float, default=0.0, metavar="MS",
                        help="testing aid: every node takes at least this long")
    args = parser.parse_args(argv)
    try:
        host, port = parse_address(args.listen)
    except ValueError as exc:
        parser.error(str(exc))
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    refused = _refused_options(args, token)
    if refused:
        print(f"hexscope-agent: {refused}", file=sys.stderr)
        return 2
    from hexscope.engine.plugins import load_standard_plugins

    problems: list = []
    load_standard_plugins(args.plugin, errors=problems)
    for problem in problems:
        print(f"hexscope-agent: plugin not loaded: {problem}", file=sys.stderr)
    if not _is_loopback(host) and token is None:
        print(f"hexscope-agent: warning: listening on {host} without a token; anyone who "
              "can reach this port can run graphs here", file=sys.stderr)
    try:
        agent = Agent(host, port, token=token, max_frame=args.max_frame,
                      idle_timeout=args.idle_timeout or None,
                      frame_timeout=args.frame_timeout, hello_timeout=args.hello_timeout,
                      max_graph_bytes=args.max_graph_bytes, slow_seconds=args.slow_ms / 1000,
                      device_like=args.device_like)
    except OSError as exc:
        print(f"hexscope-agent: cannot listen on {host}:{port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    _warm_up()
    bound_host, bound_port = agent.address
    print(f"hexscope-agent listening on {bound_host}:{bound_port}"
          + (" (token required)" if token else ""), flush=True)
    try:
        agent.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        agent.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
