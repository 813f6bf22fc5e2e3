"""The wire protocol's encoding (docs/protocol.md): examples, round trips, typed errors."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from hexscope.engine.remote import protocol as p
from support.protocol_examples import examples, hexdump

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocol.md"


def test_the_document_shows_the_bytes_the_code_writes():
    text = DOC.read_text()
    for name, raw in examples().items():
        block = re.search(rf"### {name} \({len(raw)} bytes\)\n```\n(.*?)\n```", text, re.S)
        assert block, f"docs/protocol.md has no example {name!r} of {len(raw)} bytes"
        assert block.group(1) == hexdump(raw), name


def test_header_layout_is_the_documented_one():
    raw = examples()["hello"]
    assert raw[:4] == b"HXSP"
    assert struct.unpack_from("<HHIIII", raw, 4) == (1, p.MsgType.HELLO, 1, 8, 6, 0)
    assert p.HEADER_SIZE == 24


@pytest.mark.parametrize("name", sorted(examples()))
def test_every_example_decodes_and_encodes_back(name):
    raw = examples()[name]
    header = p.decode_header(raw[:p.HEADER_SIZE])
    body = raw[p.HEADER_SIZE:]
    assert len(body) == header.meta_len + header.data_len
    message = p.decode(header.type, body[:header.meta_len], body[header.meta_len:])
    assert p.encode(message, header.request_id) == raw


def test_upload_round_trip_keeps_every_field():
    raw = examples()["upload"]
    h = p.decode_header(raw[:24])
    up = p.decode(h.type, raw[24:24 + h.meta_len], raw[24 + h.meta_len:])
    assert [n.node_id for n in up.nodes] == [0x1, 0x10, 0x20]
    assert up.nodes[1].const == struct.pack("<2f", 1.0, 2.0)
    assert up.nodes[0].const is None
    assert up.nodes[2].inputs == ((0x1, 0), (0x10, 0))
    assert up.nodes[2].outputs == (p.WireOutput((1, 1, 1, 2), 4),)
    assert up.new_graph


def test_declared_lengths_are_checked_before_reading():
    raw = bytearray(examples()["hello"][:24])
    struct.pack_into("<I", raw, 16, 0xFFFFFFF0)          # data_len near 4 GiB
    with pytest.raises(p.ProtocolError) as err:
        p.decode_header(bytes(raw))
    assert err.value.code == p.ErrorCode.TOO_LARGE and err.value.fatal
    struct.pack_into("<I", raw, 12, p.MAX_META + 1)
    struct.pack_into("<I", raw, 16, 0)
    with pytest.raises(p.ProtocolError, match="metadata"):
        p.decode_header(bytes(raw))


@pytest.mark.parametrize(("offset", "value", "code"), [
    (0, b"XXXX", p.ErrorCode.BAD_MAGIC), (4, b"\x02\x00", p.ErrorCode.BAD_VERSION)])
def test_bad_magic_and_version_are_typed(offset, value, code):
    raw = bytearray(examples()["hello"][:24])
    raw[offset:offset + len(value)] = value
    with pytest.raises(p.ProtocolError) as err:
        p.decode_header(bytes(raw))
    assert err.value.code == code


def test_inconsistent_upload_is_malformed_not_a_crash():
    raw = bytearray(examples()["upload"])
    meta_len = struct.unpack_from("<I", raw, 12)[0]
    struct.pack_into("<I", raw, 24 + 8, 3)               # n_inputs says 3, the nodes say 2
    with pytest.raises(p.ProtocolError) as err:
        p.decode(p.MsgType.UPLOAD, bytes(raw[24:24 + meta_len]), bytes(raw[24 + meta_len:]))
    assert err.value.code == p.ErrorCode.MALFORMED


def test_const_data_must_add_up():
    raw = examples()["upload"]
    meta_len = struct.unpack_from("<I", raw, 12)[0]
    with pytest.raises(p.ProtocolError, match="8"):
        p.decode(p.MsgType.UPLOAD, raw[24:24 + meta_len], raw[24 + meta_len:] + b"\0")


def test_unknown_type_is_bad_type():
    with pytest.raises(p.ProtocolError) as err:
        p.decode(0x42, b"", b"")
    assert err.value.code == p.ErrorCode.BAD_TYPE and not err.value.fatal


def test_counters_are_64_bit():
    info = p.PerfInfo(((0x20, 3, (7 << 32) | 5),), p.COUNTER_CYCLES)
    meta, data = info.encode()
    assert p.PerfInfo.decode(meta, data) == info
    assert struct.unpack_from("<4I", meta, 16) == (0x20, 3, 5, 7)


def test_prepare_refuses_a_slot_twice():
    meta, data = p.Prepare(9, ((1, 0, 4), (1, 0, 4))).encode()
    with pytest.raises(p.ProtocolError, match="twice"):
        p.Prepare.decode(meta, data)
