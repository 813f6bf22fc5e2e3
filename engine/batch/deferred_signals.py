"""Signals that stop a batch, taken at points the parent chooses.

Ctrl+C raises ``KeyboardInterrupt`` (and the command line's SIGTERM/SIGHUP handlers raise
their own kind of it) between any two bytecodes of the main thread. Inside
``concurrent.futures`` that leaves its locks held: raised while ``wait()`` was taking the
futures' locks one by one, it left one taken, and the pool's manager thread then waited for
it for ever (an interrupted ``run -j 2`` hung at exit now and then). While a pool runs, the
parent notes the signal instead, and :meth:`Deferred.check` raises it where nothing is held.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")


class Deferred:
    """The signals noted since it was made; ``check`` acts on the first one."""

    def __init__(self, previous: dict[int, Any]) -> None:
        self._previous = previous
        self._caught: list[tuple[int, FrameType | None]] = []

    def note(self, signum: int, frame: FrameType | None) -> None:
        self._caught.append((signum, frame))

    def check(self) -> None:
        """Act on the first signal noted as its own handler would have: call it (Ctrl+C's
        raises ``KeyboardInterrupt``, the command line's raise theirs), or, for a default
        action, restore it and send the signal again."""
        if not self._caught:
            return
        signum, frame = self._caught[0]
        handler = self._previous.get(signum)
        if callable(handler):
            handler(signum, frame)
            return
        if handler == signal.SIG_IGN:
            self._caught.pop(0)
            return
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


@contextmanager
def signals_deferred() -> Iterator[Deferred]:
    """Note SIGINT, SIGTERM and SIGHUP instead of acting on them, until ``check`` is called
    or the block ends; off the main thread (where Python runs no handler) nothing changes."""
    numbers = [getattr(signal, name) for name in _NAMES if hasattr(signal, name)]
    if threading.current_thread() is not threading.main_thread():
        yield Deferred({})
        return
    previous = {number: signal.getsignal(number) for number in numbers}
    deferred = Deferred(previous)
    for number in numbers:
        signal.signal(number, deferred.note)
    try:
        yield deferred
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
    deferred.check()


__all__ = ["Deferred", "signals_deferred"]
