"""Frames over a socket: read one whole frame within a deadline, write one message."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass

from hexscope.engine.remote import protocol as p


class ConnectionClosed(Exception):
    """The other side closed the connection (cleanly or mid-frame)."""

    def __init__(self, message: str, mid_frame: bool = False) -> None:
        super().__init__(message)
        self.mid_frame = mid_frame


@dataclass(frozen=True, slots=True)
class Frame:
    header: p.FrameHeader
    meta: bytes
    data: bytes

    def message(self) -> p.Message:
        return p.decode(self.header.type, self.meta, self.data)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None, started: bool) -> bytes:
    """``n`` bytes, or ConnectionClosed / ProtocolError(TIMEOUT) / socket.timeout."""
    got = 0
    buf = bytearray(n)
    view = memoryview(buf)
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise p.ProtocolError(p.ErrorCode.TIMEOUT, f"frame not completed in time "
                                      f"({got} of {n} bytes arrived)")
            sock.settimeout(left)
        try:
            k = sock.recv_into(view[got:], n - got)
        except TimeoutError:
            if deadline is not None:
                continue                       # the loop turns it into TIMEOUT
            raise
        if k == 0:
            raise ConnectionClosed("connection closed" + (" mid-frame" if started or got
                                                           else ""), started or got > 0)
        got += k
    return bytes(buf)


def read_frame(sock: socket.socket, *, max_frame: int = p.DEFAULT_MAX_FRAME,
               idle_timeout: float | None = None,
               frame_timeout: float = p.FRAME_TIMEOUT) -> Frame:
    """One frame. Waits up to ``idle_timeout`` for its first byte (None: forever, raising
    ``TimeoutError`` when it runs out), then up to ``frame_timeout`` for the rest. Declared
    lengths are checked before the body is read."""
    sock.settimeout(idle_timeout)
    first = sock.recv(1)
    if not first:
        raise ConnectionClosed("connection closed")
    deadline = time.monotonic() + frame_timeout
    raw = first + _recv_exact(sock, p.HEADER_SIZE - 1, deadline, True)
    header = p.decode_header(raw, max_frame)
    body = _recv_exact(sock, header.meta_len + header.data_len, deadline, True) \
        if header.meta_len + header.data_len else b""
    return Frame(header, body[:header.meta_len], body[header.meta_len:])


def send(sock: socket.socket, message: p.Message, request_id: int) -> None:
    meta, data = message.encode()
    head = p.HEADER.pack(p.MAGIC, p.VERSION, message.TYPE, request_id, len(meta), len(data), 0)
    # one call for small frames; large tensor data goes without being copied into the header
    if len(data) < 65536:
        sock.sendall(head + meta + bytes(data))
    else:
        sock.sendall(head + meta)
        sock.sendall(data)
