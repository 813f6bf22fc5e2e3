"""Delete, undo and redo on every bundled example, with the user's keys.

Deleting a node once killed the app (a segfault in ``QUndoStack.push``): the macro command's
children were Python objects Qt outlived. It runs in a child process so that a crash is a
failing test with its output, not a dead suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.hexgraph"))

SCRIPT = textwrap.dedent("""
    import gc, sys
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from hexscope.app.main_window import MainWindow
    from hexscope.app.settings import AppSettings
    from hexscope.engine.graph import Graph
    root = sys.argv[2]
    w = MainWindow(AppSettings(QSettings(root + "/s.ini", QSettings.Format.IniFormat), root=root))
    w.files.open_graph(sys.argv[1])
    w.show(); w.activateWindow()
    for _ in range(200):                  # keys reach shortcuts only in the active window
        app.processEvents()
        if w.isActiveWindow():
            break
        QTest.qWait(10)
    w.canvas.setFocus()
    original = w.graph.to_bytes()
    ids = list(w.graph.order)
    deleted = 0
    for node_id in ids[::-1]:
        if node_id not in w.graph:
            continue
        w.select_node(node_id)
        QTest.keyClick(w.canvas, Qt.Key.Key_Delete)
        gc.collect(); app.processEvents()
        deleted += node_id not in w.graph
    assert len(w.graph.order) == 0, w.graph.order
    for _ in range(w.undo_stack.count()):
        QTest.keyClick(w.canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        gc.collect(); app.processEvents()
    if w.graph.to_bytes() != original:
        from hexscope.engine.io.hexgraph import graph_document
        before = graph_document(Graph.load(sys.argv[1]))[0]["nodes"]
        after = graph_document(w.graph)[0]["nodes"]
        raise AssertionError([(x, y) for x, y in zip(before, after) if x != y][:3])
    assert set(w.scene.items_by_id) | set(w.scene.folded) == set(w.graph.order)
    QTest.keyClick(w.canvas, Qt.Key.Key_Z,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    gc.collect(); app.processEvents()
    assert set(w.scene.items_by_id) | set(w.scene.folded) == set(w.graph.order)
    print("deleted", deleted, "of", len(ids))
    w.undo_stack.setClean(); w.files.meta_dirty = False; w.shutdown()
""")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_delete_every_node_then_undo_all_restores_the_graph(path, tmp_path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(path), str(tmp_path)],
                          capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen",
                               "PYTHONFAULTHANDLER": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "deleted" in proc.stdout


CLOSE_SCRIPT = textwrap.dedent("""
    import sys
    import shiboken6
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from hexscope.app.main_window import MainWindow
    from hexscope.app.settings import AppSettings
    root = sys.argv[2]
    errors = []
    sys.excepthook = lambda *exc: errors.append(exc)
    for _ in range(3):
        w = MainWindow(AppSettings(QSettings(root + "/s.ini", QSettings.Format.IniFormat),
                                   root=root))
        w.files.open_graph(sys.argv[1])     # queues the fit-to-view for the next loop turn
        w.show()
        w.shutdown()
        shiboken6.delete(w)                 # gone before that turn comes
    QTimer.singleShot(100, app.quit)
    app.exec()
    assert not errors, errors
    print("closed cleanly")
""")


def test_a_window_closed_right_after_opening_runs_nothing_queued_for_it(tmp_path):
    """Work queued for a window (fit to view, dock sizes) is cancelled with it, not called on
    a deleted C++ object."""
    proc = subprocess.run([sys.executable, "-c", CLOSE_SCRIPT, str(EXAMPLES[0]), str(tmp_path)],
                          capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen",
                               "PYTHONFAULTHANDLER": "1"})
    assert proc.returncode == 0 and "closed cleanly" in proc.stdout, proc.stderr[-3000:]
    assert "already deleted" not in proc.stderr
