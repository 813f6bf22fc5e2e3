"""Test ops: Check and the Close family (graph spec §4.5-§4.8, ``op_check.c``, ``op_close.c``).

A failed check writes hexagon_nn's level-0 report to the log and raises
:class:`~hexscope.engine.errors.CheckFailed`, whose message says by how much the data differs
and where the worst element is, as (b,h,w,d).
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import CheckFailed
from hexscope.engine.ops.context import KernelContext, scalar_f
from hexscope.engine.ops.debug.cfmt import c_a, c_f, c_ptr, c_x
from hexscope.engine.ops.reference import NoReference
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Shape, Tensor

#: hexagon_nn's FUDGE_FACTOR: default tolerance and epsilon floor of the Close ops.
FUDGE_FACTOR = 0.07
#: Close_f lists elements 0..MAX_TO_SHOW when it fails.
MAX_TO_SHOW = 2000
_F = np.float32
_FIELDS = ("shape.batches", "shape.height", "shape.width", "shape.depth", "data_size")


def bhwd(index: int, shape: Shape) -> tuple[int, int, int, int]:
    """The (b,h,w,d) position of flat element ``index`` in a plain tensor of ``shape``."""
    _, h, w, d = (max(1, n) for n in shape)
    return index // (h * w * d), index // (w * d) % h, index // d % w, index % d


def _where(index: int, shape: Shape) -> str:
    return "(b,h,w,d)=({},{},{},{})".format(*bhwd(index, shape))


def _shape_fields(t: Tensor) -> tuple[int, ...]:
    return (*t.shape, t.nbytes)


def _require_same_shape(ctx: KernelContext, dut: Tensor, ref: Tensor, close: bool) -> None:
    """The CHECK macro: dims then data_size, in that order; the first mismatch fails."""
    for name, a, b in zip(_FIELDS, _shape_fields(dut), _shape_fields(ref), strict=True):
        if a != b:
            text = f"check fail {name} ({a} vs {b})" if close else \
                f"check fail {name} {a} != {b} "
            ctx.log(0, text)
            raise CheckFailed(f"{text.strip()}: DUT is {dut.describe()}, reference is "
                              f"{ref.describe()}")


def _words(t: Tensor, np_type: type, count: int) -> np.ndarray:
    """The first ``count`` elements of the data bytes reinterpreted, as the C pointer cast."""
    size = np.dtype(np_type).itemsize
    return t.buffer[: count * size].view(np_type)


@op("Check", Category.CHECK,
    reference=NoReference("a test assertion on codes; it computes no value"),
    inputs=(Port("dut", None, layout=None), Port("ref", None, layout=None)))
def check(ctx: KernelContext, dut: Tensor, ref: Tensor) -> tuple[()]:
    """Fails unless the DUT equals the reference exactly (shape, size and bytes).

    Compares batches, height, width, depth and ``data_size`` in that order ("check fail
    <field> <dut> != <ref>"), then every byte ("data mismatch"). Format and padding are not
    compared (graph spec §4.5).
    """
    ctx.log(2, f"check execute. self={c_ptr(ctx.node_id)} ")
    _require_same_shape(ctx, dut, ref, close=False)
    a, b = dut.buffer, ref.buffer
    differ = np.flatnonzero(a != b)
    if differ.size:
        ctx.log(0, "data mismatch")
        first = int(differ[0])
        size = dut.dtype.size
        where = _where(first // size, ref.shape) if ref.layout is dut.layout and \
            dut.layout.name == "FLAT" else f"memory offset {first}"
        raise CheckFailed(f"data mismatch: {differ.size} of {a.size} bytes differ; the first "
                          f"at byte {first}, element {first // size} {where}: "
                          f"0x{int(a[first]):02x} vs 0x{int(b[first]):02x}")
    ctx.log(2, f"check node {c_ptr(ctx.node_id)} OK")
    return ()


def _welford(diff: np.ndarray) -> tuple[np.float32, np.float32]:
    """Mean and sd of the signed error with the library's float32 running update."""
    mean, s = _F(0), _F(0)
    with np.errstate(all="ignore"):
        for i, err in enumerate(diff):
            prev = mean
            mean = _F(mean + (err - mean) / _F(i + 1))
            s = _F(s + (err - mean) * (err - prev))
        return mean, _F(np.sqrt(_F(s / _F(max(1, diff.size)))))


def _close_f_report(ctx: KernelContext, a: np.ndarray, b: np.ndarray, worst: int,
                    stats: tuple[np.float32, ...], shape: Shape) -> None:
    """The level-0 failure listing of close_execute_f."""
    max_diff, value_range, epsilon = stats
    with np.errstate(all="ignore"):
        diff = a - b
    mean, sd = _welford(diff)
    ctx.log(0, f"data stats: mean_error={c_f(mean)} sd_error={c_f(sd)}")
    ctx.log(0, f"data not close. Worst offender: i: {worst}/{a.size} a[i]: {c_a(a[worst])} "
               f"{c_f(a[worst])} b[i]: {c_a(b[worst])} {c_f(b[worst])} max_diff={c_f(max_diff)} "
               f"range={c_f(value_range)} epsilon={c_f(epsilon)} shape=%d,%d,%d,%d" % shape)
    ctx.log(0, "\t\tActual\t\tExpected\tDiff")
    for i in range(a.size):
        _, h, w, d = bhwd(i, shape)
        mark = " <====" if i == worst else ""
        ctx.log(0, f"{i}[{h},{w},{d}])\t{c_f(a[i])}\t{c_f(b[i])}\t{c_f(diff[i])}{mark}")
        if i >= MAX_TO_SHOW:
            # The library's format has no argument here (garbage); we print the count.
            ctx.log(0, f"Stopping at {a.size} elements")
            break


@op("Close_f", Category.CHECK,
    reference=NoReference("a test assertion on codes; it computes no value"),
    inputs=(Port("dut", DType.FLOAT32), Port("ref", DType.FLOAT32),
            Port("tolerance", DType.FLOAT32, optional=True)))
def close_f(ctx: KernelContext, dut: Tensor, ref: Tensor, *tol: Tensor) -> tuple[()]:
    """Fails if the float DUT differs from the reference by more than a fraction of its range.

    ``epsilon = max(0.07, (max(ref, 0) - min(ref, 0)) * tolerance)``: the tolerance (input 2,
    default 0.07) is a *fraction* of the reference range, which always includes 0, and the
    absolute floor is 0.07. The check fails when ``max |dut - ref| > epsilon`` and also when
    any difference is NaN (graph spec §4.6). The first 20 NaN positions, the NaN count, and
    on failure the error stats, the worst offender and the element listing (at most 2001
    lines) go to the log at level 0, as the library writes them. All arithmetic is float32.
    """
    fudge = _F(scalar_f(tol[0])) if tol else _F(FUDGE_FACTOR)
    ctx.log(2, f"close check_fvals execute. self={c_ptr(ctx.node_id)} ")
    _require_same_shape(ctx, dut, ref, close=True)
    count = ref.nbytes // 4
    a, b = _words(dut, np.float32, count), _words(ref, np.float32, count)
    with np.errstate(all="ignore"):
        ref_max = np.fmax.reduce(b, initial=_F(0))
        ref_min = np.fmin.reduce(b, initial=_F(0))
        cur = np.abs(a - b)
        value_range = _F(ref_max - ref_min)
        epsilon = _F(value_range * fudge)
    if float(epsilon) < FUDGE_FACTOR:
        epsilon = _F(FUDGE_FACTOR)
    nans = np.flatnonzero(np.isnan(cur))
    for i in nans[:20]:
        ctx.log(0, f"NaN found at location {i}")
    if nans.size:
        ctx.log(0, f"{nans.size} NAN values found!!")
    finite = np.where(np.isnan(cur), _F(-1), cur)
    worst = int(np.argmax(finite)) if count else 0
    max_diff = _F(max(finite[worst], 0)) if count else _F(0)
    if max_diff == 0:
        worst = 0      # matches device: the index only moves when a larger difference is seen
    if max_diff > epsilon:
        _close_f_report(ctx, a, b, worst, (max_diff, value_range, epsilon), ref.shape)
        raise CheckFailed(
            f"data not close: max |dut - ref| = {c_f(max_diff)} exceeds epsilon "
            f"{c_f(epsilon)} (range {c_f(value_range)} x tolerance {float(fudge):g}, floor "
            f"0.07); worst element {worst} {_where(worst, ref.shape)}: dut {c_f(a[worst])}, "
            f"ref {c_f(b[worst])}" + (f"; {nans.size} NaN differences" if nans.size else ""))
    ctx.log(2, f"close node {c_ptr(ctx.node_id)} OK")
    if nans.size:
        first = int(nans[0])
        raise CheckFailed(f"{nans.size} NaN differences (the library fails on any NaN); the "
                          f"first at element {first} {_where(first, ref.shape)}: dut "
                          f"{c_f(a[first])}, ref {c_f(b[first])}")
    return ()


def _close_int(ctx: KernelContext, dut: Tensor, ref: Tensor, np_type: type) -> tuple[()]:
    """close_execute with check_u8vals / check_i32vals: a relative error of 7% of max|ref|."""
    ctx.log(2, f"close execute. self={c_ptr(ctx.node_id)} ")
    _require_same_shape(ctx, dut, ref, close=True)
    count = dut.nbytes // np.dtype(np_type).itemsize
    a = _words(dut, np_type, count).astype(np.int64)
    b = _words(ref, np_type, count).astype(np.int64)
    # matches device: |ref| as unsigned, so INT_MIN counts as 2^31
    top = int(np.abs(b).max()) if count else 0
    with np.errstate(all="ignore"):
        ratio = np.abs((a.astype(_F) - b.astype(_F)) / _F(top))
    bad = np.flatnonzero(ratio.astype(np.float64) > FUDGE_FACTOR)
    if bad.size:
        i = int(bad[0])
        ctx.log(0, f"i: {i}/{count} a[i]: {c_x(a[i], 8)} b[i]: {c_x(b[i], 8)}")
        ctx.log(0, "data mismatch")
        worst = int(np.argmax(np.where(np.isnan(ratio), -1, ratio)))
        raise CheckFailed(
            f"data mismatch: {bad.size} of {count} elements differ by more than 7% of "
            f"max|ref| = {top}; the first at element {i} {_where(i, ref.shape)} "
            f"({int(a[i])} vs {int(b[i])}); the worst at element {worst} "
            f"{_where(worst, ref.shape)} ({int(a[worst])} vs {int(b[worst])}, "
            f"{float(ratio[worst]):.4g} of max|ref|)")
    ctx.log(2, f"close node {c_ptr(ctx.node_id)} OK")
    return ()


@op("Close_quint8", Category.CHECK,
    reference=NoReference("a test assertion on codes; it computes no value"),
    inputs=(Port("dut", DType.QUINT8), Port("ref", DType.QUINT8)))
def close_quint8(ctx: KernelContext, dut: Tensor, ref: Tensor) -> tuple[()]:
    """Fails at the first byte whose difference exceeds 7% of the largest reference byte.

    ``|dut[i] - ref[i]| / max(ref) > 0.07`` in float32 (graph spec §4.7). The first failing
    element is logged as "i: <i>/<n> a[i]: <hex8> b[i]: <hex8>", then "data mismatch". With
    max(ref) = 0 any non-zero difference fails (infinity) and equal bytes pass (NaN).
    """
    return _close_int(ctx, dut, ref, np.uint8)


@op("Close_int32", Category.CHECK,
    reference=NoReference("a test assertion on codes; it computes no value"),
    inputs=(Port("dut", DType.INT32), Port("ref", DType.INT32),
            Port("loop_offset", DType.INT32, optional=True)))
def close_int32(ctx: KernelContext, dut: Tensor, ref: Tensor, *loop: Tensor) -> tuple[()]:
    """Fails at the first int32 whose difference exceeds 7% of the largest |reference|.

    ``|float(dut[i]) - float(ref[i])| / max|ref| > 0.07`` in float32 (graph spec §4.7). The
    optional 3rd input is a loop-offset index used only inside graph loops; it is ignored.
    """
    return _close_int(ctx, dut, ref, np.int32)


@op("Close_qint32", Category.CHECK,
    reference=NoReference("a test assertion on codes; it computes no value"),
    inputs=(Port("dut", DType.QINT32), Port("ref", DType.QINT32)))
def close_qint32(ctx: KernelContext, dut: Tensor, ref: Tensor) -> tuple[()]:
    """Compares raw qint32 words like Close_int32 (7% of the largest |reference|).

    No min/max inputs: the quantization ranges are not considered (graph spec §4.7).
    """
    return _close_int(ctx, dut, ref, np.int32)


def _q_values(q: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.float32]:
    """``q * ((max - min) / 255) + min`` in float32, step first, as close_execute_q_u8."""
    step = _F(_F(_F(hi) - _F(lo)) / _F(255))
    with np.errstate(all="ignore"):
        return (q.astype(_F) * step + _F(lo)).astype(_F), step


def _q_element_lines(ctx: KernelContext, ratio: np.ndarray, limit: np.float32,
                     vals: tuple[np.ndarray, np.ndarray], shape: Shape) -> None:
    """Level-2 lines for elements over the limit; level 9 for later ones once one was."""
    if ctx.debug_level < 2:
        return
    _, _, w, d = (max(1, n) for n in shape)
    running = np.maximum.accumulate(np.nan_to_num(ratio, nan=0.0))
    before = np.concatenate(([_F(0)], running[:-1]))
    for i in range(ratio.size):
        level = 2 if ratio[i] > limit else 9 if before[i] > limit else None
        if level is not None:
            ctx.log(level, f"{i}, h/w/d={i // (d * w)}/{i // d % w}/{i % d} "
                           f"dut={c_f(vals[0][i])} ref={c_f(vals[1][i])}")


def _q_ranges_text(ranges: list[np.float32], sep: str) -> str:
    dmin, dmax, rmin, rmax = (c_f(x) for x in ranges)
    return f"dut min/max{sep}{dmin}/{dmax} ref min/max{sep}{rmin}/{rmax}"


@op("Close_q_quint8", Category.CHECK,
    reference=NoReference("a test assertion on codes; it computes no value"),
    inputs=(Port("dut", DType.QUINT8), Port("dut_min", DType.FLOAT32),
            Port("dut_max", DType.FLOAT32), Port("ref", DType.QUINT8),
            Port("ref_min", DType.FLOAT32), Port("ref_max", DType.FLOAT32),
            Port("limit", DType.FLOAT32, optional=True),
            Port("loop_limit", DType.FLOAT32, optional=True)))
def close_q_quint8(ctx: KernelContext, dut: Tensor, dut_min: Tensor, dut_max: Tensor,
                   ref: Tensor, ref_min: Tensor, ref_max: Tensor, *extra: Tensor
                   ) -> tuple[()]:
    """Fails if a dequantized DUT value is off by more than a fraction of the reference range.

    Both tensors are dequantized (``q * (max - min)/255 + min``, float32) and
    ``|dut - ref| / (ref_max - ref_min)`` must not exceed the limit: input 6 when there are
    exactly 7 inputs, else 0.07 (graph spec §4.8). With 8 inputs (graph-loop mode, out of
    scope) inputs 6 and 7 are loop parameters and the default applies outside a loop.
    Failing elements are listed at level 2; on failure three level-0 lines give the max ratio,
    both ranges and the worst element, then "data mismatch". Fidelity: the multiply and add
    of the dequantization are rounded separately; whether the DSP compiler fuses them is
    unconfirmed (it can only move a ratio by an ulp).
    """
    limit = _F(scalar_f(extra[0])) if len(extra) == 1 else _F(FUDGE_FACTOR)
    ranges = [_F(scalar_f(t)) for t in (dut_min, dut_max, ref_min, ref_max)]
    ctx.log(2, f"close q execute. self={c_ptr(ctx.node_id)} ")
    _require_same_shape(ctx, dut, ref, close=True)
    ctx.log(2, "Closeness checking... " + _q_ranges_text(ranges, ": "))
    count = dut.nbytes
    qa, qb = _words(dut, np.uint8, count), _words(ref, np.uint8, count)
    va, _ = _q_values(qa, ranges[0], ranges[1])
    vb, _ = _q_values(qb, ranges[2], ranges[3])
    with np.errstate(all="ignore"):
        ratio = np.abs((va - vb) / _F(ranges[3] - ranges[2])).astype(_F)
    _q_element_lines(ctx, ratio, limit, (va, vb), dut.shape)
    clean = np.where(np.isnan(ratio), _F(0), ratio)
    worst = int(np.argmax(clean)) if count and clean.max() > 0 else 0
    max_ratio = clean[worst] if count else _F(0)
    if max_ratio > limit:
        ctx.log(0, f"max error ratio / test error ratio = {c_f(max_ratio)}/{c_f(limit)}, max "
                   f"error index {worst} count {count}")
        ctx.log(0, _q_ranges_text(ranges, " = "))
        ctx.log(0, f"dut q/f = {qa[worst]}/{c_f(va[worst])} ref q/f = {qb[worst]}/"
                   f"{c_f(vb[worst])}")
        ctx.log(0, "data mismatch")
        raise CheckFailed(
            f"data mismatch: error ratio {c_f(max_ratio)} of the reference range exceeds the "
            f"limit {c_f(limit)}; worst element {worst} {_where(worst, dut.shape)}: dut "
            f"{qa[worst]} ({c_f(va[worst])}), ref {qb[worst]} ({c_f(vb[worst])})")
    ctx.log(2, f"close qu8 node {c_ptr(ctx.node_id)} OK")
    return ()
