"""QuantizedPack_8: stack quint8 tensors along a new dimension (``op_pack.c``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import div255, rndi1, sat_u8, wrap_i16
from hexscope.engine.ops.context import KernelContext, data_of, output_fits, scalar_f, scalar_i
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, Repeat, op
from hexscope.engine.ops.shape.gather import apparent_rank
from hexscope.engine.tensor import Shape, Tensor, fresh

f32 = np.float32
_COPY_GAIN = 0x7FC0     # a gain this close to 1.0 maps 0 -> 0 and 255 -> 255: plain copy


def pack_geometry(shapes: list[Shape], dim: int) -> tuple[int, list[Shape], Shape]:
    """``find_pack_shape``: the stacking dimension (0..3), each input's expanded shape (a 1
    inserted at that dimension, its batches dropped) and the output shape."""
    rank = max(3, apparent_rank(shapes[0]))
    axis = dim + rank + 1 if dim < 0 else dim + 3 - rank
    if not 0 <= axis <= 3:
        raise KernelError(f"bad pack dim: {dim} (for inputs of apparent rank {rank})")
    expanded = [tuple(s[j + 1] if j < axis else 1 if j == axis else s[j] for j in range(4))
                for s in shapes]
    for j in range(4):
        if j != axis and any(e[j] != expanded[0][j] for e in expanded):
            raise KernelError(f"mismatch on expanded tensor dim {j}, concat on {axis}: "
                              f"expanded shapes {expanded}")
    out = list(expanded[0])
    out[axis] = len(shapes)
    return axis, expanded, tuple(out)  # type: ignore[return-value]


def pack_range(mins: list[float], maxes: list[float]) -> tuple[np.float32, np.float32]:
    """The output range: [min(0, mins), max(0, maxes)] with fminf/fmaxf (a NaN is skipped)."""
    lo, hi = f32(0.0), f32(0.0)
    for mn, mx in zip(mins, maxes, strict=True):
        lo, hi = np.fmin(lo, f32(mn)), np.fmax(hi, f32(mx))
    return lo, hi


def pack_rescale(codes: np.ndarray, in_min: float, in_max: float, out_min: np.float32,
                 out_max: np.float32) -> np.ndarray:
    """One input's codes in the output range, as ``pack_work`` gives them: the offset and
    15-bit gain of the HVX ``memconvert`` (the 16-bit lane add without saturation), or the
    bytes unchanged when the offset is 0 and the gain within 0x40 of 1.0."""
    with np.errstate(all="ignore"):
        recip = f32(f32(255.0) / f32(out_max - out_min))
        imin = np.fmin(f32(0.0), f32(in_min))
        level = div255(f32(f32(in_max) - imin))
        offset = max(0, rndi1(f32(f32(imin - out_min) * recip)))
        gain = min(32767, rndi1(f32(f32(recip * level) * f32(32768.0))))
    if offset == 0 and gain >= _COPY_GAIN:
        return codes
    v = wrap_i16(codes.astype(np.int64) + int(wrap_i16(offset)))
    return sat_u8((v * int(wrap_i16(gain)) + 16384) >> 15).astype(np.uint8)


def _inputs(xs: tuple[Tensor, ...], dim: Tensor) -> tuple[int, list[Shape], Shape]:
    return pack_geometry([x.shape for x in xs], scalar_i(dim))


def pack_8_reference(ctx: KernelContext, dim: Tensor, *groups: Tensor) -> tuple[np.ndarray, ...]:
    """the real inputs stacked along the new dimension."""
    n = len(groups) // 3
    axis, expanded, _ = _inputs(groups[:n], dim)
    parts = [real(groups[k], groups[n + k], groups[2 * n + k]).reshape(-1)[:int(np.prod(e))]
             .reshape(e) for k, e in enumerate(expanded)]
    return ranged(np.concatenate(parts, axis=axis))


@op("QuantizedPack_8", Category.PLUMBING,
    reference=pack_8_reference,
    inputs=(Port("dim", DType.INT32),
            Repeat((Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32),
                    Port("x_max", DType.FLOAT32)), min=1)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def quantized_pack_8(ctx: KernelContext, dim: Tensor, *groups: Tensor
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacks N quint8 tensors along a new dimension, requantized to a common range.

    Semantics (``op_pack.c``): inputs are the dimension, then N tensors, N mins, N maxes. The
    dimension counts in the first input's apparent rank r (at least 3): d >= 0 becomes
    d + 3 - r, d < 0 becomes d + r + 1, and must land in 0..3. Each input is viewed with a 1
    inserted there (its batches dropped), all must then agree, and the output has N there.
    The output range is [min(0, mins), max(0, maxes)] (not nudged). Each input is copied when
    its range maps onto the output's unchanged, else rescaled with
    off = max(0, roundf_i32((min_i - out_min) 255/(out_max - out_min))) and
    g = min(32767, roundf_i32(255/(out_max - out_min) step_i 32768)):
    y = sat_u8(((x + off) g + 16384) >> 15), where min_i is clamped to <= 0 and step_i =
    (max_i - min_i)/255.

    Fidelity: the copy path is byte-exact with nnlib's op run as C in the oracle
    (``tests/data/oracle/QuantizedPack_8.json``); the rescale runs the HVX ``memconvert_hvx``
    assembly, which the oracle cannot run: there Hexscope uses the same formula as
    QuantizedConcat_8's (whose asm it shares), and the oracle checks only that C passed its
    checks.

    Errors, as nnlib raises them: "bad pack dim"; "mismatch on expanded tensor dim j";
    "out too small" when the result exceeds the output's declared size.
    """
    n = len(groups) // 3
    xs, mins, maxes = groups[:n], groups[n:2 * n], groups[2 * n:]
    axis, expanded, out_shape = _inputs(xs, dim)
    output_fits(ctx, 0, int(np.prod(out_shape)), f"packed {out_shape}")
    lo = [scalar_f(t) for t in mins]
    hi = [scalar_f(t) for t in maxes]
    out_min, out_max = pack_range(lo, hi)
    parts = []
    for x, e, mn, mx in zip(xs, expanded, lo, hi, strict=True):
        codes = data_of(x, "an input").reshape(-1)[:int(np.prod(e))].reshape(e)
        parts.append(pack_rescale(codes, mn, mx, out_min, out_max))
    y = np.concatenate(parts, axis=axis)
    return (fresh(y), np.full((1, 1, 1, 1), out_min, np.float32),
            np.full((1, 1, 1, 1), out_max, np.float32))
