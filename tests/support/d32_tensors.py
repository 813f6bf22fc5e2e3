"""d32 tensors for the kernels' tests."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.tensor import Tensor


def d32_with_random_padding(rng: np.random.Generator, shape: tuple[int, int, int, int],
                            pad: D32Padding) -> Tensor:
    """A d32 tensor whose padding holds random bytes (a kernel must neither read them into
    a result nor leave them where it should write)."""
    x = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8).to_d32(pad)
    mem = x.raw.copy()
    mask = x.padding_mask().reshape(-1)
    mem[mask] = rng.integers(0, 256, int(mask.sum()), dtype=np.uint8)
    return Tensor(shape, DType.QUINT8, mem, Layout.D32, pad)
