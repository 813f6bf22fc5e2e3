"""The device-agent wire protocol, version 1 (``docs/protocol.md``): frames, limits, typed
errors (``framing.py``), messages (``messages.py``), and whole-frame encode/decode. No I/O
here: ``wire.py`` reads and writes frames on sockets."""

from __future__ import annotations

from hexscope.engine.remote.framing import *  # noqa: F403 - one namespace for the protocol
from hexscope.engine.remote.framing import ErrorCode, MsgType, ProtocolError, encode_frame
from hexscope.engine.remote.messages import *  # noqa: F403
from hexscope.engine.remote.messages import (
    Busy,
    ErrorReply,
    Execute,
    ExecuteDone,
    Hello,
    HelloOk,
    LogRequest,
    LogText,
    PerfInfo,
    PerfRequest,
    Prepare,
    PrepareOk,
    Tap,
    Teardown,
    TeardownOk,
    Upload,
    UploadOk,
)

Message = (Hello | HelloOk | Upload | UploadOk | Prepare | PrepareOk | Execute | Tap
           | ExecuteDone | PerfRequest | PerfInfo | LogRequest | LogText | Teardown | TeardownOk
           | Busy | ErrorReply)
MESSAGES: dict[int, type] = {cls.TYPE: cls for cls in (
    Hello, HelloOk, Upload, UploadOk, Prepare, PrepareOk, Execute, Tap, ExecuteDone,
    PerfRequest, PerfInfo, LogRequest, LogText, Teardown, TeardownOk, Busy, ErrorReply)}
REQUESTS = frozenset({MsgType.HELLO, MsgType.UPLOAD, MsgType.PREPARE, MsgType.EXECUTE,
                      MsgType.PERFINFO, MsgType.GETLOG, MsgType.TEARDOWN})


def encode(message: Message, request_id: int) -> bytes:
    """One whole frame for ``message``."""
    meta, data = message.encode()
    return encode_frame(message.TYPE, request_id, meta, data)


def decode(msg_type: int, meta: bytes, data: bytes) -> Message:
    """The message of a frame's body; an unknown type is BAD_TYPE."""
    cls = MESSAGES.get(msg_type)
    if cls is None:
        raise ProtocolError(ErrorCode.BAD_TYPE, f"unknown message type 0x{msg_type:04x}")
    return cls.decode(meta, data)

