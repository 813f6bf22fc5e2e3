"""QuantizedSplit_8, QuantizedSlice_8, QuantizedStridedSlice_8 (``op_split.c``,
``op_slice.c``, ``op_stridedslice.c``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, data_of, output_fits, scalar_i
from hexscope.engine.ops.reference import real
from hexscope.engine.ops.registry import Category, Port, Repeat, op
from hexscope.engine.ops.shape.params import axis_in_range, int_words
from hexscope.engine.tensor import Tensor, fresh

_NAMES = "bhwd"


# ---------------------------------------------------------------------------------- split
def split_axis(ctx: KernelContext, axis: Tensor) -> int:
    """The split dimension; 3 when inputs 0 and 1 are wired to the same output."""
    refs = ctx.input_refs
    if len(refs) > 1 and refs[0] == refs[1]:
        return 3
    return axis_in_range(scalar_i(axis), "split dimension")


def split_array(ctx: KernelContext, x: np.ndarray, dim: int, n: int) -> list[np.ndarray]:
    if n == 1:      # nn_mcmanager_tensor_copy: "out too small" past the declared size
        output_fits(ctx, 0, x.size * x.itemsize, f"the whole input {x.shape}")
        return [x.copy()]
    if x.shape[dim] % n:
        raise KernelError(f"uneven split: {x.shape[dim]} / {n}")
    parts = np.split(x, n, axis=dim)
    for k, part in enumerate(parts):
        output_fits(ctx, k, part.size * x.itemsize, f"part {k} {part.shape}",
                    reason=f"out {k} too small")
    return [np.ascontiguousarray(p) for p in parts]


def split_8_reference(ctx: KernelContext, axis: Tensor, x: Tensor, x_min: Tensor,
                      x_max: Tensor) -> tuple[np.ndarray | None, ...]:
    """the real input cut into equal parts."""
    parts = split_array(ctx, real(x, x_min, x_max), split_axis(ctx, axis),
                        max(1, ctx.n_outputs - 2))
    return (*parts, None, None)


@op("QuantizedSplit_8", Category.PLUMBING,
    reference=split_8_reference,
    inputs=(Port("axis", DType.INT32), Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32)),
    outputs=(Repeat((Port("y", DType.QUINT8),), min=1), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))
def quantized_split_8(ctx: KernelContext, axis: Tensor, x: Tensor, x_min: Tensor,
                      x_max: Tensor) -> tuple[np.ndarray | Tensor, ...]:
    """Cuts a quint8 tensor into N equal parts along an axis; min/max pass through.

    Semantics (``op_split.c``, ``split_impl``): N is the output count minus 2 (the last two
    outputs are min and max). The axis is -4..3 (negative counts from the end); when inputs 0
    and 1 are wired to the same output, the split is on depth (3), the library's convention.

    Fidelity: byte-exact with nnlib's op run as C in the oracle (``tests/oracle``), 300+
    cases in ``tests/data/oracle/QuantizedSplit_8.json``.

    Errors, as nnlib raises them: "split dimension out of range" (axis outside -4..3);
    "uneven split: n / N"; "out k too small" when part k exceeds its declared size.
    """
    n = max(1, ctx.n_outputs - 2)
    parts = split_array(ctx, data_of(x, "the input"), split_axis(ctx, axis), n)
    return (*[fresh(p) for p in parts], x_min.copy(), x_max.copy())


# ---------------------------------------------------------------------------------- slice
def slice_window(shape: tuple[int, ...], start: Tensor, size: Tensor) -> list[tuple[int, int]]:
    """(start, size) per dimension as ``slice_prepare`` reads them: the last n entries of
    start/size (n = their depth, 1..4) for the last n dimensions; size -1 = to the end."""
    n = start.shape[3]
    if start.shape[:3] != (1, 1, 1) or not 1 <= n <= 4 or start.shape != size.shape:
        raise KernelError(f"bad size/shape spec for 'slice': start {start.shape}, size "
                          f"{size.shape} must both be 1x1x1xn with n in 1..4")
    begins = [0] * (4 - n) + int_words(start, n, "the slice start")
    sizes = [-1] * (4 - n) + int_words(size, n, "the slice size")
    window = []
    for i, (b, s, dim) in enumerate(zip(begins, sizes, shape, strict=True)):
        s = dim - b if s == -1 else s
        if s <= 0:
            raise KernelError(f"bad {_NAMES[i]}_size: {s} (start {b}, dimension {dim})")
        window.append((b, s))
    for i, ((b, s), dim) in enumerate(zip(window, shape, strict=True)):
        if b + s > dim:
            raise KernelError(f"in {_NAMES[i]} too small: start {b} + size {s} > {dim}")
    for i, (b, _) in enumerate(window):
        if b < 0:
            # The library checks only start + size; a negative start reads before the input.
            raise KernelError(f"slice start {b} on {_NAMES[i]} is negative; the device would "
                              "read before the input buffer")
    return window


def slice_array(x: np.ndarray, window: list[tuple[int, int]]) -> np.ndarray:
    return np.ascontiguousarray(x[tuple(slice(b, b + s) for b, s in window)])


def _squeezed(shape: tuple[int, ...], window: list[tuple[int, int]]) -> list[list[int]]:
    """``slice_prepare``'s copy layout: [size, input stride] for D, W, H, B, inner first,
    with a dimension merged into the one inside it when the input rows are contiguous."""
    _, h, w, d = shape
    layout = [[window[3][1], 1], [window[2][1], d], [window[1][1], w * d],
              [window[0][1], h * w * d]]
    n, i = 4, 0
    while i < n - 1:
        if layout[i + 1][1] == layout[i][0] * layout[i][1]:
            layout[i][0] *= layout[i + 1][0]
            del layout[i + 1]
            layout.append([1, 0])
            n -= 1
        else:
            i += 1
    return layout


def device_slice(ctx: KernelContext, x: np.ndarray, window: list[tuple[int, int]]
                 ) -> np.ndarray:
    """The window as nnlib's copy jobs write it.

    Matches device: op_slice.c places batch b of the (squeezed) copy at b * h_out_stride *
    w_size instead of b * h_out_stride * h_size, so where both b and h remain after merging
    contiguous dimensions and h_size != w_size, the batches land at the wrong offsets: bytes
    of the output are left unwritten (the session's fill byte stands for them) or written
    past its size (a failure when past its declared capacity).
    """
    (ds, _), (ws, wst), (hs, hst), (bs, bst) = _squeezed(x.shape, window)
    need = int(np.prod([s for _, s in window]))
    h_out = ds * ws
    b_out = h_out * ws
    if bs == 1 or hs == ws:
        return slice_array(x, window)
    start = int(np.ravel_multi_index([b for b, _ in window], x.shape))
    db, wb, hb, bb = (np.arange(ds), np.arange(ws)[:, None] * wst,
                      np.arange(hs)[:, None, None] * hst, np.arange(bs)[:, None, None, None] * bst)
    src = (start + bb + hb + wb + db).reshape(-1)
    dst = (np.arange(bs)[:, None, None, None] * b_out + np.arange(hs)[:, None, None] * h_out
           + np.arange(ws)[:, None] * ds + np.arange(ds)).reshape(-1)
    end = int(dst.max()) + 1
    output_fits(ctx, 0, end, f"window {[s for _, s in window]} written with nnlib's batch "
                f"stride (op_slice.c b_out_stride = h_out_stride * w_size)",
                reason="the device writes past the output buffer")
    out = np.full(max(need, end), ctx.padding_fill, x.dtype)
    out[dst] = x.reshape(-1)[src]
    ctx.warn(f"nnlib's slice writes batch b at b x {b_out} instead of b x {h_out * hs} "
             f"(op_slice.c b_out_stride = h_out_stride * w_size): bytes of the output are "
             "left unwritten or written past its end")
    return out[:need].reshape([s for _, s in window])


def slice_8_reference(ctx: KernelContext, x: Tensor, start: Tensor, size: Tensor,
                      x_min: Tensor, x_max: Tensor) -> tuple[np.ndarray | None, ...]:
    """the real input's window."""
    return slice_array(real(x, x_min, x_max), slice_window(x.shape, start, size)), None, None


@op("QuantizedSlice_8", Category.PLUMBING,
    reference=slice_8_reference,
    inputs=(Port("x", DType.QUINT8), Port("start", DType.INT32), Port("size", DType.INT32),
            Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32)))
def quantized_slice_8(ctx: KernelContext, x: Tensor, start: Tensor, size: Tensor,
                      x_min: Tensor, x_max: Tensor) -> tuple[np.ndarray, Tensor, Tensor]:
    """Cuts a window out of a quint8 tensor; min/max pass through.

    Semantics (``op_slice.c``, ``slice_prepare``): ``start`` and ``size`` are 1x1x1xn int32
    (n = 1..4) for the last n dimensions; a size of -1 runs to the end of the dimension.

    Fidelity: byte-exact with nnlib's op run as C in the oracle (``tests/oracle``), 300+
    cases in ``tests/data/oracle/QuantizedSlice_8.json``, nnlib's batch-stride bug included
    (``op_slice.c``: ``b_out_stride = h_out_stride * w_size``, where h_size is meant): with
    more than one batch left after merging contiguous dimensions and h_size != w_size, the
    batches land at the wrong offsets, and the bytes never written hold the session's fill
    byte (a warning says so). One difference, on purpose: nnlib
    checks only start + size <= dimension, so a negative start reads before the input
    buffer (garbage); Hexscope fails the node there.

    Errors, as nnlib raises them: "bad size/shape spec for 'slice'"; "bad <d>_size" (an
    empty window or a size below -1); "in <d> too small" (a window past the end); "out too
    small" when the window exceeds the output's declared size.
    """
    window = slice_window(x.shape, start, size)
    need = int(np.prod([s for _, s in window]))
    output_fits(ctx, 0, need, f"window {[s for _, s in window]}")
    y = device_slice(ctx, data_of(x, "the input"), window)
    return fresh(y), x_min.copy(), x_max.copy()
