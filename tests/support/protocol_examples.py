"""The byte-level examples of docs/protocol.md §5, built with the protocol module."""

from __future__ import annotations

import struct

from hexscope.engine.remote import protocol as p


def examples() -> dict[str, bytes]:
    two_floats = struct.pack("<2f", 1.0, 2.0)
    upload = p.Upload((
        p.WireNode(0x1, "INPUT", 0, outputs=(p.WireOutput((1, 1, 1, 2), 4),)),
        p.WireNode(0x10, "Const", 3, outputs=(p.WireOutput((1, 1, 1, 2), 4),),
                   const=two_floats, const_dtype=8),
        p.WireNode(0x20, "Add_f", 66, inputs=((0x1, 0), (0x10, 0)),
                   outputs=(p.WireOutput((1, 1, 1, 2), 4),)),
    ))
    return {
        "hello": p.encode(p.Hello(b"s3cret"), 1),
        "hello_ok": p.encode(p.HelloOk(0x00021401, description="agent"), 1),
        "upload": p.encode(upload, 2),
        "prepare": p.encode(p.Prepare(0x7FFFFFF0, ((0x20, 0, 128),)), 3),
        "execute": p.encode(p.Execute((p.WireTensor((1, 1, 1, 2), struct.pack("<2f", 0.5, 0.25),
                                                    8),), ((0x20, 0),)), 4),
        "tap": p.encode(p.Tap(0x20, 0, p.WireTensor((1, 1, 1, 2), struct.pack("<2f", 1.5, 2.25),
                                                    8)), 4),
        "execute_done": p.encode(p.ExecuteDone(0, 0, 1, 0x1234), 4),
        "error": p.encode(p.ErrorReply(p.ErrorCode.STATE, "graph not prepared"), 5),
        "busy": p.encode(p.Busy("busy"), 0),
    }


def hexdump(raw: bytes) -> str:
    lines = []
    for off in range(0, len(raw), 16):
        chunk = raw[off:off + 16]
        lines.append(f"{off:04x}  " + " ".join(f"{b:02x}" for b in chunk))
    return "\n".join(lines)


if __name__ == "__main__":
    for name, raw in examples().items():
        print(f"### {name} ({len(raw)} bytes)\n```\n{hexdump(raw)}\n```\n")
