"""QuantizedSoftmax_8_ref: softmax over the depth of quint8 vectors, nnlib's plain-C
``qsoftmax_execute_ref`` (op_softmax.c), in float32 and the C's order of operations. The
device's QuantizedSoftmax_8 (fixed point) is ``softmax_device.py``."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.hexmath import rndi, sat_u8
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.kernels.normalize_loops import loops
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
#: expf_approx's constants (op_softmax.c): 2**14 / ln 2 (the double quotient as a float), the
#: cubic for 2**f on [0, 1), and 1/2**14
_TO_FRAC = f32(16384.0 / 0.69314718056)
_C1, _C2, _C3 = f32(0.69051585), f32(0.23793659), f32(0.07154756)
_FRAC_STEP = f32(1.0 / 16384.0)
#: below this step (255 * step < 162) the C skips the max pass and offsets every input by -83
_NO_MAX_STEP = f32(0.63529)


def expf_approx(x: np.ndarray) -> np.ndarray:
    """op_softmax.c ``expf_approx``: x in units of ln2/2**14, rounded (roundf_i32); the
    14-bit fraction through a cubic for 2**f, times 2**(integer part) built from the exponent
    bits (``flt_power2``: 0 below 2**-126, inf above 2**127). float32 at every step."""
    with np.errstate(all="ignore"):
        frac = rndi((x * _TO_FRAC).astype(f32))
        xf = ((frac & 0x3FFF).astype(f32) * _FRAC_STEP).astype(f32)
        poly = (xf * _C3).astype(f32)
        poly = ((_C2 + poly) * xf).astype(f32)
        poly = ((_C1 + poly) * xf).astype(f32)
        exp0 = (f32(1.0) + poly).astype(f32)
        bits = (np.clip((frac >> 14) + 127, 0, 255) << 23).astype(np.uint32)
        return (bits.view(f32) * exp0).astype(f32)


def _sf2w(v: np.ndarray) -> np.ndarray:
    """``fast_roundf`` on Hexagon (convert_sf2w): round half to even, saturate to int32,
    NaN -> -1 (the QEMU convention, unconfirmed on hardware)."""
    a = np.nan_to_num(np.asarray(v, np.float64), nan=-1.0)
    return np.clip(np.rint(a), -2.0 ** 31, 2.0 ** 31 - 1).astype(np.int64)


def softmax_codes(codes: np.ndarray, step: np.float32) -> np.ndarray:
    """The output codes for input codes (any shape; softmax over the last axis) and the
    scaled step beta * (max - min) / 255 (``qsoftmax_execute_ref``); one compiled pass per
    row where the compiled kernels load, else :func:`softmax_codes_numpy`."""
    compiled = loops()
    if compiled is None or codes.ndim == 0 or codes.size == 0:
        return softmax_codes_numpy(codes, step)
    rows = np.ascontiguousarray(codes, np.uint8).reshape(-1, codes.shape[-1])
    out = np.empty(rows.shape, np.uint8)
    compiled.softmax_rows(rows, f32(step), _NO_MAX_STEP, out)
    return out.reshape(codes.shape)


def softmax_codes_numpy(codes: np.ndarray, step: np.float32) -> np.ndarray:
    """:func:`softmax_codes` in numpy passes (the fallback, and the compiled loop's check)."""
    c = codes.astype(np.int32)
    with np.errstate(all="ignore"):
        if step < _NO_MAX_STEP:
            arg = ((step * c.astype(f32)).astype(f32) - f32(83.0)).astype(f32)
        else:
            top = np.maximum(c.max(axis=-1, keepdims=True, initial=0), 0)
            arg = (step * (c - top).astype(f32)).astype(f32)
        t = expf_approx(arg)
        total = np.cumsum(t, axis=-1, dtype=f32)[..., -1:]     # sequential, as the C loop
        recip = (f32(255.0) / total).astype(f32)
        y = (recip * t).astype(f32)
    return sat_u8(_sf2w(y)).astype(np.uint8)


def softmax_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                      *beta: Tensor) -> tuple[np.ndarray, ...]:
    """softmax(beta * x) over the depth of the dequantized input."""
    b = scalar_f(beta[0]) if beta else 1.0
    v = real(x, x_min, x_max).astype(np.float64) * b
    with np.errstate(all="ignore"):
        e = np.exp(v - v.max(axis=3, keepdims=True, initial=-np.inf))
        return ranged((e / e.sum(axis=3, keepdims=True)).astype(np.float32))


#: the ports of QuantizedSoftmax_8 and its _ref
PORTS = dict(
    inputs=(Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32), Port("beta", DType.FLOAT32, optional=True)),
    outputs=(Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))


@op("QuantizedSoftmax_8_ref", Category.ACTIVATION, reference=softmax_reference, **PORTS)
def quantized_softmax_8_ref(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                            *beta: Tensor) -> tuple[np.ndarray, ...]:
    """Softmax over the depth in nnlib's plain-C float32 (QuantizedSoftmax_8's ``_ref``);
    fixed output range [0, 1].

    Semantics (nnlib op_softmax.c ``qsoftmax_execute_ref``): step = beta * (max - min) /
    255 (beta from input 3, default 1). With step < 0.63529 every code q gives
    t = expf_approx(step * q - 83) (no max pass: 255 * step - 83 stays below 79); otherwise
    t = expf_approx(step * (q - m)) with m the row's largest code. Then
    y = sat_u8(fast_roundf(t * (255 / sum t))), the sum taken in order in float32, and the
    range is [0, 1]. ``expf_approx`` is a cubic for 2**f on a 14-bit fraction, good to
    about 11 bits (no libm).

    Fidelity: byte-exact with nnlib's x86 build of ``QuantizedSoftmax_8_ref`` (300 cases,
    golden file ``QuantizedSoftmax_8.json``, replayed against this op), float32 in the C's
    order without contraction (the x86 oracle's build; on the DSP the compiler may fuse
    ``step * q - 83`` into one multiply-add). QuantizedSoftmax_8, the op the device runs,
    is fixed point and differs from this one (on that campaign 221 of 300 equal, 27 one
    code apart; docs/oracle-hvx.md).

    Errors: an output smaller than the input ("out too small").
    """
    b = f32(scalar_f(beta[0])) if beta else f32(1.0)
    with np.errstate(all="ignore"):
        width = f32(f32(scalar_f(x_max)) - f32(scalar_f(x_min)))
        step = f32(f32(b * width) / f32(255.0))
    y = softmax_codes(x.array, step) if x.elements else np.zeros(x.shape, np.uint8)
    return fresh(y), np.zeros((1, 1, 1, 1), f32), np.ones((1, 1, 1, 1), f32)
