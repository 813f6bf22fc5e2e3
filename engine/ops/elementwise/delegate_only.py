"""Three ops the TFLite Hexagon delegate emits that XiaoMi/nnlib 2.x does not define:
Quantized_CastInt8ToUInt8, Quantized_CastUInt8ToInt8 (``builders/cast_builder.cc``) and
QuantizedHardSwish_8 (``builders/hardswish_builder.cc``).

They have no op id in nnlib 2.x's table, so they are declared like user ops (marked as such in
the palette, with where they come from), and their meaning is defined here from the
delegate's use; no C source exists to compare them with.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.hexmath import quantize_uint8
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_F32 = DType.FLOAT32
_SOURCE = "the TFLite Hexagon delegate (not in nnlib 2.x)"
_RANGE = (Port("x_min", _F32), Port("x_max", _F32))
_RANGE_OUT = (Port("y_min", _F32), Port("y_max", _F32))


def _range_copy(x_min: Tensor, x_max: Tensor) -> tuple[Tensor, Tensor]:
    return _copied(x_min), _copied(x_max)


def _copied(t: Tensor) -> Tensor:
    """A float32 copy of a range input's values (a single float32 word: its bytes)."""
    if t.dtype is _F32 and t.shape == (1, 1, 1, 1) and t.layout is Layout.FLAT and t.has_data:
        return Tensor.scalar_of(t.raw[:4].view(np.float32))
    return Tensor.from_array(fresh(np.array(t.array, np.float32)), _F32)


def _int8_reals(codes: np.ndarray, x_min: Tensor, x_max: Tensor) -> np.ndarray:
    """int8 codes as reals: code c stands for min + (c + 128) (max - min) / 255."""
    lo, hi = scalar_f(x_min), scalar_f(x_max)
    return lo + (codes.astype(np.float64) + 128.0) * ((hi - lo) / 255.0)


def _cast_reference(ctx: KernelContext, x: Tensor, x_min: Tensor,
                    x_max: Tensor) -> tuple[np.ndarray, ...]:
    """the values themselves: the cast changes the codes, not what they stand for."""
    if x.dtype is DType.QINT8:
        y = _int8_reals(x.array, x_min, x_max)
    else:
        y = real(x, x_min, x_max)
    return ranged(y)[0], np.float32(scalar_f(x_min)), np.float32(scalar_f(x_max))


@op("Quantized_CastInt8ToUInt8", Category.QUANTIZE, user=True, source=_SOURCE,
    reference=_cast_reference,
    inputs=(Port("x", DType.QINT8), *_RANGE), outputs=(Port("y", DType.QUINT8), *_RANGE_OUT))
def quantized_cast_int8_to_uint8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                                 x_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Recode int8 data as uint8 over the same range (not in nnlib 2.x; the delegate's input cast).

    Semantics (defined from the delegate's use, ``cast_builder.cc``): the delegate casts an
    int8 TFLite tensor in place, passing the tensor's own range (min = scale * (-128 - zp),
    max = scale * (127 - zp)) as inputs 1 and 2; the same range describes the uint8 codes
    with zero point zp + 128. So each code c becomes c + 128 (the sign bit flipped) and the
    output range is the input range, copied.

    Fidelity: not in nnlib 2.x (no C to compare with; Qualcomm's hexagon_nn build that the
    delegate links has the op). The definition is the only one under which the delegate's
    range inputs describe both tensors; tested on hand-computed vectors.

    Errors: none beyond arity and types.
    """
    return (Tensor.from_array(fresh(_sign_flipped(x.array, 128, np.uint8)), DType.QUINT8),
            *_range_copy(x_min, x_max))


@op("Quantized_CastUInt8ToInt8", Category.QUANTIZE, user=True, source=_SOURCE,
    reference=_cast_reference,
    inputs=(Port("x", DType.QUINT8), *_RANGE), outputs=(Port("y", DType.QINT8), *_RANGE_OUT))
def quantized_cast_uint8_to_int8(ctx: KernelContext, x: Tensor, x_min: Tensor,
                                 x_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Recode uint8 data as int8 over the same range (not in nnlib 2.x; the delegate's output cast).

    Semantics (defined from the delegate's use, ``cast_builder.cc``): the inverse of
    Quantized_CastInt8ToUInt8: each code c becomes c - 128 (the sign bit flipped); the output
    range is the input range, copied.

    Fidelity: not in nnlib 2.x (no C to compare with); tested on hand-computed vectors.

    Errors: none beyond arity and types.
    """
    return (Tensor.from_array(fresh(_sign_flipped(x.array, -128, np.int8)), DType.QINT8),
            *_range_copy(x_min, x_max))


def _sign_flipped(codes: np.ndarray, shift: int, dtype: type) -> np.ndarray:
    """``codes + shift`` wrapped to ``dtype``'s byte: for byte codes the top bit flipped, in
    one pass (the int16 sum and its narrowing took three on a 224x224x3 input)."""
    if codes.dtype.itemsize == 1 and codes.dtype.kind in "iu":
        return np.bitwise_xor(codes.view(np.uint8), np.uint8(0x80)).view(dtype)
    return (codes.astype(np.int16) + shift).astype(dtype)


# QuantizedHardSwish_8 -----------------------------------------------------------------------

def hardswish_table(x_min: float, x_max: float, out_min: float, out_max: float) -> np.ndarray:
    """The output code of each of the 256 input codes (see QuantizedHardSwish_8)."""
    lo, hi = f32(x_min), f32(x_max)
    zx = quantize_uint8(0.0, lo, hi)
    with np.errstate(all="ignore"):
        step = f32(f32(hi - lo) / f32(255.0))
        v = (np.arange(256, dtype=np.float32) - f32(zx)) * step
        hs = v * np.clip(v + f32(3.0), f32(0.0), f32(6.0)) / f32(6.0)
        k = f32(f32(255.0) / max(f32(1e-18), f32(f32(out_max) - f32(out_min))))
        scaled = (hs - f32(out_min)) * k
        r = np.sign(scaled) * np.floor(np.abs(scaled.astype(np.float64)) + 0.5)
    return np.clip(np.nan_to_num(r, nan=0.0), 0, 255).astype(np.uint8)


def _hardswish_reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                         out_min: Tensor, out_max: Tensor) -> tuple[np.ndarray, ...]:
    """x * relu6(x + 3) / 6 of the dequantized input, clamped to the output range."""
    v = real(x, x_min, x_max).astype(np.float64)
    y = np.clip(v * np.clip(v + 3.0, 0.0, 6.0) / 6.0, scalar_f(out_min), scalar_f(out_max))
    return ranged(y)[0], np.float32(scalar_f(out_min)), np.float32(scalar_f(out_max))


@op("QuantizedHardSwish_8", Category.ACTIVATION, user=True, source=_SOURCE,
    reference=_hardswish_reference,
    inputs=(Port("x", DType.QUINT8), *_RANGE, Port("out_min", _F32), Port("out_max", _F32)),
    outputs=(Port("y", DType.QUINT8), *_RANGE_OUT))
def quantized_hardswish_8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                          out_min: Tensor, out_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Hard swish, x * relu6(x + 3) / 6, of quint8 data into a given range (not in nnlib 2.x).

    Semantics (defined from the delegate's use, ``hardswish_builder.cc``: inputs x, its
    range, then the TFLite output tensor's range; outputs data and range): each code is
    dequantized with nnlib's conventions (zero code z = ``quantize_uint8(0)``, step
    f32((max - min) / 255), v = (c - z) * step), hs = v * clamp(v + 3, 0, 6) / 6 in float32,
    then quantized into [out_min, out_max] as ``quantize_uint8`` does (round half away from
    zero of f32((hs - out_min) * f32(255 / (out_max - out_min))), saturated). The output
    range is the given one, copied. A 256-entry table per range, applied to every element.

    Fidelity: not in nnlib 2.x: the device's arithmetic (Qualcomm's hexagon_nn build) is not
    public, so codes may differ from the device by a rounding step; tested on hand-computed
    vectors only.

    Errors: none beyond arity and types.
    """
    table = hardswish_table(scalar_f(x_min), scalar_f(x_max), scalar_f(out_min),
                            scalar_f(out_max))
    y = table[x.array]
    return (Tensor.from_array(fresh(y), DType.QUINT8), *_range_copy(out_min, out_max))
