"""The metrics' fast path: fewer passes, the same answers as the direct formulas."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.analysis.metrics import error_metrics


@pytest.mark.parametrize("tolerance", [0.0, 0.5, 1.0, 3.0, 50.0])
def test_the_count_beyond_the_tolerance_matches_a_direct_count(rng, tolerance):
    a = rng.normal(size=4000).astype(np.float32)
    b = (a + rng.normal(scale=0.02, size=4000)).astype(np.float32)
    lsb = 0.01
    m = error_metrics(a, b, lsb, tolerance)
    expected = int(np.count_nonzero(np.abs(a - b) > tolerance * lsb))
    assert m.beyond == expected
    assert (expected == 0) == (tolerance == 50.0)


@pytest.mark.parametrize("types", [(np.float32, np.float32), (np.float32, np.float64),
                                   (np.float64, np.float32), (np.float64, np.float64)])
@pytest.mark.parametrize("seed", range(4))
def test_the_worst_element_is_the_first_largest_error_and_inputs_stay_as_they_were(
        types, seed):
    rng = np.random.default_rng(seed)
    # few distinct values: ties between +e and -e errors, and among equal errors, are common
    a = rng.integers(-3, 4, 500).astype(types[0])
    b = rng.integers(-3, 4, 500).astype(types[1])
    a_before, b_before = a.copy(), b.copy()
    for tolerance in (-1.0, 0.0, 2.0, 9.0):
        m = error_metrics(a, b, 1.0, tolerance)
        err = np.abs(a.astype(np.float64) - b.astype(np.float64))
        assert m.worst_index == (int(np.argmax(err)),)
        assert m.max_abs == float(err.max()) and (m.worst_a, m.worst_b) == (
            float(a[m.worst_index]), float(b[m.worst_index]))
        assert m.beyond == int(np.count_nonzero(err > tolerance))
    assert np.array_equal(a, a_before) and np.array_equal(b, b_before)
