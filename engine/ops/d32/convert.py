"""Flat <-> d32 converters and the d32 quantizers (graph spec §4.16-§4.18, quantized-ops §20-§21).

hexagon_nn leaves the output padding of these ops undefined; the simulator writes
``ctx.padding_fill`` there so the padding views show which bytes were never written. Only the
valid input data are read, whatever the input padding holds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hexscope.engine.d32 import (
    MAX_PADDING_DEPTH,
    MAX_PADDING_HEIGHT,
    MAX_PADDING_WIDTH,
    D32Geometry,
    D32Padding,
    converter_padding,
)
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import (
    KernelContext,
    Shared,
    data_of,
    f32_scalar,
    output_fits,
    require_d32,
    scalar_i,
)
from hexscope.engine.ops.kernels import quantizer as hq
from hexscope.engine.ops.kernels.d32_layout import packer, unpacker
from hexscope.engine.ops.quant.quantize import auto_params, log_params
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

_PAD_OPTIONS = (
    Port("d_before", DType.INT32, optional=True, doc="depth-before padding, 0..31"),
    Port("w_left", DType.INT32, optional=True, doc="width-left padding, 0..7 (default 4)"),
    Port("w_right_min", DType.INT32, optional=True, doc="minimum width-right padding, 0..7"),
    Port("h_pad", DType.INT32, optional=True, doc="top and bottom padding, 0..8 (default 4)"),
)
_D32_OUT = Port("y", DType.QUINT8, layout=Layout.D32)
_QU8_D32_OUT = (_D32_OUT, Port("y_min", DType.FLOAT32), Port("y_max", DType.FLOAT32))
# (default, maximum, name in the device's message) of each padding option
_OPTIONS = ((0, MAX_PADDING_DEPTH, "depth padding"), (4, MAX_PADDING_WIDTH, "width padding(left)"),
            (0, MAX_PADDING_WIDTH, "width padding (min right)"),
            (4, MAX_PADDING_HEIGHT, "height padding"))


def padding_options(ctx: KernelContext, opts: Sequence[Tensor], prefix: str, level: int,
                    height_name: str = "height padding") -> list[int]:
    """[d_before, w_left, w_right_min, h_pad]: an out-of-range value falls back to its
    default with a log line (graph spec §4.17)."""
    values = []
    for k, (default, top, name) in enumerate(_OPTIONS):
        if k >= len(opts):
            values.append(default)
            continue
        value = scalar_i(opts[k])
        if not 0 <= value <= top:
            label = height_name if k == 3 else name
            ctx.log(level, f"{prefix}: value {value} out of range (0..{top}) for {label}; "
                           f"using default of {default}")
            value = default
        values.append(value)
    return values


def d32_output(ctx: KernelContext, values: np.ndarray, pad: D32Padding, message: str,
               widened: bool = True) -> Tensor:
    """``values`` (B,H,W,D quint8) as a d32 tensor whose padding holds ``padding_fill``.

    Fails as the device does when the node's declared output capacity cannot hold it.
    ``widened``: the op has the D32_OUTPUT flag, so its capacity gets the d32 widening of
    graph spec §1.4 step 3.
    """
    shape = tuple(int(n) for n in values.shape)
    needed = D32Geometry(shape, pad).elements  # type: ignore[arg-type]
    output_fits(ctx, 0, needed, f"d32 output of shape {shape}, padding {tuple(pad)}",
                widened, message)
    # a flat view of the values, only read by the packing: from_array would copy them first
    codes = np.ascontiguousarray(values, dtype=np.uint8)
    flat = Tensor(codes.shape, DType.QUINT8, codes.reshape(-1))
    return flat.to_d32(pad, fill=ctx.padding_fill & 0xFF)


def to_d32_reference(ctx: KernelContext, x: Tensor, *params: Tensor) -> tuple[Tensor]:
    """the logical tensor unchanged (only the layout changes)."""
    return (x,)


@op("Convert_to_d32", Category.D32,
    reference=to_d32_reference, inputs=(Port("x", DType.QUINT8), *_PAD_OPTIONS),
    outputs=(_D32_OUT,), d32_output=True)
def convert_to_d32(ctx: KernelContext, x: Tensor, *opts: Tensor) -> tuple[Tensor]:
    """Plain quint8 to d32 layout, with optional padding inputs.

    graph spec §4.17. Note: the seed text and docs describe this op under the name
    "Convert_from_d32"; the library source has it the other way round, and we follow the
    source: Convert_to_d32 (id 145) is plain -> d32 and takes the padding inputs.

    Padding: top = bottom = h_pad (0..8, default 4), left w_left (0..7, default 4), right the
    least that makes the total width a multiple of 4 with at least w_right_min, minus 4 when
    that exceeds 7; depth-after to the next multiple of 32. Out-of-range values fall back to
    the default (level 2 log). Depth-before padding is always forced to 0 (a valid non-zero
    request is logged at level 0 as ignored). The padding contents are undefined on the
    device; the simulator fills them with the session's padding byte.

    Errors: an output whose declared size cannot hold the padded tensor ("out prepare fail").
    """
    key = (x.shape, x.dtype, x.layout, ctx.padding_fill, ctx.output_defs, *opts)
    kept = ctx.state.get("to_d32")
    if isinstance(kept, Shared) and kept.key == key:
        pad, pack = kept.value  # type: ignore[misc]
        return (Tensor(x.shape, DType.QUINT8, pack(data_of(x, "input 0")).reshape(-1),
                       Layout.D32, pad),)
    d_before, w_left, w_right_min, h_pad = padding_options(ctx, opts, "convert_d32", 2)
    if d_before:
        ctx.log(0, f"depth_pad_before = {d_before}: ignored")
    pad = converter_padding(x.shape, w_left=w_left, w_right_min=w_right_min, h_pad=h_pad)
    out = d32_output(ctx, data_of(x, "input 0"), pad, "out prepare fail")
    # Kept while the same read-only Consts, input shape and fill come in: the padding worked
    # out, the capacity checked, the packing set up. Options that log (out of range, a depth
    # padding before) are worked out at every run, as their log lines are written.
    pack = packer(out.geometry.memory_shape, x.shape, pad, ctx.padding_fill & 0xFF)
    if pack is not None and x.dtype is DType.QUINT8 and not d_before \
            and all(not t.raw.flags.writeable for t in opts) and _options_in_range(opts):
        ctx.state["to_d32"] = Shared(key, (pad, pack))
    return (out,)


def _options_in_range(opts: Sequence[Tensor]) -> bool:
    """Whether :func:`padding_options` takes every option as given (logs nothing)."""
    return all(0 <= scalar_i(t) <= top for t, (_, top, _) in zip(opts, _OPTIONS, strict=False))


@op("Convert_from_d32", Category.D32,
    reference=to_d32_reference, inputs=(Port("x", DType.QUINT8, layout=Layout.D32),),
    outputs=(Port("y", DType.QUINT8),))
def convert_from_d32(ctx: KernelContext, x: Tensor) -> tuple[Tensor]:
    """d32 quint8 to plain layout: the valid elements in plain order.

    graph spec §4.16. The seed text attaches the to-d32 description to this name; the source
    makes it d32 -> plain with exactly one input, which we follow. Padding bytes are never
    read.

    Errors: input depth-before padding other than 0 ("unsupported: input tensor has
    depth_before !=0").
    """
    require_d32(x)
    if x.padding.d_before:
        raise KernelError(f"unsupported: input tensor has depth_before !=0 "
                          f"(it has {x.padding.d_before}); only depth_before 0 converts")
    p = x.padding
    if ctx.debug_level >= 3:
        ctx.log(3, f"convert_from_d32: h {p.h_before}|{x.shape[1]}|{p.h_after} "
                   f"w {p.w_before}|{x.shape[2]}|{p.w_after} "
                   f"d {p.d_before}|{x.shape[3]}|{p.d_after}")
    # the unpacking set up once per input geometry (quint8: the compiled pass, no cast)
    key = (x.shape, p, x.dtype)
    kept = ctx.state.get("from_d32")
    if not isinstance(kept, Shared) or kept.key != key:
        kept = Shared(key, unpacker(x.geometry.memory_shape, x.shape, p)
                      if x.dtype is DType.QUINT8 and x.has_data else None)
        ctx.state["from_d32"] = kept
    if kept.value is not None:
        return (Tensor(x.shape, DType.QUINT8, kept.value(x.raw).reshape(-1)),)  # type: ignore[operator]
    # a d32 tensor's array is a new array, handed over without from_array's copy
    return (Tensor.from_array(fresh(np.ascontiguousarray(data_of(x, "input 0"))),
                              DType.QUINT8),)


def auto_quantize_d32_reference(ctx: KernelContext, x: Tensor,
                                *pads: Tensor) -> tuple[np.ndarray, ...]:
    """the value itself, as a logical tensor."""
    return ranged(real(x))


@op("AutoQuantize_d32", Category.QUANTIZE,
    reference=auto_quantize_d32_reference, inputs=(Port("x", DType.FLOAT32), *_PAD_OPTIONS),
    outputs=_QU8_D32_OUT)
def auto_quantize_d32(ctx: KernelContext, x: Tensor, *opts: Tensor) -> tuple[Tensor, ...]:
    """Float to d32 quint8 over the data's own range, HVX fixed-point quantizer.

    quantized-ops spec §20, graph spec §4.18: the range and codes of AutoQuantize (§19; any
    NaN or inf fails). The vector routine keeps the product modulo 2^32 instead of
    saturating; that is emulated, and equals AutoQuantize's codes because the range covers
    the data. Padding options as Convert_to_d32 (out-of-range values fall back to their
    default, logged at level 0); depth-before padding is forced to 0 (logged at level 1).
    Output padding is undefined on the device and filled with the session's padding byte.
    Unlike the other d32 producers this op has no D32_OUTPUT flag, so its declared output
    size is not widened for padding (graph spec §1.4): declare room for the padding.

    Errors: NaN or inf in the data; an output too small for the padded tensor.
    """
    data = data_of(x, "input 0").astype(np.float32)
    d_before, w_left, w_right_min, h_pad = padding_options(ctx, opts, "autoquant_d32", 0)
    if d_before:
        ctx.log(1, f"d_pad_before={d_before} request for  autoquantize_d32 ignored; used 0")
    pad = converter_padding(x.shape, w_left=w_left, w_right_min=w_right_min, h_pad=h_pad)
    # matches device: the output is prepared before the range is checked; AutoQuantize_d32
    # lacks the D32_OUTPUT flag, so its capacity gets no widening
    d32_output(ctx, np.zeros(x.shape, np.uint8), pad, "failure preparing output", False)
    params = auto_params(data, "AutoQuantize_d32")
    log_params(ctx, params)
    codes = hq.hvx_quantize_d32(data, params).reshape(data.shape)
    out = d32_output(ctx, codes, pad, "failure preparing output", widened=False)
    return out, f32_scalar(params.minval), f32_scalar(params.maxval)


def _quant_for_test(ctx: KernelContext, x: Tensor, opts: Sequence[Tensor],
                    with_float: bool) -> tuple[Tensor, ...]:
    data = data_of(x, "input 0").astype(np.float32)
    d_before, w_left, w_right_min, h_pad = padding_options(ctx, opts, "quantfortest", 0,
                                                           height_name="height")
    pad = converter_padding(x.shape, w_left=w_left, w_right_min=w_right_min, h_pad=h_pad,
                            d_before=d_before)
    mn, mx = hq.fortest_range(data)
    if with_float:
        codes = hq.round_quantize(data, mn, mx)
        out = d32_output(ctx, codes, pad, "failure preparing output")
        return out, f32_scalar(mn), f32_scalar(mx), hq.requantized_float(codes, mn, mx)
    codes = codes_with_chunk_quirk(ctx, data, mn, mx, d_before)
    out = d32_output(ctx, codes, pad, "failure preparing output")
    return out, f32_scalar(mn), f32_scalar(mx)


def codes_with_chunk_quirk(ctx: KernelContext, data: np.ndarray, mn: np.float32,
                           mx: np.float32, d_before: int) -> np.ndarray:
    """Codes as the no-float-output loop writes them: after each depth chunk the source
    advances by 32, not by the chunk size (§21 quirk), so with depth-before padding p > 0
    every chunk after the first reads input shifted by p channels. Reads past the end of the
    input (unknown memory on the device) are taken as 0.0."""
    b, h, w, d = data.shape
    first = min(32 - d_before, d)
    if d_before == 0 or first == d:
        return hq.round_quantize(data, mn, mx)
    ctx.warn(f"QuantizeForTest_d32 without its float output and with depth-before padding "
             f"{d_before}: channels from {first} on are read shifted by {d_before} "
             "(device quirk, quantized-ops spec §21)")
    flat = data.reshape(-1)
    channel = np.arange(d)
    src = np.where(channel < first, channel, channel + d_before)       # within one pixel row
    pixel = (np.arange(b * h * w) * d)[:, None]
    index = pixel + src[None, :]
    values = np.where(index < flat.size, flat[np.minimum(index, flat.size - 1)], np.float32(0))
    return hq.round_quantize(values.reshape(data.shape), mn, mx)


def quantize_for_test_reference(ctx: KernelContext, x: Tensor,
                                *pads: Tensor) -> tuple[np.ndarray, ...]:
    """the value itself, as codes and as the requantized float output."""
    return (*ranged(real(x)), real(x))


@op("QuantizeForTest_d32", Category.QUANTIZE,
    reference=quantize_for_test_reference, inputs=(Port("x", DType.FLOAT32), *_PAD_OPTIONS),
    outputs=(*_QU8_D32_OUT, Port("requantized", DType.FLOAT32, optional=True)),
    d32_output=True, aliases=("QuantizeForTestd32",))
def quantize_for_test_d32(ctx: KernelContext, x: Tensor, *opts: Tensor) -> tuple[Tensor, ...]:
    """Float to d32 quint8 over the data's range, rounding to nearest; optional float copy.

    The optional 4th output, "requantized", holds what each code means,
    f32(f32(q * f32((max - min)/255)) + min), to feed a float reference chain with exactly
    the values the quantized chain starts from.

    Range (quantized-ops spec §21): fminf/fmaxf over the data (NaN skipped silently, inf kept:
    degenerate, not rejected), 0 included, max at least min + 0.001, then the zero nudge R2
    when min < 0. Codes: sat_u8(roundf_i32((x - min) * 255/(max - min))) in float32 (not the
    HVX quantizer). Padding options as Convert_to_d32 (graph spec §4.18), but depth-before
    padding IS honoured and depth-after fills to the next multiple of 32. Output padding is
    undefined on the device and filled with the session's padding byte.

    Quirk kept (§21): without the 4th output, the device advances its source by 32 after each
    depth chunk instead of by the chunk size; with depth-before padding p > 0 and p + depth >
    32 the channels after the first chunk are read shifted by p (reads past the input end are
    taken as 0.0; on the device they are unknown memory). A warning says so.

    Errors: an output too small for the padded tensor ("failure preparing output").
    """
    return _quant_for_test(ctx, x, opts, with_float=ctx.n_outputs >= 4)


@op("AutoQuantize_d32_ref", Category.QUANTIZE,
    reference=auto_quantize_d32_reference, inputs=(Port("x", DType.FLOAT32), *_PAD_OPTIONS),
    outputs=_QU8_D32_OUT, d32_output=True)
def auto_quantize_d32_ref(ctx: KernelContext, x: Tensor, *opts: Tensor) -> tuple[Tensor, ...]:
    """Float to d32 quint8, reference twin of AutoQuantize_d32: QuantizeForTest_d32's code.

    quantized-ops spec §20: runs QuantizeForTest_d32 (§21) with no 4th output, so its range
    rule (min width 0.001, NaN skipped), its round-to-nearest codes, its honoured depth-before
    padding and its depth-chunk quirk all apply; they differ from AutoQuantize_d32.
    """
    return _quant_for_test(ctx, x, opts, with_float=False)
