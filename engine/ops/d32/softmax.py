"""QuantizedSoftmax_8_d32 (and its ``_ref``): softmax over the depth of a d32 tensor in
nnlib's fixed point (``op_softmax_d32.c``: ``set_scaling_parms``, ``softmax_d32_execute``,
``softmax_operate_ref_function``, ``ref_powm2_op``)."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import D32Geometry
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import getexp, rndi1
from hexscope.engine.ops.context import (
    KernelContext,
    f32_scalar,
    output_fits,
    require_d32,
    scalar_f,
)
from hexscope.engine.ops.normalize.softmax import softmax_reference
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

f32 = np.float32
I64 = np.int64
#: pow2(-x) on [0, 1) in 16 sections of a 2nd-order polynomial, 15 fractional bits: the
#: coefficients c0, c1, c2 per section, the pow2 half of nnlib's ``lut_Log2_and_Pow2``
#: (hexagon/src/hvx_constants.c, rows 3-5, even entries): device constants, not derivable
_C0 = np.array([32767, 31379, 30048, 28774, 27554, 26386, 25268, 24196,
                23170, 22188, 21247, 20347, 19484, 18658, 17867, 17109], I64)
_C1 = np.array([-22709, -21746, -20824, -19941, -19096, -18286, -17511, -16769,
                -16058, -15377, -14725, -14101, -13503, -12930, -12382, -11857], I64)
_C2 = np.array([7703, 7377, 7064, 6765, 6478, 6203, 5940, 5688,
                5447, 5216, 4995, 4783, 4580, 4386, 4200, 4022], I64)
#: 1 / (255 ln 2) as the C writes it: a double constant rounded to float
_INV_255_LN2 = f32(1.0 / (255.0 * 0.69314718055994))


def _sat16(v: np.ndarray) -> np.ndarray:
    return np.clip(v, -32768, 32767)


def _mpy_rnd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``vmpyh:<<1:rnd:sat`` on one halfword: sat16(((a b) << 1 + 0x8000) >> 16)."""
    return _sat16(((a * b) * 2 + 0x8000) >> 16)


def powm2(frac: np.ndarray) -> np.ndarray:
    """``ref_powm2_op``: pow2(-frac / 2**15) with 15 fractional bits (0x7FFF .. 0x4000)."""
    section = (frac >> 11) & 0x0F
    x = frac & 0x7FF
    k = _sat16(_C1[section] + _mpy_rnd(x, _C2[section]))
    return _sat16(_C0[section] + _mpy_rnd(x, k))


def scaling_parms(mn: float, mx: float, beta: float, depth: int) -> tuple[int, int, int]:
    """``set_scaling_parms``: (betamul, beta_rsh, accshift), or KernelError as nnlib fails."""
    with np.errstate(all="ignore"):
        scalep2 = f32(f32(f32(f32(mx) - f32(mn)) * f32(beta)) * _INV_255_LN2)
    rsh = min(31, 7 - getexp(scalep2))
    if rsh < 0:
        raise KernelError(f"softmax_32: range = {mn:f} ... {mx:f}, beta = {beta:f}: beta too "
                          "large")
    with np.errstate(all="ignore"):
        betamul = min(max(rndi1(f32(scalep2 * f32(2.0 ** (rsh + 8)))), -32768), 32767)
    accshift = max(2, (depth - 1).bit_length()) if depth > 0 else 32
    if accshift > 16:
        raise KernelError(f"softmax_32: range = {mn:f} ... {mx:f}, beta = {beta:f}: beta too "
                          f"large (depth {depth} > 65536)")
    return betamul, rsh, accshift


def softmax_fixed(codes: np.ndarray, betamul: int, rsh: int, accshift: int,
                  real: int | None = None) -> np.ndarray:
    """``softmax_operate_ref_function`` over the last axis of ``codes`` (any shape). With
    ``real``, only the first ``real`` lanes give the maximum and the sum, and the others are
    computed against them (the HVX function on the depth padding lanes of its last slice; a
    padding code above the maximum shifts by 0)."""
    x = codes.astype(I64)
    top = x[..., :real].max(axis=-1, keepdims=True, initial=0)
    xs = ((top - x) * 256 * betamul) >> rsh
    shift = (xs >> 16) + accshift
    if (shift[..., :real] < 0).any():
        raise KernelError("softmax_d32: a negative beta * range gives a negative shift "
                          "(undefined in nnlib's C)")
    shift = np.maximum(shift, 0)
    live = shift <= 31
    m = np.where(live, (powm2((xs & 0xFFFF) >> 1) << 16) >> np.minimum(shift, 31), 0)
    total = m[..., :real].sum(axis=-1, keepdims=True)
    if (total >= 2**31).any():
        # only a negative beta makes the shifts smaller than accshift: the C's int sum
        # overflows (and its reciprocal then divides by zero, SIGFPE on the host)
        raise KernelError("softmax_d32: the sum of the pow2 terms overflows int32 (a negative "
                          "beta; undefined in nnlib's C)")
    kept = np.where(live, _sat16((((m * 2) >> (16 - accshift)) + 1) >> 1), 0)
    nx = 32 - np.frexp(total.astype(np.float64))[1]             # count leading zeros, msum > 0
    norm = ((total << (nx - 1)) & 0xFFFFFFFF) >> 16
    recip = ((255 << 21) + (norm >> 1)) // norm
    out_shift = np.minimum(31, 22 + accshift - nx)
    y = (kept * recip + ((1 << out_shift) >> 1)) >> out_shift
    return np.clip(y, 0, 255).astype(np.uint8)


def softmax_d32_memory(ctx: KernelContext, x: Tensor, parms: tuple[int, int, int],
                       hvx: bool = False) -> Tensor:
    """The output as ``softmax_d32_execute`` leaves it: the input's padding; every real row,
    over the width vectors that cover the data (the width padding inside them is computed
    from the input's padding bytes), the depth positions of the data; the rest unwritten.
    ``hvx`` (no depth-before padding, ``softmax_operate_hvx_function``): the depth padding
    lanes of the last data slice are written too, from the input's bytes there, against
    the maximum and sum of the real lanes."""
    b, h, w, d = x.shape
    p = x.padding
    start = p.w_before & ~3
    width = ((p.w_before & 3) + w + 3) & ~3
    padded = x.padded_array()
    y = np.full(padded.shape, ctx.padding_fill, np.uint8)
    rows, cols = slice(p.h_before, p.h_before + h), slice(start, start + width)
    if hvx:
        depth = slice(0, (d + 31) & ~31)
        y[:, rows, cols, depth] = softmax_fixed(padded[:, rows, cols, depth], *parms, real=d)
    else:
        depth = slice(p.d_before, p.d_before + d)
        y[:, rows, cols, depth] = softmax_fixed(padded[:, rows, cols, depth], *parms)
    g = D32Geometry(x.shape, p)
    mem = y.reshape(b, g.h_total, g.w_total, g.n_slices, 32).transpose(0, 1, 3, 2, 4)
    return Tensor(x.shape, DType.QUINT8, np.ascontiguousarray(mem).reshape(-1), Layout.D32, p)


_PORTS = dict(
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32), Port("beta", DType.FLOAT32, optional=True)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", DType.FLOAT32),
             Port("y_max", DType.FLOAT32)))


def _run(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
         beta: tuple[Tensor, ...], hvx: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    require_d32(x)
    b = scalar_f(beta[0]) if beta else 1.0
    parms = scaling_parms(scalar_f(x_min), scalar_f(x_max), b, x.shape[3])
    output_fits(ctx, 0, x.geometry.elements, f"{x.shape} with d32 padding {tuple(x.padding)}",
                d32_output=True, reason="out too small")
    hvx = hvx and x.padding.d_before == 0
    return softmax_d32_memory(ctx, x, parms, hvx), f32_scalar(0.0), f32_scalar(1.0)


@op("QuantizedSoftmax_8_d32", Category.D32, reference=softmax_reference, d32_output=True,
    **_PORTS)
def quantized_softmax_8_d32(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                            *beta: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Softmax over the depth of a d32 quint8 tensor in fixed point; range [0, 1]
    (QuantizedSoftmax_8's d32 form, which nnlib's prepare substitutes).

    Semantics (``op_softmax_d32.c``): s = (max - min) beta / (255 ln 2) in float32 becomes a
    15-bit betamul and shift r (``set_scaling_parms``: r = min(31, 7 - exponent of s),
    betamul = sat16(round(s 2**(r+8)))), and accshift = max(2, ceil(log2 depth)). Per pixel
    with m = its largest code: xs = ((m - q) 256 betamul) >> r; with e = (xs >> 16) +
    accshift, t = (pow2(-frac) << 16) >> e (0 when e > 31), pow2 a 16-section quadratic on
    the 16-bit fraction (``ref_powm2_op``); the t are summed, each kept as
    sat16((((2 t) >> (16 - accshift)) + 1) >> 1); with n the leading zeros of the sum,
    recip = ((255 << 21) + norm/2) / norm for the sum's top 15 bits norm, and
    y = sat_u8((kept recip + round) >> min(31, 22 + accshift - n)). The output keeps the
    input's padding.

    Fidelity: byte-exact with nnlib's plain C ``softmax_operate_ref_function``, run in the
    x86 oracle with every byte of the output buffer compared (tests/oracle,
    campaigns_d32ops26: 253 of 264 cases, the other 11 a negative beta, below; golden file
    ``QuantizedSoftmax_8_d32.json.gz``): that C is what the device runs for an input with
    depth-before padding. With none it runs ``softmax_operate_hvx_function``, checked
    against nnlib's HVX code under QEMU 7.2's Hexagon v66 emulation (tests/oracle/hvx, QEMU
    is an emulator, not a device; docs/oracle-hvx.md): 272 of 300 cases byte-exact, padding
    included. Of the other 28, 3 are one code apart in one value (the HVX pow2 and
    reciprocal, which nnlib says the C is no longer bit-exact with, "close, though") and 25
    have a negative beta or a reversed range, where the HVX shifts are defined and give a
    result but Hexscope fails the node (below). Against QuantizedSoftmax_8
    (``qsoftmax_execute_ref``'s float32): at most 1 code apart, 46 of 116,926 values on 400
    random tensors (equal codes give 127 here, 128 flat). The padding: the width padding
    inside the row vectors gets the softmax of the input's padding bytes (every pixel of
    those vectors runs); on the HVX path the depth padding lanes of the last data slice get
    their input bytes' values against the pixel's real maximum and sum, where the C leaves
    them unwritten; the height padding and the other width units are never written (fill
    byte).

    Errors, as nnlib raises them: "softmax_32: range = ... beta too large" (the scaled beta
    at or above 256, or a depth above 65536); "out too small". A negative beta makes the C
    shift by a negative count or overflow its int sum (undefined behaviour: x86 masks the
    count, the DSP's register shifts reverse direction): Hexscope fails the node.
    """
    return _run(ctx, x, x_min, x_max, beta, hvx=True)


@op("QuantizedSoftmax_8_d32_ref", Category.D32, reference=softmax_reference, d32_output=True,
    **_PORTS)
def quantized_softmax_8_d32_ref(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                                *beta: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """QuantizedSoftmax_8_d32 on nnlib's plain-C path (always ``softmax_operate_ref_function``).

    Semantics: as QuantizedSoftmax_8_d32 (the same execute function with the C path).

    Fidelity: byte-exact with nnlib's C in the oracle, every byte of the output buffer
    compared: 372 of 384 cases, the other 12 a negative beta (see QuantizedSoftmax_8_d32);
    golden file ``QuantizedSoftmax_8_d32_ref.json.gz``.

    Errors: as QuantizedSoftmax_8_d32.
    """
    return _run(ctx, x, x_min, x_max, beta)
