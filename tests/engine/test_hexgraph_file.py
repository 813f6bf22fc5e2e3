"""The .hexgraph file: round trip, atomic save, clear errors on damage (issue 2)."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from hexscope.engine import Graph, GraphFileError, OutputDef, Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.io import hexgraph
from hexscope.engine.tensor import Tensor


def sample_graph() -> Graph:
    g = Graph()
    g.append_node(0x2000, "INPUT", outputs=[OutputDef((1, 8, 8, 3), 4)], label="image")
    g.append_const_node(0x1001, np.array([-1.0], np.float32))
    g.append_const_node(0x1002, np.arange(24, dtype=np.uint8).reshape(2, 3, 4))
    g.append_const_node(0x1003, shape=(1, 2, 2, 1))
    g.append_const_node(0x1004, np.array([7, -8], np.int32))
    g.append_node(0x2001, "Nop", inputs=[(0x2000, 0)], outputs=[OutputDef((1, 8, 8, 3), 4)],
                  padding="VALID")
    g.append_node(0x2002, "OUTPUT", inputs=[(0x2001, 0)])
    g.move({0x2001: (120.5, -3.0)})
    g.meta["inputs"] = [{"kind": "constant", "value": 2.0}]
    return g


def describe(g: Graph):
    return [(n.node_id, n.op, n.inputs, n.outputs, n.padding, n.label, n.position,
             None if n.const is None else (n.const.shape, n.const.dtype, n.const.has_data and
                                           n.const.buffer.tobytes()))
            for n in g]


def test_round_trip_keeps_everything(tmp_path):
    g = sample_graph()
    path = tmp_path / "net.hexgraph"
    g.save(path)
    h = Graph.load(path)
    assert describe(h) == describe(g)
    assert h.meta["inputs"] == [{"kind": "constant", "value": 2.0}]
    assert h.node(0x2001).padding is Padding.VALID


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "net.hexgraph"
    sample_graph().save(path)
    good = path.read_bytes()

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(hexgraph.np, "save", explode)
    with pytest.raises(OSError, match="disk full"):
        sample_graph().save(path)
    assert path.read_bytes() == good                   # the old file is untouched
    assert [p.name for p in tmp_path.iterdir()] == ["net.hexgraph"]   # no temp file left


def test_saved_file_gets_normal_permissions(tmp_path):
    import os

    umask = os.umask(0o022)
    try:
        path = tmp_path / "new.hexgraph"
        sample_graph().save(path)
        assert path.stat().st_mode & 0o777 == 0o644          # not mkstemp's 0600
        path.chmod(0o640)
        sample_graph().save(path)
        assert path.stat().st_mode & 0o777 == 0o640          # overwriting keeps the mode
    finally:
        os.umask(umask)


def write_zip(path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def valid_document() -> dict:
    doc, _ = hexgraph.graph_document(sample_graph())
    return doc


@pytest.mark.parametrize("setup, message", [
    (lambda p: p.write_bytes(b"hello"), "not a Hexscope graph file, or truncated"),
    (lambda p: write_zip(p, {"other.txt": b"x"}), "no graph.json inside"),
    (lambda p: write_zip(p, {"graph.json": b"{not json"}), "not valid JSON"),
    (lambda p: write_zip(p, {"graph.json": json.dumps({"format": "x"}).encode()}),
     "format tag missing"),
    (lambda p: write_zip(p, {"graph.json": json.dumps(
        {**valid_document(), "version": 99}).encode()}), "newer Hexscope .format version 99"),
    (lambda p: write_zip(p, {"graph.json": json.dumps(valid_document()).encode()}),
     r"node 0x1001 \(#1\): field 'const': const data consts/00001001.npy is missing"),
    (lambda p: write_zip(p, {"graph.json": json.dumps(
        {**valid_document(), "nodes": [{"op": "INPUT"}]}).encode()}),
     "node #0: field 'id' is missing"),
    (lambda p: write_zip(p, {"graph.json": json.dumps(
        {**valid_document(), "nodes": [{"id": "0x0", "op": "INPUT"}]}).encode()}),
     "node #0: field 'id': node id 0 is invalid"),
])
def test_damaged_files_give_clear_errors(tmp_path, setup, message):
    path = tmp_path / "bad.hexgraph"
    setup(path)
    with pytest.raises(GraphFileError, match=message) as info:
        Graph.load(path)
    assert str(path) in str(info.value)


def test_truncated_file(tmp_path):
    path = tmp_path / "net.hexgraph"
    sample_graph().save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(GraphFileError, match="truncated|damaged|cannot be read"):
        Graph.load(path)


def test_pickled_const_data_is_refused(tmp_path):
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    path = tmp_path / "evil.hexgraph"
    write_zip(path, {"graph.json": json.dumps(valid_document()).encode(),
                     "consts/00001001.npy": buf.getvalue()})
    with pytest.raises(GraphFileError, match="damaged"):
        Graph.load(path)


def test_missing_file(tmp_path):
    with pytest.raises(GraphFileError, match="no such file"):
        Graph.load(tmp_path / "absent.hexgraph")


# --- audit 3: damage that escaped as raw Python exceptions, and duplicate ids ----------------

def member_data_offset(data: bytes, info: zipfile.ZipInfo) -> int:
    """Where a member's (compressed) bytes start: after its local header, name and extra."""
    at = info.header_offset
    name_len = int.from_bytes(data[at + 26: at + 28], "little")
    extra_len = int.from_bytes(data[at + 28: at + 30], "little")
    return at + 30 + name_len + extra_len


def damage_member(path, member: str, how: str) -> None:
    """Rewrite one member of a saved graph: garbage deflate data, an unknown compression
    method, or the encrypted flag (both set in the local and the central header)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
    if how == "deflate":
        start = member_data_offset(bytes(data), info)
        # 0xff starts a final block of type 3, which deflate does not have.
        data[start: start + info.compress_size] = b"\xff" * info.compress_size
        path.write_bytes(bytes(data))
        return
    field, value = {"compression": (8, 99), "encrypted": (6, info.flag_bits | 1)}[how]
    local = info.header_offset
    central = bytes(data).find(b"PK\x01\x02" + bytes(data[local + 4: local + 6]))
    while bytes(data[central + 46: central + 46 + len(member)]) != member.encode():
        central = bytes(data).find(b"PK\x01\x02", central + 4)
    data[local + field: local + field + 2] = value.to_bytes(2, "little")
    data[central + field + 2: central + field + 4] = value.to_bytes(2, "little")
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("member, how, message", [
    ("graph.json", "deflate", r"graph\.json is damaged"),
    ("consts/00001001.npy", "deflate",
     r"node 0x1001 \(#1\): field 'const': .*consts/00001001\.npy is damaged"),
    ("graph.json", "compression", r"graph\.json uses a zip feature .*compression method"),
    ("graph.json", "encrypted", r"graph\.json is encrypted"),
])
def test_load_reports_damaged_zip_members(tmp_path, member, how, message):
    path = tmp_path / "net.hexgraph"
    sample_graph().save(path)
    damage_member(path, member, how)
    with pytest.raises(GraphFileError, match=message) as info:
        Graph.load(path)
    assert str(info.value).startswith(f"{path}: ")


def test_load_reports_damaged_npy_header(tmp_path):
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([-1.0], np.float32))
    npy = bytearray(buf.getvalue())
    npy[8] = 43           # the header length now ends inside the dict: tokenize hits EOF
    path = tmp_path / "net.hexgraph"
    write_zip(path, {"graph.json": json.dumps(valid_document()).encode(),
                     "consts/00001001.npy": bytes(npy), "consts/00001002.npy": b"",
                     "consts/00001004.npy": b""})
    with pytest.raises(GraphFileError, match=r"node 0x1001 \(#1\): field 'const': const data "
                       r"consts/00001001\.npy is damaged") as info:
        Graph.load(path)
    assert str(path) in str(info.value)


def test_load_refuses_npy_claiming_more_data_than_it_has(tmp_path):
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([-1.0], np.float32))
    # A shape of 10**12 elements in the same header length: np.load would allocate 4 TB.
    npy = buf.getvalue().replace(b"(1,), }           ", b"(999999999999,), }")
    assert len(npy) == len(buf.getvalue()) and b"999999999999" in npy
    path = tmp_path / "net.hexgraph"
    write_zip(path, {"graph.json": json.dumps(valid_document()).encode(),
                     "consts/00001001.npy": npy})
    with pytest.raises(GraphFileError, match=r"0x1001 .*consts/00001001\.npy is damaged"):
        Graph.load(path)


@pytest.mark.parametrize("text, message", [
    (b"[" * 100_000 + b"]" * 100_000, r"graph\.json is nested too deeply"),
    (json.dumps(valid_document()).replace('"version": 1', '"version": ' + "9" * 5000).encode(),
     r"graph\.json holds a number of 5000 digits"),
])
def test_load_reports_unreadable_json(tmp_path, text, message):
    path = tmp_path / "net.hexgraph"
    write_zip(path, {"graph.json": text})
    with pytest.raises(GraphFileError, match=message) as info:
        Graph.load(path)
    assert str(info.value).startswith(f"{path}: ")


def write_document(path, doc: dict, text_replace: tuple[str, str] | None = None) -> None:
    text = json.dumps(doc)
    if text_replace:
        text = text.replace(*text_replace)
    write_zip(path, {"graph.json": text.encode()})


def doc_with_node(index: int, **fields) -> dict:
    """The sample document, shape-only consts (no .npy needed), node ``index`` changed."""
    doc = valid_document()
    for entry in doc["nodes"]:
        if "const" in entry:
            entry["const"].pop("file", None)
    doc["nodes"][index].update(fields)
    return doc


# node #5 is 0x2001 (Nop, padding VALID, one output, a position)
@pytest.mark.parametrize("fields, field", [
    ({"padding": None}, "padding"),
    ({"padding": ["SAME"]}, "padding"),
    ({"padding": 1.5}, "padding"),
    ({"padding": True}, "padding"),
    ({"padding": 99}, "padding"),
    ({"position": [1]}, "position"),
    ({"position": [10 ** 400, 0]}, "position"),
    ({"position": "12,3"}, "position"),
    ({"outputs": [{"max_sizes": [1, 8, 8, 3], "elementsize": float("inf")}]}, "elementsize"),
    ({"outputs": [{"max_sizes": [1, 8, 8, 3], "elementsize": 1.7}]}, "elementsize"),
    ({"outputs": [{"max_sizes": [1, 8.5, 8, 3], "elementsize": 4}]}, "max_sizes"),
    ({"outputs": [{"max_sizes": [1, -8, 8, 3], "elementsize": 4}]}, "max_sizes"),
    ({"outputs": [{"max_sizes": [1, 8, 8, 3], "elementsize": -4}]}, "elementsize"),
    ({"outputs": [{"max_sizes": None, "elementsize": 4}]}, "max_sizes"),
    ({"outputs": None}, "outputs"),
    ({"outputs": [{"elementsize": 4}]}, "max_sizes"),
    ({"inputs": None}, "inputs"),
    ({"inputs": [["0x2000", -1]]}, "inputs"),
    ({"inputs": [["0x2000", 0.5]]}, "inputs"),
    ({"inputs": [["0x2000"]]}, "inputs"),
    ({"op": None}, "op"),
    ({"label": None}, "label"),
])
def test_load_names_node_and_field_of_bad_values(tmp_path, fields, field):
    path = tmp_path / "bad.hexgraph"
    write_document(path, doc_with_node(5, **fields))
    with pytest.raises(GraphFileError) as info:
        Graph.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: node 0x2001 (#5): field '{field}'"), message
    assert ": expected " in message or message.endswith(" is missing")
    assert "NoneType" not in message and "object" not in message


@pytest.mark.parametrize("node_id", [65537.9, 65537.0, True, None, "0x1g", "0x1_0000_0000"])
def test_load_rejects_bad_node_ids(tmp_path, node_id):
    path = tmp_path / "bad.hexgraph"
    write_document(path, doc_with_node(5, id=node_id))
    with pytest.raises(GraphFileError) as info:
        Graph.load(path)
    assert str(info.value).startswith(f"{path}: node #5: field 'id': ")


def test_load_reports_non_object_node(tmp_path):
    doc = doc_with_node(0)
    doc["nodes"][2] = ["0x1002", "Const"]
    path = tmp_path / "bad.hexgraph"
    write_document(path, doc)
    with pytest.raises(GraphFileError, match=r"node #2: expected an object"):
        Graph.load(path)


def duplicate_graph() -> Graph:
    g = sample_graph()
    g.append_node(0x2001, "Relu", inputs=[(0x2000, 0)], label="second 0x2001")
    g.append_const_node(0x1002, np.array([5, 6], np.int32))   # same id as a const with data
    g.append_const_node(0x1003, shape=(1, 1, 1, 9))
    return g


def test_save_keeps_duplicate_ids(tmp_path):
    g = duplicate_graph()
    assert [n.node_id for n in g.duplicates] == [0x2001, 0x1002, 0x1003]
    path = tmp_path / "dup.hexgraph"
    g.save(path)
    h = Graph.load(path)
    assert describe(h) == describe(g)
    assert describe(h.duplicates) == describe(g.duplicates)
    assert h.duplicates[1].const.array.reshape(-1).tolist() == [5, 6]
    assert h.node(0x1002).const.array.reshape(-1).tolist() == list(range(24))
    h.save(path)                                    # and again: nothing is added or lost
    assert describe(Graph.load(path).duplicates) == describe(g.duplicates)


@pytest.mark.parametrize("hidden", [[], 5, [{"id": "0x1"}], None])
def test_load_ignores_duplicates_in_file_meta(tmp_path, hidden):
    doc = doc_with_node(0)
    doc["nodes"].append({**doc["nodes"][5], "op": "Relu", "label": "second 0x2001"})
    doc["meta"]["duplicates"] = hidden
    path = tmp_path / "dup.hexgraph"
    write_document(path, doc)
    h = Graph.load(path)
    assert [(n.node_id, n.op) for n in h.duplicates] == [(0x2001, "Relu")]
    assert h.meta["inputs"] == [{"kind": "constant", "value": 2.0}]


@pytest.mark.parametrize("field_offset, value", [(8, 99), (4, 99)],
                         ids=["compression-method", "needs-version"])
def test_zip_features_zipfile_does_not_implement_give_a_graph_file_error(
        tmp_path, field_offset, value):
    """A fuzzer's mutations made zipfile raise NotImplementedError (an unknown compression
    method, a 'zip file version' it cannot extract): it must name the file like any damage."""
    data = bytearray(sample_graph().to_bytes())
    for signature in (b"PK\x03\x04", b"PK\x01\x02"):     # local header and central directory
        at = data.find(signature)
        while at >= 0:
            # the central directory's fields sit 2 bytes later (it has 'version made by')
            offset = field_offset + (2 if signature == b"PK\x01\x02" else 0)
            data[at + offset:at + offset + 2] = value.to_bytes(2, "little")
            at = data.find(signature, at + 4)
    path = tmp_path / "mutated.hexgraph"
    path.write_bytes(bytes(data))
    with pytest.raises(GraphFileError, match="mutated.hexgraph"):
        Graph.load(path)


def test_same_graph_saves_the_same_bytes_and_the_save_is_synced(tmp_path, monkeypatch):
    synced: list[int] = []
    real_fsync = hexgraph.os.fsync if hasattr(hexgraph, "os") else None
    import hexscope.engine.io.atomic as atomic

    monkeypatch.setattr(atomic.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    sample_graph().save(tmp_path / "a.hexgraph")
    assert len(synced) == 2                              # the file, then its folder
    assert (tmp_path / "a.hexgraph").read_bytes() == sample_graph().to_bytes()


@pytest.mark.parametrize("dtype", list(DType))
def test_a_const_keeps_its_type_through_save_and_load(tmp_path, dtype):
    """The saved type wins over the array's: numpy's int8 is qint8 or int8, int32 is int32
    or qint32, uint8 quint8 or uint8. A .tflite model saved and reopened had its qint8
    weights and qint32 biases back as int8 and int32: 37 validation problems on BlazeFace."""
    g = Graph()
    if dtype is DType.VOID:
        g.append_const_node(0x10, shape=(1, 2, 2, 1))
    else:
        g.append_const_node(0x10, np.arange(6).reshape(2, 3).astype(dtype.numpy))
        tensor = Tensor.from_array(np.arange(6).reshape(2, 3), dtype).readonly()
        g.replace_node(g.node(0x10).with_(const=tensor))       # as the TFLite importer does
    g.save(tmp_path / "c.hexgraph")
    const = Graph.load(tmp_path / "c.hexgraph").node(0x10).const
    assert const.dtype is dtype
    if const.has_data:
        assert const.buffer.tobytes() == g.node(0x10).const.buffer.tobytes()


@pytest.mark.parametrize("name, said", [("QINT9", "expected one of"),
                                        ("INT8", "holds uint8, the graph says INT8")])
def test_a_const_whose_saved_type_is_unknown_or_not_its_data_is_refused(tmp_path, name, said):
    g = Graph()
    g.append_const_node(0x10, np.arange(4, dtype=np.uint8))
    path = tmp_path / "c.hexgraph"
    g.save(path)
    with zipfile.ZipFile(path) as z:
        members = {m: z.read(m) for m in z.namelist()}
    doc_name = next(m for m in members if m.endswith(".json"))
    doc = json.loads(members[doc_name])
    doc["nodes"][0]["const"]["dtype"] = name
    members[doc_name] = json.dumps(doc).encode()
    with zipfile.ZipFile(path, "w") as z:
        for m, data in members.items():
            z.writestr(m, data)
    with pytest.raises(GraphFileError) as info:
        Graph.load(path)
    assert "node 0x10" in str(info.value) and said in str(info.value)
