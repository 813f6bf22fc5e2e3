"""Time issue 26's unary, activation, normalisation and reduction ops on MobileNetV2-like
shapes, against a numpy peer doing the same float computation (float32 in, float32 out).

    .venv/bin/python bench/delegate_ops.py [--repeat 7]

Each row: the op's kernel called as the executor calls it (tensors in, arrays out), best of
``--repeat`` runs after one warm-up; the peer is the plain numpy expression of the op's float
meaning on float32 data of the same shape. Ratio = op / peer (below 1: faster than numpy).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

RNG = np.random.default_rng(0)


def _u8(shape: tuple[int, ...]) -> Tensor:
    return Tensor.from_array(RNG.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8)


def _w(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def _i(*v: int) -> Tensor:
    return Tensor.from_array(np.array(v, np.int32).reshape(1, 1, 1, -1), DType.INT32)


def _best(fn: Callable[[], object], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cases() -> list[tuple[str, str, list[Tensor], Callable[[np.ndarray], object]]]:
    """(op, shape label, inputs, numpy peer on the float32 data)."""
    e, v, s, f = (1, 112, 112, 32), (1, 7, 7, 1280), (1, 1, 1, 1001), (1, 1, 1, 1280)
    rng = [_w(-6.0), _w(6.0)]
    return [
        ("QuantizedNeg_8", "1x112x112x32", [_u8(e), *rng], np.negative),
        ("QuantizedSqrt_8", "1x112x112x32", [_u8(e), _w(0.0), _w(6.0)], np.sqrt),
        ("QuantizedTanh_8", "1x112x112x32", [_u8(e), *rng], np.tanh),
        ("QuantizedSigmoid_8", "1x112x112x32", [_u8(e), *rng],
         lambda x: 1.0 / (1.0 + np.exp(-x))),
        ("QuantizedMaximum_8", "1x112x112x32 same range", [_u8(e), _u8(e), *rng, *rng],
         lambda x: np.maximum(x, x[::-1])),
        ("QuantizedMinimum_8", "1x112x112x32 requantized",
         [_u8(e), _u8(e), _w(-6.0), _w(6.0), _w(-2.0), _w(3.0)],
         lambda x: np.minimum(x, x[::-1])),
        ("QuantizedSoftmax_8", "1x1x1x1001", [_u8(s), _w(-10.0), _w(12.0)], _softmax),
        ("QuantizedSoftmax_8", "1x7x7x1280", [_u8(v), _w(-10.0), _w(12.0)], _softmax),
        ("L2Normalize_8", "1x1x1x1280", [_u8(f), *rng],
         lambda x: x / np.sqrt((x * x).sum(axis=-1, keepdims=True))),
        ("L2Normalize_8", "1x7x7x1280", [_u8(v), *rng],
         lambda x: x / np.sqrt((x * x).sum(axis=-1, keepdims=True))),
        ("QuantizedMean_8", "1x7x7x1280 axes 1,2", [_u8(v), _w(0.0), _w(6.0), _i(1, 2)],
         lambda x: x.mean(axis=(1, 2), keepdims=True)),
        ("ArgMax_8toInt32", "1x1x1x1001 axis 3", [_u8(s), _i(3), *rng],
         lambda x: np.argmax(x, axis=3)),
        ("ArgMin_8", "1x7x7x1280 axis 3", [_u8(v), _i(3), *rng],
         lambda x: np.argmin(x, axis=3)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print("| op | shape | Hexscope (ms) | numpy float32 peer (ms) | ratio |")
    print("|---|---|---:|---:|---:|")
    for name, label, inputs, peer in cases():
        kernel = REGISTRY.get(name).kernel
        ctx = KernelContext(1, name)
        # the peer works on the real values the codes stand for (inputs 1 and 2 are the range,
        # except for the two-input ops, whose first range is at 2 and 3)
        lo, hi = (inputs[k].array.reshape(-1)[0] for k in ((2, 3) if name.endswith(
            ("imum_8",)) else (1, 2) if inputs[1].dtype is DType.FLOAT32 else (2, 3)))
        data = (lo + inputs[0].array.astype(np.float32) * ((hi - lo) / 255)).astype(np.float32)
        t_op = _best(lambda: kernel(ctx, *inputs), args.repeat)   # noqa: B023
        t_np = _best(lambda: peer(data), args.repeat)               # noqa: B023
        print(f"| {name} | {label} | {t_op * 1e3:.3f} | {t_np * 1e3:.3f} | "
              f"{t_op / t_np:.2f} |")


if __name__ == "__main__":
    main()
