"""The compiled d32 layout changes (engine/ops/kernels/d32_layout.py) against numpy's path of
Tensor.to_d32 / Tensor.array, byte for byte, padding bytes included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.ops.kernels.d32_layout import pack_d32, unpack_d32
from hexscope.engine.tensor import Tensor


def _numpy(monkeypatch: pytest.MonkeyPatch, fn):  # type: ignore[no-untyped-def]
    with monkeypatch.context() as m:
        m.setenv("HEXSCOPE_KERNELS", "numpy")
        return fn()


@settings(max_examples=60, deadline=None)
@given(b=st.integers(1, 2), h=st.integers(1, 5), w=st.integers(1, 9), d=st.integers(1, 70),
       hb=st.integers(0, 4), ha=st.integers(0, 4), wb=st.integers(0, 7),
       db=st.integers(0, 31), fill=st.integers(0, 255), seed=st.integers(0, 99))
def test_pack_and_unpack_match_numpy(b: int, h: int, w: int, d: int, hb: int, ha: int,
                                     wb: int, db: int, fill: int, seed: int) -> None:
    mp = pytest.MonkeyPatch()
    codes = np.random.default_rng(seed).integers(0, 256, (b, h, w, d), np.uint8)
    pad = D32Padding(hb, ha, wb, (-(wb + w)) & 3, db, (-(db + d)) & 31)
    x = Tensor.from_array(codes, DType.QUINT8)
    fast = x.to_d32(pad, fill)
    slow = _numpy(mp, lambda: x.to_d32(pad, fill))
    assert np.array_equal(fast.buffer, slow.buffer)
    assert np.array_equal(fast.array, codes)
    assert np.array_equal(_numpy(mp, lambda: fast.array), codes)


def test_hand_vector() -> None:
    """One row, two pixels, depth 2 after 1 depth-pad byte, 1 left pixel of padding: the
    memory row is [fill, pixel 0, pixel 1, fill] with each pixel's 32 bytes
    [fill, d0, d1, fill...]."""
    codes = np.array([[[[1, 2], [3, 4]]]], np.uint8)
    mem = pack_d32(codes, (1, 1, 1, 4, 32), (0, 0, 1, 1, 1, 29), 9)
    assert mem is not None
    want = np.full((1, 1, 1, 4, 32), 9, np.uint8)
    want[0, 0, 0, 1, 1:3] = [1, 2]
    want[0, 0, 0, 2, 1:3] = [3, 4]
    assert np.array_equal(mem, want)
    back = unpack_d32(mem, (1, 1, 2, 2), (0, 0, 1, 1, 1, 29))
    assert back is not None and np.array_equal(back, codes)


def test_other_types_fall_back() -> None:
    assert pack_d32(np.zeros((1, 1, 1, 1), np.int32), (1, 1, 1, 4, 32), (0,) * 6, 0) is None
    assert unpack_d32(np.zeros((1, 1, 1, 4, 32), np.int32), (1, 1, 1, 1), (0,) * 6) is None


@pytest.mark.parametrize(("d", "db", "wb"), [(48, 0, 4), (16, 8, 1), (40, 24, 0), (96, 0, 3)])
def test_the_word_path_matches_numpy(d: int, db: int, wb: int) -> None:
    """Depths and depth padding in multiples of 8 move as 8-byte words."""
    mp = pytest.MonkeyPatch()
    codes = np.random.default_rng(d).integers(0, 256, (2, 3, 5, d), np.uint8)
    pad = D32Padding(2, 1, wb, (-(wb + 5)) & 3, db, (-(db + d)) & 31)
    x = Tensor.from_array(codes, DType.QUINT8)
    fast = x.to_d32(pad, 0xA5)
    assert np.array_equal(fast.buffer, _numpy(mp, lambda: x.to_d32(pad, 0xA5)).buffer)
    assert np.array_equal(fast.array, codes)
