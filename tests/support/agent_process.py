"""``hexscope-agent`` as a real process on loopback, for tests."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

from hexscope.engine.remote import protocol as p
from hexscope.engine.remote.client import AgentBusy, AgentClient


@dataclass
class AgentProcess:
    proc: subprocess.Popen
    port: int

    @property
    def address(self) -> str:
        return f"dsp://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def start_agent(*args: str, env: dict[str, str] | None = None) -> AgentProcess:
    """Start the agent on a free port (it prints the port on its first line)."""
    environment = {**os.environ, **(env or {})}
    environment.pop("HEXSCOPE_AGENT_TOKEN", None) if "--token" in args else None
    proc = subprocess.Popen(
        [sys.executable, "-m", "hexscope.engine.remote.agent", "--listen", "127.0.0.1:0",
         *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=environment)
    line = proc.stdout.readline() if proc.stdout else ""
    match = re.search(r":(\d+)", line)
    if not match:
        proc.kill()
        raise RuntimeError(f"hexscope-agent did not start: {line!r}")
    return AgentProcess(proc, int(match.group(1)))


@contextlib.contextmanager
def running_agent(*args: str, env: dict[str, str] | None = None) -> Iterator[AgentProcess]:
    agent = start_agent(*args, env=env)
    try:
        yield agent
    finally:
        agent.kill()


def raw_connection(port: int, timeout: float = 5.0) -> socket.socket:
    """A new connection, not yet greeted (the agent says BUSY only in answer to a HELLO)."""
    return socket.create_connection(("127.0.0.1", port), timeout)


def greeted_connection(port: int, token: bytes = b"", timeout: float = 5.0) -> socket.socket:
    """A connection whose HELLO the agent accepted (asking again while it answers BUSY: it
    may still be finishing the last client)."""
    from hexscope.engine.remote.wire import send

    deadline = time.monotonic() + timeout
    while True:
        sock = raw_connection(port, timeout)
        send(sock, p.Hello(token), 1)
        reply = read_reply(sock)
        if isinstance(reply, p.HelloOk):
            return sock
        sock.close()
        if not isinstance(reply, p.Busy) or time.monotonic() > deadline:
            raise AssertionError(f"HELLO refused: {reply}")
        time.sleep(0.05)


def closed_after(sock: socket.socket, limit: float = 5.0) -> tuple[p.Message | None, float]:
    """What the agent says before it closes ``sock`` (None: nothing), and after how many
    seconds (``limit``: give up waiting)."""
    start = time.monotonic()
    try:
        reply: p.Message | None = read_reply(sock, limit)
    except Exception:  # noqa: BLE001 - closed without a reply
        reply = None
    return reply, time.monotonic() - start


def read_reply(sock: socket.socket, timeout: float = 5.0) -> p.Message:
    from hexscope.engine.remote.wire import read_frame

    return read_frame(sock, max_frame=p.HARD_MAX_FRAME, idle_timeout=timeout).message()


def hello(port: int, token: bytes = b"", timeout: float = 5.0) -> p.Message:
    """The agent's answer to a good HELLO from a new client (waiting while it is busy)."""
    from hexscope.engine.remote.wire import send

    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout) as sock:
                send(sock, p.Hello(token), 1)
                reply = read_reply(sock)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
            continue
        if not isinstance(reply, p.Busy) or time.monotonic() > deadline:
            return reply
        time.sleep(0.05)


def connected_client(port: int, token: str | None = None, timeout: float = 5.0,
                     **options: float) -> AgentClient:
    """An AgentClient connected to the agent on ``port`` (``options``: its timeouts), waiting
    up to ``timeout`` while the agent still finishes its last connection (BUSY meanwhile)."""
    deadline = time.monotonic() + timeout
    while True:
        client = AgentClient("127.0.0.1", port, token, **options)
        try:
            client.connect()
            return client
        except AgentBusy:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
