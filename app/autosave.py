"""Autosave: each running window keeps its own slot, written a few seconds after an edit.

A slot is three files in the autosave folder: ``<id>.hexgraph`` (the unsaved graph),
``<id>.json`` (which file it belongs to and when) and ``<id>.lock``. The running instance holds
an exclusive OS lock on the ``.lock`` file; the kernel releases it when the process ends, even
on SIGKILL, and unlike a pid it cannot be confused with another process later. So a slot whose
lock can be taken belongs to an instance that is gone: that is an autosave to offer, and an
instance that still runs is never offered to another.

Writing happens on a worker thread from a snapshot of the (immutable) nodes, so a large graph
never stalls the editor; the next write waits for the one under way.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from PySide6.QtCore import QObject, QTimer, Signal

from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.io.atomic import atomic_write

try:
    import fcntl
except ImportError:     # pragma: no cover - Windows: fall back to msvcrt's byte locks
    fcntl = None  # type: ignore[assignment]
    import msvcrt

DEBOUNCE_MS = 2000      # quiet time after the last edit before writing
MAX_WAIT_MS = 10000     # a user who never pauses still gets a save this often


def _try_lock(handle: IO[bytes]) -> bool:
    try:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:   # pragma: no cover
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


@dataclass
class AutosaveSlot:
    """One instance's autosave files, with the lock that says the instance is alive."""

    folder: Path
    slot_id: str
    _lock: IO[bytes] | None = None

    @property
    def graph_path(self) -> Path:
        return self.folder / f"{self.slot_id}.hexgraph"

    @property
    def info_path(self) -> Path:
        return self.folder / f"{self.slot_id}.json"

    @property
    def base_path(self) -> Path:
        """The graph as opened or last saved: what the unsaved work is compared with."""
        return self.folder / f"{self.slot_id}.base.hexgraph"

    @property
    def lock_path(self) -> Path:
        return self.folder / f"{self.slot_id}.lock"

    def acquire(self) -> bool:
        """Take the slot's lock; False while another live process holds it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        handle = open(self.lock_path, "a+b")  # noqa: SIM115 - held for the slot's lifetime
        if not _try_lock(handle):
            handle.close()
            return False
        self._lock = handle
        return True

    def write(self, snapshot: GraphSnapshot, original: str | None,
              base: GraphSnapshot | None = None) -> None:
        """The graph (and its baseline when given) first, then the note naming it: a note
        always has its graph."""
        if base is not None:
            base.save(self.base_path)
        snapshot.save(self.graph_path)
        info = {"original": original, "time": time.time(), "pid": os.getpid(),
                "nodes": len(snapshot.nodes)}
        with atomic_write(self.info_path, "w", encoding="utf-8") as handle:
            json.dump(info, handle)

    def info(self) -> dict[str, object] | None:
        try:
            info = json.loads(self.info_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) and self.graph_path.exists() else None

    def discard(self) -> None:
        """Remove the saved work (kept: the lock, while the slot is in use)."""
        for path in (self.info_path, self.graph_path, self.base_path):
            path.unlink(missing_ok=True)

    def unlock(self) -> None:
        """Give the lock back and keep the files (another start may offer them)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def release(self) -> None:
        """Remove everything and give the lock back."""
        self.discard()
        if self._lock is not None:
            self.lock_path.unlink(missing_ok=True)
            self._lock.close()
            self._lock = None


def new_slot(folder: Path) -> AutosaveSlot:
    slot = AutosaveSlot(folder, f"{os.getpid()}-{time.time_ns():x}")
    slot.acquire()
    return slot


def orphaned_slots(folder: Path) -> list[AutosaveSlot]:
    """Slots left by instances that are gone (their lock is free), newest first; each comes
    back locked by this process, so two new instances never offer the same work."""
    found = []
    for info_path in folder.glob("*.json") if folder.is_dir() else ():
        slot = AutosaveSlot(folder, info_path.stem)
        if slot.acquire():
            if slot.info() is not None:
                found.append(slot)
            else:
                slot.release()      # a slot without usable work: clean it up
    found.sort(key=lambda s: float(s.info().get("time", 0) or 0), reverse=True)  # type: ignore[union-attr,arg-type]
    return found


class Autosaver(QObject):
    """Debounced autosave of one window's graph into its own slot."""

    failed = Signal(str)
    saved = Signal(str)

    def __init__(self, folder: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.slot = new_slot(folder)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hexscope-autosave")
        self._pending: Future[None] | None = None
        self._graph: Graph | None = None
        self._original: str | None = None
        self._base: GraphSnapshot | None = None
        self._base_written: GraphSnapshot | None = None
        self._quiet = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._quiet.timeout.connect(self.save_now)
        self._deadline = QTimer(self, singleShot=True, interval=MAX_WAIT_MS)
        self._deadline.timeout.connect(self.save_now)

    def set_base(self, base: GraphSnapshot) -> None:
        """The document as opened or saved; unsaved work is told apart from it."""
        self._base = base

    def edited(self, graph: Graph, original: str | None) -> None:
        """An edit made ``graph`` differ from ``original``: write it soon."""
        self._graph, self._original = graph, original
        self._quiet.start()
        if not self._deadline.isActive():
            self._deadline.start()

    def save_now(self) -> None:
        self._quiet.stop()
        self._deadline.stop()
        if self._graph is None:
            return
        snapshot, original = self._graph.snapshot(), self._original
        base = self._base if self._base is not self._base_written else None
        self._graph, self._base_written = None, self._base
        future = self._pool.submit(self.slot.write, snapshot, original, base)
        future.add_done_callback(self._done)
        self._pending = future

    def _done(self, future: Future[None]) -> None:
        # Runs on the worker thread: signals are queued to the GUI thread.
        exc = future.exception()
        if exc is not None:
            self.failed.emit(f"Autosave failed: {exc}")
        else:
            self.saved.emit(str(self.slot.graph_path))

    def wait(self) -> None:
        """Block until the write under way (if any) is done (tests, shutdown)."""
        if self._pending is not None:
            self._pending.exception()

    def clean(self) -> None:
        """The work was saved (or discarded): nothing is left to restore."""
        self._quiet.stop()
        self._deadline.stop()
        self._graph = None
        self.wait()
        self.slot.discard()
        self._base_written = None

    def close(self, keep: bool = False) -> None:
        """Stop for good. A clean exit gives the slot back with nothing to offer; ``keep``
        (unsaved work nobody chose to discard) writes it and leaves it for the next start."""
        if keep:
            self.save_now()
            self.wait()
        else:
            self.clean()
        self._pool.shutdown(wait=True)
        if keep:
            self.slot.unlock()
        else:
            self.slot.release()


__all__ = ["AutosaveSlot", "Autosaver", "DEBOUNCE_MS", "MAX_WAIT_MS", "orphaned_slots"]
