"""Settings written to their file by a thread of their own.

QSettings writes its file through QSaveFile, whose commit ends in ``fdatasync``. Done by the
GUI thread (QSettings syncs on an event after each ``setValue``), a reopen's recent-files
write held the window 108 ms on a busy disk (issue 32, the 10,000-node reopen). Here the GUI
thread only queues a value; one thread, with its own QSettings on the same file (Qt allows
one instance a thread), sets and syncs, a batch of queued values a sync.
"""

from __future__ import annotations

import atexit
import queue
import threading
from collections.abc import Callable
from typing import Protocol


class Writable(Protocol):
    def setValue(self, key: str, value: object) -> None: ...  # noqa: N802 - Qt's name
    def sync(self) -> None: ...


class SettingsWriter:
    """Writes ``(key, value)`` pairs through a settings object that ``open_settings`` makes
    on the writing thread; started at the first write (a start that writes nothing starts
    no thread)."""

    def __init__(self, open_settings: Callable[[], Writable]) -> None:
        self._open = open_settings
        self._queue: queue.Queue[tuple[str, object]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        #: the last write that failed, as text (QSettings itself reports none)
        self.failure: str | None = None

    def put(self, key: str, value: object) -> None:
        """Queue a write; it reaches the file soon after, or at :meth:`flush`."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._write, name="hexscope-settings",
                                                daemon=True)
                self._thread.start()
                atexit.register(self.flush)     # a daemon thread: a quit without a close
        self._queue.put((key, value))

    def flush(self) -> None:
        """Wait until every queued write is in the file (the window's close calls this)."""
        self._queue.join()

    def _write(self) -> None:
        settings = self._open()
        while True:
            batch = [self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                for key, value in batch:
                    settings.setValue(key, value)
                settings.sync()
            except Exception as exc:  # noqa: BLE001 - the thread must live for the writes after
                self.failure = f"{type(exc).__name__}: {exc}"
            finally:
                for _ in batch:
                    self._queue.task_done()
