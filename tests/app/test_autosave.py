"""Autosave: written a few seconds after an edit, one slot per running instance, offered
after a crash with the file, the time and what differs, and never lost to a SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from hexscope.app.autosave import DEBOUNCE_MS, orphaned_slots
from hexscope.app.main_window import MainWindow
from hexscope.engine import Graph

EXAMPLE = Path(__file__).parents[2] / "resources" / "examples" / "classic_quantized.hexgraph"


def _answer(monkeypatch, button, asked: list[str]) -> None:
    def question(parent, title, text, *a):
        asked.append(text)
        return button
    monkeypatch.setattr(QMessageBox, "question", question)


def _second_window(settings):
    return MainWindow(settings)


def _close(w) -> None:
    w.undo_stack.setClean()
    w.files.meta_dirty = False
    w.shutdown()
    w.deleteLater()


def test_an_edit_is_autosaved_after_a_quiet_pause(qtbot, window, settings):
    window.files.open_graph(str(EXAMPLE))
    slot = window.files.autosaver.slot
    assert slot.info() is None
    window.edits.add_op("Nop")
    assert slot.info() is None                      # debounced: not at once
    # the note comes last (a graph without its note is offered too, from its file time)
    qtbot.waitUntil(slot.info_path.exists, timeout=DEBOUNCE_MS + 3000)
    window.files.autosaver.wait()
    saved = Graph.load(slot.graph_path)
    assert [n.op for n in saved][-1] == "Nop" and len(saved) == len(window.graph)
    assert slot.info()["original"] == str(EXAMPLE)
    window.undo_stack.undo()                        # back to the file: nothing to restore
    assert slot.info() is None


def test_a_running_instance_is_never_offered_its_own_or_anothers_autosave(
        qtbot, window, settings, monkeypatch):
    window.edits.add_op("Nop")
    assert window.files.autosave_now()
    asked: list[str] = []
    _answer(monkeypatch, QMessageBox.StandardButton.Yes, asked)
    other = _second_window(settings)
    try:
        assert not other.files.offer_restore() and asked == []
        assert window.files.autosaver.slot.info() is not None   # untouched
    finally:
        _close(other)


def test_a_gone_instances_autosave_is_offered_with_file_time_and_changes(
        qtbot, window, settings, monkeypatch, tmp_path):
    path = tmp_path / "net.hexgraph"
    Graph.load(EXAMPLE).save(path)
    window.files.open_graph(str(path))
    removed = window.graph.order[-1]
    window.select_node(removed)
    window.edits.delete_selected()
    node_id = window.edits.add_op("Nop")
    assert window.files.autosave_now()
    window.files.autosaver.slot.unlock()            # as if the process had died
    asked: list[str] = []
    _answer(monkeypatch, QMessageBox.StandardButton.Yes, asked)
    other = _second_window(settings)
    try:
        assert other.files.offer_restore()
        text = asked[0]
        assert str(path) in text and time.strftime("%Y-%m-%d") in text
        assert f"1 node(s) added (0x{node_id:x})" in text
        assert f"0x{removed:x}" in text and "removed" in text
        assert "node(s) moved" not in text     # the layout made on opening is not the user's change
        assert other.graph.to_bytes() == window.graph.to_bytes()
        assert other.files.modified and other.files.path == str(path)
        # the restored work now lives in the new instance's slot, the old slot is gone
        assert other.files.autosaver.slot.info() is not None
        assert orphaned_slots(settings.autosave_dir) == []
    finally:
        _close(other)


def test_declining_the_offer_discards_that_autosave(qtbot, window, settings, monkeypatch):
    window.edits.add_op("Nop")
    assert window.files.autosave_now()
    window.files.autosaver.slot.unlock()
    _answer(monkeypatch, QMessageBox.StandardButton.No, [])
    other = _second_window(settings)
    try:
        assert not other.files.offer_restore() and len(other.graph) == 0
        assert orphaned_slots(settings.autosave_dir) == []
    finally:
        _close(other)


CHILD = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from hexscope.app.main_window import MainWindow
    from hexscope.app.settings import AppSettings
    root, path = sys.argv[1], sys.argv[2]
    w = MainWindow(AppSettings(QSettings(root + "/s.ini", QSettings.Format.IniFormat), root=root))
    w.files.open_graph(path)
    w.show()
    node_id = w.edits.add_op("Nop")
    w.edits.set_label(node_id, "made before the kill")
    print(hex(node_id), flush=True)
    app.exec()                      # runs until killed
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_a_few_seconds_after_an_edit_then_restore_brings_the_edit_back(
        qtbot, settings, tmp_path, monkeypatch):
    root = str(tmp_path / "appdata")
    proc = subprocess.Popen([sys.executable, "-c", CHILD, root, str(EXAMPLE)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    try:
        node_id = int(proc.stdout.readline(), 16)
        folder = settings.autosave_dir
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not list(folder.glob("*.json")):
            time.sleep(0.1)
        assert list(folder.glob("*.json")), "no autosave a few seconds after the edit"
        # a live instance: not offered
        assert orphaned_slots(folder) == []
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    asked: list[str] = []
    _answer(monkeypatch, QMessageBox.StandardButton.Yes, asked)
    w = MainWindow(settings)
    try:
        assert w.files.offer_restore(), proc.stderr.read()[-2000:]
        assert w.graph.node(node_id).label == "made before the kill"
        assert str(EXAMPLE) in asked[0] and "1 node(s) added" in asked[0]
    finally:
        _close(w)
