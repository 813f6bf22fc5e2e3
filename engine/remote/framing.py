"""The protocol's frames, limits, typed errors and struct/table layouts (docs/protocol.md §1-2).

Fixed little-endian structs: the header and small structs are ``struct.Struct``; every table is
a numpy structured dtype, so a whole table encodes or decodes in one call and the declarations
mirror the document's tables field by field.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

MAGIC = b"HXSP"
VERSION = 1
HEADER = struct.Struct("<4sHHIIII")      # magic, version, type, request_id, meta, data, reserved
HEADER_SIZE = HEADER.size
MAX_META = 16 * 1024 * 1024
DEFAULT_MAX_FRAME = 256 * 1024 * 1024
HARD_MAX_FRAME = 1024 * 1024 * 1024
MAX_TOKEN = 256
MAX_NAME = 64
MAX_COUNT = 1_000_000
MAX_MESSAGE = 4096
FRAME_TIMEOUT = 10.0                      # seconds a frame under way may go without a byte
HELLO_TIMEOUT = 5.0                       # seconds from connecting to a whole HELLO frame
DEFAULT_MAX_GRAPH = 1024 * 1024 * 1024    # bytes of UPLOAD frames one graph may hold
UNKNOWN = 0xFFFFFFFF


class MsgType(IntEnum):
    HELLO = 0x01
    UPLOAD = 0x02
    PREPARE = 0x03
    EXECUTE = 0x04
    PERFINFO = 0x05
    GETLOG = 0x06
    TEARDOWN = 0x07
    HELLO_OK = 0x81
    UPLOAD_OK = 0x82
    PREPARE_OK = 0x83
    TAP = 0x84
    EXECUTE_DONE = 0x85
    PERFINFO_OK = 0x86
    LOG = 0x87
    TEARDOWN_OK = 0x88
    BUSY = 0xE0
    ERROR = 0xEE


class ErrorCode(IntEnum):
    BAD_MAGIC = 1
    BAD_VERSION = 2
    BAD_TYPE = 3
    TOO_LARGE = 4
    MALFORMED = 5
    AUTH = 6
    STATE = 7
    APPEND_FAILED = 8
    PREPARE_FAILED = 9
    EXECUTE_FAILED = 10
    BAD_TAP = 11
    TIMEOUT = 12
    NOT_SUPPORTED = 13
    INTERNAL = 14


#: Errors after which the stream cannot be trusted: the agent replies and closes.
FATAL_CODES = frozenset({ErrorCode.BAD_MAGIC, ErrorCode.BAD_VERSION, ErrorCode.TOO_LARGE,
                         ErrorCode.AUTH, ErrorCode.TIMEOUT})


class ProtocolError(Exception):
    """A protocol violation with the typed error code the other side is told."""

    def __init__(self, code: ErrorCode, message: str, node_id: int = 0, nn_rc: int = 0) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.node_id = node_id
        self.nn_rc = nn_rc

    @property
    def fatal(self) -> bool:
        return self.code in FATAL_CODES


# --- tables (numpy structured dtypes, little-endian) -------------------------------------------
def _u32(*names: str) -> np.dtype:
    return np.dtype([(n, "<u4") for n in names])


NODE_RECORD = _u32("node_id", "op_id", "padding", "flags", "n_inputs", "n_outputs", "name_len",
                   "const_len")
INPUT_REF = _u32("src_id", "output_idx")
OUTPUT_DESC = np.dtype([("rank", "<u4"), ("max_sizes", "<u4", (8,)), ("elementsize", "<u4"),
                        ("zero_offset", "<i4"), ("stepsize", "<f4")])
TAP_SLOT = _u32("node_id", "output_idx", "max_bytes", "reserved")
TENSOR_DESC = _u32("batches", "height", "width", "depth", "data_len", "dtype", "layout",
                   "reserved")
TAP_REF = _u32("node_id", "output_idx")
PERF_RECORD = _u32("node_id", "executions", "counter_lo", "counter_hi")

HELLO = struct.Struct("<HHI")
HELLO_OK = struct.Struct("<HHIIIIII")
UPLOAD_HEADER = struct.Struct("<6I")
UPLOAD_OK = struct.Struct("<2I")
PREPARE_HEADER = struct.Struct("<4I")
PREPARE_OK = struct.Struct("<4I")
EXECUTE_HEADER = struct.Struct("<4I")
TAP_HEADER = struct.Struct("<14I")
EXECUTE_DONE = struct.Struct("<iIIIII")
PERF_REQUEST = struct.Struct("<2I")
PERF_HEADER = struct.Struct("<4I")
LOG_REQUEST = struct.Struct("<2I")
LOG_HEADER = struct.Struct("<2I")
ERROR = struct.Struct("<IIiI")
#: The largest frame an agent reads before HELLO: a HELLO with the longest token.
MAX_HELLO_FRAME = HELLO.size + MAX_TOKEN

FLAG_NEW_GRAPH = 1
FLAG_CONST = 1
FLAG_RESET = 1
FLAG_TRUNCATED = 1
AGENT_SIMULATOR, AGENT_DEVICE = 0, 1
COUNTER_CYCLES, COUNTER_SIMULATED_NS = 0, 1


# --- frames ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FrameHeader:
    type: int
    request_id: int
    meta_len: int
    data_len: int


def encode_frame(msg_type: int, request_id: int, meta: bytes = b"", data: bytes = b"") -> bytes:
    return HEADER.pack(MAGIC, VERSION, msg_type, request_id, len(meta), len(data), 0) + meta + data


def decode_header(raw: bytes, max_frame: int = DEFAULT_MAX_FRAME) -> FrameHeader:
    """Check magic, version and the declared lengths before anything is read or allocated."""
    if len(raw) != HEADER_SIZE:
        raise ProtocolError(ErrorCode.MALFORMED, f"frame header of {len(raw)} bytes, "
                            f"expected {HEADER_SIZE}")
    magic, version, msg_type, request_id, meta_len, data_len, _ = HEADER.unpack(raw)
    if magic != MAGIC:
        raise ProtocolError(ErrorCode.BAD_MAGIC, f"bad magic {magic!r}, expected {MAGIC!r}")
    if version != VERSION:
        raise ProtocolError(ErrorCode.BAD_VERSION, f"protocol version {version} is not "
                            f"spoken here; this side speaks version {VERSION}")
    if meta_len > MAX_META:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"metadata of {meta_len} bytes is over the "
                            f"limit of {MAX_META}")
    if meta_len + data_len > max_frame:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"frame of {meta_len + data_len} bytes is "
                            f"over the limit of {max_frame}")
    return FrameHeader(msg_type, request_id, meta_len, data_len)


# --- helpers for decoding, shared with messages.py ----------------------------------------
class MetaReader:
    """Walks a metadata buffer; every overrun is MALFORMED, never an IndexError."""

    def __init__(self, meta: bytes, what: str) -> None:
        self.meta, self.pos, self.what = memoryview(meta), 0, what

    def struct(self, s: struct.Struct) -> tuple:
        self._need(s.size)
        values = s.unpack_from(self.meta, self.pos)
        self.pos += s.size
        return values

    def table(self, dtype: np.dtype, count: int) -> np.ndarray:
        if count > MAX_COUNT:
            raise ProtocolError(ErrorCode.MALFORMED, f"{self.what}: {count} records is over "
                                f"the limit of {MAX_COUNT}")
        self._need(dtype.itemsize * count)
        arr = np.frombuffer(self.meta, dtype, count, self.pos)
        self.pos += dtype.itemsize * count
        return arr

    def raw(self, n: int) -> bytes:
        self._need(n)
        out = bytes(self.meta[self.pos:self.pos + n])
        self.pos += n
        return out

    def end(self) -> None:
        if self.pos != len(self.meta):
            raise ProtocolError(ErrorCode.MALFORMED, f"{self.what}: {len(self.meta) - self.pos}"
                                " bytes of metadata left over")

    def _need(self, n: int) -> None:
        if self.pos + n > len(self.meta):
            raise ProtocolError(ErrorCode.MALFORMED, f"{self.what}: metadata ends after "
                                f"{len(self.meta)} bytes, {self.pos + n} needed")


def decode_text(data: bytes, limit: int | None = None) -> str:
    return bytes(data[:limit] if limit else data).decode("utf-8", "replace")


def split_data(data: bytes | memoryview, lengths: list[int], what: str) -> list[bytes]:
    if sum(lengths) != len(data):
        raise ProtocolError(ErrorCode.MALFORMED, f"{what}: {len(data)} bytes of data, the "
                            f"metadata declares {sum(lengths)}")
    view, out, pos = memoryview(data), [], 0
    for n in lengths:
        out.append(view[pos:pos + n])
        pos += n
    return out


def expect_no_data(data: bytes, what: str) -> None:
    if len(data):
        raise ProtocolError(ErrorCode.MALFORMED, f"{what} carries no data, got {len(data)} bytes")


def split64(value: int) -> tuple[int, int]:
    value &= (1 << 64) - 1
    return value & 0xFFFFFFFF, value >> 32

