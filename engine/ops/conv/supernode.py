"""Supernode_8x8p8to8: the convolution chain prepare fuses (conv, requantize, bias add,
requantize, relu) as one op, simulated after its plain-C twin ``supernode_execute_ref``
(nnlib ``hexagon/ops/src/op_supernode.c``); see :mod:`hexscope.engine.prepare.supernode`.

The C keeps the output range in the node (``supernode_info``), set at prepare from inputs 10
and 11 and widened by powers of two while a run needs more, so later runs start from the
widened range: that is kept in the node's state, which the session carries from run to run as
the device does (a batch run resets it per input set).
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import (
    c_roundf_int1,
    exact_memo,
    f2i,
    f2i1,
    quantize_uint8,
    wrap_i32,
    za_scaled,
)
from hexscope.engine.ops.context import KernelContext, data_of, scalar_f
from hexscope.engine.ops.conv.common import (
    CONV_IN,
    centred_input,
    f32_output,
    f32_word,
    filter_rhs,
    range_ports,
)
from hexscope.engine.ops.conv.conv2d import (
    SUPERNODE_ZERO_CODES,
    conv2d_reals,
    conv_sums,
    level_size,
    output_window,
)
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.code_bounds import Span
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.ops.reference import ZeroCode, ranged, real, zero_za_low
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
_U8, _F32 = DType.QUINT8, DType.FLOAT32
_MAX_DOUBLINGS = 600        # float32 doubling takes a range to inf in under 300 steps

CHANNEL_SCALE = Port("channel_scale", _F32, optional=True,
                     doc="per-channel scales (ChannelScale); the flat op ignores them")
SUPERNODE_IN = (*CONV_IN, Port("bias", _U8), *range_ports("bias_min", "bias_max"),
                *range_ports("out_low", "out_high"),   # not *_min/_max: +-inf is meant
                CHANNEL_SCALE)
SUPERNODE_OUT = (Port("y", _U8), Port("y_min", _F32), Port("y_max", _F32))


def initial_range(out_min: float, out_max: float) -> tuple[np.float32, np.float32, bool, bool]:
    """``supernode_check_ref``: (min, max, min fixed, max fixed). An infinite max starts at
    1/128 and grows; an infinite min starts at -max and grows."""
    mx, mn = f32(out_max), f32(out_min)
    max_fixed = not (np.isinf(mx) and mx > 0)
    if not max_fixed:
        mx = f32(1.0 / 128.0)
    min_fixed = not (np.isinf(mn) and mn < 0)
    if not min_fixed:
        mn = f32(-mx)
    return mn, mx, min_fixed, max_fixed


def _to_i32(x: float) -> int:
    """``int32_t v = float``: Hexagon's truncating, saturating conversion (NaN -> -1)."""
    return f2i1(x)


def range_steps(mn: np.float32, mx: np.float32, level: np.float32) -> int:
    """``maxrange``: the output range in steps of the sums, rounded; 0 fails the node, since
    the C divides by it (a crash on the device)."""
    with np.errstate(all="ignore"):
        steps = _to_i32(f32(f32(f32(mx - mn) / level) + f32(0.5)))
    if steps == 0:
        raise KernelError(f"the output range [{mn}, {mx}] is less than half a step ({level}) "
                          "of the convolution's sums wide: the device divides by zero")
    return steps


def widen_range(maxsum: int, minsum: int, level: np.float32, state: list) -> np.float32:
    """The retries of ``supernode_execute_ref``: double max (then min) until the sums fit.

    ``maxsum``/``minsum`` are the extreme conv sums (clamped to include 0); ``state`` is
    [min, max, min fixed, max fixed] and is updated in place. Returns ``minval_offset``.
    Where the C would double for ever (a zero or infinite step) this raises KernelError."""
    doublings = 0

    def doubled(value: np.float32) -> np.float32:
        nonlocal doublings
        doublings += 1
        if doublings > _MAX_DOUBLINGS:
            raise KernelError(f"the output range [{state[0]}, {state[1]}] never fits the sums "
                              f"(step {level}): the device retries for ever "
                              "(supernode_execute_ref)")
        return f32(value * f32(2.0))

    while True:
        mn, mx, min_fixed, max_fixed = state
        range_steps(mn, mx, level)     # each retry divides by it before it checks the sums
        with np.errstate(all="ignore"):
            offset = f32(f32(-mn) / level)
            hi = _to_i32(f32(f32(maxsum) + offset))
            lo = _to_i32(f32(f32(minsum) + offset))
            if not max_fixed and f32(f32(hi) * level) > f32(mx - mn):
                while f32(state[1] - mn) < f32(f32(hi) * level):
                    state[1] = doubled(state[1])
                continue
            if not min_fixed and f32(f32(lo) * level) < 0:
                while f32(f32(lo) * level) < 0:
                    state[0] = doubled(state[0])
                    lo = _to_i32(f32(f32(lo) - offset))
                    offset = f32(f32(-state[0]) / level)
                    lo = _to_i32(f32(f32(lo) + offset))
                continue
        return offset


def _window(n: int, f: int, s: int, ctx: KernelContext) -> Window:
    """The output size of ``n``, but the padding before of the *output* size: the C calls
    ``nn_pad_compute_before(out_width, ...)`` where Conv2d passes the input width. The two
    agree at stride 1; at larger strides the window starts elsewhere, as on the device.
    With NA padding an output size below the stride gives no padding at all
    (``nn_pad_compute_outsize_padding`` returns 0 when ``n < stride``)."""
    out = output_window(n, f, s, ctx.padding).out
    return Window(n, f, s, out, output_window(out, f, s, ctx.padding).before)


def _c_div(a: int, b: int) -> int:
    """C integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _rne_i32(x: np.ndarray) -> np.ndarray:
    """``fast_roundf`` on Hexagon (``convert_sf2w``): round half to even, saturate,
    NaN -> -1 (the project's convention for the conversion, spec §1.6)."""
    a = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        r = np.rint(np.clip(np.nan_to_num(a, nan=-1.0), -2.0**31, 2.0**31 - 1))
    return r.astype(np.int64)


def supernode_8x8p8to8(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                       x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                       bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                       o_max: Tensor, *channel_scale: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Convolution, 8-bit bias and requantization to quint8 in one op (what prepare makes of
    QuantizedConv2d_8x8to32 → QuantizeDownAndShrinkRange_32to8 → QuantizedBiasAdd_8p8to32 →
    QuantizeDownAndShrinkRange_32to8 [→ QuantizedRelu_8 / QuantizedReluX_8]).

    Inputs 0-6 are the convolution's, 7-9 the bias (quint8, one value per output channel) and
    its range, 10-11 the output range: ±inf for "find it" (a QuantizeDownAndShrinkRange), 0
    for a Relu's minimum, a ReluX's maximum. An optional 13th input (ChannelScale) is
    accepted and ignored, as ``supernode_check_ref`` does (the d32 forms apply it).

    Simulated after the plain-C ``supernode_execute_ref`` (op_supernode.c), bit for bit
    against it in the nnlib oracle. On the device prepare turns it into
    Supernode_8x8p8to8_d32 or InputSupernode_8x8p8to8_outd32 (so does Hexscope's prepare:
    docs/oracle-conv.md), which compute these values except for the HVX requantization's
    rounding and range search: unconfirmed on hardware. Where the flat op stays (input depth
    <= 4 with an odd stride width above 1) the device runs it in HVX, whose "Batch size > 1
    not supported with odd in depth" and "bias magnitude too large" are not applied here
    (unconfirmed on the device). Steps, in float32 as the C writes them:

    - zero codes: ``quantize_uint8(0, ...)`` for data and filter (clamped to 0..255, unlike
      Conv2d's), ``quantize_uint`` for the bias;
    - sums of (x - zx)(w - zf) over the taps inside the image, int32, with the padding
      before taken from the output size (the C's ``nn_pad_compute_before(out_width, ...)``;
      the same as Conv2d's at stride 1, not at larger strides);
    - bias in output steps: round_even((b - zb) * (bias step / (x step * w step)));
    - output range [min, max] from the node: a fixed bound stays, a free one starts at 1/128
      (max) or -max (min) and is doubled, and the node run again, while the largest (smallest)
      sum does not fit; the widened range stays in the node for later runs;
    - out = clamp(int32((s + bias + offset) * recip + 2**15) >> 16, 0, 255), the product
      in unsigned 32 bits, with offset = -min / step and recip = 0xff0000 / round(range /
      step) (the file's USE_16BITS_RECIP).

    Errors (KernelError): input depth differs from the filter's; a bad stride tensor; fewer
    bias values than output channels; a zero range in steps (the device divides by zero).
    """
    return run_supernode(ctx, x, filt, x_min, x_max, f_min, f_max, stride, bias, b_min, b_max,
                         o_min, o_max, bias32=False)


def run_supernode(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor, x_max: Tensor,
                  f_min: Tensor, f_max: Tensor, stride: Tensor, bias: Tensor, b_min: Tensor,
                  b_max: Tensor, o_min: Tensor, o_max: Tensor, *, bias32: bool
                  ) -> tuple[Tensor, Tensor, Tensor]:
    """``supernode_execute_ref`` for an 8-bit bias (``bias32`` False: quint8 codes with a
    zero code) or a 32-bit one (int32 values, no zero code, steps of range / 2**32: the
    C's ``is_bias32`` branch for Supernode_8x8p32to8)."""
    for name, t in (("input x", x), ("filter", filt)) + (() if bias32 else (("bias", bias),)):
        if t.dtype is not _U8:
            raise KernelError(f"{name} is {t.dtype.name.lower()}; the Supernode reads quint8 "
                              "codes")
    if bias32 and bias.dtype not in (DType.INT32, DType.QINT32):
        raise KernelError(f"bias is {bias.dtype.name.lower()}; Supernode_8x8p32to8 reads "
                          "32-bit integers")
    b, h, w, cin = x.shape
    fh, fw, fdin, cout = filt.shape
    if cin != fdin:
        raise KernelError(f"input depth {cin} differs from the filter's input depth {fdin} "
                          "(device: 'oops, depth != depth')")
    sb, sh, sw, sd = stride.shape
    if sb != 1 or sd != 1:
        raise KernelError(f"stride tensor must have shape [1,SH,SW,1], got {list(stride.shape)} "
                          "(device: 'bad stride batch' / 'bad stride depth')")
    if sh < 1 or sw < 1:
        raise KernelError(f"stride {sh}x{sw} has a zero dimension; the device divides by zero")
    codes = data_of(bias, "bias").reshape(-1)
    if codes.size < cout:
        raise KernelError(f"bias has {codes.size} values but the filter makes {cout} output "
                          "channels (the device reads past the bias)")
    step, bias_gain, zx, zf, zb = chain_scalars(
        scalar_f(x_min), scalar_f(x_max), scalar_f(f_min), scalar_f(f_max), scalar_f(b_min),
        scalar_f(b_max), bias32)

    rows, cols = _window(h, fh, sh, ctx), _window(w, fw, sw, ctx)
    span = Span()                   # the GEMM takes the sums' min and max while in cache
    sums = conv_sums(data_of(x, "input x"), filter_rhs(ctx, filt, zf), rows, cols, zx, zf,
                     centred_input(x, rows, cols), None, span)
    if sums.size and (span.lo is None or span.hi is None):
        span.add(sums)
    maxsum = max(0, span.hi) if sums.size else 0     # type: ignore[type-var]
    minsum = min(0, span.lo) if sums.size else 0     # type: ignore[type-var]

    state = ctx.state.get("range")
    if state is None:
        state = list(initial_range(scalar_f(o_min), scalar_f(o_max)))
    offset = fitted_offset(maxsum, minsum, step, state)
    ctx.state["range"] = state
    mn, mx = state[0], state[1]
    if ctx.debug_level >= 2:
        ctx.log(2, f"supernode range [{mn}, {mx}] zx={zx} zf={zf} zb={zb} maxsum={maxsum}")

    _, recip = output_recip(mn, mx, step)
    biasbuf = bias_steps(codes[:cout], None if bias32 else zb, bias_gain)
    bounds = None if not sums.size else (span.lo, span.hi)
    out = requantize_sums(sums, biasbuf, f32(offset), recip, bounds)
    y = Tensor.from_array(fresh(out.reshape(b, rows.out, cols.out, cout)), _U8)
    return y, f32_output(f32_word(mn)), f32_output(f32_word(mx))


@exact_memo
def chain_scalars(xmn: float, xmx: float, fmn: float, fmx: float, bmn: float, bmx: float,
                  bias32: bool = False) -> tuple[np.float32, np.float32, int, int, int]:
    """(step of the sums, bias step / step, zx, zf, zb), in float32 as the C computes them
    (the bias step is range / 255, or range / 2**32 for a 32-bit bias: ``bias_divisor``);
    memoised on the exact bits of the range values (they repeat from run to run)."""
    step = f32(level_size(xmn, xmx) * level_size(fmn, fmx))
    with np.errstate(all="ignore"):
        bias_step = f32(f32(f32(bmx) - f32(bmn)) / f32(2.0**32 if bias32 else 255.0))
    zx, zf = quantize_uint8(0.0, xmn, xmx), quantize_uint8(0.0, fmn, fmx)
    zb = max(0, c_roundf_int1(za_scaled(0.0, bmn, bmx)))
    return step, f32(bias_step / step), zx, zf, zb


@exact_memo
def output_recip(mn: float, mx: float, step: float) -> tuple[int, int]:
    """(range in steps, ``recip``): op_supernode.c defines USE_16BITS_RECIP, a 16-bit
    reciprocal whose product with the sum is taken in unsigned 32 bits (the sum converts to
    unsigned), read back as int32 and shifted by 16."""
    steps = range_steps(f32(mn), f32(mx), f32(step))
    return steps, _c_div(0x00FF0000, steps) & 0xFFFFFFFF


_BIAS: dict[tuple[str, bytes, int | None, bytes], np.ndarray] = {}
_FITS: dict[bytes, list] = {}
_MEMO_SIZE = 4096


def bias_steps(codes: np.ndarray, zb: int | None, gain: np.float32) -> np.ndarray:
    """round_even((b - zb) * gain) per channel, int64 (read-only; memoised on the codes).

    ``zb`` None: 32-bit bias values, ``round_even(float(b) * gain)`` with no zero code (the
    int32 rounds to float32 first, as the C's ``biasval * bias_mpy_amt``)."""
    key = (codes.dtype.str, codes.tobytes(), zb, np.float32(gain).tobytes())
    found = _BIAS.get(key)
    if found is None:
        with np.errstate(all="ignore"):
            wide = codes.astype(np.int64) - (0 if zb is None else zb)
            found = _rne_i32(wide.astype(f32) * f32(gain))
        found.flags.writeable = False
        if len(_BIAS) >= _MEMO_SIZE:
            _BIAS.clear()
        _BIAS[key] = found
    return found


def fitted_offset(maxsum: int, minsum: int, level: np.float32, state: list) -> np.float32:
    """:func:`widen_range`, skipped when the range in ``state`` is known to hold these sums.

    Whether the range must widen is a monotone test of each extreme (``maxsum`` against the
    max, ``minsum`` against the min, for a positive finite step): once sums up to M and down
    to m have fitted a range unchanged, any sums within [m, M] fit it too, and the offset
    is the same. So each (range, step) remembers the widest sums that fitted it."""
    key = np.array([state[0], state[1], level], np.float64).tobytes() + bytes(
        [bool(state[2]), bool(state[3])])
    seen = _FITS.get(key)
    if seen is not None and maxsum <= seen[1] and minsum >= seen[2]:
        return seen[0]
    before = [float(v) for v in state[:2]]
    offset = widen_range(maxsum, minsum, level, state)
    if [float(v) for v in state[:2]] == before and np.isfinite(level) and level > 0:
        if seen is None:
            if len(_FITS) >= _MEMO_SIZE:
                _FITS.clear()
            _FITS[key] = [offset, maxsum, minsum]
        else:
            seen[1], seen[2] = max(seen[1], maxsum), min(seen[2], minsum)
    return offset


def requantize_sums(sums: np.ndarray, biasbuf: np.ndarray, offset: np.float32, recip: int,
                    bounds: tuple[int, int] | None, *, fast: bool = True) -> np.ndarray:
    """uint8 codes of ``clamp(int32((s + bias + offset) * recip + 2**15) >> 16, 0, 255)``
    for int32 sums (N, C) and the per-channel bias in output steps, as
    ``supernode_execute_ref`` computes them (int32 wrap of the sum, float32 add, Hexagon's
    saturating conversion, unsigned 32-bit product). ``sums`` may be overwritten.

    ``bounds`` (the sums' min and max) lets the common case run in 32-bit passes: when
    neither the bias add can wrap nor the float leave int32 (float rounding is monotone, so
    the extremes bound every value), no saturation is needed. Otherwise, or with ``fast``
    False, the general int64 formula runs."""
    if fast and bounds is not None and sums.dtype == np.int32 and np.isfinite(offset):
        lo = bounds[0] + int(biasbuf.min())
        hi = bounds[1] + int(biasbuf.max())
        with np.errstate(all="ignore"):
            f_lo, f_hi = f32(f32(lo) + offset), f32(f32(hi) + offset)
        if -2**31 <= lo and hi < 2**31 and -2.0**31 <= f_lo and f_hi < 2.0**31:
            kernel = compiled.kernel("supernode_epilogue") if sums.ndim == 2 else None
            if kernel is not None:
                out = np.empty(sums.shape, np.uint8)
                kernel(np.ascontiguousarray(sums), biasbuf.astype(np.int32), offset, recip, out)
                return out
            t = np.add(sums, biasbuf.astype(np.int32), out=sums)
            f = t.astype(f32)
            f += offset
            u = f.astype(np.int32).view(np.uint32)     # in range: a plain truncation
            u *= np.uint32(recip)                        # wraps mod 2**32, as the C's
            u += np.uint32(1 << 15)
            o = u.view(np.int32)
            o >>= 16
            return np.clip(o, 0, 255, out=o).astype(np.uint8)
    with np.errstate(all="ignore"):
        total = wrap_i32(sums.astype(np.int64) + biasbuf)
        shifted = f2i((total.astype(f32) + offset).astype(f32))
        product = (shifted * np.int64(recip) + np.int64(1 << 15)) & 0xFFFFFFFF
        out = wrap_i32(product) >> 16
    return np.clip(out, 0, 255).astype(np.uint8)



def supernode_reference(ctx: KernelContext, x: Tensor, filt: Tensor, x_min: Tensor,
                        x_max: Tensor, f_min: Tensor, f_max: Tensor, stride: Tensor,
                        bias: Tensor, b_min: Tensor, b_max: Tensor, o_min: Tensor,
                        o_max: Tensor, *channel_scale: Tensor) -> tuple[np.ndarray, ...]:
    """the float convolution, times the per-channel scales if given, plus the dequantized
    bias, clamped to the finite bounds of the output range (a Relu's 0, a ReluX's maximum)."""
    # an 8-bit output: the float forms that round more are nothing against its LSB
    y = conv2d_reals(ctx, x, filt, x_min, x_max, f_min, f_max, stride, precise=False)
    return bias_clamp_reference(times_channel_scales(y, channel_scale),
                                real(bias, b_min, b_max), o_min, o_max)


def times_channel_scales(y: np.ndarray, channel_scale: tuple[Tensor, ...]) -> np.ndarray:
    """``y`` times input 12's per-channel scales, the float meaning of a Supernode's
    ChannelScale: a d32 Supernode keeps it and applies it (prepare folds it into the weights
    of the ones left flat, leaving 1.0)."""
    if not channel_scale or not channel_scale[0].has_data:
        return y
    k = np.asarray(channel_scale[0].array, np.float32).reshape(-1)
    if k.size not in (1, y.shape[-1]) or (k == 1.0).all():
        return y
    return (y * k).astype(np.float32)


def bias_clamp_reference(y: np.ndarray, bias: np.ndarray, o_min: Tensor, o_max: Tensor
                         ) -> tuple[np.ndarray, ...]:
    """``y + bias`` (per output channel), clamped to the finite bounds of the output range,
    with its range: the float meaning of every Supernode after its convolution."""
    b = bias.reshape(-1)[:y.shape[-1]]
    lo, hi = float(real(o_min).reshape(-1)[0]), float(real(o_max).reshape(-1)[0])
    kernel = compiled.kernel("bias_clamp_f32")
    if kernel is not None and y.dtype == b.dtype == np.float32 and y.size \
            and b.size == y.shape[-1] and y.flags.c_contiguous:
        # one pass where numpy takes three, each with a fresh array
        out = np.empty(y.shape, np.float32)
        kernel(y.reshape(-1, b.size), np.ascontiguousarray(b),
               np.float32(lo if np.isfinite(lo) else -np.inf),
               np.float32(hi if np.isfinite(hi) else np.inf), out.reshape(-1, b.size))
        return ranged(out)
    y = y + b
    if np.isfinite(lo):
        y = np.maximum(y, lo)
    if np.isfinite(hi):
        y = np.minimum(y, hi)
    return ranged(y)


for _name in ("Supernode_8x8p8to8", "Supernode_8x8p8to8_ref"):
    op(_name, Category.MATH, reference=supernode_reference, inputs=SUPERNODE_IN,
       zero_codes=(*SUPERNODE_ZERO_CODES, ZeroCode(7, 8, 9, zero_za_low)),
       outputs=SUPERNODE_OUT, uses_padding=True)(supernode_8x8p8to8)
