"""Fast paths against the straightforward forms they replace: every result bit-identical.

The benchmark-driven fast paths (bench/inception_v3.py) must never change a result. Each test
here compares one against an independent reference written out with Python integers or
the array helpers it stands in for (quantized-ops spec §0, §7).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.ops._requant import (
    c_roundf_int,
    c_roundf_int1,
    f2i,
    f2i1,
    rndi,
    rndi1,
)
from hexscope.engine.ops.requantize import path_a

f32 = np.float32
I32_MIN, I32_MAX = -(2 ** 31), 2 ** 31 - 1

_BITS = st.integers(0, 2 ** 32 - 1).map(lambda b: np.array(b, np.uint32).view(np.float32)[()])
_SPECIAL = st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.0 ** 31, -(2.0 ** 31),
                            2.0 ** 31 - 64, float("inf"), float("-inf"), float("nan"),
                            8388607.5, -8388608.5, 1e-45])
_FLOATS = st.one_of(_BITS, _SPECIAL.map(f32))


@settings(max_examples=300, deadline=None)
@given(x=_FLOATS)
def test_scalar_conversions_match_the_array_helpers(x: np.float32) -> None:
    """§0: f2i (chop, saturate, NaN -> -1), rndi and C roundf, one value at a time."""
    with np.errstate(all="ignore"):
        assert f2i1(x) == int(f2i(np.array([x]))[0])
        assert rndi1(x) == int(rndi(np.array([x], f32))[0])
        assert c_roundf_int1(x) == int(c_roundf_int(np.array([x]))[0])


def _path_a_reference(codes: np.ndarray, gi: int, oi: int) -> list[int]:
    """§7 Path A per element with Python integers: sat_u8((sat_i32(x - oi)*gi + 2^30) >> 31)."""
    out = []
    for c in codes.tolist():
        t = min(I32_MAX, max(I32_MIN, c - oi))
        out.append(min(255, max(0, (t * gi + 2 ** 30) >> 31)))
    return out


_CODES = st.lists(st.one_of(st.integers(I32_MIN, I32_MAX),
                            st.sampled_from([I32_MIN, I32_MAX, 0, -1, 1])),
                  min_size=1, max_size=200)


@settings(max_examples=60, deadline=None)
@given(codes=_CODES, gi=st.one_of(st.integers(1024, I32_MAX),
                                  st.sampled_from([1024, 1025, 2 ** 30, I32_MAX])),
       oi=st.one_of(st.integers(I32_MIN, I32_MAX), st.sampled_from([I32_MIN, I32_MAX, 0])),
       near=st.booleans())
def test_path_a_float64_matches_the_integer_formula(codes, gi, oi, near) -> None:
    """Every gain code Path A admits, every offset, and codes around the 0/255 thresholds."""
    if near:       # put most codes where the output is between 0 and 255, and at the edges
        span = (2 ** 39) // gi
        codes = [min(I32_MAX, max(I32_MIN, oi + c % (span + 8) - 4)) for c in codes]
    x = np.array(codes, np.int32)
    got = path_a(x, gi, oi)
    assert got.dtype == np.uint8
    assert got.tolist() == _path_a_reference(x, gi, oi)
    assert path_a(x.astype(np.int64), gi, oi).tolist() == got.tolist()


def test_path_a_ties_round_up_exactly() -> None:
    """(e*gi + 2^30) >> 31 at exact half steps: gi = 2^30 gives e/2 + 1/2, floored."""
    e = np.arange(-4, 520, dtype=np.int32)
    got = path_a(e + 1000, 2 ** 30, 1000)
    assert got.tolist() == [min(255, max(0, (v + 1) // 2)) for v in e.tolist()]
