"""The .hexgraph file: round trip, atomic save, clear errors on damage (issue 2)."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from hexscope.engine import Graph, GraphFileError, OutputDef, Padding
from hexscope.engine.io import hexgraph


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
     r"node #1: const data consts/00001001.npy is missing"),
    (lambda p: write_zip(p, {"graph.json": json.dumps(
        {**valid_document(), "nodes": [{"op": "INPUT"}]}).encode()}),
     "node #0: missing field 'id'"),
    (lambda p: write_zip(p, {"graph.json": json.dumps(
        {**valid_document(), "nodes": [{"id": "0x0", "op": "INPUT"}]}).encode()}),
     "node #0: node id 0 is invalid"),
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
