"""What the float-reference analyses keep between calls, per prepared graph (issue 12).

The app makes the comparison again after every step, and the command line once per input
set; two things do not change between those calls and cost as much as a run to remake:

- **the Consts read as reals**: the convolutions' filters dequantized to float32 (4 bytes
  per weight, kept while the prepared graph lives: a re-prepare after an edit drops them);
- **the float run** of the accumulated analysis: it depends on the prepared graph and the
  graph inputs only, not on the quantized run, so it is reused while both are the same
  (the inputs compared by value: a new run of the same data is the same float run).

Everything is keyed on the :class:`~hexscope.engine.prepare.Prepared` object, which a
session replaces whenever an edit changes what runs (its nodes are frozen), so nothing here
can outlive the graph it was made from.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from hexscope.engine.ops.reference import DequantMemo, dequantized_once
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.prepare import Prepared


@dataclass
class PreparedCache:
    """The reusable work of one prepared graph."""

    const_ids: frozenset[int]
    consts: dict = field(default_factory=dict)      # DequantMemo entries of Const tensors
    float_run: tuple[tuple[Tensor, ...], dict, dict] | None = None   # inputs, values, missing


_CACHES: dict[int, tuple[weakref.ref, PreparedCache]] = {}


def cache_for(prepared: Prepared) -> PreparedCache:
    """The cache of ``prepared`` (made on first use, dropped with it)."""
    key = id(prepared)
    entry = _CACHES.get(key)
    if entry is not None and entry[0]() is prepared:
        return entry[1]
    consts = frozenset(id(n.const) for n in prepared.nodes.values()
                       if n.is_const and n.const is not None)
    cache = PreparedCache(consts)
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


@contextmanager
def shared_dequantization(prepared: Prepared) -> Iterator[DequantMemo]:
    """Dequantize each tensor once during an analysis; keep the Consts' for the next one."""
    cache = cache_for(prepared)
    memo: dict = dict(cache.consts)
    with dequantized_once(memo):
        yield memo
    cache.consts = {k: v for k, v in memo.items() if id(v[0]) in cache.const_ids}


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


__all__ = ["PreparedCache", "cache_for", "forget", "same_inputs", "shared_dequantization"]
