"""Signals on the command line: SIGTERM and SIGHUP stop a command the way Ctrl+C does (the
workers of ``run -j N`` too), so none leaves processes behind or prints a traceback."""

from __future__ import annotations

import signal
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stopped as Ctrl+C stops (worker processes too), exit 128 + signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def terminate_as_interrupt() -> dict[int, Any]:
    """SIGTERM (kill, a CI timeout) and SIGHUP (the terminal closed) end the command the way
    Ctrl+C does: the default would kill it at once and leave its worker processes behind.
    Returns the handlers it replaced."""
    def stop(signum: int, frame: object) -> None:
        raise Terminated(signum)

    replaced = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is None:
            continue
        try:
            if signal.getsignal(number) == signal.SIG_DFL:
                replaced[number] = signal.signal(number, stop)
        except ValueError:       # not the main thread: leave the defaults
            break
    return replaced


__all__ = ["Terminated", "terminate_as_interrupt"]
