"""QuantizedSoftmax_8_d32 (and its ``_ref``): softmax over the depth of a d32 tensor in
nnlib's fixed point (``op_softmax_d32.c``: ``set_scaling_parms``, ``softmax_d32_execute``,
``softmax_operate_ref_function``, ``ref_powm2_op``; the HVX function's arithmetic is
``engine/ops/kernels/softmax_hvx.py``)."""

from __future__ import annotations

import functools

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
from hexscope.engine.ops.kernels.hexagon_int import asl, asr, lsl, sat16, wrap32
from hexscope.engine.ops.kernels.softmax_hvx import by_distance, distances, softmax_hvx
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


def _mpy_rnd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``vmpyh:<<1:rnd:sat`` on one halfword: sat16(((a b) << 1 + 0x8000) >> 16)."""
    return sat16(((a * b) * 2 + 0x8000) >> 16)


def powm2(frac: np.ndarray) -> np.ndarray:
    """``ref_powm2_op``: pow2(-frac / 2**15) with 15 fractional bits (0x7FFF .. 0x4000)."""
    section = (frac >> 11) & 0x0F
    x = frac & 0x7FF
    k = sat16(_C1[section] + _mpy_rnd(x, _C2[section]))
    return sat16(_C0[section] + _mpy_rnd(x, k))


def scaling_parms(mn: float, mx: float, beta: float, depth: int,
                  who: str = "softmax_32") -> tuple[int, int, int]:
    """``set_scaling_parms``: (betamul, beta_rsh, accshift), or KernelError as nnlib fails
    (``who`` starts the message: the d32 op says "softmax_32", the flat one "softmax_8")."""
    with np.errstate(all="ignore"):
        scalep2 = f32(f32(f32(f32(mx) - f32(mn)) * f32(beta)) * _INV_255_LN2)
    rsh = min(31, 7 - getexp(scalep2))
    if rsh < 0:
        raise KernelError(f"{who}: range = {mn:f} ... {mx:f}, beta = {beta:f}: beta too "
                          "large")
    with np.errstate(all="ignore"):
        betamul = min(max(rndi1(f32(scalep2 * f32(2.0 ** (rsh + 8)))), -32768), 32767)
    accshift = max(2, (depth - 1).bit_length()) if depth > 0 else 32
    if accshift > 16:
        raise KernelError(f"{who}: range = {mn:f} ... {mx:f}, beta = {beta:f}: beta too "
                          f"large (depth {depth} > 65536)")
    return betamul, rsh, accshift


@functools.lru_cache(maxsize=256)
def _terms(betamul: int, rsh: int, accshift: int) -> tuple[np.ndarray, np.ndarray]:
    """Per distance 0..255 below the maximum: the term summed and the 16-bit term kept."""
    d = np.arange(256, dtype=I64)
    xs = asr(wrap32(d * 256 * betamul), rsh)
    shift = (xs >> 16) + accshift
    live = shift <= 31
    m = np.where(live, asr(powm2((xs & 0xFFFF) >> 1) << 16, shift), 0)
    kept = np.where(live, sat16(asr(wrap32(1 + asr(wrap32(m * 2), 16 - accshift)), 1)), 0)
    m.flags.writeable = kept.flags.writeable = False
    return m, kept


def softmax_fixed(codes: np.ndarray, betamul: int, rsh: int, accshift: int) -> np.ndarray:
    """``softmax_operate_ref_function`` over the last axis of ``codes`` (any shape), as its
    Hexagon build computes it. Where beta * range is negative the C shifts by negative
    counts and overflows ints (undefined): clang lowers those shifts to Hexagon's register
    shifts (``asr``/``asl``/``lsl(Rs, Rt)``, seen in the oracle build's disassembly), which
    shift the other way for a negative count, and the sums wrap; that is computed here.
    As in the HVX form, the terms are computed per distance below the row's maximum."""
    m, kept = _terms(betamul, rsh, accshift)
    dist = distances(codes, codes.shape[-1])
    total = wrap32(m[dist].sum(axis=-1, keepdims=True))
    nx = 32 - np.frexp((total & 0xFFFFFFFF).astype(np.float64))[1]    # cl0 of the word
    norm = (asl(total, nx - 1) & 0xFFFFFFFF) >> 16
    if (norm == 0).any():
        # only a sum that wrapped to 0: the C divides by zero (the DSP's division helper)
        raise KernelError("softmax_d32: the sum of the pow2 terms wraps to 0 (a negative "
                          "beta; nnlib's C then divides by zero)")
    recip = wrap32(((255 << 21) | (norm >> 1)) // np.maximum(norm, 1))
    out_shift = np.minimum(31, 22 + accshift - nx)
    bias = asr(lsl(1, out_shift), 1)
    return by_distance(dist, kept, lambda k: np.clip(asr(wrap32(k * recip + bias), out_shift),
                                                     0, 255).astype(np.uint8))


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
        y[:, rows, cols, depth] = softmax_hvx(padded[:, rows, cols, depth], d, *parms)
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
    with m = its largest code: xs = ((m - q) 256 betamul) >> r, split into an exponent
    xs >> 16 and a 16-bit fraction; t = pow2(-fraction) shifted right by accshift +
    exponent; the t are summed, each also kept as a rounded 16-bit value; the sum's top 16
    bits give a reciprocal scaled to 255, and y = sat_u8(kept recip >> shift). With no
    depth-before padding the device runs the HVX function (``softmax_operate_hvx_function``),
    modelled lane by lane in ``engine/ops/kernels/softmax_hvx.py``: pow2 is
    ``pow2_v65_poly`` (a 4-segment quadratic, ``vlut4``/``vmpa``), the reciprocal is
    ``hvx_recip16_inline(sum, 10)`` (4-segment quadratic and one Newton step) times
    255/256, the final shift is split into a per-pixel ``vasr``, >> 12 with saturation to
    16 bits and a rounding >> 6 to u8. Otherwise it runs the plain C
    ``softmax_operate_ref_function`` (a 16-section pow2, ``ref_powm2_op``, and an integer
    division for the reciprocal), as QuantizedSoftmax_8_d32_ref always does. The output
    keeps the input's padding.

    Fidelity: checked against nnlib's own op built for Hexagon v66 with its HVX intrinsics,
    under QEMU 7.2's emulation (tests/oracle/hvx; QEMU is an emulator, not a device;
    docs/oracle-hvx.md): 348 of 348 cases byte-exact, padding included (300 random, of
    which 1 in 4 has depth-before padding and runs the C path, and 48 edge cases: beta 0,
    negative betas, reversed ranges, depths 1, 31, 32, 33, 1001 and 2050, equal codes, one
    hot code, ranges that miss zero, an infinite range, betas at nnlib's limit; golden file
    ``QuantizedSoftmax_8_d32.hvx.json.gz``). The HVX and C paths differ by at most 1 code
    for a positive beta (nnlib: the C is "close" to the HVX, op_softmax_d32.c:363).
    A negative beta, or a reversed range (min > max): on the HVX path every shift is a
    vector shift, defined for any count (``vasr(Vu.w, Vv.w)`` takes the low 6 bits of the
    exponent as a signed count and shifts left for a negative one, op_softmax_d32.c:873-
    882; betamul enters ``vmpy(Vu.uh, Rt.uh)`` as an unsigned halfword, :819-820; the
    word sums wrap): Hexscope computes that result. On the C path the shifts by a negative
    count (``(mant << 16) >> rshn``, :426; ``msum << (nx - 1)``, :445) and the int
    overflows are undefined in C; Hexscope computes what the Hexagon build does (clang
    lowers them to ``asr``/``asl``/``lsl(Rs, Rt)``, which read a signed 7-bit count and
    shift the other way for a negative one, ``engine/ops/kernels/hexagon_int.py``), which
    matches QEMU in every case; nnlib's x86 build masks the counts instead and differs in 7
    negative-beta cases of the x86 golden file ``QuantizedSoftmax_8_d32.json.gz`` (its
    other cases are byte-exact). On the HVX path each pixel's bytes equal the flat
    QuantizedSoftmax_8's (the same HVX arithmetic, test_softmax_flat); against
    QuantizedSoftmax_8_ref (``qsoftmax_execute_ref``'s float32) with a positive beta:
    within 1 code (test_softmax_d32). The padding: the
    width padding inside the row vectors gets the softmax of the input's padding bytes
    (every pixel of those vectors runs); on the HVX path the depth padding lanes of the
    last data slice get their input bytes' values against the pixel's real maximum and
    sum, where the C leaves them unwritten; the height padding and the other width units
    are never written (fill byte).

    Errors, as nnlib raises them: "softmax_32: range = ... beta too large" (|s| at or above
    128, so that r would be negative, including an infinite range; or a depth above
    65536); "out too small". On the C path, a sum that wraps to exactly 0 (possible only
    with a negative beta) makes nnlib divide by zero: Hexscope fails the node.
    """
    return _run(ctx, x, x_min, x_max, beta, hvx=True)


@op("QuantizedSoftmax_8_d32_ref", Category.D32, reference=softmax_reference, d32_output=True,
    **_PORTS)
def quantized_softmax_8_d32_ref(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                                *beta: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """QuantizedSoftmax_8_d32 on nnlib's plain-C path (always ``softmax_operate_ref_function``).

    Semantics: as QuantizedSoftmax_8_d32 (the same execute function with the C path).

    Fidelity: byte-exact with nnlib's Hexagon build under QEMU (tests/oracle/hvx): 348 of
    348 cases, every byte of the output buffer compared (golden file
    ``QuantizedSoftmax_8_d32_ref.hvx.json.gz``), negative betas included (see
    QuantizedSoftmax_8_d32); with nnlib's x86 build, all but 7 negative-beta cases, where
    x86 masks the shift counts (golden file ``QuantizedSoftmax_8_d32_ref.json.gz``).

    Errors: as QuantizedSoftmax_8_d32.
    """
    return _run(ctx, x, x_min, x_max, beta)
