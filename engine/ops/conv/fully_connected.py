"""The TFLite Hexagon delegate's FULLY_CONNECTED chain: QuantizedMatMul_8x8to32 (in
:mod:`matmul`) -> QuantizedBiasAdd_32p32to32 -> Requantize_32to8, and SuperFC_8x8p32to8, the
op nnlib's prepare fuses the chain into (``op_biasadd.c``, ``op_superfc_d32.c``).

The fusion itself is a prepare pass (:mod:`hexscope.engine.prepare.superfc`).
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import adjust_with_constraints, div255, level_size_zero, wrap_i32
from hexscope.engine.ops.context import KernelContext, data_of, f32_scalar, scalar_f
from hexscope.engine.ops.conv.conv2d import RANGE_OUT, qint32_tensor, range_ports
from hexscope.engine.ops.kernels import gemm
from hexscope.engine.ops.kernels.gemm import Rhs, offset_gemm
from hexscope.engine.ops.reference import ZeroCode, ranged, real, zero_zb
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_U8, _I32, _F32 = DType.QUINT8, DType.QINT32, DType.FLOAT32


def round_even_i32(x: np.ndarray | float) -> np.ndarray:
    """``fast_roundf`` on Hexagon (``convert_sf2w``): round half to even, saturate to int32,
    NaN -> -1 (the project's reading of the conversion, quantized-ops spec §1.6)."""
    a = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        r = np.rint(np.clip(np.nan_to_num(a, nan=-1.0), -2.0**31, 2.0**31 - 1))
    return r.astype(np.int64)


# QuantizedBiasAdd_32p32to32 -------------------------------------------------------------------

def _bias_add_32_reference(ctx: KernelContext, x: Tensor, bias: Tensor, x_min: Tensor,
                           x_max: Tensor, b_min: Tensor, b_max: Tensor
                           ) -> tuple[np.ndarray, ...]:
    """x + bias along the depth, both dequantized (qint32)."""
    return ranged(real(x, x_min, x_max) + real(bias, b_min, b_max).reshape(-1))


def quantized_biasadd_32p32to32(ctx: KernelContext, x: Tensor, bias: Tensor, x_min: Tensor,
                                x_max: Tensor, b_min: Tensor, b_max: Tensor
                                ) -> tuple[Tensor, Tensor, Tensor]:
    """Add a qint32 bias [1,1,1,D] to qint32 x [B,H,W,D] in x's range.

    Semantics (op_biasadd.c ``biasadd_32p32to32_execute``): the steps are
    f32((max - min) / 2^32) for x and for the bias; each bias code is rescaled once to x's
    step, r = fast_roundf(f32(f32(b) * f32(bias_step / x_step))) (round half to even,
    saturating), and added to every element with 32-bit wrap-around (``vaddw``). The output
    range is x's range, copied.

    Fidelity: byte-exact with the C (one code path; the ``_ref`` name runs the same
    function). A zero x range makes the ratio inf/NaN: the conversion saturates (NaN -> -1,
    unconfirmed on hardware).

    Errors (KernelError): bias height, batches or width != 1 ('bias shape'); bias depth !=
    x depth ('depth mismatch').
    """
    d = x.shape[3]
    if tuple(bias.shape[:3]) != (1, 1, 1):
        raise KernelError(f"bias must have shape [1,1,1,D], got {list(bias.shape)} "
                          "(device: 'bias shape')")
    if bias.shape[3] != d:
        raise KernelError(f"bias depth {bias.shape[3]} differs from input depth {d} "
                          f"(device: 'depth mismatch {bias.shape[3]} vs {d}')")
    with np.errstate(all="ignore"):
        x_step = f32(f32(f32(scalar_f(x_max)) - f32(scalar_f(x_min))) / f32(2.0**32))
        b_step = f32(f32(f32(scalar_f(b_max)) - f32(scalar_f(b_min))) / f32(2.0**32))
        ratio = f32(b_step / x_step)
        scaled = data_of(bias, "bias").reshape(d).astype(f32) * ratio
    rescaled = round_even_i32(scaled)
    codes = data_of(x, "input x").reshape(-1, d) if d else np.zeros((0, 0), np.int32)
    out = wrap_i32(codes.astype(np.int64) + rescaled)
    return (qint32_tensor(x.shape, out.astype(np.int32)), f32_scalar(scalar_f(x_min)),
            f32_scalar(scalar_f(x_max)))


_BIAS32_IN = (Port("x", _I32), Port("bias", _I32),
              *range_ports("x_min", "x_max", "b_min", "b_max"))
for _name in ("QuantizedBiasAdd_32p32to32", "QuantizedBiasAdd_32p32to32_ref"):
    op(_name, Category.MATH, reference=_bias_add_32_reference, inputs=_BIAS32_IN,
       outputs=RANGE_OUT)(quantized_biasadd_32p32to32)


# SuperFC_8x8p32to8 ---------------------------------------------------------------------------

def _superfc_sums(ctx: KernelContext, x: Tensor, filt: Tensor, zx: int, zf: int,
                  biasbuf: np.ndarray) -> np.ndarray:
    """int32 sums (bin, dout): bias + sum_k (x - zx)(f - zf), wrapping as the C's int32."""
    fh, fw, fd, dout = filt.shape
    din = fh * fw * fd
    codes = data_of(x, "input").reshape(-1)
    if din == 0:
        raise KernelError("the weights have no input depth: the device divides by it")
    if codes.size % din:
        raise KernelError(f"weight shape {list(filt.shape)} does not match input shape "
                          f"{list(x.shape)}: {din} does not divide {codes.size} "
                          "(device: 'weight shape does not match input shape')")
    rows = codes.size // din
    ctx.log(2, f"superfc {rows}x{din} * {din}x{dout}; zx={zx} zf={zf}")
    rhs = Rhs.from_codes(data_of(filt, "weights").reshape(din, dout))
    sums = offset_gemm(gemm.center(codes.reshape(rows, din)), rhs, gemm.CENTER - zx,
                       gemm.CENTER - zf)
    return wrap_i32(sums.astype(np.int64) + biasbuf).astype(np.int32)


def superfc_8x8p32to8(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                      x_max: Tensor, f_min: Tensor, f_max: Tensor, bias: Tensor,
                      b_min: Tensor, b_max: Tensor, out_min: Tensor, out_max: Tensor
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """Fully connected: quint8 x times weights [fh,fw,fd,N], plus qint32 bias, to quint8.

    Semantics (op_superfc_d32.c ``superfc_execute_ref``): x is read as a row-major matrix
    (rows, din) with din = fh*fw*fd, which must divide numel(x); the output is [1,1,rows,N].
    zx, zf and the steps are rule ZB (``get_qu8_level_size_zero``); the sums' step is
    f32(x_step * f_step); each bias code becomes fast_roundf(f32(b) * f32(bias_step /
    step)) with bias_step = f32(bias range * 2^-32); sum = bias + sum_k (x - zx)(f - zf) in
    int32 (wrapping). An infinite out_min (-inf) becomes f32(min(0, sums) * step), an
    infinite out_max (+inf) fmaxf(min + 1e-5, f32(max(0, sums) * step)); R3
    (``adjust_minmax_for_zero_with_constraints``) then nudges the ends that were not fixed.
    Each code is sat_u8(int32((int64(sum + add) * s31 + 2^30) >> 31)) with
    add = fast_roundf(-min / step), s31 = fast_roundf(f32(step / div255(max - min)) * 2^31).

    Two C facts kept: when the output step is finer than the sums' step the 31-bit gain
    saturates at 2^31 - 1 (a gain of 1, codes not stretched); the weights' zero code is rule
    ZB, which can differ by one from the MatMul's rule ZA (127 vs 128 on [-1, 1]), so the
    fused graph can differ from the authored chain, as on the device.

    Fidelity: byte-exact with nnlib's ``SuperFC_8x8p32to8_ref``. The plain op's HVX body
    (d32 tiles, a range found by retries) is not modelled: Hexscope runs the ``_ref``
    arithmetic for both names, so a fixed output range gives the same codes as the device
    when the sums fit it, and an infinite one may differ from the device's grown range.

    Errors (KernelError): din does not divide the input size ('weight shape does not match
    input shape'); zero weight depth (the device divides by it); a bias with fewer than N
    values (the device would read past it).
    """
    dout = filt.shape[3]
    n_bias = int(np.prod(bias.shape))
    if n_bias < dout:
        raise KernelError(f"the bias has {n_bias} values for {dout} output channels: "
                          "the device reads past its end")
    zx, x_step = level_size_zero(scalar_f(x_min), scalar_f(x_max))
    zf, f_step = level_size_zero(scalar_f(f_min), scalar_f(f_max))
    with np.errstate(all="ignore"):
        step = f32(x_step * f_step)
        b_step = f32(f32(f32(scalar_f(b_max)) - f32(scalar_f(b_min))) * f32(2.0**-32))
        gain = f32(b_step / step)
        b = data_of(bias, "bias").reshape(-1)[:dout].astype(f32) * gain
    sums = _superfc_sums(ctx, x, filt, zx, zf, round_even_i32(b))
    lo = min(0, int(sums.min())) if sums.size else 0
    hi = max(0, int(sums.max())) if sums.size else 0
    mn, mx, constraint = f32(scalar_f(out_min)), f32(scalar_f(out_max)), 3
    with np.errstate(all="ignore"):
        if mn == -np.inf:
            mn, constraint = f32(f32(lo) * step), constraint & ~1
        if mx == np.inf:
            mx = f32(np.fmax(f32(mn + f32(1e-5)), f32(f32(hi) * step)))
            constraint &= ~2
        mn, mx = adjust_with_constraints(mn, mx, constraint)
        scale = f32(step / div255(f32(mx - mn)))
        add = int(round_even_i32(f32(f32(-mn) / step)))
        s31 = int(round_even_i32(f32(scale * f32(2.0**31))))
    val = wrap_i32(sums.astype(np.int64) + add)
    y = np.clip(wrap_i32((val * s31 + (1 << 30)) >> 31), 0, 255).astype(np.uint8)
    out = Tensor.from_array(fresh(y.reshape(1, 1, sums.shape[0], dout)), _U8)
    return out, f32_scalar(mn), f32_scalar(mx)


def superfc_reference(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                      x_max: Tensor, f_min: Tensor, f_max: Tensor, bias: Tensor,
                      b_min: Tensor, b_max: Tensor, out_min: Tensor, out_max: Tensor
                      ) -> tuple[np.ndarray, ...]:
    """x (rows x din) @ weights (din x N) + bias, dequantized, clamped to a fixed range."""
    dout = filt.shape[3]
    din = int(np.prod(filt.shape[:3]))
    a = real(x, x_min, x_max).reshape(-1, din)
    y = a @ real(filt, f_min, f_max).reshape(din, dout)
    y = y + real(bias, b_min, b_max).reshape(-1)[:dout]
    y = np.clip(y, scalar_f(out_min), scalar_f(out_max))
    return ranged(y.reshape(1, 1, -1, dout))


_SUPERFC_IN = (Port("x", _U8), Port("filter", _U8),
               *range_ports("x_min", "x_max", "filter_min", "filter_max"),
               Port("bias", _I32), *range_ports("bias_min", "bias_max", "out_min", "out_max"))
_SUPERFC_OUT = (Port("y", _U8), Port("y_min", _F32), Port("y_max", _F32))
for _name in ("SuperFC_8x8p32to8", "SuperFC_8x8p32to8_ref"):
    op(_name, Category.MATH, reference=superfc_reference, inputs=_SUPERFC_IN,
       zero_codes=(ZeroCode(0, 2, 3, zero_zb), ZeroCode(1, 4, 5, zero_zb)),
       outputs=_SUPERFC_OUT)(superfc_8x8p32to8)
