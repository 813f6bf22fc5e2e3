"""QuantizedTanh_8 and QuantizedSigmoid_8: nnlib's fixed-point segmented polynomial
(op_tanh_d32.c, which also runs the flat ops), as a 256-entry table per input range."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.hexmath import div255, exact_memo, getexp, rndi1, sat_i16, sat_u8
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.d32.convert import d32_output
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op, shared_doc
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_IN = (Port("x", DType.QUINT8), Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32))
_OUT = (Port("y", DType.QUINT8), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32))
_CODES = np.arange(256, dtype=np.int64)
#: QuantizedTanh_8's fixed output range: -1 to 128/127 (the C's double quotient stored in a
#: float), so code 127 is 0 and the largest code tanh reaches is 254.
TANH_MAX = f32(128.0 / 127.0)

# op_tanh_d32.c tanh_lut / sigmoid_lut: 16 segments of a quadratic over |x| in 0..3.2 (x in
# 12 fractional bits), per segment (2nd order, 1st order, 0th order); the library's fitted
# constants, needed as they are for the same codes.
_TANH = np.array([
    [-7994, 26172, 0], [-21652, 25098, 6418], [-29653, 22283, 12354], [-31481, 18480, 17462],
    [-28797, 14485, 21590], [-23876, 10862, 24761], [-18511, 7879, 27104],
    [-13703, 5579, 28784], [-9826, 3883, 29965], [-6894, 2671, 30782], [-4766, 1822, 31342],
    [-3262, 1236, 31723], [-2217, 835, 31981], [-1500, 563, 32155], [-1011, 378, 32272],
    [-677, 254, 32351]], np.int64)
_SIGMOID = np.array([
    [-8026, 26275, 0], [-21738, 25197, 6443], [-29770, 22371, 12403], [-31605, 18553, 17531],
    [-28910, 14542, 21675], [-23970, 10905, 24859], [-18584, 7910, 27210],
    [-13757, 5601, 28898], [-9865, 3899, 30083], [-6921, 2681, 30904], [-4785, 1829, 31466],
    [-3275, 1240, 31848], [-2226, 838, 32107], [-1506, 565, 32282], [-1015, 380, 32399],
    [-680, 255, 32479]], np.int64)


def scaling(mn: float, mx: float, sigmoid: bool) -> tuple[int, int, int]:
    """``set_scaling_parms``: (input zero code, gain k, right shift) so that k |q - z| >> rsh
    is the input in 13 (tanh) or 12 (sigmoid) fractional bits, scaled by 1.25."""
    with np.errstate(all="ignore"):
        mn, mx = f32(mn), f32(mx)
        step = div255(f32(mx - mn))
        zero = int(sat_u8(rndi1(f32(f32(f32(-255.0) * mn) / f32(mx - mn)))))
        gain = f32(step * f32(1.25 * 8192.0))
        if sigmoid:
            gain = f32(gain * f32(0.5))
        rsh = 15 - max(getexp(gain), 0)
        if rsh < 0:             # a huge range: the widest gain, no shift
            return zero, 32767, 0
        k = int(sat_i16(rndi1(f32(gain * f32(1 << rsh)))))
    return zero, k, rsh


@exact_memo
def tanh_table(mn: float, mx: float, sigmoid: bool) -> np.ndarray:
    """The 256 output codes for the range (mn, mx): ``operate_ref_function`` (op_tanh_d32.c;
    the HVX ``make_tanh_lookup_table`` computes the same table)."""
    zero, k, rsh = scaling(mn, mx, sigmoid)
    coeff = _SIGMOID if sigmoid else _TANH
    d = _CODES - zero
    p = sat_i16((k * np.abs(d) + ((1 << rsh) >> 1)) >> rsh)
    seg, frac = (p >> 11) & 15, p & 0x7FF
    c2, c1, c0 = coeff[seg, 0], coeff[seg, 1], coeff[seg, 2]
    v = ((c2 * frac + 16384) >> 15) + c1
    v = ((v * frac * 4 + 16384) >> 15) + c0
    v = np.where(d < 0, ~v, v)
    v = (v + (255 if sigmoid else 254) * 128 + 1) >> 1
    table = sat_u8((v + 64) >> 7).astype(np.uint8)
    table.flags.writeable = False
    return table


def tanh_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                   x_max: Tensor) -> tuple[np.ndarray, ...]:
    """tanh(x) of the dequantized input."""
    return ranged(np.tanh(real(x, x_min, x_max)))


def sigmoid_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                      x_max: Tensor) -> tuple[np.ndarray, ...]:
    """1 / (1 + exp(-x)) of the dequantized input."""
    v = real(x, x_min, x_max).astype(np.float64)
    return ranged((0.5 * (1.0 + np.tanh(0.5 * v))).astype(np.float32))


_DOC = """
    Fidelity: exact with nnlib's plain-C ``operate_ref_function`` (the ``_d32_ref`` ops of
    op_tanh_d32.c), which the oracle runs on d32 copies of the inputs; the device's flat and
    d32 ops build the same 256-entry table with HVX (``make_tanh_lookup_table``: the same
    multiplies, roundings and saturations lane by lane) and look every code up in it. No
    libm: tanh is a 16-segment quadratic in fixed point; against the true tanh of the
    dequantized input it is off by up to about two codes near the zero point, because the
    rounded zero code is taken as exactly 0 (half an input step). nnlib's older float
    ``QuantizedTanh_8_ref`` of op_tanh.c, with ``tanhf``, is another op and differs from
    this one by up to about two codes there.

    Errors: none of its own (the flat form ignores its output-size check; Hexscope's
    executor still fails an output smaller than the input).
"""


@op("QuantizedTanh_8", Category.ACTIVATION, reference=tanh_reference, inputs=_IN,
    outputs=_OUT)
@shared_doc(_DOC)
def quantized_tanh_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                     x_max: Tensor) -> tuple[np.ndarray, ...]:
    """tanh of every value; fixed output range [-1, 128/127] (zero at code 127).

    Semantics (nnlib op_tanh_d32.c ``tanh_d32_execute``, flat mode): z = round(-255 min /
    (max - min)); g = flt_div_255(max - min) * 10240 becomes a 16-bit gain k and a shift r
    (k >= 16384 where the range allows); x = sat16((k |q - z| + round) >> r) is |v| with 13
    fractional bits, scaled by 1.25; a quadratic on x's 4-bit segment (11-bit residue) gives
    |tanh| * 254 * 128, negated (ones' complement) below z; y = sat_u8(((t + 254*128 + 1)
    >> 1 + 64) >> 7). The output range is always [-1, 128/127].
    """
    table = tanh_table(scalar_f(x_min), scalar_f(x_max), False)
    return fresh(np.take(table, x.array)), np.full((1, 1, 1, 1), -1.0, f32), \
        np.full((1, 1, 1, 1), TANH_MAX, f32)


@op("QuantizedSigmoid_8", Category.ACTIVATION, reference=sigmoid_reference, inputs=_IN,
    outputs=_OUT)
@shared_doc(_DOC)
def quantized_sigmoid_8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                        x_max: Tensor) -> tuple[np.ndarray, ...]:
    """Logistic sigmoid of every value; fixed output range [0, 1].

    Semantics (nnlib op_tanh_d32.c, flat mode): sigmoid(v) = (1 + tanh(v / 2)) / 2: as
    QuantizedTanh_8 with half the gain, the sigmoid segment table (scaled to 255 * 128) and
    the midrange 255 * 128; the output range is always [0, 1].
    """
    table = tanh_table(scalar_f(x_min), scalar_f(x_max), True)
    return fresh(np.take(table, x.array)), np.zeros((1, 1, 1, 1), f32), \
        np.ones((1, 1, 1, 1), f32)


# --- the d32 forms (prepare converts the flat ops into them after a Convert_from_d32) ------

_D32 = {"dtype": DType.QUINT8, "layout": Layout.D32}
_IN_D32 = (Port("x", **_D32), Port("x_min", DType.FLOAT32), Port("x_max", DType.FLOAT32))
_OUT_D32 = (Port("y", **_D32), Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32))


def _d32_run(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
             sigmoid: bool) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """``tanh_d32_execute`` in d32 mode: the output keeps x's height, width and depth-before
    padding; its depth-after padding fills x's slices that hold data."""
    table = tanh_table(scalar_f(x_min), scalar_f(x_max), sigmoid)
    p = x.padding
    nd32 = (p.d_before + x.shape[3] + 31) // 32
    pad = D32Padding(p.h_before, p.h_after, p.w_before, p.w_after, p.d_before,
                     nd32 * 32 - p.d_before - x.shape[3])
    y = d32_output(ctx, np.take(table, x.array), pad, "out too small", widened=True)
    lo, hi = (0.0, 1.0) if sigmoid else (-1.0, float(TANH_MAX))
    return y, np.full((1, 1, 1, 1), lo, f32), np.full((1, 1, 1, 1), hi, f32)


_D32_DOC = """
    Fidelity: the logical values are exact with nnlib's plain-C ``_d32_ref`` op (the oracle
    runs it); the device's HVX kernel looks the same table up. The output's padding is not
    simulated (filled with the padding fill): the C reference leaves it unwritten and the
    HVX kernel writes the table's value of the input's padding bytes in the depth lanes of
    the columns it processes.

    Errors: "out too small" (the output, with its padding, does not fit the declared size).
"""


@op("QuantizedTanh_8_d32", Category.D32, reference=tanh_reference, inputs=_IN_D32,
    outputs=_OUT_D32, d32_output=True)
@shared_doc(_D32_DOC)
def quantized_tanh_8_d32(ctx: KernelContext, x: Tensor, x_min: Tensor,
                         x_max: Tensor) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """tanh of a d32 tensor; range [-1, 128/127] (the flat op's table, op_tanh_d32.c).

    Semantics: as QuantizedTanh_8, on a d32 input; the output keeps the input's height,
    width and depth-before padding, with depth-after padding up to the last slice that holds
    data (``tensor_out_prepare_padded_d32`` in ``tanh_d32_execute``).
    """
    return _d32_run(ctx, x, x_min, x_max, False)


@op("QuantizedSigmoid_8_d32", Category.D32, reference=sigmoid_reference, inputs=_IN_D32,
    outputs=_OUT_D32, d32_output=True)
@shared_doc(_D32_DOC)
def quantized_sigmoid_8_d32(ctx: KernelContext, x: Tensor, x_min: Tensor,
                            x_max: Tensor) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """Sigmoid of a d32 tensor; range [0, 1] (the flat op's table, op_tanh_d32.c).

    Semantics: as QuantizedSigmoid_8, on a d32 input, with the padding of
    QuantizedTanh_8_d32.
    """
    return _d32_run(ctx, x, x_min, x_max, True)
