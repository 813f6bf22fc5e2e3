"""Load the simulator's compiled kernels on a background thread as the window opens.

The kernels are compiled at install (``hexscope --warm-up``), but each process still
imports numba and loads every cached kernel on first use: about 3 s alone, and 11-16 s
when it happened on the session's thread at the first F10 of a 10,000-node graph, sharing
the interpreter with a GUI thread busy building the canvas (issue 32). Loading them while
the user looks at the window moves that wait out of the first step, run and Compare.
"""

from __future__ import annotations

import threading

THREAD_NAME = "hexscope-kernel-preload"
#: Set when a step, run or comparison is asked for: it may need a kernel the preload is
#: loading and wait for numba's lock meanwhile (Compare 1.0 -> 2.1 s at 10,000 nodes while
#: the preload gave way, F5 after an undo 1.5 -> 2.4 s), so the preload stops giving way and
#: finishes at full speed. Until then (the window opening, a graph being read and drawn) it
#: gives way.
_wanted = threading.Event()


def start_preload() -> threading.Thread:
    """Start loading every kernel of ``engine/ops/kernels/warm.py``; returns the thread.

    A daemon thread: quitting does not wait for it. A kernel that cannot load is left to
    its first use, which reports it as before."""
    thread = threading.Thread(target=_preload, name=THREAD_NAME, daemon=True)
    thread.start()
    return thread


def hurry() -> None:
    """Someone waits (or may wait) for the kernels: the preload no longer gives way."""
    _wanted.set()


def _preload() -> None:
    from hexscope.app.gil import giving_way
    from hexscope.engine.ops.kernels.warm import warm_all

    # numba's loading (and its compiling, for a kernel its cache misses) is Python that
    # holds the GIL in long stretches: it pauses while the window is busy (app/gil.py)
    with giving_way(until=_wanted):
        warm_all()


__all__ = ["THREAD_NAME", "hurry", "start_preload"]
