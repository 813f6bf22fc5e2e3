"""Percentiles over all runs from a mergeable quantile sketch with bounded memory (DDSketch,
the ``ddsketch`` package from PyPI, Datadog's reference implementation of Masson et al.,
"DDSketch: a fast and fully-mergeable quantile sketch with relative-error guarantees",
VLDB 2019).

Why DDSketch: its error bound is relative to the value (what a range calibration needs
whether a tensor holds codes near 0 or int32 accumulators near 2**31), merging two sketches
adds bin counts, so workers' partial sketches merge into exactly the sketch one process would
build, and the collapsing store caps its memory at ``BIN_LIMIT`` bins per sign whatever the
number of runs.

The guarantee, stated in the report's schema: the value reported for percentile p is within
``RELATIVE_ACCURACY`` (1 %) of the exact order statistic x[floor(p/100 * (n - 1))] of all n
values (sorted, 0-based), unless the values of one sign span more than BIN_LIMIT bins
(a ratio of gamma**2048, about 1e17, between the largest and smallest magnitude), in which
case only the smallest magnitudes lose accuracy.

ddsketch adds one value per Python call; tensors hold millions. So a tensor is first reduced
with numpy to its distinct values (integer tensors, by counting) or to one entry per sketch
bin (float tensors: the smallest value of the bin, with the bin's count), and only those
go through ``add``: the sketch is the one it would be value by value, up to values within
one rounding of a bin boundary (numpy's log2 against the library's math.log).
"""

from __future__ import annotations

import math

import numpy as np
from ddsketch import LogCollapsingLowestDenseDDSketch

RELATIVE_ACCURACY = 0.01
BIN_LIMIT = 2048
_DENSE_SPAN = 1 << 16          # integer tensors whose values span less are counted directly


def new_sketch() -> LogCollapsingLowestDenseDDSketch:
    return LogCollapsingLowestDenseDDSketch(relative_accuracy=RELATIVE_ACCURACY,
                                            bin_limit=BIN_LIMIT)


def sketch_of(values: np.ndarray) -> LogCollapsingLowestDenseDDSketch:
    """A sketch of every value of a 1-D array of finite numbers."""
    sketch = new_sketch()
    if values.size <= 16:               # scalars (range outputs): the library's own add
        for value in values.tolist():
            sketch.add(float(value))
        return sketch
    if values.dtype.kind in "iub":
        lo, hi = int(values.min()), int(values.max())
        if hi - lo < _DENSE_SPAN:
            counts = np.bincount((values.astype(np.int64) - lo).ravel())
            for offset in np.flatnonzero(counts).tolist():
                sketch.add(float(lo + offset), float(counts[offset]))
            return sketch
    _add_by_bin(sketch, values.astype(np.float64).ravel())
    return sketch


def add_weighted(sketch: LogCollapsingLowestDenseDDSketch, values: np.ndarray,
                 weights: np.ndarray) -> None:
    """Add finite ``values`` with their counts, one ``add`` per sketch bin (not per value):
    calibration adds each run's 256 code counts as real values."""
    _add_by_bin(sketch, np.asarray(values, np.float64).ravel(),
                np.asarray(weights, np.float64).ravel())


def _add_by_bin(sketch: LogCollapsingLowestDenseDDSketch, values: np.ndarray,
                weights: np.ndarray | None = None) -> None:
    mapping = sketch._mapping  # the package's public constructor does not expose it otherwise
    tiny = mapping.min_possible
    if weights is None:
        weights = np.ones(values.size)
    small = np.abs(values) <= tiny
    zeros = float(weights[small].sum())
    if zeros:
        sketch.add(0.0, zeros)
    for sign in (1.0, -1.0):
        take = values * sign > tiny
        part, w = values[take] * sign, weights[take]
        if part.size == 0:
            continue
        # ddsketch's LogarithmicMapping.key: ceil(log2(v) * multiplier) + offset
        keys = np.ceil(np.log2(part) * mapping._multiplier).astype(np.int64)
        order = np.lexsort((part, keys))
        keys, part, w = keys[order], part[order], w[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        counts = np.add.reduceat(w, starts)
        for start, count in zip(starts.tolist(), counts.tolist(), strict=True):
            sketch.add(sign * float(part[start]), float(count))


def quantile(sketch: LogCollapsingLowestDenseDDSketch, q: float, lo: float, hi: float
             ) -> float:
    """The sketch's value at quantile q (0..1), kept within the exact [lo, hi] (which only
    moves it closer to the true value)."""
    value = sketch.get_quantile_value(q)
    if value is None or not math.isfinite(value):
        return float(lo)
    return float(min(max(value, lo), hi))


__all__ = ["BIN_LIMIT", "RELATIVE_ACCURACY", "add_weighted", "new_sketch", "quantile",
           "sketch_of"]
