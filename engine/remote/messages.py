"""The protocol's messages (docs/protocol.md §3): one dataclass each, with encode/decode."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexscope.engine.remote.framing import (
    AGENT_SIMULATOR,
    COUNTER_CYCLES,
    COUNTER_SIMULATED_NS,
    DEFAULT_MAX_FRAME,
    ERROR,
    EXECUTE_DONE,
    EXECUTE_HEADER,
    FLAG_CONST,
    FLAG_NEW_GRAPH,
    FLAG_RESET,
    FLAG_TRUNCATED,
    HELLO,
    HELLO_OK,
    INPUT_REF,
    LOG_HEADER,
    LOG_REQUEST,
    MAX_MESSAGE,
    MAX_META,
    MAX_NAME,
    MAX_TOKEN,
    NODE_RECORD,
    OUTPUT_DESC,
    PERF_HEADER,
    PERF_RECORD,
    PERF_REQUEST,
    PREPARE_HEADER,
    PREPARE_OK,
    TAP_HEADER,
    TAP_REF,
    TAP_SLOT,
    TENSOR_DESC,
    UNKNOWN,
    UPLOAD_HEADER,
    UPLOAD_OK,
    VERSION,
    ErrorCode,
    MetaReader,
    MsgType,
    ProtocolError,
    decode_text,
    expect_no_data,
    split64,
    split_data,
)


@dataclass(frozen=True, slots=True)
class Hello:
    token: bytes = b""
    version: int = VERSION
    TYPE = MsgType.HELLO

    def encode(self) -> tuple[bytes, bytes]:
        return HELLO.pack(self.version, 0, len(self.token)), self.token

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> Hello:
        r = MetaReader(meta, "HELLO")
        version, _, token_len = r.struct(HELLO)
        r.end()
        if token_len > MAX_TOKEN or token_len != len(data):
            raise ProtocolError(ErrorCode.AUTH, f"HELLO: token of {len(data)} bytes (declared "
                                f"{token_len}, at most {MAX_TOKEN})")
        return cls(bytes(data), version)


@dataclass(frozen=True, slots=True)
class HelloOk:
    hexagon_nn_version: int
    max_frame: int = DEFAULT_MAX_FRAME
    max_meta: int = MAX_META
    agent_kind: int = AGENT_SIMULATOR
    counter_kind: int = COUNTER_SIMULATED_NS
    description: str = ""
    version: int = VERSION
    TYPE = MsgType.HELLO_OK

    def encode(self) -> tuple[bytes, bytes]:
        return (HELLO_OK.pack(self.version, 0, self.hexagon_nn_version, self.max_frame,
                              self.max_meta, self.agent_kind, self.counter_kind, 0),
                self.description.encode())

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> HelloOk:
        r = MetaReader(meta, "HELLO_OK")
        version, _, nn, max_frame, max_meta, kind, counter, _ = r.struct(HELLO_OK)
        r.end()
        return cls(nn, max_frame, max_meta, kind, counter, decode_text(data, MAX_MESSAGE), version)


@dataclass(frozen=True, slots=True)
class WireOutput:
    """``struct hexagon_nn_output``: rank, max sizes, element size, zero offset, step size."""

    max_sizes: tuple[int, ...]
    elementsize: int
    zero_offset: int = 0
    stepsize: float = 0.0


@dataclass(frozen=True, slots=True)
class WireNode:
    node_id: int
    op: str
    op_id: int
    padding: int = 0
    inputs: tuple[tuple[int, int], ...] = ()
    outputs: tuple[WireOutput, ...] = ()
    const: bytes | None = None           # const data (b"" for a shape-only const), None: an op
    const_dtype: int = 0                 # a const's dtype code (0: unknown)

    @property
    def is_const(self) -> bool:
        return self.const is not None


@dataclass(frozen=True, slots=True)
class Upload:
    nodes: tuple[WireNode, ...]
    new_graph: bool = True
    TYPE = MsgType.UPLOAD

    def encode(self) -> tuple[bytes, bytes]:
        nodes = self.nodes
        names = [n.op.encode() for n in nodes]
        table = np.zeros(len(nodes), NODE_RECORD)
        table["node_id"] = [n.node_id for n in nodes]
        table["op_id"] = [n.op_id for n in nodes]
        table["padding"] = [n.padding for n in nodes]
        table["flags"] = [FLAG_CONST | (n.const_dtype & 0xFF) << 8 if n.is_const else 0
                          for n in nodes]
        table["n_inputs"] = [len(n.inputs) for n in nodes]
        table["n_outputs"] = [len(n.outputs) for n in nodes]
        table["name_len"] = [len(b) for b in names]
        table["const_len"] = [len(n.const or b"") for n in nodes]
        refs = np.array([ref for n in nodes for ref in n.inputs], np.uint32).reshape(-1, 2)
        outs = [o for n in nodes for o in n.outputs]
        out_table = np.zeros(len(outs), OUTPUT_DESC)
        for i, o in enumerate(outs):
            sizes = list(o.max_sizes)
            out_table[i] = (len(sizes), sizes + [0] * (8 - len(sizes)), o.elementsize,
                            o.zero_offset, o.stepsize)
        blob = b"".join(names)
        header = UPLOAD_HEADER.pack(FLAG_NEW_GRAPH if self.new_graph else 0, len(nodes),
                                    len(refs), len(outs), len(blob), 0)
        meta = header + table.tobytes() + refs.astype("<u4").tobytes() + out_table.tobytes() \
            + blob
        return meta, b"".join(bytes(n.const) for n in nodes if n.const)

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> Upload:
        r = MetaReader(meta, "UPLOAD")
        flags, n_nodes, n_inputs, n_outputs, names_len, _ = r.struct(UPLOAD_HEADER)
        table = r.table(NODE_RECORD, n_nodes)
        refs = r.table(INPUT_REF, n_inputs)
        outs = r.table(OUTPUT_DESC, n_outputs)
        blob = r.raw(names_len)
        r.end()
        for col, total in (("n_inputs", n_inputs), ("n_outputs", n_outputs),
                           ("name_len", names_len)):
            if int(table[col].sum(dtype=np.uint64)) != total:
                raise ProtocolError(ErrorCode.MALFORMED, f"UPLOAD: the nodes' {col} add up to "
                                    f"{int(table[col].sum(dtype=np.uint64))}, the header says "
                                    f"{total}")
        consts = split_data(data, [int(n) for n in table["const_len"]], "UPLOAD")
        nodes, i_pos, o_pos, n_pos = [], 0, 0, 0
        for k, rec in enumerate(table):
            node_id = int(rec["node_id"])
            name_len, n_in, n_out = int(rec["name_len"]), int(rec["n_inputs"]), \
                int(rec["n_outputs"])
            if name_len > MAX_NAME:
                raise ProtocolError(ErrorCode.MALFORMED, f"UPLOAD: node 0x{node_id:x}: op name "
                                    f"of {name_len} bytes (at most {MAX_NAME})", node_id)
            try:
                name = blob[n_pos:n_pos + name_len].decode("ascii")
            except UnicodeDecodeError:
                raise ProtocolError(ErrorCode.MALFORMED, f"UPLOAD: node 0x{node_id:x}: op name "
                                    "is not ASCII", node_id) from None
            outputs = []
            for o in outs[o_pos:o_pos + n_out]:
                rank = int(o["rank"])
                if rank > 8:
                    raise ProtocolError(ErrorCode.MALFORMED, f"UPLOAD: node 0x{node_id:x}: "
                                        f"output rank {rank} (at most 8)", node_id)
                outputs.append(WireOutput(tuple(int(s) for s in o["max_sizes"][:rank]),
                                          int(o["elementsize"]), int(o["zero_offset"]),
                                          float(o["stepsize"])))
            is_const = bool(rec["flags"] & FLAG_CONST)
            if is_const and (n_in or n_out != 1):
                raise ProtocolError(ErrorCode.MALFORMED, f"UPLOAD: const 0x{node_id:x} has "
                                    f"{n_in} inputs and {n_out} outputs (0 and 1)", node_id)
            nodes.append(WireNode(
                node_id, name, int(rec["op_id"]), int(rec["padding"]),
                tuple((int(a), int(b)) for a, b in refs[i_pos:i_pos + n_in]), tuple(outputs),
                bytes(consts[k]) if is_const else None,
                int(rec["flags"]) >> 8 & 0xFF if is_const else 0))
            i_pos, o_pos, n_pos = i_pos + n_in, o_pos + n_out, n_pos + name_len
        return cls(tuple(nodes), bool(flags & FLAG_NEW_GRAPH))


@dataclass(frozen=True, slots=True)
class UploadOk:
    nodes_total: int
    TYPE = MsgType.UPLOAD_OK

    def encode(self) -> tuple[bytes, bytes]:
        return UPLOAD_OK.pack(self.nodes_total, 0), b""

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> UploadOk:
        r = MetaReader(meta, "UPLOAD_OK")
        total, _ = r.struct(UPLOAD_OK)
        r.end()
        return cls(total)


@dataclass(frozen=True, slots=True)
class Prepare:
    output_node_id: int
    taps: tuple[tuple[int, int, int], ...] = ()     # (node id, output index, max bytes)
    debug_level: int = 0
    TYPE = MsgType.PREPARE

    def encode(self) -> tuple[bytes, bytes]:
        slots = np.zeros(len(self.taps), TAP_SLOT)
        for i, (node, idx, size) in enumerate(self.taps):
            slots[i] = (node, idx, size, 0)
        return (PREPARE_HEADER.pack(self.output_node_id, len(self.taps), self.debug_level, 0)
                + slots.tobytes(), b"")

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> Prepare:
        r = MetaReader(meta, "PREPARE")
        out_id, n, debug, _ = r.struct(PREPARE_HEADER)
        slots = r.table(TAP_SLOT, n)
        r.end()
        expect_no_data(data, "PREPARE")
        taps = tuple((int(s["node_id"]), int(s["output_idx"]), int(s["max_bytes"]))
                     for s in slots)
        if len({t[:2] for t in taps}) != len(taps):
            raise ProtocolError(ErrorCode.MALFORMED, "PREPARE: a tap slot appears twice")
        return cls(out_id, taps, debug)


@dataclass(frozen=True, slots=True)
class PrepareOk:
    n_nodes: int
    cycles: int = 0
    TYPE = MsgType.PREPARE_OK

    def encode(self) -> tuple[bytes, bytes]:
        return PREPARE_OK.pack(self.n_nodes, *split64(self.cycles), 0), b""

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> PrepareOk:
        r = MetaReader(meta, "PREPARE_OK")
        n, lo, hi, _ = r.struct(PREPARE_OK)
        r.end()
        return cls(n, lo | hi << 32)


@dataclass(frozen=True, slots=True)
class WireTensor:
    shape: tuple[int, int, int, int]
    data: bytes
    dtype: int = UNKNOWN
    layout: int = 0
    padding: tuple[int, ...] = (0, 0, 0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class Execute:
    inputs: tuple[WireTensor, ...] = ()
    taps: tuple[tuple[int, int], ...] = ()          # empty: every prepared slot
    TYPE = MsgType.EXECUTE

    def encode(self) -> tuple[bytes, bytes]:
        descs = np.zeros(len(self.inputs), TENSOR_DESC)
        for i, t in enumerate(self.inputs):
            descs[i] = (*t.shape, len(t.data), t.dtype, 0, 0)
        refs = np.array(self.taps, np.uint32).reshape(-1, 2).astype("<u4")
        meta = EXECUTE_HEADER.pack(len(self.inputs), len(self.taps), 0, 0) + descs.tobytes() \
            + refs.tobytes()
        return meta, b"".join(bytes(t.data) for t in self.inputs)

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> Execute:
        r = MetaReader(meta, "EXECUTE")
        n_in, n_taps, _, _ = r.struct(EXECUTE_HEADER)
        descs = r.table(TENSOR_DESC, n_in)
        refs = r.table(TAP_REF, n_taps)
        r.end()
        parts = split_data(data, [int(d["data_len"]) for d in descs], "EXECUTE")
        inputs = tuple(WireTensor((int(d["batches"]), int(d["height"]), int(d["width"]),
                                   int(d["depth"])), bytes(p), int(d["dtype"]))
                       for d, p in zip(descs, parts, strict=True))
        return cls(inputs, tuple((int(a), int(b)) for a, b in refs))


@dataclass(frozen=True, slots=True)
class Tap:
    node_id: int
    output_idx: int
    tensor: WireTensor
    TYPE = MsgType.TAP

    def encode(self) -> tuple[bytes, bytes]:
        t = self.tensor
        return (TAP_HEADER.pack(self.node_id, self.output_idx, *t.shape, t.dtype, t.layout,
                                *t.padding), t.data)

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> Tap:
        r = MetaReader(meta, "TAP")
        f = r.struct(TAP_HEADER)
        r.end()
        return cls(f[0], f[1], WireTensor(tuple(f[2:6]), bytes(data), f[6], f[7], tuple(f[8:])))


@dataclass(frozen=True, slots=True)
class ExecuteDone:
    status: int = 0
    failed_node_id: int = 0
    n_taps_sent: int = 0
    cycles: int = 0
    message: str = ""
    TYPE = MsgType.EXECUTE_DONE

    def encode(self) -> tuple[bytes, bytes]:
        return (EXECUTE_DONE.pack(self.status, self.failed_node_id, self.n_taps_sent,
                                  *split64(self.cycles), 0), self.message.encode())

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> ExecuteDone:
        r = MetaReader(meta, "EXECUTE_DONE")
        status, failed, sent, lo, hi, _ = r.struct(EXECUTE_DONE)
        r.end()
        return cls(status, failed, sent, lo | hi << 32, decode_text(data))


@dataclass(frozen=True, slots=True)
class PerfRequest:
    reset: bool = False
    TYPE = MsgType.PERFINFO

    def encode(self) -> tuple[bytes, bytes]:
        return PERF_REQUEST.pack(FLAG_RESET if self.reset else 0, 0), b""

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> PerfRequest:
        r = MetaReader(meta, "PERFINFO")
        flags, _ = r.struct(PERF_REQUEST)
        r.end()
        expect_no_data(data, "PERFINFO")
        return cls(bool(flags & FLAG_RESET))


@dataclass(frozen=True, slots=True)
class PerfInfo:
    records: tuple[tuple[int, int, int], ...]       # (node id, executions, counter)
    counter_kind: int = COUNTER_CYCLES
    TYPE = MsgType.PERFINFO_OK

    def encode(self) -> tuple[bytes, bytes]:
        table = np.zeros(len(self.records), PERF_RECORD)
        for i, (node, runs, counter) in enumerate(self.records):
            table[i] = (node, runs, *split64(counter))
        return (PERF_HEADER.pack(len(self.records), self.counter_kind, 0, 0) + table.tobytes(),
                b"")

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> PerfInfo:
        r = MetaReader(meta, "PERFINFO_OK")
        n, kind, _, _ = r.struct(PERF_HEADER)
        table = r.table(PERF_RECORD, n)
        r.end()
        return cls(tuple((int(t["node_id"]), int(t["executions"]),
                          int(t["counter_lo"]) | int(t["counter_hi"]) << 32) for t in table), kind)


@dataclass(frozen=True, slots=True)
class LogRequest:
    max_bytes: int = 0
    TYPE = MsgType.GETLOG

    def encode(self) -> tuple[bytes, bytes]:
        return LOG_REQUEST.pack(self.max_bytes, 0), b""

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> LogRequest:
        r = MetaReader(meta, "GETLOG")
        max_bytes, _ = r.struct(LOG_REQUEST)
        r.end()
        expect_no_data(data, "GETLOG")
        return cls(max_bytes)


@dataclass(frozen=True, slots=True)
class LogText:
    text: str
    truncated: bool = False
    TYPE = MsgType.LOG

    def encode(self) -> tuple[bytes, bytes]:
        return LOG_HEADER.pack(FLAG_TRUNCATED if self.truncated else 0, 0), self.text.encode()

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> LogText:
        r = MetaReader(meta, "LOG")
        flags, _ = r.struct(LOG_HEADER)
        r.end()
        return cls(decode_text(data), bool(flags & FLAG_TRUNCATED))


@dataclass(frozen=True, slots=True)
class Teardown:
    TYPE = MsgType.TEARDOWN

    def encode(self) -> tuple[bytes, bytes]:
        return b"", b""

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> Teardown:
        MetaReader(meta, "TEARDOWN").end()
        expect_no_data(data, "TEARDOWN")
        return cls()


@dataclass(frozen=True, slots=True)
class TeardownOk:
    TYPE = MsgType.TEARDOWN_OK

    def encode(self) -> tuple[bytes, bytes]:
        return b"", b""

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> TeardownOk:
        MetaReader(meta, "TEARDOWN_OK").end()
        return cls()


@dataclass(frozen=True, slots=True)
class Busy:
    message: str
    TYPE = MsgType.BUSY

    def encode(self) -> tuple[bytes, bytes]:
        return b"", self.message.encode()[:MAX_MESSAGE]

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> Busy:
        return cls(decode_text(data, MAX_MESSAGE))


@dataclass(frozen=True, slots=True)
class ErrorReply:
    code: int
    message: str
    node_id: int = 0
    nn_rc: int = 0
    TYPE = MsgType.ERROR

    def encode(self) -> tuple[bytes, bytes]:
        return (ERROR.pack(self.code, self.node_id, self.nn_rc, 0),
                self.message.encode()[:MAX_MESSAGE])

    @classmethod
    def decode(cls, meta: bytes, data: bytes) -> ErrorReply:
        r = MetaReader(meta, "ERROR")
        code, node, rc, _ = r.struct(ERROR)
        r.end()
        return cls(code, decode_text(data, MAX_MESSAGE), node, rc)

    @classmethod
    def of(cls, error: ProtocolError) -> ErrorReply:
        return cls(error.code, str(error), error.node_id, error.nn_rc)

    @property
    def name(self) -> str:
        try:
            return ErrorCode(self.code).name
        except ValueError:
            return f"error {self.code}"
