"""QuantizedMatMul_8x8to32 and QuantizedBiasAdd_8p8to32 into qint32 (quantized-ops spec §3,
§4), on the rules they share with Conv2d (:mod:`conv`).

The integer sums are exact (see :mod:`kernels.gemm`); the ranges are evaluated in
float32 in the library's order. Each op has a ``_ref`` twin; only MatMul's differs (§3).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import exact_memo, f2i
from hexscope.engine.ops.context import KernelContext, Shared, data_of, f32_scalar, scalar_f
from hexscope.engine.ops.conv.conv2d import (
    RANGE_OUT,
    level_size,
    product_range,
    qint32_tensor,
    range_ports,
    warn_inexact,
    zero_code,
)
from hexscope.engine.ops.elementwise.activation import range_words
from hexscope.engine.ops.kernels import compiled, gemm
from hexscope.engine.ops.kernels.code_bounds import Span, note
from hexscope.engine.ops.kernels.gemm import Rhs, offset_gemm
from hexscope.engine.ops.reference import ZeroCode, ranged, real, zero_za_low, zero_za_u8
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, is_frozen

f32 = np.float32
_U8, _F32 = DType.QUINT8, DType.FLOAT32


# QuantizedMatMul_8x8to32 ----------------------------------------------------------------------

_MATMUL_IN = (Port("a", _U8, layout=None), Port("b", _U8),
              *range_ports("a_min", "a_max", "b_min", "b_max"))
_MATMUL_ZERO = (ZeroCode(0, 2, 3, zero_za_u8), ZeroCode(1, 4, 5, zero_za_u8))


def _matmul(ctx: KernelContext, a: Tensor, bmat: Tensor, a_min: Tensor, a_max: Tensor,
            b_min: Tensor, b_max: Tensor, *, frozen_b: bool) -> tuple[Tensor, Tensor, Tensor]:
    bb, bh, k, n = bmat.shape
    if bh != 1:
        raise KernelError(f"B must have height 1, got shape {list(bmat.shape)} "
                          "(device: 'fixme: support B height?')")
    if bb != 1:
        raise KernelError(f"B must have batches 1, got shape {list(bmat.shape)} "
                          "(device: 'fixme: support B batches')")
    if k == 0:
        raise KernelError("B has width 0: the dot-product length is 0 and the device "
                          "divides by it")
    za, ok_a, zb, ok_b, w_min, w_max = matmul_plan(scalar_f(a_min), scalar_f(a_max),
                                                   scalar_f(b_min), scalar_f(b_max))
    warn_inexact(ctx, "A", ok_a)
    warn_inexact(ctx, "B", ok_b)
    codes = data_of(a, "A").reshape(-1)
    m = codes.size // k
    if ctx.debug_level >= 2:        # (the message is not built for nobody)
        ctx.log(2, f"matmul {m}x{k} * {k}x{n} (A {list(a.shape)}, {codes.size - m * k} "
                   f"trailing codes ignored); za={za} zb={zb}")
    b_codes = data_of(bmat, "B").reshape(k, n)
    if frozen_b and (m == 1 or k % 16 == 0):
        rhs = _prepare_time_b(ctx, b_codes, bmat)
    else:
        rhs = Rhs.from_codes(b_codes)
    lhs = gemm.center(codes[:m * k].reshape(m, k))
    a_off, b_off = gemm.CENTER - za, gemm.CENTER - zb
    run = _kept_gemm(ctx, rhs, m, b_off) if lhs.dtype == np.int8 and frozen_b else None
    out = (run(lhs, rhs.offsets(a_off, b_off)) if run is not None
           else offset_gemm(lhs, rhs, a_off, b_off))
    return qint32_tensor((1, 1, m, n), out), Tensor.scalar_of(w_min), Tensor.scalar_of(w_max)


@exact_memo
def matmul_plan(a_min: float, a_max: float, b_min: float, b_max: float
                ) -> tuple[int, bool, int, bool, np.ndarray, np.ndarray]:
    """(za, za exact, zb, zb exact, out_min word, out_max word) of the ranges; memoised on
    their exact bits (the same ranges run after run)."""
    za, ok_a = zero_code(a_min, a_max, "u8")
    zb, ok_b = zero_code(b_min, b_max, "u8")
    y_min, y_max = product_range(level_size(a_min, a_max), level_size(b_min, b_max))
    return (za, ok_a, zb, ok_b, *range_words(y_min, y_max))


def _kept_gemm(ctx: KernelContext, rhs: Rhs, m: int, b: int
               ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
    """The VNNI GEMM of ``m`` rows against the node's prepare-time B, set up once
    (:func:`gemm.prepared_gemm8`: the checks and pointers of ``offset_gemm`` taken at the
    first run) and kept while B, M and the B zero code stay; None where it does not run."""
    kept = ctx.state.get("matmul_gemm")
    if isinstance(kept, Shared) and kept.key[0] is rhs and kept.key[1:] == (m, b):  # type: ignore[index]
        return kept.value  # type: ignore[return-value]
    run = gemm.prepared_gemm8(rhs, m, b)
    ctx.state["matmul_gemm"] = Shared((rhs, m, b), run)
    return run


def _prepare_time_b(ctx: KernelContext, b_codes: np.ndarray, bmat: Tensor) -> Rhs:
    """The B the vector kernel multiplies: the copy packed at prepare (§3)."""
    entry = ctx.state.get("b_codes")
    if not isinstance(entry, Shared):
        frozen = b_codes.copy()
        ctx.state["b_codes"] = entry = Shared(frozen, Rhs.from_codes(frozen))
        ctx.state["b_seen"] = Shared(None, None)
    frozen: np.ndarray = entry.key  # type: ignore[no-redef]
    if frozen.shape != b_codes.shape:
        raise KernelError(f"B changed shape from {frozen.shape} to {b_codes.shape} since "
                          "prepare; the device's packed copy no longer fits")
    # a read-only B already found equal cannot have changed: skip comparing its codes again
    # (a 1280x1000 B took 0.3 ms a run)
    seen = ctx.state.get("b_seen")
    if isinstance(seen, Shared) and seen.key is bmat:
        return entry.value  # type: ignore[return-value]
    if frozen is not b_codes and not np.array_equal(frozen, b_codes):
        ctx.warn("B differs from its value at prepare; the plain op multiplies the "
                 "prepare-time copy (spec §3); use QuantizedMatMul_8x8to32_ref to follow B")
    elif bmat.has_data and is_frozen(bmat.raw):
        ctx.state["b_seen"] = Shared(bmat, None)
    return entry.value  # type: ignore[return-value]


def matmul_reference(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor, a_max: Tensor,
                     b_min: Tensor, b_max: Tensor) -> tuple[np.ndarray, ...]:
    """the float product A (M x K) x B (K x N) of the dequantized matrices, as [1,1,M,N]."""
    k, n = b.shape[2], b.shape[3]
    av = real(a, a_min, a_max).reshape(-1, k) if k else np.zeros((0, 0))
    y = av @ real(b, b_min, b_max).reshape(k, n)
    return ranged(y.reshape(1, 1, -1, n))


@op("QuantizedMatMul_8x8to32", Category.MATH,
    reference=matmul_reference, zero_codes=_MATMUL_ZERO, inputs=_MATMUL_IN, outputs=RANGE_OUT)
def quantized_matmul_8x8to32(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor,
                             a_max: Tensor, b_min: Tensor, b_max: Tensor
                             ) -> tuple[Tensor, Tensor, Tensor]:
    """Matrix product of quint8 A (M x K) and B [1,1,K,N] into qint32 [1,1,M,N].

    Quantized-ops spec §3. K = B.width, N = B.depth; A (any shape) is read as a row-major
    M x K matrix with M = floor(numel(A) / K): trailing codes are ignored. Each output is
    sum_k (A - za)(B - zb) in int32 with wrap-around, exact; za, zb are the saturating
    ``quantize_uint8`` zero codes (ZA, §1.4). Outputs 1 and 2 are min then max (the code's
    order), ±f32(2**31 * la * lb) with l = f32((max - min) / 255).

    Fidelity (§3, plain op only): the device's vector kernel (used when M = 1 or K % 16 == 0)
    multiplies a copy of B packed at prepare, with the run-time zero codes. Here the copy is
    the B seen at the first execution after prepare; later executions with different B codes
    use it and warn. A B fed by a non-Const node is, on the device, whatever its buffer held at
    prepare; that cannot be simulated. A changed B *range* is followed (fresh zb), but the
    device then also mixes unknown bytes past A's end into the K padding when K % 16 != 0
    (not simulated). The ``_ref`` op always uses the run-time B.

    Errors (KernelError): B height or batches != 1; B width 0 (the device divides by zero).
    """
    return _matmul(ctx, a, b, a_min, a_max, b_min, b_max, frozen_b=True)


@op("QuantizedMatMul_8x8to32_ref", Category.MATH,
    reference=matmul_reference, zero_codes=_MATMUL_ZERO, inputs=_MATMUL_IN, outputs=RANGE_OUT)
def quantized_matmul_8x8to32_ref(ctx: KernelContext, a: Tensor, b: Tensor, a_min: Tensor,
                                 a_max: Tensor, b_min: Tensor, b_max: Tensor
                                 ) -> tuple[Tensor, Tensor, Tensor]:
    """Matrix product of quint8 A (M x K) and B [1,1,K,N] into qint32; reads B at run time.

    As QuantizedMatMul_8x8to32 (quantized-ops spec §3), with the reference loop: B and its
    range are always the run-time ones.
    """
    return _matmul(ctx, a, b, a_min, a_max, b_min, b_max, frozen_b=False)


# QuantizedBiasAdd_8p8to32 ----------------------------------------------------------------------

_BIAS_IN = (Port("x", _U8), Port("bias", _U8), *range_ports("x_min", "x_max", "b_min", "b_max"))


def quantized_biasadd_8p8to32(ctx: KernelContext, x: Tensor, bias: Tensor, x_min: Tensor,
                              x_max: Tensor, b_min: Tensor, b_max: Tensor
                              ) -> tuple[Tensor, Tensor, Tensor]:
    """Add a quint8 bias [1,1,1,D] to quint8 x [B,H,W,D], giving qint32 in a shared range.

    Quantized-ops spec §4. M = fmax(fmax(|xmin|, xmax), fmax(|bmin|, bmax)); the output range
    is [-f32(M * 2**17), f32(M * 2**17)] and its step lo = f32((out_max - out_min) / 2**32).
    With lx, lb = f32((max - min) / 255), gx = f32(lx / lo), gb = f32(lb / lo), zx = ZA
    (saturating) and zb = ZA'' (clamped below at 0 only), each element is
    trunc(f32(f32(f32((x - zx) * gx) + f32((b - zb) * gb)) + 0.5)), all float32 in this order
    (no fused multiply-add assumed, §23 item 5). The final step truncates toward zero after
    adding 0.5, so sums below -0.5 come out one above round(): -2.0 gives -1 (device quirk).

    A zero range (M = 0) makes the gains inf/NaN; the float-to-int conversion of such values
    is unconfirmed: taken as saturating, NaN as 0, with a warning.

    Errors (KernelError): bias height, batches or width != 1 ('bias shape'); bias depth !=
    x depth ('depth mismatch').
    """
    _, _, _, d = x.shape
    bb, bh, bw, bd = bias.shape
    if bh != 1 or bb != 1 or bw != 1:
        raise KernelError(f"bias must have shape [1,1,1,D], got {list(bias.shape)} "
                          "(device: 'bias shape')")
    if bd != d:
        raise KernelError(f"bias depth {bd} differs from input depth {d} "
                          f"(device: 'depth mismatch {bd} vs {d}')")
    xmn, xmx, bmn, bmx = (f32(scalar_f(t)) for t in (x_min, x_max, b_min, b_max))
    with np.errstate(all="ignore"):
        big = np.fmax(np.fmax(abs(xmn), xmx), np.fmax(abs(bmn), bmx))
        out_max = f32(big * f32(131072.0))
        out_min = f32(-out_max)
        lo = f32(f32(out_max - out_min) / f32(2.0**32))
        gx, gb = f32(level_size(xmn, xmx) / lo), f32(level_size(bmn, bmx) / lo)
    zx, ok_x = zero_code(xmn, xmx, "u8")
    zb, ok_b = zero_code(bmn, bmx, "low")
    warn_inexact(ctx, "input", ok_x)
    warn_inexact(ctx, "bias", ok_b)
    ctx.log(9, f"biasadd zx={zx} gx={gx} zb={zb} gb={gb}")
    with np.errstate(all="ignore"):
        # 256 possible x terms and D bias terms: tables, then one float32 add per element.
        x_terms = (np.arange(256, dtype=np.float64) - zx).astype(f32) * gx
        b_codes = data_of(bias, "bias").reshape(d).astype(np.int64)
        b_terms = (b_codes - zb).astype(f32) * gb
        codes = data_of(x, "input x")
        kernel = compiled.kernel("bias_add")
        if kernel is not None:
            out, bounds = np.empty(codes.shape, np.int32), np.zeros(2, np.int64)
            args = (np.ascontiguousarray(codes).reshape(-1, d),
                    np.ascontiguousarray(x_terms, f32), np.ascontiguousarray(b_terms, f32),
                    out.reshape(-1, d), bounds)
            lo_f = f32(f32(x_terms.min() + b_terms.min()) + f32(0.5)) if d else f32(0)
            hi_f = f32(f32(x_terms.max() + b_terms.max()) + f32(0.5)) if d else f32(0)
            if -2.0**31 < lo_f and hi_f < 2.0**31:    # so every sum is (NaN fails too)
                compiled.kernel("bias_add_in_range")(*args)  # type: ignore[misc]
                bad = 0
            else:
                bad = kernel(*args)
            if bad:
                ctx.warn(_NON_FINITE)
            y = qint32_tensor(x.shape, out)
            if out.size:            # the span, for the requantize that usually follows
                span = Span()
                span.add_bounds(int(bounds[0]), int(bounds[1]))
                note(y.raw, span)
            return y, f32_scalar(out_min), f32_scalar(out_max)
        s = x_terms[codes] + b_terms
        s += f32(0.5)
    if not np.isfinite(s).all():
        ctx.warn(_NON_FINITE)
    return qint32_tensor(x.shape, _trunc_i32(s)), f32_scalar(out_min), f32_scalar(out_max)


_NON_FINITE = ("non-finite sums (zero range?): float-to-int conversion unconfirmed, "
               "saturation assumed, NaN as -1 (spec §4, §23 item 4)")


def _trunc_i32(s: np.ndarray) -> np.ndarray:
    """C float-to-int32 (`hexmath.f2i`), with a plain cast when every value fits."""
    if np.isfinite(s).all() and np.abs(s).max(initial=0) < 2.0**31:
        return s.astype(np.int32)
    return f2i(s).astype(np.int32)


def bias_add_reference(ctx: KernelContext, x: Tensor, bias: Tensor, x_min: Tensor,
                       x_max: Tensor, b_min: Tensor, b_max: Tensor) -> tuple[np.ndarray, ...]:
    """x + bias along the depth, both dequantized."""
    return ranged(real(x, x_min, x_max) + real(bias, b_min, b_max).reshape(-1))


for _name in ("QuantizedBiasAdd_8p8to32", "QuantizedBiasAdd_8p8to32_ref"):
    op(_name, Category.MATH,
       reference=bias_add_reference, inputs=_BIAS_IN, outputs=RANGE_OUT,
       zero_codes=(ZeroCode(0, 2, 3, zero_za_u8), ZeroCode(1, 4, 5, zero_za_low)),
       )(quantized_biasadd_8p8to32)
