"""Issue 26's shape and resize ops on MobileNetV2-like shapes, as a ratio of a numpy peer
doing the same data movement (np.pad, a transposed copy, a sliced copy, ...).

Each op runs through its kernel (validation of its parameters, the move, the range copies)
and its outputs are taken as the executor takes them; the peer is the bare numpy move of the
same bytes. Best of 7.

Run: .venv/bin/python bench/shape_ops.py
"""

from __future__ import annotations

import time

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor


def best_of(fn, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def i32(v) -> Tensor:
    return Tensor.from_array(np.asarray(v, np.int32))


def f(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def cases(rng: np.random.Generator) -> list[tuple]:
    """(label, op, inputs, padding, n_out, numpy peer)."""
    def u8(shape):
        a = rng.integers(0, 256, shape, dtype=np.uint8)
        return a, Tensor.from_array(a, DType.QUINT8)

    r = (f(-1.0), f(1.0))
    a, x = u8((1, 112, 112, 32))
    b, y = u8((1, 33, 33, 256))
    c, z = u8((1, 56, 56, 144))
    d, w = u8((1, 14, 14, 384))
    e, v = u8((1, 7, 7, 1280))
    xd = x.to_d32()
    ad = np.asarray(xd.raw).reshape(xd.geometry.memory_shape)
    return [
        ("pad 1x112x112x32 +1", "QuantizedPad_8", [x, *r, i32([[0, 0], [1, 1], [1, 1], [0, 0]])],
         Padding.NA, 3, lambda: np.pad(a, ((0, 0), (1, 1), (1, 1), (0, 0)))),
        ("mirror pad 1x112x112x32 +1", "MirrorPad_8",
         [x, i32([[0, 0], [1, 1], [1, 1], [0, 0]]), *r], Padding.MIRROR_REFLECT, 3,
         lambda: np.pad(a, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="reflect")),
        ("reshape 1x7x7x1280", "Reshape", [v, i32([1, -1])], Padding.NA, 1, lambda: e.copy()),
        ("transpose 1x56x56x144 (0,2,1)", "Transpose_8", [z, i32([0, 2, 1]), *r], Padding.NA, 3,
         lambda: np.ascontiguousarray(c.transpose(0, 2, 1, 3))),
        ("split 1x56x56x144 depth/3", "QuantizedSplit_8", [i32([3]), z, *r], Padding.NA, 5,
         lambda: [np.ascontiguousarray(p) for p in np.split(c, 3, axis=3)]),
        ("slice 1x56x56x144 [:,8:48,8:48,16:128]", "QuantizedSlice_8",
         [z, i32([0, 8, 8, 16]), i32([1, 40, 40, 112]), *r], Padding.NA, 3,
         lambda: np.ascontiguousarray(c[:, 8:48, 8:48, 16:128])),
        ("strided slice 1x56x56x144 ::2", "QuantizedStridedSlice_8",
         [z, i32([0, 0, 0]), i32([56, 56, 144]), i32([2, 2, 1]), i32([0]), i32([0]), i32([0]),
          *r], Padding.NA, 3, lambda: np.ascontiguousarray(c[:, ::2, ::2, :])),
        ("pack 4 x 1x14x14x384", "QuantizedPack_8", [i32([0]), w, w, w, w, *[f(-1.0)] * 4,
                                                      *[f(1.0)] * 4], Padding.NA, 3,
         lambda: np.stack([d[0]] * 4)),
        ("space to depth 1x112x112x32 /2", "SpaceToDepth_8", [x, i32([2]), *r], Padding.NA, 3,
         lambda: np.ascontiguousarray(a.reshape(1, 56, 2, 56, 64).transpose(0, 1, 3, 2, 4))),
        ("depth to space 1x33x33x256 x2", "DepthToSpace_8", [y, i32([2]), *r], Padding.NA, 3,
         lambda: np.ascontiguousarray(b.reshape(1, 33, 33, 2, 2, 64).transpose(0, 1, 3, 2, 4, 5))),
        ("nearest 1x33x33x256 -> 65x65", "ResizeNearestNeighbor_8", [y, i32([65, 65]), *r],
         Padding.NA, 3, lambda: b[:, (np.arange(65) * 33) // 65][:, :, (np.arange(65) * 33) // 65]),
        ("bilinear 1x33x33x256 -> 65x65", "QuantizedResizeBilinear_8", [y, i32([65, 65]), *r],
         Padding.NA, 3, lambda: _bilinear_peer(b, 65, 65)),
        # the d32 forms: the peer pads the d32 memory (b, h, slices, w, 32) as a whole
        ("pad d32 1x112x112x32 +1", "QuantizedPad_8_d32",
         [xd, *r, i32([[0, 0], [1, 1], [1, 1], [0, 0]])], Padding.NA, 3,
         lambda: np.pad(ad, ((0, 0), (1, 1), (0, 0), (1, 1), (0, 0)))),
        ("mirror pad d32 1x112x112x32 +1", "MirrorPad_8_d32",
         [xd, i32([[0, 0], [1, 1], [1, 1], [0, 0]]), *r], Padding.MIRROR_REFLECT, 3,
         lambda: np.pad(ad, ((0, 0), (1, 1), (0, 0), (1, 1), (0, 0)), mode="reflect")),
    ]


def _bilinear_peer(x: np.ndarray, nh: int, nw: int) -> np.ndarray:
    """The same blend in float32 numpy without nnlib's float steps and checks."""
    _, h, w, _ = x.shape
    py, px = np.arange(nh) * (h / nh), np.arange(nw) * (w / nw)
    r0, c0 = py.astype(int), px.astype(int)
    r1, c1 = np.minimum(r0 + 1, h - 1), np.minimum(c0 + 1, w - 1)
    fy, fx = (py - r0).astype(np.float32)[:, None, None], (px - c0).astype(np.float32)[:, None]
    v = x[0].astype(np.float32)
    top = v[r0][:, c0] + (v[r0][:, c1] - v[r0][:, c0]) * fx
    bot = v[r1][:, c0] + (v[r1][:, c1] - v[r1][:, c0]) * fx
    return (top + (bot - top) * fy + 0.5).astype(np.uint8)


def adopt(outs) -> list[Tensor]:
    """The outputs as the executor takes them: arrays become tensors (adopting the kernels'
    fresh results without a copy) and are then dropped, so their memory is reused."""
    return [o if isinstance(o, Tensor) else Tensor.from_array(o) for o in outs]


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"| {'op and shape':<40} | {'Hexscope ms':>11} | {'numpy ms':>9} | {'ratio':>6} |")
    print(f"|{'-' * 42}|{'-' * 13}:|{'-' * 10}:|{'-' * 7}:|")
    for label, name, inputs, padding, n_out, peer in cases(rng):
        spec = REGISTRY.get(name)
        ctx = KernelContext(node_id=1, op=name, padding=padding,
                            output_defs=tuple(OutputDef(()) for _ in range(n_out)))
        ours = best_of(lambda spec=spec, ctx=ctx, inputs=inputs: adopt(spec.kernel(ctx, *inputs)))
        theirs = best_of(peer)
        print(f"| {label:<40} | {ours * 1e3:11.3f} | {theirs * 1e3:9.3f} | "
              f"{ours / theirs:6.2f} |", flush=True)


if __name__ == "__main__":
    main()
