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


def _recv_exact(sock: socket.socket, n: int, stall: float,
                deadline: float | None = None) -> bytes:
    """``n`` bytes of a frame under way: ConnectionClosed if the peer goes, ProtocolError
    TIMEOUT if no byte arrives for ``stall`` seconds (a slow link that keeps moving is fine:
    a large frame over adb forward can take longer than any fixed deadline) or, when a
    ``deadline`` (``time.monotonic()``) is given, if the bytes are not all in by then."""
    got = 0
    buf = bytearray(n)
    view = memoryview(buf)
    while got < n:
        wait = stall if deadline is None else min(stall, deadline - time.monotonic())
        if wait <= 0:
            raise p.ProtocolError(p.ErrorCode.TIMEOUT, f"frame not complete in time ({got} "
                                  f"of {n} bytes arrived)")
        sock.settimeout(wait)
        try:
            k = sock.recv_into(view[got:], n - got)
        except TimeoutError:
            if deadline is not None and time.monotonic() >= deadline:
                continue                  # the loop says it
            raise p.ProtocolError(p.ErrorCode.TIMEOUT, f"frame stalled: nothing for {stall:g} "
                                  f"s ({got} of {n} bytes arrived)") from None
        if k == 0:
            raise ConnectionClosed("connection closed mid-frame", True)
        got += k
    return bytes(buf)


def read_frame(sock: socket.socket, *, max_frame: int = p.DEFAULT_MAX_FRAME,
               idle_timeout: float | None = None,
               frame_timeout: float = p.FRAME_TIMEOUT, deadline: float | None = None) -> Frame:
    """One frame. Waits up to ``idle_timeout`` for its first byte (None: forever, raising
    ``TimeoutError`` when it runs out); after that, the frame may stall ``frame_timeout``
    seconds at most. With a ``deadline`` (a ``time.monotonic()`` value) the whole frame, its
    first byte included, must be in by then, or ProtocolError TIMEOUT: a peer that trickles
    a byte now and then cannot hold the connection. Declared lengths are checked before the
    body is read."""
    wait = idle_timeout
    if deadline is not None:
        left = deadline - time.monotonic()
        wait = left if wait is None else min(wait, left)
        if left <= 0:
            raise p.ProtocolError(p.ErrorCode.TIMEOUT, "no frame in time")
    sock.settimeout(wait)
    try:
        first = sock.recv(1)
    except TimeoutError:
        if deadline is not None and time.monotonic() >= deadline:
            raise p.ProtocolError(p.ErrorCode.TIMEOUT, "no frame in time") from None
        raise
    if not first:
        raise ConnectionClosed("connection closed")
    raw = first + _recv_exact(sock, p.HEADER_SIZE - 1, frame_timeout, deadline)
    header = p.decode_header(raw, max_frame)
    body = _recv_exact(sock, header.meta_len + header.data_len, frame_timeout, deadline) \
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
