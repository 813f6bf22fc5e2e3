"""Requantize_8to8_d32: the d32 form of Requantize_8to8, which nnlib's prepare makes of a
Requantize_8to8 fed by a Convert_from_d32 (op_requantize.c ``do_requantize_8to8_execute_d32``
with quantize.c ``nn_requantize_qu8_to_qu8_hvx_d32``)."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import exact_memo, getexp, rndi1
from hexscope.engine.ops.context import KernelContext, Shared, output_fits, scalar_f
from hexscope.engine.ops.elementwise.activation import range_words
from hexscope.engine.ops.kernels.d32_elementwise import (
    RequantizeSteps,
    requantize_d32_lut_pass,
    requantize_d32_pass,
)
from hexscope.engine.ops.quant.requantize_fixed import (
    requantize_8to8_plan,
    requantize_u8_by_table,
    requantize_u8_lanes,
)
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.quant import adjust_range
from hexscope.engine.tensor import Tensor, frozen_refs

f32 = np.float32
_F32 = DType.FLOAT32


@exact_memo
def checked_plan(x_min: float, x_max: float, out_min: float, out_max: float
                 ) -> tuple[np.float32, int, int, np.ndarray, np.ndarray]:
    """(gain, in_offset, out_offset, out_min word, out_max word) after the op's checks, which
    are the flat op's, in the same order (op_requantize.c:421-438); memoised on the bits."""
    o_min, o_max = f32(out_min), f32(out_max)
    with np.errstate(all="ignore"):
        a_min, a_max = adjust_range(o_min, o_max)
    if f32(a_min) != o_min or f32(a_max) != o_max:
        raise KernelError(f"Requant_8to8: the output range ({o_min:g}, {o_max:g}) does not "
                          f"give an integer zero code; use ({a_min:.9g}, {a_max:.9g})")
    gain, in_off, out_off = requantize_8to8_plan(x_min, x_max, o_min, o_max)
    if getexp(gain) > 15:
        raise KernelError(f"Requantize_8to8: the output range is too small compared to the "
                          f"input range (gain {float(gain):g} >= 2^15)")
    # quantize_adjust_range's fminf(0.0f, out_min) is Hexagon's sfmin on the device, which
    # gives -0.0 for a given -0.0 (seen under QEMU; glibc's fminf gives +0.0)
    lo = f32(-0.0) if o_min == 0 and np.signbit(o_min) else f32(a_min)
    w_min, w_max = range_words(lo, f32(a_max))
    return gain, in_off, out_off, w_min, w_max


def written_region(x: Tensor) -> tuple[slice, slice, slice]:
    """The rows, depth slices and padded columns of each batch that the HVX loop writes,
    as slices of the memory view [B, H_tot, slices, W_tot, 32]: every data row (no height
    padding row), the slices holding data (``nd32``), and the columns from the left
    padding rounded down to a multiple of 4 (``wskip = w_pad_before & ~3``) for
    (W_tot - wskip) / 4 whole vectors of 4 columns (``d32_iters``)."""
    return written_region_of(x.geometry)


def written_region_of(g: D32Geometry) -> tuple[slice, slice, slice]:
    """:func:`written_region` of a geometry."""
    p = g.padding
    wskip = p.w_before & ~3
    cols = (g.w_total - wskip) // 4 * 4
    return (slice(p.h_before, p.h_before + g.shape[1]), slice(0, g.n_data_slices),
            slice(wskip, wskip + cols))


def requantize_d32_memory(x: Tensor, gain: np.float32, in_off: int, out_off: int,
                          fill: int) -> np.ndarray:
    """The output memory: the written region requantized lane by lane (a byte's HVX lane
    parity is its memory offset's: every vector is 128-byte aligned), the rest ``fill``."""
    memory_shape, nbytes, unwritten = _layout(x.shape, x.padding)
    out = requantize_u8_by_table(np.asarray(x.raw)[:nbytes], gain, in_off, out_off)
    if unwritten:
        # the bytes the loop never stores keep what the buffer held: the session's fill
        mem = out.reshape(memory_shape)
        for where in unwritten:
            mem[where] = fill
    return out


@functools.lru_cache(maxsize=512)
def _layout(shape: tuple[int, int, int, int], padding: D32Padding
            ) -> tuple[tuple[int, ...], int, tuple[tuple[slice, ...], ...]]:
    """(memory shape, bytes, the index tuples of the memory view the loop leaves alone) of a
    d32 tensor: the same few layouts repeat node after node and run after run."""
    g = D32Geometry(shape, padding)
    rows, slices, cols = written_region_of(g)
    every = slice(None)
    unwritten = []
    if rows.start:
        unwritten.append((every, slice(0, rows.start)))
    if rows.stop < g.h_total:
        unwritten.append((every, slice(rows.stop, None)))
    if slices.stop < g.n_slices:
        unwritten.append((every, every, slice(slices.stop, None)))
    if cols.start:
        unwritten.append((every, rows, slice(0, slices.stop), slice(0, cols.start)))
    if cols.stop < g.w_total:
        unwritten.append((every, rows, slice(0, slices.stop), slice(cols.stop, None)))
    return g.memory_shape, g.elements, tuple(unwritten)


def lane_steps(gain: np.float32, in_off: int, out_off: int) -> RequantizeSteps:
    """:func:`requantize_u8_lanes`'s three paths as one step per lane parity, for
    :func:`requantize_d32_pass`: y = sat_u8((((c - in_off) * mul + add) >> shift) + out_off).
    Its 16-bit saturations cannot bind before the last clamp to 0..255 (|d * gi| < 2^24,
    and a saturated lane saturates the byte the same way), so no step is lost; the caller
    checks the 256 codes at both parities all the same (:func:`_compiled_pass`)."""
    if abs(float(gain) - 1.0) < 6.1035156e-05:      # CLOSE_ENUF(gain, 1.0f)
        return 0, 1, 1, 0, 0, max(-32768, min(32767, out_off - in_off))
    if gain > 1:
        frac = f32(np.frexp(gain)[0])
        gi = max(-32768, min(32767, rndi1(f32(frac * f32(32768.0)))))
        shift = 15 - getexp(gain)
        return in_off, gi, gi, (1 << (shift - 1)) if shift > 0 else 0, shift, out_off
    gi = max(-32768, min(32767, rndi1(f32(gain * f32(32768.0)))))
    # the odd lanes multiply by the upper half of gi | gi << 16: -1 for a negative gi
    return in_off, 2 * gi, 2 * (-1 if gi < 0 else gi), 32768, 16, out_off


def _compiled_pass(x: Tensor, gain: np.float32, in_off: int, out_off: int, fill: int
                   ) -> Callable[[np.ndarray], np.ndarray] | None:
    """The compiled pass of the output memory for x's layout, or None (the kernels off, or
    the step not giving :func:`requantize_u8_lanes`'s 256 codes at both lane parities,
    checked through the kernel itself on a memory of one row holding each code twice).
    Where the CPU has byte permutes the pass looks the codes up in those 512 bytes instead
    (:func:`requantize_d32_lut_pass`): the lane arithmetic's own table."""
    g = x.geometry
    pairs = np.repeat(np.arange(256, dtype=np.uint8), 2)
    want = requantize_u8_lanes(pairs, gain, in_off, out_off)
    tables = np.concatenate((want[0::2], want[1::2]))
    looked_up = requantize_d32_lut_pass(g.memory_shape, written_region_of(g), tables, fill)
    if looked_up is not None:
        return looked_up
    steps = lane_steps(gain, in_off, out_off)
    probe = requantize_d32_pass((1, 1, 1, 16, 32), (slice(0, 1), slice(0, 1), slice(0, 16)),
                                steps, fill)
    if probe is None or not np.array_equal(probe(pairs), want):
        return None
    return requantize_d32_pass(g.memory_shape, written_region_of(g), steps, fill)


def _reference(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor, out_min: Tensor,
               out_max: Tensor) -> tuple[np.ndarray, ...]:
    """the value itself, clamped to the requested output range."""
    lo, hi = scalar_f(out_min), scalar_f(out_max)
    return ranged(np.clip(real(x, x_min, x_max), lo, hi))[0], np.float32(lo), np.float32(hi)


@op("Requantize_8to8_d32", Category.QUANTIZE, reference=_reference,
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("x_min", _F32),
            Port("x_max", _F32), Port("out_min", _F32), Port("out_max", _F32)),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32), Port("y_min", _F32),
             Port("y_max", _F32)),
    d32_output=True)
def requantize_8to8_d32(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                        out_min: Tensor, out_max: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Change the range of d32 quint8 data to a given output range (Requantize_8to8 in d32).

    Semantics (op_requantize.c ``do_requantize_8to8_execute_d32``): the output has the
    input's shape and padding (``tensor_out_prepare_d32_sameas``); the checks, the gain and
    the offsets are the flat Requantize_8to8's; ``nn_requantize_qu8_to_qu8_hvx_d32`` then
    runs the flat op's three HVX paths (``CLOSE_ENUF(gain, 1)``, gain > 1, otherwise) on whole
    128-byte vectors: per batch, every data row and every depth slice holding data, from
    column ``w_pad_before & ~3`` to the row's end. So the width padding from that column on
    and the depth padding lanes are requantized from the input's padding bytes; the height
    padding rows, the left padding columns before that column and the depth slices of
    padding only are not written (they show the session's padding fill).

    Fidelity: byte-exact with nnlib's HVX code under QEMU (tests/oracle/py/campaigns_d32req.py;
    docs/oracle-requantize-d32.md), padding included. A given output min of -0.0 comes out
    -0.0 (Hexagon's ``sfmin`` in ``quantize_adjust_range``; the flat op, checked against the
    x86 build, gives 0.0). The data codes are the flat op's except
    for a negative gain (a reversed input range): the flat op's odd lanes are its odd
    elements, the d32 op's odd lanes its odd depth positions in memory (d_before + d), so with
    an odd depth the two differ there.
    The memory is written in one compiled pass (kernels/d32_elementwise.py) whose step is
    checked on the 256 codes at both lane parities against the lane arithmetic; without the
    compiled kernels, or should the check fail, the numpy path computes the same bytes.

    Errors (KernelError): the flat op's ("does not give an integer zero code", with the range
    to use; "too small compared to the input range" for a gain of 2^15 or more); a non-d32
    input; an output too small for the input's padded memory ("out too small!").
    """
    # the node keeps the compiled pass for its layout and (memoised, so the same) plan,
    # with the four range tensors when frozen: the same objects next run hold the same
    # bits, so a steady run is a few identity tests and the pass (no scalar read, no plan
    # look-up: ~3 us of a node's ~16)
    layout = (x.shape, x.padding, x.layout, ctx.padding_fill)
    kept = ctx.state.get("d32_requantize")
    if not (isinstance(kept, Shared) and kept.key[1] == layout):  # type: ignore[index]
        kept = None
        if x.layout is not Layout.D32:
            raise KernelError(f"Requantize_8to8_d32: input 0 is not d32 ({x.describe()})")
        defs = ctx.output_defs
        if defs and defs[0].max_sizes and x.nbytes > defs[0].capacity(True, 0):
            output_fits(ctx, 0, x.nbytes, f"quint8 {'x'.join(map(str, x.shape))} d32 "
                        f"pad={tuple(x.padding)}", True, "out too small!")
    refs = None if kept is None else kept.key[2]  # type: ignore[index]
    same = refs is not None and refs[0] is x_min and refs[1] is x_max \
        and refs[2] is out_min and refs[3] is out_max
    plan = kept.key[0] if same else checked_plan(  # type: ignore[union-attr]
        scalar_f(x_min), scalar_f(x_max), scalar_f(out_min), scalar_f(out_max))
    gain, in_off, out_off, w_min, w_max = plan
    if kept is not None and kept.key[0] is plan:  # type: ignore[index]
        run, y_min, y_max = kept.value  # type: ignore[misc]
        if not same:
            # new tensors of the same bits (a Const remade, an upstream range remade)
            fresh = frozen_refs((x_min, x_max, out_min, out_max))
            if fresh is not None:
                ctx.state["d32_requantize"] = Shared((plan, layout, fresh), kept.value)
    else:
        run = _compiled_pass(x, gain, in_off, out_off, ctx.padding_fill)
        # the range outputs are the plan's words: made once, frozen, and given out again
        # at every run (a trace keeps read-only tensors; these can never change)
        y_min, y_max = Tensor.scalar_of(w_min).readonly(), Tensor.scalar_of(w_max).readonly()
        ctx.state["d32_requantize"] = Shared(
            (plan, layout, frozen_refs((x_min, x_max, out_min, out_max))), (run, y_min, y_max))
    if run is not None:
        raw = run(x.raw)
    else:
        raw = requantize_d32_memory(x, gain, in_off, out_off, ctx.padding_fill)
    return x.alike(raw, DType.QUINT8), y_min, y_max
