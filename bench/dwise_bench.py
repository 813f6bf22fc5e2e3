"""DepthwiseSupernode_8x8p32to8 on MobileNetV2's depthwise 3x3 layers (224x224 input, as
TFLite's Hexagon delegate builds them: 32-bit bias, Relu6 range, SAME padding), against a
numpy peer doing the same int32 depthwise sum (one vectorised pass per tap) and a float
requantization. Median of interleaved runs, one process.

``--d32``: DepthwiseSupernode_8x8p32to8_d32 instead, as a MobileNetV2 run calls it (a d32
input with 4 rows and columns of padding holding other codes, the ChannelScale input of 1.0
the delegate passes, one node's context kept run after run: from its second run the fused
pass of engine/ops/kernels/dwise_fused.py), against the same layer with a fresh context
each run (the flat path and its set-up). The script imports only public names, so another
tree's interpreter can run it (``/work/main/.venv/bin/python bench/dwise_bench.py --d32``).

    .venv/bin/python bench/dwise_bench.py [--repeat 7] [--d32]
"""
from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

import numpy as np

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.depthwise_supernode import depthwise_supernode_8x8p32to8
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor

# (H, W, C, stride) of MobileNetV2's depthwise layers at 224x224
LAYERS = [(112, 112, 32, 1), (112, 112, 96, 2), (56, 56, 144, 1), (56, 56, 144, 2),
          (28, 28, 192, 1), (28, 28, 192, 2), (14, 14, 384, 1), (14, 14, 576, 1),
          (14, 14, 576, 2), (7, 7, 960, 1)]


def _s(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def _inputs(h: int, w: int, c: int, s: int, rng: np.random.Generator, free: bool):
    x = Tensor.from_array(rng.integers(0, 256, (1, h, w, c), dtype=np.uint8), DType.QUINT8)
    f = Tensor.from_array(rng.integers(0, 256, (3, 3, c, 1), dtype=np.uint8), DType.QUINT8)
    bias = Tensor.from_array(rng.integers(-2000, 2000, c).astype(np.int32), DType.QINT32)
    step = 6.0 / 255 * 2.0 / 255
    out = (-np.inf, np.inf) if free else (0.0, 6.0)
    return (x, f, _s(0.0), _s(6.0), _s(-1.0), _s(1.0), Tensor.shape_only((1, s, s, 1)), bias,
            _s(-step * 2**31), _s(step * 2**31), _s(out[0]), _s(out[1]))


def hexscope_run(args, free: bool) -> None:
    ctx = KernelContext(1, "DepthwiseSupernode_8x8p32to8", padding=Padding.SAME)
    depthwise_supernode_8x8p32to8(ctx, *args)


def numpy_peer(x: np.ndarray, f: np.ndarray, bias: np.ndarray, s: int) -> np.ndarray:
    """The same layer in plain numpy: int32 sums tap by tap over a zero-code padded image,
    then (sum + bias) x gain + zero, rounded and clamped in float32."""
    _, h, w, c = x.shape
    oh, ow = (h + s - 1) // s, (w + s - 1) // s
    pt = max((oh - 1) * s + 3 - h, 0) // 2
    xp = np.pad(x.astype(np.int32) - 0, ((0, 0), (pt, 2), (pt, 2), (0, 0)))
    fw = f.astype(np.int32) - 128
    acc = np.zeros((1, oh, ow, c), np.int32)
    for fy in range(3):
        for fx in range(3):
            acc += xp[:, fy:fy + (oh - 1) * s + 1:s, fx:fx + (ow - 1) * s + 1:s] * fw[fy, fx, :, 0]
    y = (acc + bias).astype(np.float32) * np.float32(0.0005) + np.float32(0.0)
    return np.clip(np.rint(y), 0, 255).astype(np.uint8)


def _interleaved(fns, repeat: int) -> list[float]:
    """Median ms of each function, run in turn ``repeat`` times."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
    return [statistics.median(t) * 1e3 for t in times]


D32_OP = "DepthwiseSupernode_8x8p32to8_d32"


def _d32_inputs(h: int, w: int, c: int, s: int, rng: np.random.Generator) -> tuple:
    """The d32 node's inputs: padding bytes random (another node wrote them), Consts
    read-only as in a graph, the delegate's ChannelScale of 1.0."""
    pad = D32Padding(4, 4, 4, (-(4 + w)) & 3, 0, (-c) & 31)
    x = Tensor.from_array(rng.integers(0, 256, (1, h, w, c), dtype=np.uint8),
                          DType.QUINT8).to_d32(pad)
    mem = x.raw.copy()
    mask = x.padding_mask().reshape(-1)
    mem[mask] = rng.integers(0, 256, int(mask.sum()), dtype=np.uint8)
    x = Tensor(x.shape, DType.QUINT8, mem, Layout.D32, pad)
    rest = _inputs(h, w, c, s, rng, False)[1:] + (_s(1.0),)
    for t in rest:
        if t.has_data:
            t.raw.flags.writeable = False
    return (x, *rest)


def d32_main(repeat: int) -> None:
    rng = np.random.default_rng(0)
    kernel = REGISTRY.get(D32_OP).kernel
    print(f"{'layer':>22} {'d32 kept':>10} {'d32 fresh':>10}")
    tot = [0.0, 0.0]
    for h, w, c, s in LAYERS:
        args = _d32_inputs(h, w, c, s, rng)
        ctx = KernelContext(1, D32_OP, padding=Padding.SAME)
        kernel(ctx, *args)                              # compile / keep the set-up

        def fresh(args=args) -> None:
            kernel(KernelContext(1, D32_OP, padding=Padding.SAME), *args)

        kept, new = _interleaved([partial(kernel, ctx, *args), fresh], repeat)
        tot[0] += kept
        tot[1] += new
        print(f"{f'1x{h}x{w}x{c} s{s}':>22} {kept:>7.3f} ms {new:>7.3f} ms")
    print(f"{'total':>22} {tot[0]:>7.3f} ms {tot[1]:>7.3f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--d32", action="store_true", help="the d32 node, kept and fresh")
    a = ap.parse_args()
    if a.d32:
        d32_main(a.repeat)
        return
    rng = np.random.default_rng(0)
    print(f"{'layer':>22} {'hexscope fixed':>15} {'hexscope free':>14} {'numpy':>9} {'ratio':>6}")
    tot = [0.0, 0.0, 0.0]
    for h, w, c, s in LAYERS:
        fixed, free = _inputs(h, w, c, s, rng, False), _inputs(h, w, c, s, rng, True)
        hexscope_run(fixed, False)                      # compile / warm caches
        xa, fa, ba = (np.asarray(t.array) for t in (fixed[0], fixed[1], fixed[7]))
        t_fixed, t_free, t_np = _interleaved(
            [partial(hexscope_run, fixed, False), partial(hexscope_run, free, True),
             partial(numpy_peer, xa, fa, ba, s)], a.repeat)
        for i, v in enumerate((t_fixed, t_free, t_np)):
            tot[i] += v
        print(f"{f'1x{h}x{w}x{c} s{s}':>22} {t_fixed:>12.2f} ms {t_free:>11.2f} ms "
              f"{t_np:>6.1f} ms {t_np / t_fixed:>5.1f}x")
    print(f"{'total':>22} {tot[0]:>12.2f} ms {tot[1]:>11.2f} ms {tot[2]:>6.1f} ms "
          f"{tot[2] / tot[0]:>5.1f}x")


if __name__ == "__main__":
    main()
