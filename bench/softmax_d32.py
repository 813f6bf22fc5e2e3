"""Time QuantizedSoftmax_8_d32 (the HVX function's arithmetic) and its ``_ref`` (the C path)
on MobileNetV2-like shapes, against QuantizedSoftmax_8_ref (the flat float32 kernel)
on the same codes.

    .venv/bin/python bench/softmax_d32.py [--repeat 7]

Each row: the op's kernel called as the executor calls it (a d32 input with nnlib's usual
padding: 4 rows above and below, 4 width units before, depth padded to 32), best of
``--repeat`` runs after one warm-up.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

SHAPES = [(1, 1, 1, 1001), (1, 7, 7, 1280), (1, 1, 1, 1280), (1, 14, 14, 96)]


def _best(fn, repeat: int) -> float:
    fn()                                    # compiled kernels and cached tables first
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    lo, hi = Tensor.scalar(np.float32(-10.0)), Tensor.scalar(np.float32(12.0))
    print("| op | shape | time (ms) |")
    print("|---|---|---:|")
    for shape in SHAPES:
        x = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8)
        b, h, w, d = shape
        pad = D32Padding(4, 4, 4, (-w) % 4 + 4, 0, (-d) % 32)
        xd = x.to_d32(pad, fill=0)
        label = "x".join(map(str, shape))
        defs = (OutputDef((b, h + 8, w + 8, d + 32)), OutputDef(), OutputDef())
        for name, arg in (("QuantizedSoftmax_8_ref", x), ("QuantizedSoftmax_8_d32", xd),
                          ("QuantizedSoftmax_8_d32_ref", xd)):
            kernel = REGISTRY.get(name).kernel
            ctx = KernelContext(1, name, output_defs=defs)
            t = _best(lambda k=kernel, c=ctx, a=arg: k(c, a, lo, hi), args.repeat)
            print(f"| {name} | {label} | {t * 1e3:.3f} |")


if __name__ == "__main__":
    main()
