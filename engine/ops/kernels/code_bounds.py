"""The min and max code of an int32 result, taken by its producer while the data is in cache.

QuantizeDownAndShrinkRange needs the span of its input codes (quantized-ops spec §7), which
costs two passes over a conv output that has left the cache by then (~4 ms per InceptionV3
run). The convolution takes the span of each block it writes, while the block is still in
cache, and notes it against the output's buffer; the requantize looks it up.

A noted span is trusted only for the very buffer it was noted for (identity, through a weak
reference, so a reused id never matches) and only while that buffer is read-only: the
executor freezes every output, so the data cannot have changed since. Anything else (a
writable tensor, a copy) is measured again.
"""

from __future__ import annotations

import weakref

import numpy as np

_MINIMUM, _MAXIMUM = np.minimum.reduce, np.maximum.reduce


class Span:
    """Running (min, max) over the blocks of one result."""

    __slots__ = ("lo", "hi")

    def __init__(self) -> None:
        self.lo: int | None = None
        self.hi: int | None = None

    def add(self, block: np.ndarray) -> None:
        if not block.size:
            return
        self.add_bounds(int(_MINIMUM(block, axis=None)), int(_MAXIMUM(block, axis=None)))

    def add_bounds(self, lo: int, hi: int) -> None:
        """Take in a block whose min and max are already known."""
        self.lo = lo if self.lo is None else min(self.lo, lo)
        self.hi = hi if self.hi is None else max(self.hi, hi)


_NOTED: dict[int, tuple[weakref.ref, int, int]] = {}
_NOTED_MAX = 32


def note(raw: np.ndarray, span: Span) -> None:
    """Remember ``span`` for the buffer ``raw`` (if the span saw any data)."""
    if span.lo is None or span.hi is None:
        return
    if len(_NOTED) >= _NOTED_MAX:
        _NOTED.clear()
    _NOTED[id(raw)] = (weakref.ref(raw), span.lo, span.hi)


def known(raw: np.ndarray) -> tuple[int, int] | None:
    """The span noted for this very buffer, if it is read-only; else None."""
    entry = _NOTED.get(id(raw))
    if entry is None or entry[0]() is not raw or raw.flags.writeable:
        return None
    return entry[1], entry[2]
