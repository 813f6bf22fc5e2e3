"""Float ops: Min_f/Max_f, Softmax_f, LRN_f, Tanh_f, Sigmoid_f, Concat_f/ConcatV2_f.

Graph spec §4.20-§4.24. Arithmetic is float32 in the library's operation order; ``expf``,
``logf`` and ``tanhf`` come from numpy, which may differ from the DSP's libm by an ulp
(graph spec §8: libm is unconfirmed).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, data_of, scalar_f, scalar_i
from hexscope.engine.ops.reference import SELF
from hexscope.engine.ops.registry import Category, Port, Repeat, op, shared_doc
from hexscope.engine.tensor import Shape, Tensor

_F = np.float32
_F32 = DType.FLOAT32


def _floats(t: Tensor, what: str) -> np.ndarray:
    """A tensor's data read as float32, whatever its tag (the C code casts the pointer)."""
    arr = data_of(t, what)
    if arr.dtype.itemsize != 4:
        raise KernelError(f"{what} must hold 4-byte floats, got {t.describe()}")
    return np.ascontiguousarray(arr).view(np.float32)


def reduction_axes(shape: Shape, axes: list[int] | None, true_rank: int) -> set[int]:
    """The 4-D dimensions Min_f/Max_f reduce (``nn_find_reduction_shape``).

    No axis list reduces everything; a negative axis reduces everything; axis ``a`` maps to
    dimension ``4 - true_rank + a`` and mapped values outside 0..3 are ignored.
    """
    if axes is None or any(a < 0 for a in axes):
        return {0, 1, 2, 3}
    mapped = (4 - true_rank + a for a in axes)
    return {m for m in mapped if 0 <= m <= 3}


def reduced_shape(shape: Shape, reduced: set[int], squeeze: bool) -> Shape:
    """Reduced dimensions become 1, or with VALID padding are removed (kept ones right-aligned)."""
    if squeeze:
        kept = [n for i, n in enumerate(shape) if i not in reduced]
        return tuple([1] * (4 - len(kept)) + kept)  # type: ignore[return-value]
    return tuple(1 if i in reduced else n for i, n in enumerate(shape))  # type: ignore[return-value]


def _min_max(ctx: KernelContext, x: Tensor, extra: tuple[Tensor, ...],
             ufunc: np.ufunc, identity: float) -> np.ndarray:
    data = _floats(x, "input 0")
    axes = None
    if extra:
        axis_t = extra[0]
        words = data_of(axis_t, "the axis list (input 1)")
        axes = [int(a) for a in np.ascontiguousarray(words).view(np.int32).reshape(-1)
                [: axis_t.shape[3]]]
    true_rank = scalar_i(extra[1]) if len(extra) > 1 else 4
    reduced = reduction_axes(x.shape, axes, true_rank)
    out_shape = reduced_shape(x.shape, reduced, ctx.padding is Padding.VALID)
    if int(np.prod([x.shape[i] for i in reduced])) == 1:
        # matches device: a reduction over size 1 is a plain copy, NaNs included
        return data.reshape(out_shape).copy()
    result = ufunc.reduce(data, axis=tuple(sorted(reduced)), keepdims=True,
                          initial=_F(identity))
    return result.astype(_F).reshape(out_shape)


_MINMAX_INPUTS = (Port("x", _F32), Port("axes", DType.INT32, optional=True),
                  Port("true_rank", DType.INT32, optional=True))
_MINMAX_DOC = """
    Input 1 (optional) lists axes (``depth`` int32 entries); input 2 is the true rank
    (default 4), so axis ``a`` is dimension ``4 - true_rank + a``; a negative axis reduces
    everything and mapped values outside 0..3 are ignored. Reduced dimensions become 1, or
    are removed with VALID padding (kept ones right-aligned). NaNs are ignored; an all-NaN
    group gives the identity (+inf for Min_f, -inf for Max_f), except that a reduction over a
    total size of 1 copies its input unchanged (graph spec §4.20).
"""


@op("Min_f", Category.FLOAT,
    reference=SELF, inputs=_MINMAX_INPUTS, outputs=(Port("y", _F32),),
    uses_padding=True)
@shared_doc(_MINMAX_DOC)
def min_f(ctx: KernelContext, x: Tensor, *extra: Tensor) -> tuple[np.ndarray]:
    """Minimum over all or some axes of a float tensor (NaNs ignored)."""
    return (_min_max(ctx, x, extra, np.fmin, np.inf),)


@op("Max_f", Category.FLOAT,
    reference=SELF, inputs=_MINMAX_INPUTS, outputs=(Port("y", _F32),),
    uses_padding=True)
@shared_doc(_MINMAX_DOC)
def max_f(ctx: KernelContext, x: Tensor, *extra: Tensor) -> tuple[np.ndarray]:
    """Maximum over all or some axes of a float tensor (NaNs ignored)."""
    return (_min_max(ctx, x, extra, np.fmax, -np.inf),)


@op("Softmax_f", Category.FLOAT,
    reference=SELF,
    inputs=(Port("x", _F32), Port("beta", _F32, optional=True)), outputs=(Port("y", _F32),))
def softmax_f(ctx: KernelContext, x: Tensor, *beta: Tensor) -> tuple[np.ndarray]:
    """Softmax over the depth of every (b,h,w) vector, with an optional beta (default 1).

    ``y = e * (1/sum(e))`` with ``e = exp(beta * (x - max(x)))``; the max is ``fmaxf``
    seeded with the first element, the sum is sequential in float32, and the division is a
    multiplication by the reciprocal, as the library does (graph spec §4.21). Any 4-D shape
    works, not only 1-D as the seed says.

    Fidelity: exact up to the maths library. Formula and float32 order are the C's
    (op_softmax_f.c); numpy's exp stands in for the DSP's ``expf``, so results may differ
    from the device by 1 to 3 ulp (with glibc's expf in numpy's place, the C compiled on a
    host agrees bit for bit).
    """
    data = _floats(x, "input 0")
    b = _F(scalar_f(beta[0])) if beta else _F(1.0)
    if data.size == 0:
        return (data.copy(),)
    with np.errstate(all="ignore"):
        top = np.fmax.reduce(data, axis=3, keepdims=True)
        e = np.exp((b * (data - top)).astype(_F)).astype(_F)
        total = np.cumsum(e, axis=3, dtype=_F)[..., -1:]
        return ((e * (_F(1) / total)).astype(_F),)


def _lrn_params(window: Tensor, params: tuple[Tensor, ...]) -> tuple[float, ...]:
    """lrn_check (prepare): data-bearing parameters and their range rules."""
    for i, t in enumerate((window, *params), start=1):
        if not t.has_data:
            raise KernelError(f"input {i} not const: LRN_f reads its data")
    size = scalar_f(window)
    if not np.isfinite(size) or int(size) < 1:
        raise KernelError(f"LRN invalid window size (< 1): window value {size}")
    bias, alpha, beta = (scalar_f(t) for t in params)
    if bias < 0.0:
        raise KernelError(f"LRN unsupported bias-value (< 0.0): {bias}")
    if alpha < 0.0:
        raise KernelError(f"LRN unsupported alpha-value (< 0.0): {alpha}")
    if alpha == 0.0 and bias == 0.0:
        raise KernelError("LRN unsupported pair alpha-value & bias-value (both 0)")
    if beta < 0.0:
        raise KernelError(f"LRN unsupported beta-value (< 0.0): {beta}")
    return size, bias, alpha, beta


def _window_sums(sq: np.ndarray, radius: tuple[int, int, int]) -> np.ndarray:
    """Float32 running sums of squares over the clipped window, in the library's order.

    Adding the window offsets in (h, w, d) lexicographic order, with 0 outside the tensor,
    reproduces the sequential per-element sum exactly (adding 0.0 changes nothing).
    """
    _, h, w, d = sq.shape
    total = np.zeros_like(sq)
    padded = np.pad(sq, [(0, 0)] + [(r, r) for r in radius])
    rh, rw, rd = radius
    for dh in range(-rh, rh + 1):
        for dw in range(-rw, rw + 1):
            for dd in range(-rd, rd + 1):
                total = (total + padded[:, rh + dh:rh + dh + h, rw + dw:rw + dw + w,
                                        rd + dd:rd + dd + d]).astype(_F)
    return total


@op("LRN_f", Category.FLOAT,
    reference=SELF,
    inputs=(Port("x", _F32), Port("window", None), Port("bias", _F32), Port("alpha", _F32),
            Port("beta", _F32)),
    outputs=(Port("y", _F32),))
def lrn_f(ctx: KernelContext, x: Tensor, window: Tensor, bias: Tensor, alpha: Tensor,
          beta: Tensor) -> tuple[np.ndarray]:
    """Local response normalisation: ``x * (bias + alpha/N * sum(x^2 in window))^-beta``.

    The window tensor's shape (1, wh, ww, wd) gives the extents (an even extent acts one
    smaller: half-widths are ``(n-1)//2``) and its first element, read as float, is N, which
    divides alpha (the seed omits it). Computed as ``expf(logf(t) * -beta) * x`` in float32;
    ``x == 0`` gives x. Checks (hexagon_nn does them at prepare): inputs 1-4 must hold data
    ("input %d not const"), ``int(N) >= 1``, bias >= 0, alpha >= 0, not both 0, beta >= 0;
    at execute the window's batches must be 1 ("LRN by batches?") (graph spec §4.22).

    Fidelity: exact up to the maths library. Formula and float32 order are the C's
    (op_lrn_f.c); numpy's exp and log stand in for the DSP's ``expf`` and ``logf``, so
    results may differ from the device by 1 to 3 ulp (with glibc's functions in numpy's
    place, the C compiled on a host agrees bit for bit).
    """
    size, b, a, be = _lrn_params(window, (bias, alpha, beta))
    if window.shape[0] != 1:
        raise KernelError(f"LRN by batches? window shape {window.shape} has batches != 1")
    data = _floats(x, "input 0")
    radius = tuple(max(0, (n - 1) // 2) for n in window.shape[1:])
    scaling = _F(_F(a) / _F(size))
    with np.errstate(all="ignore"):
        sums = _window_sums((data * data).astype(_F), radius)  # type: ignore[arg-type]
        t = (_F(b) + (sums * scaling).astype(_F)).astype(_F)
        factor = np.exp((np.log(t).astype(_F) * -_F(be)).astype(_F)).astype(_F)
        y = (factor * data).astype(_F)
    return (np.where(data == 0, data, y),)


def _elementwise(fn: Callable[[np.ndarray], np.ndarray], x: Tensor) -> tuple[np.ndarray]:
    data = _floats(x, "input 0")
    with np.errstate(all="ignore"):
        return (fn(data).astype(_F),)


@op("Tanh_f", Category.FLOAT,
    reference=SELF, inputs=(Port("x", _F32),), outputs=(Port("y", _F32),))
def tanh_f(ctx: KernelContext, x: Tensor) -> tuple[np.ndarray]:
    """Hyperbolic tangent, elementwise (``tanhf``).

    Fidelity: exact up to the maths library. numpy's tanh stands in for the DSP's ``tanhf``
    (op_tanh_f.c), so results may differ from the device by 1 to 3 ulp (with glibc's tanhf
    in numpy's place, the C compiled on a host agrees bit for bit).
    """
    return _elementwise(np.tanh, x)


@op("Sigmoid_f", Category.FLOAT,
    reference=SELF, inputs=(Port("x", _F32),), outputs=(Port("y", _F32),))
def sigmoid_f(ctx: KernelContext, x: Tensor) -> tuple[np.ndarray]:
    """Logistic function 1/(1+e^-x), elementwise, as ``(1 + tanhf(x*0.5)) * 0.5``.

    This is the true logistic; the seed's ``(1 + tanh(x))/2`` does not match the source
    (graph spec §4.23, §6.4).

    Fidelity: exact up to the maths library. Formula and float32 order are the C's
    (op_sigmoid_f.c); numpy's tanh stands in for the DSP's ``tanhf``, so results may differ
    from the device by 1 to 3 ulp, and near an output of 0 (x very negative, where
    1 + tanhf(x/2) cancels) one ulp of tanhf becomes up to 8,192 ulp of the result (with
    glibc's tanhf in numpy's place, the C compiled on a host agrees bit for bit).
    """
    return _elementwise(lambda v: (_F(1) + np.tanh(v * _F(0.5))) * _F(0.5), x)


def concat_words(axis: int, xs: tuple[Tensor, ...]) -> np.ndarray:
    """``find_concat_shape`` checks, then the raw 4-byte elements joined along ``axis``."""
    if not 0 <= axis <= 3:
        raise KernelError(f"bad concat dim: {axis} (expected 0..3 = B,H,W,D)")
    if not xs:
        raise KernelError("concat with no data inputs (the library reads a missing tensor)")
    first = xs[0].shape
    for k, t in enumerate(xs[1:], start=1):
        for dim in range(4):
            if dim != axis and t.shape[dim] != first[dim]:
                raise KernelError(f"mismatch on tensor dim {dim}, concat on {axis}: input "
                                  f"{k} has shape {t.shape}, the first {first}")
    words = [np.ascontiguousarray(_floats(t, f"data input {k}")).view(np.uint32)
             for k, t in enumerate(xs)]
    return np.concatenate(words, axis=axis).view(np.float32)


@op("Concat_f", Category.FLOAT,
    reference=SELF,
    inputs=(Port("axis", DType.INT32), Repeat((Port("x", _F32),), min=1)),
    outputs=(Port("y", _F32),))
def concat_f(ctx: KernelContext, axis: Tensor, *xs: Tensor) -> tuple[np.ndarray]:
    """Joins float tensors along an axis given first (0..3 = B,H,W,D).

    Every other dimension must equal the first data tensor's ("mismatch on tensor dim <k>,
    concat on <axis>"); an axis outside 0..3 is "bad concat dim" (graph spec §4.24). The
    elements are copied as raw 4-byte words, NaN payloads included.
    """
    return (concat_words(scalar_i(axis), xs),)


@op("ConcatV2_f", Category.FLOAT,
    reference=SELF,
    inputs=(Repeat((Port("x", _F32),), min=1), Port("axis", DType.INT32)),
    outputs=(Port("y", _F32),))
def concat_v2_f(ctx: KernelContext, *inputs: Tensor) -> tuple[np.ndarray]:
    """Joins float tensors along an axis given last (0..3 = B,H,W,D).

    Same rules as Concat_f, with the data first and the axis as the last input.
    """
    return (concat_words(scalar_i(inputs[-1]), inputs[:-1]),)
