"""Time QuantizedSoftmax_8 (the device's paths: HVX model, depth-2 table, large-depth
histogram) against QuantizedSoftmax_8_ref (the float32 ``_ref``, which was
QuantizedSoftmax_8's kernel before the device paths) on the same codes.

    .venv/bin/python bench/softmax_flat.py [--repeat 7]

Each row: the op's kernel called as the executor calls it, best of ``--repeat`` runs after
one warm-up (the warm-up also fills the per-scaling caches, as a node's first run does).
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

#: (shape, the device's path for it)
SHAPES = [((1, 1, 1, 1001), "HVX"), ((1, 7, 7, 1280), "HVX"), ((1, 14, 14, 96), "HVX"),
          ((1, 64, 64, 2), "depth 2"), ((1, 1, 8, 2000), "large depth")]


def _best(fn, repeat: int) -> float:
    fn()                                    # compiled kernels and cached tables first
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    lo, hi = Tensor.scalar(np.float32(-10.0)), Tensor.scalar(np.float32(12.0))
    print("| shape (path) | QuantizedSoftmax_8_ref (ms) | QuantizedSoftmax_8 (ms) |")
    print("|---|---:|---:|")
    for shape, path in SHAPES:
        x = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8)
        row = []
        for name in ("QuantizedSoftmax_8_ref", "QuantizedSoftmax_8"):
            kernel = REGISTRY.get(name).kernel
            ctx = KernelContext(1, name)
            row.append(_best(lambda k=kernel, c=ctx, a=x: k(c, a, lo, hi), args.repeat))
        print(f"| {'x'.join(map(str, shape))} ({path}) | {row[0] * 1e3:.3f} | "
              f"{row[1] * 1e3:.3f} |")


if __name__ == "__main__":
    main()
