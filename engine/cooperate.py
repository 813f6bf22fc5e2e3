"""Pause points in the engine's long Python passes, for an app that shares the interpreter.

Reading, copying, validating and preparing a 10,000-node graph are passes of 20-100 ms of
Python each, which an app runs on its own threads while its window answers the user. CPython
hands the GIL round the threads that want it, so the window's thread got about half the
interpreter while one of them ran: a 60 ms slice of its work took 120 ms or more (issue 32,
bench/ui_wall_gaps.py). The passes call :func:`pause` every ``EVERY`` nodes (or go through
their nodes with :func:`paced`); an app installs a callback there (the app's gives its
window its turn when the window is busy, app/gil.py). With nothing installed, as in
``hexscope run`` or a script, a pause point is a global read and a call that returns, and
:func:`paced` hands back what it was given: the passes cost what they did.

The engine knows nothing of who installs the callback (it never imports Qt or the app).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

#: Nodes between two pause points: 0.3-0.7 ms of a pass at a few microseconds a node.
EVERY = 64

_callback: Callable[[], None] | None = None


def pause() -> None:
    """A point where a long pass may stop for a while: the installed callback, if any."""
    callback = _callback
    if callback is not None:
        callback()


def paced(items: Iterable[T], every: int = EVERY) -> Iterable[T]:
    """``items`` with a pause point every ``every`` of them; ``items`` itself, at no cost,
    when no callback is installed (decided when called)."""
    if _callback is None:
        return items
    return _paced(items, every)


def _paced(items: Iterable[T], every: int) -> Iterator[T]:
    for k, item in enumerate(items, 1):
        if not k % every:
            pause()
        yield item


def install(callback: Callable[[], None] | None) -> Callable[[], None] | None:
    """Call ``callback`` at every pause point from now on, on whatever thread reaches it
    (None: nothing). Returns the callback installed before."""
    global _callback
    previous, _callback = _callback, callback
    return previous


def installed() -> Callable[[], None] | None:
    return _callback


__all__ = ["EVERY", "install", "installed", "pause", "paced"]
