"""Autosave: each running window keeps its own slot, written a few seconds after an edit.

A slot is three files in the autosave folder: ``<id>.hexgraph`` (the unsaved graph),
``<id>.json`` (which file it belongs to and when) and ``<id>.lock``. The running instance holds
an exclusive OS lock on the ``.lock`` file; the kernel releases it when the process ends, even
on SIGKILL, and unlike a pid it cannot be confused with another process later. So a slot whose
lock can be taken belongs to an instance that is gone: that is an autosave to offer, and an
instance that still runs is never offered to another.

Writing happens on a worker thread from a snapshot of the (immutable) nodes, so a large graph
never stalls the editor; the next write waits for the one under way.

Nothing here deletes a graph it could not account for: a slot whose note is damaged is still
offered (from its graph's file time), a graph that cannot be read is set aside in
``damaged/``, and a folder that cannot be used turns autosave off (the window says so)
instead of stopping the app.
"""

from __future__ import annotations

import json
import math
import os
import stat
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from PySide6.QtCore import QObject, QTimer, Signal

from hexscope.engine.graph import Graph, GraphSnapshot
from hexscope.engine.io.atomic import atomic_write, remove_stale_temps

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
        """Take the slot's lock; False while another live process holds it. Raises OSError
        when the folder or the lock file cannot be made or opened."""
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
        """The note about the saved work, checked: ``original`` a path or None, ``time`` a
        time a clock can show; None when there is no graph. A damaged note does not hide the
        graph: its time is the graph file's, and ``problem`` says what was wrong."""
        try:
            graph_stat = self.graph_path.stat()
        except OSError:
            return None
        if not stat.S_ISREG(graph_stat.st_mode):
            return None         # a folder of that name is nobody's graph: left alone
        graph_time = graph_stat.st_mtime
        try:
            note = json.loads(self.info_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            note, problem = {}, "its note is missing: the file it belongs to is unknown"
        except (OSError, ValueError) as exc:
            note, problem = {}, (f"its note cannot be read ({_reason(exc)}): the file it "
                                 "belongs to is unknown")
        else:
            problem = "" if isinstance(note, dict) else ("its note is not a JSON object: the "
                                                         "file it belongs to is unknown")
        if not isinstance(note, dict):
            note = {}
        when = note.get("time")
        if not _plausible_time(when):
            problem = problem or (f"its note's time {when!r} is not a time: it is dated by "
                                  "its file instead")
            when = graph_time
        original = note.get("original")
        if original is not None and not (isinstance(original, str) and original):
            problem = problem or (f"its note's file name {original!r} is not a path: the "
                                  "file it belongs to is unknown")
            original = None
        info = {**note, "original": original, "time": float(when)}  # type: ignore[arg-type]
        if problem:
            info["problem"] = f"The autosave {self.graph_path.name} was kept although {problem}."
        return info

    def discard(self) -> None:
        """Remove the saved work (kept: the lock, while the slot is in use)."""
        for path in (self.info_path, self.graph_path, self.base_path):
            _remove_file(path)
            remove_stale_temps(path)

    def set_aside(self) -> Path | None:
        """Move a graph that cannot be read to ``damaged/`` (never deleted: someone may
        recover it by hand); returns where it went, None if it could not be moved."""
        target = self.folder / DAMAGED / self.graph_path.name
        try:
            target.parent.mkdir(exist_ok=True)
            os.replace(self.graph_path, target)
        except OSError:
            return None
        return target

    def unlock(self) -> None:
        """Give the lock back and keep the files (another start may offer them)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def release(self) -> None:
        """Remove everything and give the lock back."""
        self.discard()
        if self._lock is not None:
            _remove_file(self.lock_path)
            self._lock.close()
            self._lock = None


#: Where graphs that cannot be read are kept, inside the autosave folder.
DAMAGED = "damaged"


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _plausible_time(value: object) -> bool:
    """A number of seconds since 1970 that the clock can show (not 1e400, not -1e20)."""
    if type(value) not in (int, float) or not math.isfinite(value):  # type: ignore[arg-type]
        return False
    try:
        time.localtime(value)  # type: ignore[arg-type]
    except (OverflowError, OSError, ValueError):
        return False
    return value >= 0  # type: ignore[operator]


def _remove_file(path: Path) -> None:
    """Unlink a regular file or link; anything else (a folder someone put there) stays."""
    try:
        if not path.is_dir() or path.is_symlink():
            path.unlink(missing_ok=True)
    except OSError:
        pass        # a read-only folder: the files stay, and are offered again next time


def new_slot(folder: Path) -> AutosaveSlot:
    """A fresh slot for this instance, locked. Raises OSError when the folder cannot be
    used (read-only, a file in its place)."""
    slot = AutosaveSlot(folder, f"{os.getpid()}-{time.time_ns():x}")
    slot.acquire()
    return slot


def _slot_ids(folder: Path) -> set[str]:
    """Every slot id the folder mentions: notes, graphs, locks, and temps of killed saves."""
    ids = set()
    for path in folder.iterdir():
        name = path.name
        if name.startswith(".") and name.endswith(".tmp"):
            name = name[1:].split(".", 1)[0] + ".tmp"      # .<id>.json.XXXX.tmp
        stem, dot, _ = name.partition(".")
        if dot and stem and name != DAMAGED:
            ids.add(stem)
    return ids


def orphaned_slots(folder: Path) -> list[AutosaveSlot]:
    """Slots left by instances that are gone (their lock is free), newest first; each comes
    back locked by this process, so two new instances never offer the same work. Slots
    without work (a lock, temps, a note whose graph is gone) are cleaned up. Never raises:
    a folder that cannot be read offers nothing."""
    found = []
    try:
        ids = _slot_ids(folder) if folder.is_dir() else set()
    except OSError:
        return []
    for slot_id in sorted(ids):
        slot = AutosaveSlot(folder, slot_id)
        try:
            if not slot.acquire():
                continue                # a live instance's
        except OSError:
            pass        # no lock can be taken (a folder in its place, a read-only folder):
            # no live instance holds it either, so the work is offered all the same
        for target in (slot.graph_path, slot.info_path, slot.base_path):
            remove_stale_temps(target)      # its killed saves' leftovers
        if slot.info() is not None:
            found.append(slot)
        else:
            slot.release()      # no work to offer: only its lock, temps or note were left
    found.sort(key=_slot_time, reverse=True)
    return found


def _slot_time(slot: AutosaveSlot) -> float:
    info = slot.info()
    return float(info["time"]) if info else 0.0  # type: ignore[arg-type]


class Autosaver(QObject):
    """Debounced autosave of one window's graph into its own slot."""

    failed = Signal(str)
    saved = Signal(str)

    def __init__(self, folder: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.off_reason = ""            # why autosave is off ('' while it works)
        try:
            self.slot = new_slot(folder)
        except OSError as exc:
            # The app starts all the same, without autosave, and says so once it can (the
            # window connects ``failed`` after this returns).
            self.slot = AutosaveSlot(folder, f"{os.getpid()}-off")
            self.off_reason = (f"Autosave is off: the folder {folder} cannot be used "
                               f"({_reason(exc)})")
            QTimer.singleShot(0, lambda: self.failed.emit(self.off_reason))
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
        if self._graph is None or self.off_reason:
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
        if not self.off_reason:
            if self._pending is not None and not self._pending.done():
                # After the write under way, on the one autosave thread: waiting for it
                # here stopped the window for 0.3-0.9 s (an undo back to the saved graph
                # of 10,000 nodes, while the edit's autosave was being written).
                self._pending = self._pool.submit(self.slot.discard)
            else:
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
        if keep or self.off_reason:
            self.slot.unlock()
        else:
            self.slot.release()


__all__ = ["DAMAGED", "DEBOUNCE_MS", "MAX_WAIT_MS", "AutosaveSlot", "Autosaver",
           "orphaned_slots"]
