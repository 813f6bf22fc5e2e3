"""The autosave folder damaged at random (issue 33): notes that do not parse or hold nonsense,
locks that are folders or held by a live instance, graphs that are garbage or folders, stale
temps, files nobody may read, a folder that cannot be made. Whatever the damage, the window
starts, offers what can be recovered, says when autosave is off, and no graph is lost: each
graph file that was there is restored, still there, or set aside in ``damaged/``."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path

import hypothesis.strategies as st
import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel, QMessageBox

from hexscope.app.autosave import orphaned_slots
from hexscope.app.main_window import MainWindow
from hexscope.app.settings import AppSettings
from hexscope.engine import Graph, OutputDef

GRAPHS = ["valid", "valid", "valid", "garbage", "empty", "folder", "missing"]
NOTES = ["valid", "valid", "{{{", "", "[1, 2]", '"text"', "null", "yesterday", "list",
         "1e400", "-1e20", "nan", "original-number", "missing", "folder", "binary"]
LOCKS = ["file", "missing", "folder", "held", "loop"]
BASES = ["missing", "valid", "garbage"]

slot_strategy = st.fixed_dictionaries({
    "graph": st.sampled_from(GRAPHS), "note": st.sampled_from(NOTES),
    "lock": st.sampled_from(LOCKS), "base": st.sampled_from(BASES),
    "temps": st.integers(0, 3), "unreadable": st.booleans(), "nodes": st.integers(1, 6)})
FOLDER = ["normal"] * 6 + ["file-in-place", "parent-is-file", "loop"]


def _graph(n_nodes: int) -> Graph:
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 2, 2, 3), 4)])
    previous = 0x100
    for k in range(n_nodes):
        g.append_node(0x200 + k, "Nop", inputs=[(previous, 0)], outputs=1)
        previous = 0x200 + k
    g.append_node(0x300, "OUTPUT", inputs=[(previous, 0)])
    return g


def _note(kind: str, original: str) -> str | bytes | None:
    good = {"original": original, "time": 1.7e9, "pid": 1, "nodes": 3}
    return {"valid": json.dumps(good), "{{{": "{{{", "": "", "[1, 2]": "[1, 2]",
            '"text"': '"text"', "null": "null",
            "yesterday": json.dumps({**good, "time": "yesterday"}),
            "list": json.dumps({**good, "time": [1]}),
            "1e400": json.dumps(good).replace("1700000000.0", "1e400"),
            "-1e20": json.dumps({**good, "time": -1e20}),
            "nan": json.dumps(good).replace("1700000000.0", "NaN"),
            "original-number": json.dumps({**good, "original": 123}),
            "binary": b"\xff\xfe\x00garbage"}.get(kind)


def _key(graph: Graph) -> tuple:
    return tuple((n.node_id, n.op, tuple(n.inputs)) for n in graph)


def _nodes(path: Path) -> tuple | None:
    try:
        return _key(Graph.load(path))
    except Exception:  # noqa: BLE001 - not a graph: compared by its bytes
        return None


def _nodes_of(data: bytes, folder: Path) -> tuple | None:
    path = folder / ".probe.hexgraph"
    path.write_bytes(data)
    try:
        return _nodes(path)
    finally:
        path.unlink()


class Damage:
    """Builds one damaged autosave folder and remembers every graph file put there."""

    def __init__(self, root: Path, folder_kind: str, slots: list[dict]) -> None:
        self.root = root
        self.folder = root / "appdata" / "autosave"
        self.graph_bytes: list[bytes] = []       # every graph file's bytes
        self.valid: list[bytes] = []             # those a window could restore
        self.live: list[str] = []                # slots a live instance holds
        self.held = []                           # the open files holding those locks
        self.folder_kind = folder_kind
        if folder_kind == "file-in-place":
            self.folder.parent.mkdir(parents=True)
            self.folder.write_text("a file where the autosave folder should be")
            return
        if folder_kind == "parent-is-file":
            (root / "appdata").write_text("a file where the app's folder should be")
            return
        if folder_kind == "loop":
            self.folder.parent.mkdir(parents=True)
            self.folder.symlink_to(self.folder.parent / "other")
            (self.folder.parent / "other").symlink_to(self.folder)
            return
        self.folder.mkdir(parents=True)
        for k, spec in enumerate(slots):
            self._slot(f"{1000 + k}-{k:x}", spec)

    def _slot(self, slot_id: str, spec: dict) -> None:
        f = self.folder
        graph_path = f / f"{slot_id}.hexgraph"
        if spec["graph"] == "valid":
            _graph(spec["nodes"] + len(self.valid) * 7).save(graph_path)
            self.valid.append(graph_path.read_bytes())
        elif spec["graph"] == "garbage":
            graph_path.write_bytes(np.random.default_rng(len(self.graph_bytes)).bytes(300))
        elif spec["graph"] == "empty":
            graph_path.write_bytes(b"")
        elif spec["graph"] == "folder":
            graph_path.mkdir()
        if graph_path.is_file():
            self.graph_bytes.append(graph_path.read_bytes())
        note = _note(spec["note"], str(self.root / "original.hexgraph"))
        if spec["note"] == "folder":
            (f / f"{slot_id}.json").mkdir()
        elif isinstance(note, bytes):
            (f / f"{slot_id}.json").write_bytes(note)
        elif note is not None:
            (f / f"{slot_id}.json").write_text(note)
        if spec["base"] == "valid":
            _graph(1).save(f / f"{slot_id}.base.hexgraph")
        elif spec["base"] == "garbage":
            (f / f"{slot_id}.base.hexgraph").write_bytes(b"PK\x03\x04 not really")
        lock = f / f"{slot_id}.lock"
        if spec["lock"] in ("file", "held"):
            lock.write_bytes(b"")
        elif spec["lock"] == "folder":
            lock.mkdir()
        elif spec["lock"] == "loop":
            lock.symlink_to(f / f"{slot_id}.lock2")
            (f / f"{slot_id}.lock2").symlink_to(lock)
        if spec["lock"] == "held":               # a live instance's slot: never touched
            handle = open(lock, "a+b")  # noqa: SIM115
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.held.append(handle)
            self.live.append(slot_id)
        for t in range(spec["temps"]):          # killed saves
            temp = f / f".{slot_id}.hexgraph.{t}abc.tmp"
            temp.write_bytes(b"half a graph")
            os.utime(temp, (1e9, 1e9))
        if spec["unreadable"] and graph_path.is_file():
            graph_path.chmod(0)

    def everything_kept(self, restored: Graph | None) -> list[str]:
        """Graph files that are nowhere any more: neither a file with the same bytes or the
        same nodes, nor the graph the window restored."""
        for path in self.root.rglob("*"):
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o600)
        files = [p for p in self.root.rglob("*") if p.is_file() and not p.is_symlink()]
        present = {p.read_bytes() for p in files}
        nodes = {_nodes(p) for p in files} | ({_key(restored)} if restored else set())
        return [f"graph {k} ({len(b)} bytes)" for k, b in enumerate(self.graph_bytes)
                if b not in present and _nodes_of(b, self.root) not in nodes]

    def close(self) -> None:
        for handle in self.held:
            handle.close()


def _start(root: Path, monkeypatch, qtbot):
    asked: list[str] = []
    criticals: list[str] = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda parent, title, text, *a: asked.append(text)
                        or QMessageBox.StandardButton.Yes)
    monkeypatch.setattr(QMessageBox, "critical",
                        lambda parent, title, text, *a: criticals.append(text))
    qs = QSettings(str(root / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppSettings(qs, root=str(root / "appdata")))
    restored = window.files.offer_restore()
    return window, restored, asked, criticals


def _close(window) -> None:
    window.undo_stack.setClean()
    window.files.meta_dirty = False
    window.shutdown()
    window.deleteLater()


@settings(max_examples=60, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(folder_kind=st.sampled_from(FOLDER), slots=st.lists(slot_strategy, max_size=4))
def test_a_damaged_autosave_folder_never_stops_the_app_nor_loses_a_graph(
        qtbot, monkeypatch, tmp_path, folder_kind, slots):
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    damage = Damage(root, folder_kind, slots)
    try:
        window, restored, asked, criticals = _start(root, monkeypatch, qtbot)
        try:
            assert damage.everything_kept(window.graph if restored else None) == []
            if restored:
                assert _key(window.graph) in {_nodes_of(b, root) for b in damage.valid}
            elif damage.valid and len(damage.live) < len(slots):
                # every valid graph is a live instance's, or was offered (and this start
                # took the newest): a valid graph of a dead instance is never skipped
                offered = [s for s in slots if s["graph"] == "valid" and s["lock"] != "held"]
                assert not offered, (asked, criticals)
            if folder_kind != "normal":
                assert window.files.autosaver.off_reason
                qtbot.waitUntil(lambda: "Autosave is off" in
                                window.statusBar().currentMessage(), timeout=2000)
            for slot_id in damage.live:      # a live instance's files are never touched
                assert (damage.folder / f"{slot_id}.lock").exists()
            if folder_kind == "normal":
                stale = [p.name for p in damage.folder.glob(".*.tmp")
                         if not any(p.name.startswith(f".{s}.") for s in damage.live)]
                assert stale == []
        finally:
            _close(window)
    finally:
        damage.close()
        shutil.rmtree(root, ignore_errors=True)


def test_a_note_that_does_not_parse_still_offers_its_graph(tmp_path):
    folder = tmp_path / "autosave"
    folder.mkdir()
    _graph(3).save(folder / "1-a.hexgraph")
    (folder / "1-a.json").write_text("{{{")
    (slot,) = orphaned_slots(folder)
    info = slot.info()
    assert info["original"] is None and info["time"] > 0
    assert "its note cannot be read" in info["problem"]
    assert (folder / "1-a.hexgraph").exists()


def test_a_note_time_that_is_not_a_time_falls_back_to_the_file_time(tmp_path):
    folder = tmp_path / "autosave"
    folder.mkdir()
    for k, when in enumerate(["yesterday", [1], -1e20]):
        _graph(1).save(folder / f"{k}-a.hexgraph")
        (folder / f"{k}-a.json").write_text(json.dumps({"original": None, "time": when}))
    (folder / "3-a.hexgraph").write_bytes(b"x")
    (folder / "3-a.json").write_text('{"time": 1e400}')
    slots = orphaned_slots(folder)
    assert len(slots) == 4
    assert all(slot.info()["time"] == slot.graph_path.stat().st_mtime for slot in slots)


def test_stale_locks_and_temps_of_dead_instances_are_removed_at_start(tmp_path):
    folder = tmp_path / "autosave"
    folder.mkdir()
    (folder / "1-a.lock").write_bytes(b"")
    (folder / ".1-a.json.xyz.tmp").write_bytes(b"half")
    os.utime(folder / ".1-a.json.xyz.tmp", (1e9, 1e9))
    assert orphaned_slots(folder) == []
    assert list(folder.iterdir()) == []


def test_the_app_starts_without_autosave_when_the_folder_cannot_be_made(
        qtbot, monkeypatch, tmp_path):
    (tmp_path / "appdata").write_text("a file where the folder should be")
    window, restored, asked, _ = _start(tmp_path, monkeypatch, qtbot)
    try:
        assert not restored and asked == []
        qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith(
            "Autosave is off: the folder"), timeout=2000)
        off = window.statusBar().findChild(QLabel, "autosave_off")
        assert off.text() == "Autosave off" and "cannot be used" in off.toolTip()
        window.edits.add_op("Nop")                  # editing still works
        assert not window.files.autosave_now()
    finally:
        _close(window)
