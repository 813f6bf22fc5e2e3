"""Float references: what an op means on real numbers, declared with the op.

``@op(..., reference=fn)`` gives an op's float meaning. ``fn(ctx, *inputs)`` receives the
node's input tensors and returns one value per declared output:

- an ``ndarray``: real values (a quantized op's dequantized meaning);
- a :class:`~hexscope.engine.tensor.Tensor`: passed on unchanged, codes keeping their meaning
  (byte movers such as Convert_to_d32 or Flatten);
- ``None``: the output has no float meaning (a range output is described by its data).

The same function serves both analyses. In the isolated one its inputs are the quantized
tensors a run produced; in the float run they are what the upstream references returned.
:func:`real` reads either: a float tensor as it is, a quantized one through its range.

Ops with no float meaning declare ``reference=NoReference("why")``; float ops declare
``reference=SELF`` (the kernel is its own reference).

An op whose kernel subtracts an *integer* zero code from quint8 inputs (the convolutions,
MatMul, the bias adds) declares it too, ``@op(..., zero_codes=(ZeroCode(...), ...))``: with
an inexact zero it reads its inputs otherwise than :func:`real`, an error it has by its
inputs' ranges, which the isolated analysis does not count against it (:class:`ZeroCode`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.hexmath import c_roundf_int1, level_size_zero, za_scaled
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.tensor import Tensor

RefOutput = np.ndarray | Tensor | None     # or Reals, within ranges_unused()
Reference = Callable[..., Sequence[RefOutput]]


@dataclass(frozen=True, slots=True)
class NoReference:
    """The op has no meaning in float; ``reason`` says why (shown in the docs panel)."""

    reason: str


class _Self:
    """Marker: the op's kernel is its own float reference (float ops)."""

    def __repr__(self) -> str:
        return "SELF"


SELF = _Self()


@dataclass(frozen=True, slots=True)
class ZeroCode:
    """Declared with an op: its kernel reads the quint8 input ``codes`` as (q - z) x step,
    z the integer zero code ``rule(min, max)`` of the range in inputs ``lo`` and ``hi``.

    :func:`real` reads q as min + q x step (§1.1): where 0.0 is not a code of the range (an
    inexact zero: [-1, 1] puts it at 127.5, which Conv2d rounds to 128) the two readings
    differ by up to half a step, and a sum over taps by half a step per tap times the other
    operand. That error is the op's by its inputs' ranges, not one it adds by mistake: the
    isolated analysis also reads the inputs the op's way and does not count it
    (``engine/analysis/op_reading.py``). TFLite's ranges put the zero on a code, so it does
    not arise there; classic TF ranges such as [-1, 1] do."""

    codes: int
    lo: int
    hi: int
    rule: Callable[[float, float], int]


def zero_za(mn: float, mx: float) -> int:
    """Rule ZA' (``quantize_int``, §1.4): round((0 - min) x 255 / (max - min)), ties away
    from zero, not clamped (Conv2d and the depthwise convolution)."""
    return c_roundf_int1(za_scaled(0.0, mn, mx))


def zero_za_u8(mn: float, mx: float) -> int:
    """Rule ZA (``quantize_uint8``): ZA' saturated to 0..255 (the Supernodes, MatMul)."""
    return min(255, max(0, zero_za(mn, mx)))


def zero_za_low(mn: float, mx: float) -> int:
    """Rule ZA'' (``quantize_uint``): ZA' clamped below at 0 (an 8-bit bias)."""
    return max(0, zero_za(mn, mx))


def zero_zb(mn: float, mx: float) -> int:
    """Rule ZB (``get_qu8_level_size_zero``): round(-min / step) in float32, 0..255
    (SuperFC; 127 where ZA gives 128 on [-1, 1])."""
    return level_size_zero(mn, mx)[0]


def scalar_of(t: Tensor | None) -> float:
    """The first element of a range tensor as a Python float (its value, not its bits
    reinterpreted: an int32 range reads as its integer)."""
    if t is None:
        raise ValueError("a quantized tensor needs its range to be read as real values")
    if t.dtype is DType.FLOAT32 and t.layout is Layout.FLAT and t.has_data and t.elements:
        return t.scalar_value(float)    # the same value, without an array (per node, twice)
    return float(np.asarray(t.array, np.float64).reshape(-1)[0])


def real(t: Tensor, mn: Tensor | None = None, mx: Tensor | None = None,
         dtype: type | None = None) -> np.ndarray:
    """The logical values of ``t`` as real numbers.

    By default float32 for float and quint8 data (exact enough: a float32 step is ~1e-7 of
    the range, an LSB 1/255 of it) and float64 for int32 and qint32 (whose sums need 32
    bits, and whose LSB is 2**-32 of the range).

    A float tensor is read as it is; quint8 codes q stand for min + q (max - min) / 255
    (§1.1), qint32 sums s for s (max - min) / 2**32 (§1.2); int32 is read as its integers.
    """
    a = t.array
    if dtype is None:
        dtype = np.float32 if t.dtype in (DType.FLOAT32, DType.QUINT8) else np.float64
    if t.dtype is DType.FLOAT32 or t.dtype is DType.INT32:
        return np.asarray(a, dtype)
    return read_codes(a, *code_scale(t, mn, mx), dtype)


def code_scale(t: Tensor, mn: Tensor | None, mx: Tensor | None) -> tuple[float, float | None]:
    """(scale, offset) that read ``t``'s codes as reals (:func:`real`): quint8 q is
    min + q (max - min) / 255 (§1.1), qint32 s is s (max - min) / 2**32 with no offset
    (None: nothing is added, §1.2)."""
    lo, hi = scalar_of(mn), scalar_of(mx)
    if t.dtype is DType.QINT32:
        return (hi - lo) / 2.0 ** 32, None
    return (hi - lo) / 255.0, lo


def read_codes(codes: np.ndarray, scale: float, offset: float | None,
               dtype: type = np.float32) -> np.ndarray:
    """``codes * scale (+ offset)`` in ``dtype``, each step rounded to it (in float32, the
    scale and offset are rounded to float32 first): the one reading of codes that
    :func:`real` and the comparison's metrics share, so their values agree bit for bit."""
    if codes.dtype == np.uint8 and dtype is np.float32 and offset is not None \
            and codes.flags.c_contiguous:
        kernel = compiled.kernel("dequantize_u8")
        if kernel is not None:      # one pass where numpy takes three
            out = np.empty(codes.shape, np.float32)
            kernel(codes.reshape(-1), np.float32(scale), np.float32(offset), out.reshape(-1))
            return out
    out = np.asarray(codes, dtype)
    if out is codes or not out.flags.writeable:
        out = out.copy()
    out *= scale
    if offset is not None:
        out += offset
    return out


@dataclass(frozen=True, slots=True)
class Reals:
    """qint32 sums not yet read as reals: the value ``real()`` would make of them (float64
    ``codes * scale``), left to a comparison that reads the sums in its own pass. Given by
    a reference whose value is its input's (a requantize) within :func:`ranges_unused`:
    on InceptionV3 the float64 copy of 9 M sums cost more than comparing them."""

    codes: np.ndarray       # int32
    scale: float

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape

    def array(self) -> np.ndarray:
        """The values themselves (as :func:`real` makes them)."""
        return read_codes(self.codes, self.scale, None, np.float64)


def real_or_deferred(t: Tensor, mn: Tensor | None, mx: Tensor | None) -> np.ndarray | Reals:
    """``real(t, mn, mx)``; within :func:`ranges_unused`, qint32 sums come as
    :class:`Reals` instead (the caller only compares the value)."""
    if _RANGES_UNUSED.get() and t.dtype is DType.QINT32 and t.has_data:
        scale, _ = code_scale(t, mn, mx)
        return Reals(np.asarray(t.array), scale)
    return real(t, mn, mx)


_RANGES_UNUSED: ContextVar[bool] = ContextVar("hexscope_ranges_unused", default=False)


@contextmanager
def ranges_unused() -> Iterator[None]:
    """While active, :func:`ranged` leaves the range outputs out (``None``, no float
    meaning): for a caller that reads only the data output, min and max are two passes
    over it for nothing (the isolated analysis of a node whose other outputs are its
    range). Such a caller only compares that output, so a reference may also give it as
    :class:`Reals` (:func:`real_or_deferred`)."""
    token = _RANGES_UNUSED.set(True)
    try:
        yield
    finally:
        _RANGES_UNUSED.reset(token)


_RANGES_DEFERRED: ContextVar[bool] = ContextVar("hexscope_ranges_deferred", default=False)


@contextmanager
def ranges_deferred() -> Iterator[None]:
    """While active, :func:`ranged` gives its range outputs as :class:`DeferredBound`s,
    taken from the data only when read: in a float run a consumer reads its float input as
    it is (:func:`real` ignores the range), so min and max were two passes over every
    output for nothing. The caller turns them into tensors (the float run does)."""
    token = _RANGES_DEFERRED.set(True)
    try:
        yield
    finally:
        _RANGES_DEFERRED.reset(token)


@dataclass(eq=False, slots=True)
class _Bounds:
    y: np.ndarray
    words: tuple[np.ndarray, np.ndarray] | None = None


@dataclass(frozen=True, eq=False, slots=True)
class DeferredBound:
    """The min (``which`` 0) or max (1) that :func:`ranged` would give for its data, made
    on the first :meth:`word` (the data is read-only, so the answer is the same)."""

    bounds: _Bounds
    which: int

    def word(self) -> np.ndarray:
        """The [1,1,1,1] float32 word :func:`ranged` makes (read-only)."""
        b = self.bounds
        if b.words is None:
            b.words = _range_words(b.y)
            for w in b.words:
                w.setflags(write=False)
        return b.words[self.which]


def ranged(y: np.ndarray) -> tuple[np.ndarray, np.ndarray | DeferredBound | None,
                                   np.ndarray | DeferredBound | None]:
    """(y, min, max) for an op with data + range outputs; the range is y's own, which is
    what a float run has (no quantization, so nothing to widen)."""
    y = np.asarray(y)
    if y.dtype.kind != "f":
        y = y.astype(np.float64)
    if _RANGES_UNUSED.get():
        return y, None, None
    if _RANGES_DEFERRED.get():
        y.setflags(write=False)      # what the bounds are read from cannot change (the
        # float run freezes its values anyway)
        bounds = _Bounds(y)
        return y, DeferredBound(bounds, 0), DeferredBound(bounds, 1)
    return (y, *_range_words(y))


def _range_words(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo = float(y.min()) if y.size else 0.0
    hi = float(y.max()) if y.size else 0.0
    if not (math.isfinite(lo) and math.isfinite(hi)):     # rare: the finite part's range
        finite = y[np.isfinite(y)]
        lo = float(finite.min()) if finite.size else 0.0
        hi = float(finite.max()) if finite.size else 0.0
    # np.array rather than np.full: the same words in half the time (per node, twice)
    return np.array([[[[lo]]]], np.float32), np.array([[[[hi]]]], np.float32)


def codes_with_range(t: Tensor) -> tuple[Tensor, None, None]:
    """A byte mover's reference: the tensor itself, its range outputs without float meaning."""
    return t, None, None


def describe(reference: object) -> str:
    """One line for the docs panel."""
    if reference is None:
        return "Float reference: none declared."
    if isinstance(reference, NoReference):
        return f"Float reference: none ({reference.reason})."
    if reference is SELF:
        return "Float reference: the op itself (a float op)."
    doc = (getattr(reference, "__doc__", None) or "").strip().splitlines()
    return f"Float reference: {doc[0]}" if doc else "Float reference: declared."
