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

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

#: Nodes between two pause points: 0.3-0.7 ms of a pass at a few microseconds a node.
EVERY = 64

_callback: Callable[[], None] | None = None
_local = threading.local()          # .hook: a thread's own callback (on_this_thread)
_hooked = [0]                       # how many threads have one now
_hooked_lock = threading.Lock()


def pause() -> None:
    """A point where a long pass may stop for a while: the installed callback, if any,
    then this thread's own (:func:`on_this_thread`)."""
    callback = _callback
    if callback is not None:
        callback()
    if _hooked[0]:
        hook = getattr(_local, "hook", None)
        if hook is not None:
            hook()


def paced(items: Iterable[T], every: int = EVERY) -> Iterable[T]:
    """``items`` with a pause point every ``every`` of them; ``items`` itself, at no cost,
    when no callback is installed (decided when called)."""
    if _callback is None and not _hooked[0]:
        return items
    return _paced(items, every)


@contextmanager
def on_this_thread(hook: Callable[[], None]) -> Iterator[None]:
    """Within the block, also call ``hook`` at every pause point this thread reaches (an
    app's loader ages what its reading made: app/graph_loader.py); other threads' pause
    points do not call it. Blocks do not nest on one thread."""
    if getattr(_local, "hook", None) is not None:
        raise RuntimeError("on_this_thread blocks do not nest")
    _local.hook = hook
    with _hooked_lock:
        _hooked[0] += 1
    try:
        yield
    finally:
        _local.hook = None
        with _hooked_lock:
            _hooked[0] -= 1


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


__all__ = ["EVERY", "install", "installed", "on_this_thread", "pause", "paced"]
