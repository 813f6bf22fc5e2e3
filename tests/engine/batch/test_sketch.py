"""Percentiles over all runs: the sketch's stated bound (report.schema.json, range
percentiles) against exact order statistics computed here, for integer codes, int32
accumulators and floats of both signs, and merges across runs and workers."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hexscope.engine.batch.sketch import RELATIVE_ACCURACY, new_sketch, quantile, sketch_of
from hexscope.engine.batch.stats import PERCENTILES, RangeAccumulator

# the sketch's own arithmetic (log2, pow) may move a value by a few ulps past the bound
SLACK = 1e-9


def _check(sketch, joined: np.ndarray) -> None:
    exact = np.sort(joined.astype(np.float64))
    lo, hi = float(exact[0]), float(exact[-1])
    for p in PERCENTILES:
        true = exact[math.floor(p / 100 * (exact.size - 1))]
        got = quantile(sketch, p / 100, lo, hi)
        assert abs(got - true) <= RELATIVE_ACCURACY * abs(true) * (1 + SLACK) + 1e-300, (
            p, got, true)


values_u8 = arrays(np.uint8, st.integers(1, 400))
values_i32 = arrays(np.int32, st.integers(1, 300),
                    elements=st.integers(-2**31, 2**31 - 1))
# magnitudes within 2**52 of each other: inside BIN_LIMIT bins (the bound's condition)
values_f32 = arrays(np.float32, st.integers(1, 300), elements=st.one_of(
    st.just(0.0), st.floats(2.0**-26, 2.0**26, width=32), st.floats(-2.0**26, -2.0**-26,
                                                                    width=32)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(values_u8, values_i32, values_f32), min_size=1, max_size=5))
def test_percentiles_are_within_the_stated_bound_of_the_exact_ones(runs):
    # one kind per batch, as one output keeps its type over all runs
    runs = [r for r in runs if r.dtype == runs[0].dtype]
    merged = new_sketch()
    for values in runs:
        merged.merge(sketch_of(values))
    _check(merged, np.concatenate(runs))


def test_a_large_uint8_tensor_with_its_percentiles_pinned():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 256, 1_000_000).astype(np.uint8)
    codes[:1000] = 0
    _check(sketch_of(codes), codes)
    # a float tensor with zeros and both signs, over many bins
    floats = (rng.standard_normal(200_000) * 10.0 ** rng.integers(-6, 6, 200_000)).astype(
        np.float32)
    floats[:5000] = 0.0
    _check(sketch_of(floats), floats)


def test_merging_in_any_grouping_gives_the_same_sketch():
    """Workers build partial sketches of their runs; the parent merges them. Counts are
    added bin by bin, so the result is the one sketch of all the values."""
    rng = np.random.default_rng(2)
    runs = [rng.standard_normal(5000).astype(np.float32) * (k + 1) for k in range(6)]
    one = new_sketch()
    for r in runs:
        one.merge(sketch_of(r))
    # two "workers", each merging its own runs, sent through pickle like a process pool does
    left, right = new_sketch(), new_sketch()
    for r in runs[::2]:
        left.merge(pickle.loads(pickle.dumps(sketch_of(r))))
    for r in runs[1::2]:
        right.merge(pickle.loads(pickle.dumps(sketch_of(r))))
    right.merge(left)
    lo = float(min(r.min() for r in runs))
    hi = float(max(r.max() for r in runs))
    for p in PERCENTILES:
        assert quantile(one, p / 100, lo, hi) == quantile(right, p / 100, lo, hi)
    _check(one, np.concatenate(runs))


def test_memory_is_bounded_whatever_the_number_of_runs():
    """Magnitudes from 1e-30 to 1e30 need ~6,900 bins at 1 %; the store keeps 2,048 per sign
    (BIN_LIMIT) by folding the smallest magnitudes together; the percentiles whose values lie
    within gamma**2048 (~1e17) of the largest magnitude keep their bound."""
    rng = np.random.default_rng(3)
    sketch = new_sketch()
    runs = []
    for _ in range(200):
        run = (rng.random(500) * 10.0 ** rng.integers(-30, 30, 500)).astype(np.float64)
        runs.append(run)
        sketch.merge(sketch_of(run))
        assert len(sketch._store.bins) <= 2048 and len(sketch._negative_store.bins) <= 2048
    exact = np.sort(np.concatenate(runs))
    for p in (95.0, 99.0, 99.9):        # above 1e30 / 1e17: 28 % of the values
        true = exact[math.floor(p / 100 * (exact.size - 1))]
        got = quantile(sketch, p / 100, exact[0], exact[-1])
        assert abs(got - true) <= RELATIVE_ACCURACY * true * (1 + SLACK)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32])
def test_a_constant_tensor_gives_its_value_for_every_percentile(dtype):
    values = np.full(1000, 7, dtype)
    sketch = sketch_of(values)
    assert all(quantile(sketch, p / 100, 7.0, 7.0) == 7.0 for p in PERCENTILES)


@settings(max_examples=40, deadline=None)
@given(st.lists(values_u8, min_size=1, max_size=4))
def test_quint8_codes_are_counted_exactly_across_runs(kernels, runs):
    """8-bit outputs keep exact counts (256 bins) instead of a sketch: their percentiles are
    the exact order statistics, merged over runs."""
    from hexscope.engine.batch.stats import _counted, _merged
    from hexscope.engine.tensor import Tensor

    acc = RangeAccumulator()
    merged = None
    for values in runs:
        part = acc._one(Tensor.from_array(values.reshape(1, 1, 1, -1)), None)
        assert (part["min"], part["max"]) == (values.min(), values.max())
        merged = _merged(merged, part["sketch"])
    exact = np.sort(np.concatenate(runs))
    for p in PERCENTILES:
        assert _counted(merged, p / 100) == exact[math.floor(p / 100 * (exact.size - 1))]
