"""Issue 25's round 5 (branch speed25e): the passes fused into a neighbour's give what the
separate passes they replace give, byte for byte (random padding bytes, odd widths, depths
that are not multiples of 32)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.ops.kernels.d32_layout import unpack_d32, unpacker
from hexscope.engine.tensor import Tensor


def _d32(rng: np.random.Generator, shape: tuple[int, int, int, int], pad: D32Padding
         ) -> Tensor:
    """A d32 tensor whose padding holds random bytes."""
    x = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8).to_d32(pad)
    mem = x.raw.copy()
    mask = x.padding_mask().reshape(-1)
    mem[mask] = rng.integers(0, 256, int(mask.sum()), dtype=np.uint8)
    return Tensor(shape, DType.QUINT8, mem, Layout.D32, pad)


_PADS = st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 7),
                  st.sampled_from([0, 8, 3]))


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 5), st.integers(1, 9),
                       st.integers(1, 70)), pads=_PADS, more=st.integers(0, 3),
       centre=st.booleans(), seed=st.integers(0, 999))
def test_a_centring_unpacker_equals_unpack_then_the_top_bit_flipped(
        shape: tuple[int, int, int, int], pads: tuple[int, ...], more: int, centre: bool,
        seed: int) -> None:
    hb, ha, wb, db = pads
    depth = shape[3]
    pad = D32Padding(hb, ha, wb, (-(wb + shape[2])) & 3, db, (-(db + depth)) & 31)
    x = _d32(np.random.default_rng(seed), shape, pad)
    unpack = unpacker(x.geometry.memory_shape, x.shape, x.padding, centre=centre,
                      width=shape[2] + more)
    assert unpack is not None
    want = unpack_d32(x.memory, x.shape, x.padding)
    if centre:
        want = want ^ np.uint8(128)         # the GEMM's centred rows: code - 128 as int8
    got = unpack(x.raw)
    assert got.shape == (*shape[:2], shape[2] + more, depth)
    assert np.array_equal(got[:, :, :shape[2]], want)
    assert np.array_equal(got[:, :, :shape[2]].view(np.int8).astype(np.int16),
                          want.view(np.int8).astype(np.int16))


def test_an_unpacker_narrower_than_the_data_is_refused() -> None:
    x = Tensor.from_array(np.zeros((1, 1, 4, 8), np.uint8), DType.QUINT8).to_d32()
    with pytest.raises(ValueError, match="width 3"):
        unpacker(x.geometry.memory_shape, x.shape, x.padding, width=3)
