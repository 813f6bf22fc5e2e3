"""Pause Python's cyclic garbage collector while building many objects at once.

Loading or drawing a 10,000-node graph allocates hundreds of thousands of objects and
frees almost none; each full collection walks all of them, so the collector alone made
loading grow faster than the graph (1.3 s instead of 0.6 s at 20,000 nodes). Reference
counting still frees everything as usual; the collector runs again afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Within the block the cyclic collector is off (unless it was already off)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
