"""Pieces the convolution ops share: the convolution's input ports, the filter converted
once to a GEMM right-hand side, the centred input of a 1x1 convolution, and float32 range
words. QuantizedConv2d (:mod:`conv2d`) and the Supernodes (:mod:`supernode`,
:mod:`supernode32`, :mod:`depthwise`) build on them.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.ops.context import KernelContext, Shared, data_of
from hexscope.engine.ops.kernels import gemm, winograd
from hexscope.engine.ops.kernels.gemm import Rhs, Window
from hexscope.engine.ops.registry import Port
from hexscope.engine.tensor import Tensor

_U8, _F32 = DType.QUINT8, DType.FLOAT32


def range_ports(*names: str) -> tuple[Port, ...]:
    """FLOAT32 ports named ``names`` (a range's min and max, as the device passes them)."""
    return tuple(Port(n, _F32) for n in names)


CONV_IN = (Port("x", _U8), Port("filter", _U8), *range_ports("x_min", "x_max", "f_min", "f_max"),
           Port("stride", None, shape_only=True))
"""Inputs 0-6 of QuantizedConv2d_8x8to32 and of every Supernode."""


def centred_input(x: Tensor, rows: Window, cols: Window) -> np.ndarray | None:
    """``x - 128`` (B*H*W, C) for a 1x1 convolution that fits one GEMM block.

    Several 1x1 convolutions often read the same tensor one after the other (the branches
    of an Inception block); the last two conversions are kept, for frozen (read-only)
    tensors only, keyed by the tensor's buffer (a weak reference: a dead buffer never
    matches)."""
    if not (gemm.is_plain(rows, cols) and x.has_data and x.layout is Layout.FLAT) \
            or x.raw.flags.writeable:
        return None
    dtype = np.dtype(gemm.patch_dtype())
    if x.elements * dtype.itemsize > gemm.BLOCK_BYTES:
        return None
    raw = x.raw
    with _CENTRED_LOCK:
        for ref, shape, value in _CENTRED:
            if ref() is raw and shape == x.shape and value.dtype == dtype:
                return value
    b, h, w, c = x.shape
    start = time.perf_counter()
    value = gemm.center(x.array, dtype).reshape(b * h * w, c)
    value.flags.writeable = False
    gemm.TIMES.im2col += time.perf_counter() - start
    with _CENTRED_LOCK:
        _CENTRED.insert(0, (weakref.ref(raw), x.shape, value))
        del _CENTRED[2:]
    return value


_CENTRED: list[tuple[weakref.ref, tuple[int, ...], np.ndarray]] = []
_CENTRED_LOCK = threading.Lock()


def f32_word(value: np.float32) -> np.ndarray:
    """``value`` as a read-only one-element float32 array, for :meth:`Tensor.scalar_of`."""
    word = np.empty(1, np.float32)
    np.copyto(word, value, casting="unsafe")    # np.full's own steps, without its wrapper
    word.flags.writeable = False
    return word


def f32_output(word: np.ndarray) -> Tensor:
    """A float32 [1,1,1,1] output tensor holding a copy of ``word`` (what ``f32_scalar``
    builds, with less overhead)."""
    return Tensor.scalar_of(word, DType.FLOAT32)


_Filter = TypeVar("_Filter", Rhs, winograd.WinogradRhs)


def filter_rhs(ctx: KernelContext, filt: Tensor, zf: int) -> Rhs:
    """The filter as a GEMM right-hand side, offset by its zero code when that is a code
    (so no row sums of the patches are needed)."""
    zero = zf if 0 <= zf <= 255 else gemm.CENTER
    fh, fw, din, dout = filt.shape
    return converted_filter(ctx, "rhs", filt, zero, lambda codes: Rhs.from_codes(
        codes.reshape(fh * fw * din, dout), zero))


def filter_winograd(ctx: KernelContext, filt: Tensor, zero: int) -> winograd.WinogradRhs:
    """The filter transformed for F(2,3) along the rows."""
    return converted_filter(ctx, "winograd", filt, zero,
                      lambda codes: winograd.WinogradRhs.from_codes(codes, zero))


def converted_filter(ctx: KernelContext, slot: str, filt: Tensor, zero: int,
               build: Callable[[np.ndarray], _Filter]) -> _Filter:
    """``build(filter codes)``, kept in the node's state while the same read-only tensor
    (a Const) comes in with the same zero code, so constant weights are converted once."""
    cached = ctx.state.get(slot)
    if isinstance(cached, Shared) and cached.key is filt and not filt.raw.flags.writeable \
            and cached.value.zero == zero:  # type: ignore[attr-defined]
        return cached.value  # type: ignore[return-value]
    value = build(data_of(filt, "filter"))
    ctx.state[slot] = Shared(filt, value)
    return value


