"""d32 elementwise add, subtract and multiply: the stateful engine of quantized-ops spec §13.

The three ops share ``op_add_d32.c``'s engine. The node keeps its adaptive output range in
``ctx.state`` (spec §1.9): the session keeps it between executions and a re-prepare clears it.
"""

from __future__ import annotations

import operator

import numpy as np

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import (
    adjust_with_constraints,
    fmaxf,
    fminf,
    level_size_zero,
    rndi1,
    sat_i16,
)
from hexscope.engine.ops.context import (
    KernelContext,
    Shared,
    output_fits,
    scalar_f,
)
from hexscope.engine.ops.elementwise.activation import range_words
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels import d32_engine as eng
from hexscope.engine.ops.kernels.addsub_range import (
    OutRange,
    set_before_run,
    tracked_extremes,
    widen_after_addsub,
    widen_after_addsub_span,
    widen_after_run,
)
from hexscope.engine.ops.kernels.d32_elementwise import addsub_d32_pass
from hexscope.engine.ops.kernels.d32_engine import Oper, f32
from hexscope.engine.ops.reference import ranged, real
from hexscope.engine.ops.registry import Category, Port, op, shared_doc
from hexscope.engine.tensor import Tensor, frozen_refs

_D32 = dict(dtype=DType.QUINT8, layout=Layout.D32)
_INPUTS = (Port("x", **_D32), Port("y", **_D32), Port("x_min", DType.FLOAT32),
           Port("x_max", DType.FLOAT32), Port("y_min", DType.FLOAT32),
           Port("y_max", DType.FLOAT32))
_FIXED = (Port("out_min", DType.FLOAT32, optional=True, doc="-inf or absent: not fixed"),
          Port("out_max", DType.FLOAT32, optional=True, doc="+inf or absent: not fixed"))
_OUTPUTS = (Port("z", **_D32), Port("z_min", DType.FLOAT32), Port("z_max", DType.FLOAT32))


# --- per-node state ---------------------------------------------------------------------------
def _prepare_state(st: dict, fixed_min: Tensor | None, fixed_max: Tensor | None) -> None:
    """``addsub_d32_check`` (§13.1): the fixed ends and the starting range."""
    r = OutRange(f32(0.0), f32(0.5), 0)
    if fixed_max is not None and f32(scalar_f(fixed_max)) < np.inf:
        r.precalc |= 2
        r.out_max = r.max_spec = fmaxf(0.0, scalar_f(fixed_max))
    if fixed_min is not None and f32(scalar_f(fixed_min)) > -np.inf:
        r.precalc |= 1
        r.out_min = r.min_spec = fminf(0.0, scalar_f(fixed_min))
        if r.precalc == 3:
            r.out_max = fmaxf(f32(r.out_min + f32(1e-6)), r.out_max)
            r.out_min, r.out_max = adjust_with_constraints(r.out_min, r.out_max, 3)
    st.update(prepared=True, range=r, strategy=None)


def _setup_strategy(st: dict, x: Tensor, y: Tensor, oper: Oper) -> None:
    """``setup_elementwise_strategy``: broadcast direction, swap and the 1111 mode (§13.2)."""
    for t, which in ((x, "1st"), (y, "2nd")):
        if t.layout is not Layout.D32:
            raise KernelError(f"unsupported broadcast mode: {which} tensor not d32 "
                              f"({t.describe()})")
    swap, b_to_a, a_to_b, bcast = False, True, True, 0
    for i, (da, db) in enumerate(zip(x.shape, y.shape, strict=True)):
        if da == db:
            bcast |= (da == 1) << i
        elif db == 1 and b_to_a:
            bcast, a_to_b = bcast | 1 << i, False
        elif da == 1 and a_to_b:
            bcast, b_to_a, swap = bcast | 1 << i, False, True
        else:
            raise KernelError(f"unsupported broadcast mode: incompatible {'BHWD'[i]}: dims "
                              f"{da} vs {db} (each dimension must be equal or 1, and "
                              "broadcast in one direction only)")
    if swap and oper is Oper.SUB:
        oper = Oper.RSUB
    st.update(swap=swap, oper=oper, mode_1111=bcast == 15 and st["range"].precalc == 0)


def _setup_scaling(st: dict, a: Tensor, b: Tensor, ranges: tuple) -> None:
    """``addsub_setup_scaling`` / ``mul_setup_scaling`` for the current input ranges."""
    st["ranges"] = ranges
    amin, amax, bmin, bmax = (ranges[2], ranges[3], ranges[0], ranges[1]) if st["swap"] \
        else ranges
    za, sa = level_size_zero(amin, amax)
    zb, sb = level_size_zero(bmin, bmax)
    st.update(za=za, sa=sa, zb=zb, sb=sb, amin=amin, amax=amax)
    st["single_b"] = int(b.array[0, 0, 0, 0]) if st["mode_1111"] else None
    if st["mode_1111"]:
        _scaling_1111(st, amin, amax)
        return
    if st["range"].precalc < 3:
        tmin, tmax = _extremes(st["oper"], amin, amax, bmin, bmax)
        set_before_run(st["range"], tmin, tmax, later_rule=st["oper"] is not Oper.MUL)
    _derive(st, fixed=st["range"].precalc == 3)


def _derive(st: dict, fixed: bool) -> None:
    if st["oper"] is Oper.MUL:
        st["scaling"] = eng.mul_scaling(st["za"], st["sa"], st["zb"], st["sb"],
                                        st["range"].out_min, st["range"].out_max)
    else:
        st["scaling"] = eng.addsub_scaling(st["za"], st["sa"], st["zb"], st["sb"],
                                           st["range"].out_min, st["range"].out_max,
                                           st["oper"], fixed)


def _extremes(oper: Oper, amin, amax, bmin, bmax) -> tuple:  # noqa: ANN001
    """Theoretical output extremes (Tmin, Tmax) of §13.4 (Tmax >= Tmin + 0.001 is applied by
    :func:`set_before_run`)."""
    if oper is Oper.MUL:
        tmax = fmaxf(f32(amax * bmax), f32(amin * bmin))
        tmin = fminf(f32(amax * bmin), f32(amin * bmax))
    else:
        tmax, tmin = {Oper.ADD: (amax + bmax, amin + bmin), Oper.SUB: (amax - bmin, amin - bmax),
                      Oper.RSUB: (bmax - amin, bmin - amax)}[oper]
    return f32(tmin), f32(tmax)


def _scaling_1111(st: dict, amin: np.float32, amax: np.float32) -> None:
    """§13.3: the scalar case is a scaled copy of a, with a computed range."""
    bv = f32(f32(st["single_b"] - st["zb"]) * st["sb"])
    if st["oper"] is Oper.MUL:
        out_min, out_max, scale, offs = f32(amin * bv), f32(amax * bv), 32767, 0
        if bv == 0:
            scale, out_max = 0, f32(0.5)
        elif bv < 0:
            out_min, out_max, scale, offs = out_max, out_min, -32768, 255 * 128
    else:
        out_min, out_max, scale, offs = _addsub_1111(st, amin, amax, bv)
    st["range"].out_min, st["range"].out_max = out_min, out_max
    st["scaling"] = (int(sat_i16(scale)), offs)


def _addsub_1111(st: dict, amin: np.float32, amax: np.float32, bv: np.float32) -> tuple:
    sa, oper = st["sa"], st["oper"]
    if oper is not Oper.ADD:
        bv = -bv
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        nz = f32(f32(st["za"]) - f32(bv / sa))
        arange = f32(amax - amin)
        scale, offs = 32768, 0
        if f32(-0.25) <= nz <= f32(255.25):
            out_min = f32(f32(-rndi1(nz)) * sa)
            out_max = f32(out_min + arange)
        else:
            out_min, out_max = (f32(0.0), f32(amax + bv)) if bv > 0 else (f32(amin + bv),
                                                                          f32(0.0))
            scale = rndi1(f32(f32(f32(32768.0) * arange) / f32(out_max - out_min)))
            if bv > 0:
                scale = int(sat_i16(scale))
                offs = 128 * 255 - ((255 * scale) >> 8)
    if oper is Oper.RSUB:
        scale, offs, out_min, out_max = -scale, 255 * 128 - offs, -out_max, -out_min
    if -128 <= scale <= 128 and (offs + 64) >> 7 == (scale * 255 + offs * 256 + 16384) >> 15:
        scale = 0
    return out_min, out_max, scale, offs


# --- execution ---------------------------------------------------------------------------------
def _run(ctx: KernelContext, oper: Oper, x: Tensor, y: Tensor, mins_maxes: tuple[Tensor, ...],
         fixed: tuple[Tensor | None, Tensor | None] = (None, None)) -> list[Tensor]:
    """``addsub_d32_execute_common``: keep or rebuild the strategy, run, maybe re-run once."""
    st = ctx.state
    steady = st.get("d32_steady")
    if steady is not None:
        found = _steady_run(st, steady, ctx, x, y, mins_maxes)
        if found is not None:
            return found
        del st["d32_steady"]
    if not st.get("prepared"):
        _prepare_state(st, *fixed)
    ranges = _ranges_of(st, mins_maxes)
    key = (x.shape, tuple(x.padding), x.layout, y.shape, tuple(y.padding), y.layout)
    try:
        if st["strategy"] != key:
            st["strategy"] = None
            _setup_strategy(st, x, y, oper)
            a_t = _operands(st, x, y)[0]
            pad = _out_padding(a_t)
            output_fits(ctx, 0, D32Geometry(a_t.shape, pad).elements,
                        f"quint8 {'x'.join(map(str, a_t.shape))} d32 pad={tuple(pad)}", True,
                        "failure preparing output")
            _setup_scaling(st, *_operands(st, x, y), ranges)
            st["strategy"] = key
        elif _rescale_needed(st, ranges, _operands(st, x, y)[1]):
            _setup_scaling(st, *_operands(st, x, y), ranges)
    except KernelError:
        # The library would keep a half-built strategy; the simulator rebuilds it next time.
        st["strategy"] = None
        raise
    a_t, b_t = _operands(st, x, y)
    if st["mode_1111"]:
        codes = _scaled_copy(a_t.array, *st["scaling"])
        out = _d32_output(ctx, codes, a_t)
        if st["scaling"][0] == 0:
            _zap_fill(out, int(codes.flat[0]) if codes.size else 0)
    else:
        out = _run_in_memory(ctx, st, a_t, b_t)
        if out is None:
            codes = _run_general(ctx, st, a_t.array, np.broadcast_to(b_t.array, a_t.shape))
            out = _d32_output(ctx, codes, a_t)
        else:
            _keep_steady(ctx, st, x, y, mins_maxes)
    return [out, *_range_outputs(st)]


def _keep_steady(ctx: KernelContext, st: dict, x: Tensor, y: Tensor,
                 mins_maxes: tuple[Tensor, ...]) -> None:
    """After a run through the compiled pass with both output ends fixed, the next run of the
    same inputs can change nothing the node keeps (no tracking, no re-run, the same
    strategy and scaling): what it needs is kept under one key for :func:`_steady_run`,
    the input geometry and fill, the range tensors by identity (frozen), and the node's
    range and scaling objects by identity (a restored or rebuilt state holds new ones)."""
    refs = st.get("range_refs")
    r = st["range"]
    if r.precalc != 3 or not isinstance(refs, Shared) \
            or not all(map(operator.is_, refs.key, mins_maxes)):
        return
    a = _operands(st, x, y)[0]
    pad = _out_padding(a)
    key = (x.shape, x.padding, x.layout, y.shape, y.padding, y.layout, ctx.padding_fill,
           refs.key, r, st["scaling"])
    st["d32_steady"] = Shared(key, (st["d32_addsub_pass"].value, st["swap"],
                                    pad == a.padding, pad, _range_outputs(st)))


def _steady_run(st: dict, steady: Shared, ctx: KernelContext, x: Tensor, y: Tensor,
                mins_maxes: tuple[Tensor, ...]) -> list[Tensor] | None:
    """:func:`_run`'s result from :func:`_keep_steady`'s entry when its key holds (a run of
    the compiled pass, the same bytes as the general path's); None otherwise."""
    (shape_x, pad_x, layout_x, shape_y, pad_y, layout_y, fill, refs, r,
     scaling) = steady.key  # type: ignore[misc]
    if not (shape_x == x.shape and pad_x == x.padding and layout_x is x.layout
            and shape_y == y.shape and pad_y == y.padding and layout_y is y.layout
            and fill == ctx.padding_fill and st.get("range") is r and r.precalc == 3
            and st.get("scaling") is scaling and len(refs) == len(mins_maxes)
            and all(map(operator.is_, refs, mins_maxes))):
        return None
    run, swap, same_pad, pad, ranges = steady.value  # type: ignore[misc]
    a, b = (y, x) if swap else (x, y)
    raw = run(a.raw, b.raw, scaling.a_scale, scaling.b_scale, scaling.offset,
              scaling.rsh)[0]
    out = a.alike(raw, DType.QUINT8) if same_pad \
        else Tensor(a.shape, DType.QUINT8, raw, Layout.D32, pad)
    return [out, *ranges]


def _ranges_of(st: dict, mins_maxes: tuple[Tensor, ...]) -> tuple[np.float32, ...]:
    """The input ranges as float32, read again only when the range tensors are not the
    frozen ones of the last run (:func:`frozen_refs`: the same objects, the same bits; a
    steady run skipped 4 scalar reads)."""
    kept = st.get("range_refs")
    if kept is not None:
        refs = kept.key
        if len(refs) == len(mins_maxes) and all(map(operator.is_, refs, mins_maxes)):
            return kept.value  # type: ignore[no-any-return]
    ranges = tuple(f32(scalar_f(t)) for t in mins_maxes)
    refs = frozen_refs(mins_maxes)
    st["range_refs"] = None if refs is None else Shared(refs, ranges)
    return ranges


def _range_outputs(st: dict) -> tuple[Tensor, Tensor]:
    """The node's output range as two frozen scalar tensors, kept while the range's bits stay
    (:func:`range_words` gives the same words for them): a steady range is not made again
    at every run (a trace keeps read-only tensors; these never change)."""
    words = range_words(st["range"].out_min, st["range"].out_max)
    kept = st.get("range_out")
    if isinstance(kept, Shared) and kept.key is words:
        return kept.value  # type: ignore[return-value]
    tensors = (Tensor.scalar_of(words[0]).readonly(), Tensor.scalar_of(words[1]).readonly())
    st["range_out"] = Shared(words, tensors)
    return tensors


def _operands(st: dict, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """(a, b): a is the full operand, b the one that broadcasts (x and y swapped if needed)."""
    return (y, x) if st["swap"] else (x, y)


def _rescale_needed(st: dict, ranges: tuple, b: Tensor) -> bool:
    """``elementwise_strategy_valid_check``: input ranges (float ==) or the 1111 value moved."""
    same = all(bool(r == s) for r, s in zip(ranges, st["ranges"], strict=True))
    return not same or (st["single_b"] is not None and int(b.array[0, 0, 0, 0]) != st["single_b"])


def _scaled_copy(a: np.ndarray, scale: int, offs: int) -> np.ndarray:
    """``tensor_copy_scaled_d32``: sat_u8((a*S + O*256 + 16384) >> 15), which also covers its
    copy, ones' complement and fill shortcuts (§13.3)."""
    y = (a.astype(np.int64) * scale + offs * 256 + 16384) >> 15
    return np.clip(y, 0, 255).astype(np.uint8)


def _run_general(ctx: KernelContext, st: dict, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """§13.5-§13.7: one pass with range tracking, and a second pass if a free end overflowed."""
    za, zb, s = st["za"], st["zb"], st["scaling"]
    mul = st["oper"] is Oper.MUL
    fast = None if mul else _addsub_tracked(a, b, s)
    if fast is not None:
        codes, lo, hi = fast
        if st["range"].precalc == 3 or not widen_after_addsub_span(ctx, st["range"], lo, hi, s):
            return codes
        _derive(st, fixed=False)
        again = _addsub_tracked(a, b, st["scaling"])
        return again[0] if again is not None else _codes(ctx, st, a, b)
    codes = _codes(ctx, st, a, b)
    if st["range"].precalc == 3:
        return codes
    if mul:
        rerun = _mul_rerun(ctx, st, eng.mul_intermediate(a, b, za, zb, s))
    else:
        rerun = widen_after_addsub(ctx, st["range"], eng.addsub_intermediate(a, b, s), s)
    if rerun:
        _derive(st, fixed=False)
        codes = _codes(ctx, st, a, b)
    return codes


def _run_in_memory(ctx: KernelContext, st: dict, a: Tensor, b: Tensor) -> Tensor | None:
    """:func:`_run_general`'s add/sub normal mode as one compiled pass over the two d32
    memories into the output's (:func:`addsub_d32_pass`: no unpack, no pack), with the same
    span tracking and re-run; the output's padding bytes are the fill, as
    :func:`_d32_output` leaves them. None where it does not apply (multiply, under-range
    mode, a broadcast, no elements, the compiled kernels off): the numpy path then."""
    s = st["scaling"]
    if st["oper"] is Oper.MUL or s.underrange:
        return None
    pad = _out_padding(a)
    key = (a.shape, a.padding, b.shape, b.padding, ctx.padding_fill)
    kept = ctx.state.get("d32_addsub_pass")
    if isinstance(kept, Shared) and kept.key == key:
        run = kept.value
    else:
        run = addsub_d32_pass(a.geometry, b.geometry, D32Geometry(a.shape, pad),
                              ctx.padding_fill)
        ctx.state["d32_addsub_pass"] = Shared(key, run)
    if run is None:
        return None
    raw, lo, hi = run(a.raw, b.raw, s.a_scale, s.b_scale, s.offset, s.rsh)  # type: ignore[operator]
    if st["range"].precalc != 3 and widen_after_addsub_span(ctx, st["range"], lo, hi, s):
        _derive(st, fixed=False)
        s = st["scaling"]
        if s.underrange:        # as _run_general: its second pass on the numpy path
            return _d32_output(ctx, _codes(ctx, st, a.array, b.array), a)
        raw = run(a.raw, b.raw, s.a_scale, s.b_scale, s.offset, s.rsh)[0]  # type: ignore[operator]
    return Tensor(a.shape, DType.QUINT8, raw, Layout.D32, pad)


def _addsub_tracked(a: np.ndarray, b: np.ndarray, s: eng.AddSubScaling
                    ) -> tuple[np.ndarray, int | None, int | None] | None:
    """The add/sub normal mode in one compiled pass (``addsub_normal``, the flat add's
    kernel): the codes and the span of the intermediate t, exactly what
    ``addsub_codes`` and ``addsub_intermediate`` give in numpy's passes. None where it
    does not apply (under-range mode, no elements, the compiled kernels off)."""
    kernel = compiled.kernel("addsub_normal")
    if kernel is None or s.underrange or not a.size:
        return None
    pair = []
    for x in (a, b):
        flat = np.ascontiguousarray(x).reshape(-1).view()
        flat.flags.writeable = False        # the kernel's signature takes a read-only pair
        pair.append(flat)
    y = np.empty(a.shape, np.uint8)
    bounds = np.empty(2, np.int64)
    kernel(pair[0], pair[1], s.a_scale, s.b_scale, s.offset, s.rsh, y.reshape(-1), bounds)
    return y, int(bounds[0]), int(bounds[1])


def _codes(ctx: KernelContext, st: dict, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    s = st["scaling"]
    if st["oper"] is not Oper.MUL:
        return eng.addsub_codes(a, b, s)
    if s.rsh <= 0:
        ctx.warn(f"multiply scaling has a right shift of {s.rsh}: the device's vector shift "
                 "by a count <= 0 is unconfirmed (spec §13.6); the simulator applies no shift")
    return eng.mul_codes(a, b, st["za"], st["zb"], s)


def _mul_rerun(ctx: KernelContext, st: dict, p: np.ndarray) -> bool:
    """``check_mul_need_rerun``: an end overflows if its tracked p, sent through the code
    formula without the int16 saturation, leaves 0..255 (§13.7)."""
    s = st["scaling"]
    lo, hi = tracked_extremes(p, -s.range_bias)
    low_over = eng.mul_code_unsaturated(lo, s) < 0
    high_over = eng.mul_code_unsaturated(hi, s) > 255
    return widen_after_run(ctx, st["range"], eng.mul_actual(lo, s), eng.mul_actual(hi, s),
                           low_over, high_over)


def _d32_output(ctx: KernelContext, codes: np.ndarray, a: Tensor) -> Tensor:
    """The output takes a's height and width padding, no depth-before padding, and depth-after
    padding to the count of a's slices that hold data (``setup_elementwise_strategy``). Padding
    is left undefined."""
    return Tensor.from_array(codes, DType.QUINT8).to_d32(_out_padding(a),
                                                         fill=ctx.padding_fill)


def _out_padding(a: Tensor) -> D32Padding:
    # setup_elementwise_strategy (op_add_d32.c): depth-after nd32 * 32 - depth, where nd32 is
    # tinA.nd32, the slices of a that hold data (nn_graph_types.h): a padding-only slice of a
    # is not passed on.
    p = a.padding
    nd32 = (p.d_before + a.shape[3] + 31) // 32
    return D32Padding(p.h_before, p.h_after, p.w_before, p.w_after, 0, nd32 * 32 - a.shape[3])


def _zap_fill(out: Tensor, value: int) -> None:
    """A fill (scale 0) memsets, per batch, from the vector holding (h=0, w=0) of slice 0 to
    the end of the last valid vector of the last slice of the last row (``tensor_copy_scaled``)
    """
    g, p = out.geometry, out.padding
    _, h, w, _ = out.shape
    if h == 0 or w == 0:
        return
    start = p.h_before * g.row_stride + p.w_before * 32
    align = start % 128
    cols = -(-(w * 32 + align) // 128) * 128
    # tensor_copy_scaled_d32 (tensor_copy_scaled.c) zaps height * tout.nd32 d32 rows, nd32
    # being the slices that hold data (nn_graph_types.h), not every slice.
    nd32 = (p.d_before + out.shape[3] + 31) // 32
    length = cols + (h * nd32 - 1) * g.d32_stride
    raw = out.raw
    for batch in range(out.shape[0]):
        base = batch * g.batch_stride + start - align
        raw[base:base + length] = value


def _fixed(rest: tuple[Tensor, ...]) -> tuple[Tensor | None, Tensor | None]:
    return (rest[0] if len(rest) > 0 else None, rest[1] if len(rest) > 1 else None)


_ENGINE_NOTES = """
    Output: a d32 tensor with the shape of the larger operand, that operand's height and
    width padding, no depth-before padding and depth-after padding up to the count of its
    slices that hold data (``setup_elementwise_strategy``, ``nd32``); the padding bytes are
    undefined and show the session's padding fill (a scalar fill in mode 1111 also writes the
    fill value over the span the library's memset covers).

    State (§1.9, §13.1): the adaptive output range lives in the node's state. The scaling is
    re-derived only when the shapes/formats change or an input range changes (float ==), or,
    in mode 1111, when the scalar's code changes. The library also rebuilds when a buffer
    address changes; the simulator treats buffers as stable, as graph-allocated buffers are.
    The fixed ends (inputs 6 and 7) are read on the first execution after prepare (the
    library reads them at prepare; they should be Consts).

    Fidelity: the arithmetic is computed on logical values (spec §1.8), so inputs with
    depth-before padding are handled as the spec describes. The vector rounding shift by 0
    is assumed to add nothing (§23 item 2). After a "scaling failed" error the strategy is
    rebuilt on the next run. The add/subtract's normal mode without broadcast runs as one
    compiled pass over the two inputs' d32 memory into the output's (the same bytes as the
    numpy path, which runs without the compiled kernels).

    Errors: "unsupported broadcast mode" (a non-d32 input; a dimension that is neither equal
    nor 1; broadcast in both directions), "scaling failed" (§13.5).
"""


def add_d32_reference(ctx: KernelContext, x: Tensor, y: Tensor, x_min: Tensor, x_max: Tensor,
         y_min: Tensor, y_max: Tensor, *out_range: Tensor) -> tuple[np.ndarray, ...]:
    """x + y of the dequantized logical tensors (broadcast)."""
    return ranged(real(x, x_min, x_max) + real(y, y_min, y_max))


@op("QuantizedAdd_8p8to8_d32", Category.ELEMENTWISE,
    reference=add_d32_reference, inputs=_INPUTS + _FIXED,
    outputs=_OUTPUTS, d32_output=True, aliases=("QuantizedAdd_8x8to8_d32",))
@shared_doc(_ENGINE_NOTES)
def quantized_add_8p8to8_d32(ctx: KernelContext, x: Tensor, y: Tensor, x_min: Tensor,
                             x_max: Tensor, y_min: Tensor, y_max: Tensor,
                             *fixed: Tensor) -> list[Tensor]:
    """Adds two d32 quint8 tensors (broadcasting) into an adaptive 8-bit output range.

    Quantized-ops spec §16 on the engine of §13. y may broadcast to x or x to y (numpy style,
    one direction only). Optional inputs 6/7 fix the output min/max (-inf/+inf or absent:
    free); both fixed means no tracking, saturation outside the range, and under-range mode
    for gains up to 64x. A scalar operand with both ends free is a scaled copy with a computed
    range (mode 1111, §13.3). Otherwise the range starts at 1/8 of the theoretical extremes,
    is tracked over the valid elements, and one re-run follows when a free end overflowed
    (§13.4-§13.7); the 1/32 rule widens it when the input ranges change.
    """
    return _run(ctx, Oper.ADD, x, y, (x_min, x_max, y_min, y_max), _fixed(fixed))


def sub_d32_reference(ctx: KernelContext, x: Tensor, y: Tensor, x_min: Tensor, x_max: Tensor,
         y_min: Tensor, y_max: Tensor, *out_range: Tensor) -> tuple[np.ndarray, ...]:
    """x - y of the dequantized logical tensors (broadcast)."""
    return ranged(real(x, x_min, x_max) - real(y, y_min, y_max))


@op("QuantizedSub_8p8to8_d32", Category.ELEMENTWISE,
    reference=sub_d32_reference, inputs=_INPUTS + _FIXED,
    outputs=_OUTPUTS, d32_output=True, aliases=("QuantizedSub_8x8to8_d32",))
@shared_doc(_ENGINE_NOTES)
def quantized_sub_8p8to8_d32(ctx: KernelContext, x: Tensor, y: Tensor, x_min: Tensor,
                             x_max: Tensor, y_min: Tensor, y_max: Tensor,
                             *fixed: Tensor) -> list[Tensor]:
    """Subtracts two d32 quint8 tensors (x - y, broadcasting) into an adaptive 8-bit range.

    Quantized-ops spec §16 on the engine of §13, as QuantizedAdd_8p8to8_d32. When x is the
    smaller operand (x broadcasts to y) the operands are swapped and the engine runs a
    reverse subtract, so the value is still x - y ("rsub"); the swapped ranges are used
    everywhere, including the extremes of §13.4. The scale of the subtracted operand is
    negated and the exponent comes from the larger of the two scales (§13.5).
    """
    return _run(ctx, Oper.SUB, x, y, (x_min, x_max, y_min, y_max), _fixed(fixed))


def mul_d32_reference(ctx: KernelContext, x: Tensor, y: Tensor, x_min: Tensor, x_max: Tensor,
         y_min: Tensor, y_max: Tensor, *out_range: Tensor) -> tuple[np.ndarray, ...]:
    """x * y of the dequantized logical tensors (broadcast)."""
    return ranged(real(x, x_min, x_max) * real(y, y_min, y_max))


@op("QuantizedMul_8x8to8_d32", Category.ELEMENTWISE,
    reference=mul_d32_reference, inputs=_INPUTS, outputs=_OUTPUTS,
    d32_output=True)
@shared_doc(_ENGINE_NOTES)
def quantized_mul_8x8to8_d32(ctx: KernelContext, x: Tensor, y: Tensor, x_min: Tensor,
                             x_max: Tensor, y_min: Tensor, y_max: Tensor) -> list[Tensor]:
    """Multiplies two d32 quint8 tensors (broadcasting) into an adaptive 8-bit output range.

    Quantized-ops spec §14 on the engine of §13 (the built ``op_add_d32.c``, not the unbuilt
    ``op_mul_d32.c``). Exactly 6 inputs. A scalar operand gives a copy, a zero fill with range
    (amin*0, 0.5) or the ones' complement with swapped ends (mode 1111). Otherwise
    p = (a-za)(b-zb) - range_bias (mod 2**16) is scaled to the output (§13.6); the range
    starts at 1/8 of the extremes and only grows through the single re-run (§13.7).
    When the scaling needs a right shift <= 0 (possible once the input ranges grow between
    runs) the device's shift is unconfirmed: the simulator applies no shift, as the library's
    own re-run test does, and the node shows a warning.
    """
    return _run(ctx, Oper.MUL, x, y, (x_min, x_max, y_min, y_max))

