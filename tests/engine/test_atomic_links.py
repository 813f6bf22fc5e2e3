"""Atomic saves through links and after killed saves (issue 33): a symlink stays a link and
its target gets the new contents, hard links all see them, mode is kept, and temporary files
of killed writers are removed by the next save of the same target, never a live writer's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from hexscope.engine.io import atomic
from hexscope.engine.io.atomic import atomic_path, atomic_write, real_target


def _save(path, text: str) -> None:
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def test_saving_through_a_symlink_writes_its_target(tmp_path):
    real = tmp_path / "real" / "g.txt"
    real.parent.mkdir()
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(os.path.relpath(real, tmp_path))
    chain = tmp_path / "chain.txt"
    chain.symlink_to(link)
    _save(chain, "new")
    assert chain.is_symlink() and link.is_symlink()
    assert real.read_text() == "new"
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in real.parent.iterdir()) == ["g.txt"]


def test_saving_a_hard_linked_file_updates_every_name(tmp_path):
    first = tmp_path / "a.txt"
    first.write_text("old contents, longer than the new")
    second = tmp_path / "b.txt"
    os.link(first, second)
    inode = first.stat().st_ino
    _save(first, "new")
    assert second.read_text() == "new" and first.read_text() == "new"
    assert first.stat().st_ino == inode and first.stat().st_nlink == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_a_symlink_loop_is_an_os_error(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(OSError, match="symbolic link loop"):
        real_target(tmp_path / "a")


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("disk full")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["g.txt"]


KILLED_WRITER = """
import sys, time
from hexscope.engine.io.atomic import atomic_write
with atomic_write(sys.argv[1], "wb") as handle:
    handle.write(b"x" * 1000)
    handle.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


def _killed_writer(path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "writing\n"
    return proc


def test_temps_of_killed_saves_are_removed_by_the_next_save(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "STALE_AFTER_S", 0.0)
    path = tmp_path / "g.txt"
    live = _killed_writer(path)          # still running: its temp must survive
    dead = []
    for _ in range(3):
        proc = _killed_writer(path)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        dead.append(proc)
    assert len(list(tmp_path.glob(".g.txt.*.tmp"))) == 4
    _save(path, "new")
    try:
        assert len(list(tmp_path.glob(".g.txt.*.tmp"))) == 1     # the live writer's
        assert path.read_text() == "new"
    finally:
        live.kill()
        live.wait()
    _save(path, "newer")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.txt"]


def test_a_fresh_temp_is_never_taken_for_a_stale_one(tmp_path):
    path = tmp_path / "g.txt"
    fresh = tmp_path / ".g.txt.abc.tmp"
    fresh.write_text("a writer that has not locked it yet")
    _save(path, "new")
    assert fresh.exists()
    old = time.time() - 60
    os.utime(fresh, (old, old))
    _save(path, "newer")
    assert not fresh.exists()
