"""Going back to the saved graph while its autosave is being written does not wait for the
write (issue 32: an undo at 10,000 nodes stopped the window for 0.3-0.9 s)."""

from __future__ import annotations

import threading

from hexscope.app.autosave import Autosaver
from hexscope.engine import Graph


def test_clean_during_a_write_leaves_nothing_and_does_not_wait(qtbot, tmp_path, monkeypatch):
    saver = Autosaver(tmp_path)
    release, writing = threading.Event(), threading.Event()
    write = saver.slot.write

    def slow_write(*args: object) -> None:
        writing.set()
        release.wait(10)
        write(*args)

    monkeypatch.setattr(saver.slot, "write", slow_write)
    saver.edited(Graph(), None)
    saver.save_now()
    assert writing.wait(10)
    saver.clean()                        # returns while the write is held up
    assert not saver._pending.done()
    release.set()
    saver.wait()
    assert saver.slot.info() is None and not saver.slot.graph_path.exists()
    saver.close()
