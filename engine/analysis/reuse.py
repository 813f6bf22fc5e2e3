"""What the float-reference analyses keep between calls, per prepared graph (issue 12).

The app makes the comparison again after every step (and when the tolerance or the target
changes), so a stepped run would redo every node's work at every step:

- **the float run** of the accumulated analysis depends on the prepared graph and the graph
  inputs only, not on the quantized run, so it is made once and reused while both are the
  same (the inputs compared by value: a new run of the same data is the same float run). It
  costs about 2.5 simulator runs to make and holds every node's float value, which the
  accumulated comparison shown by the app holds anyway;
- **each node's comparison** is reused while it would be made from the very same tensors
  (by identity: the run's frozen outputs, and for the isolated analysis its inputs) at the
  same tolerance, so a step costs the nodes it ran; a new run makes new tensors. The kept
  comparisons hold the tensors they were made from (so no id is reused): after a new run,
  the previous run's tensors live on until the next analysis replaces them.

Keyed on the :class:`~hexscope.engine.prepare.Prepared` object, which a session replaces
whenever an edit changes what runs (its nodes are frozen), so nothing here can outlive the
graph it was made from. (Keeping the Consts read as reals, or sharing each output's
dequantized values with its consumers, was measured and made the analyses slower: the
arrays held back cost more in memory traffic than reading 8-bit codes again.)
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from hexscope.engine.analysis.diff import OutputDiff
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.prepare import Prepared


@dataclass
class NodeWork:
    """One node's comparison and what it was made from (held, so no id is reused)."""

    made_from: tuple[object, ...]
    tolerance: float
    diffs: list[OutputDiff]
    skipped: str | None = None


@dataclass
class PreparedCache:
    """The reusable work of one prepared graph."""

    float_run: tuple[tuple[Tensor, ...], dict, dict] | None = None   # inputs, values, missing
    nodes: dict[tuple[str, int], NodeWork] = field(default_factory=dict)   # (mode, node)

    def node_work(self, mode: str, node_id: int, made_from: tuple[object, ...],
                  tolerance: float) -> NodeWork | None:
        """The kept comparison of ``node_id`` if made from these very objects."""
        work = self.nodes.get((mode, node_id))
        if (work is None or work.tolerance != tolerance
                or len(work.made_from) != len(made_from)
                or any(x is not y for x, y in zip(work.made_from, made_from, strict=True))):
            return None
        return work


_CACHES: dict[int, tuple[weakref.ref, PreparedCache]] = {}


def cache_for(prepared: Prepared) -> PreparedCache:
    """The cache of ``prepared`` (made on first use, dropped with it)."""
    key = id(prepared)
    entry = _CACHES.get(key)
    if entry is not None and entry[0]() is prepared:
        return entry[1]
    cache = PreparedCache()
    _CACHES[key] = (weakref.ref(prepared), cache)
    weakref.finalize(prepared, _forget, key)
    return cache


def forget(prepared: Prepared) -> None:
    """Drop what is kept for ``prepared`` (the next analysis starts cold)."""
    _CACHES.pop(id(prepared), None)


def _forget(key: int) -> None:
    entry = _CACHES.get(key)
    if entry is not None and entry[0]() is None:
        del _CACHES[key]


def same_inputs(a: tuple[Tensor, ...], b: tuple[Tensor, ...]) -> bool:
    """Whether two sets of graph inputs hold the same data (one pass over the bytes)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x is y:
            continue
        if (x.shape != y.shape or x.dtype is not y.dtype or x.has_data != y.has_data
                or x.layout is not y.layout or x.padding != y.padding):
            return False
        if x.has_data and not np.array_equal(x.buffer, y.buffer):
            return False
    return True


__all__ = ["NodeWork", "PreparedCache", "cache_for", "forget", "same_inputs"]
