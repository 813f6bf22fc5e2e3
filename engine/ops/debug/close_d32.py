"""Close_d32: compare a d32 quint8 result with a float reference (graph spec §4.10).

Every quantity is computed in float32 in the library's order, and the sums are accumulated in
blocks of 100 points folded into blocks of 10000 (``errstats.c``), so the logged statistics
match the device's text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import CheckFailed, KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, data_of, require_d32, scalar_f
from hexscope.engine.ops.reference import NoReference
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

F32 = np.float32
MAX_TO_SHOW = 100


def roundf(x: np.ndarray) -> np.ndarray:
    """C roundf (ties away from zero), in float32."""
    return (np.sign(x) * np.floor(np.abs(x) + F32(0.5))).astype(F32)


def block_sum(values: np.ndarray) -> np.float32:
    """The errstats accumulation: sequential float32 sums of 100 points, folded sequentially
    into sums of 100 blocks, folded sequentially into the total."""
    v = np.asarray(values, F32)
    for size in (100, 100):
        n = -(-v.size // size) * size
        padded = np.zeros(max(n, size), F32)
        padded[:v.size] = v
        v = np.add.accumulate(padded.reshape(-1, size), axis=1, dtype=F32)[:, -1]
    return F32(np.add.accumulate(v, dtype=F32)[-1])


@dataclass(frozen=True)
class Points:
    """Per-point values in plain (b, h, w, d) order."""

    t: np.ndarray        # DUT codes as float32
    r: np.ndarray        # reference in quantized units
    delta: np.ndarray
    excess: np.ndarray


def points(codes: np.ndarray, ref: np.ndarray, mn: np.float32, qscale: np.float32) -> Points:
    with np.errstate(invalid="ignore", over="ignore"):
        t = codes.reshape(-1).astype(F32)
        r = ((ref.reshape(-1).astype(F32) - mn).astype(F32) * qscale).astype(F32)
        delta = (t - r).astype(F32)
        excess = (np.abs(delta) - np.abs(roundf(r) - r)).astype(F32)
    return Points(t, r, delta, excess)


def stats_lines(p: Points) -> tuple[str, np.float32, int, int]:
    """The "Out of n points" line, the largest excess error, its position and the count."""
    n = p.t.size
    with np.errstate(invalid="ignore", over="ignore"):
        positive = p.excess > 0
        n_exc = int(positive.sum())
        pos = int(np.argmax(np.where(positive, p.excess, 0))) if n_exc else -1
        max_exc = p.excess[pos] if n_exc else F32(0.0)
        pop = F32(n)
        s1, s2 = block_sum(p.delta), block_sum(p.delta * p.delta)
        mean = F32(s1 / pop)
        rms = F32(np.sqrt(F32(F32(pop * s2) - F32(s1 * s1))) / pop)
    line = (f"Out of {n} points: mean err = {mean:.3f}, rms err = {rms:.3f}; "
            f"largest excess err = {max_exc:.3f} ({n_exc} are nonzero)")
    return line, F32(max_exc), pos, n_exc


def correlation_lines(p: Points, unclipped: np.ndarray) -> list[str]:
    """``errstats_find_correlation`` at x = 0, 128, 255 (unclipped points only)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        keep = unclipped.astype(F32)
        s = ((p.t + p.r).astype(F32)) * keep
        d = p.delta * keep
        pop = F32(int(unclipped.sum()))
        ss, sd = block_sum(s), block_sum(d)
        s2, d2, sxd = block_sum(s * s), block_sum(d * d), block_sum(s * d)
        pp = F32(pop * pop)
        mean_s, mean_d = F32(ss / pop), F32(sd / pop)
        var_s = F32(F32(F32(pop * s2) - F32(ss * ss)) / pp)
        var_d = F32(F32(F32(pop * d2) - F32(sd * sd)) / pp)
        cov = F32(F32(F32(pop * sxd) - F32(ss * sd)) / pp)
        ex, ey, eig0, eig1 = F32(1.0), F32(0.0), var_s, F32(0.0)
        if var_d > 0:
            trace = F32(var_s + var_d)
            half = F32(F32(0.5) * F32(var_s - var_d))
            h = np.hypot(half, cov)
            r = F32(abs(half) + h)
            if np.hypot(r, cov) > 0:
                ex, ey = r, cov
                if half < 0:
                    ex, ey = F32(abs(cov)), F32(np.copysign(r, cov))
            eig0 = F32(F32(F32(0.5) * trace) + h)
            eig1 = max(F32(0.0), F32(F32(F32(0.5) * trace) - h))
        count = int(unclipped.sum())
        if ex <= 0 or abs(ey) > F32(0.5) * ex or eig0 < 16 or eig1 > F32(F32(0.1) * eig0):
            dd = np.hypot(ex, ey)
            return [f"correlation of {count} points: results unclear, eigs({eig0:.2f},"
                    f"{eig1:.2f}), vec = ({F32(ex / dd):.6f}, {F32(ey / dd):.6f})"]
        gain = F32(F32(ex + ey) / F32(ex - ey))
        mean_r = F32(F32(mean_s - mean_d) * F32(0.5))
        mean_t = F32(F32(mean_s + mean_d) * F32(0.5))
        offs = F32(mean_t - F32(gain * mean_r))
        fit = [F32(offs + F32(F32(x) * gain)) for x in (0, 128, 255)]
    return [f"correlation of {count} points: sdev = {np.sqrt(eig1):.4f} across, and "
            f"{np.sqrt(eig0):.1f} along axis gain = {gain:.6f}",
            f" offsets:  0->{fit[0]:.4f},  128-> {fit[1]:.4f}, 255->{fit[2]:.4f}"]


def listing(p: Points, shape: tuple[int, ...], max_exc: np.float32, pos: int) -> list[str]:
    """The failure listing: points with excess error above the display level, at most 100
    plus the worst one, with "[Stopped after N errors]" when cut."""
    level = F32(max_exc * F32(1.0 / 16.0)) if max_exc > 8 else F32(0.0)
    lines = ["Exceeds error limits. Values below are in quantized units; only shown if exc "
             f"err > {level:f}", "\t\tActual\t\tExpected\tDiff\tExcErr"]
    with np.errstate(invalid="ignore"):
        candidates = np.flatnonzero(p.excess > level)
    logged = 0
    for ipos in candidates:
        ipos = int(ipos)
        if logged >= MAX_TO_SHOW + 10 and ipos < pos:
            continue              # nothing but the worst point can still be printed
        if logged < MAX_TO_SHOW or ipos == pos:
            b, h, w, d = np.unravel_index(ipos, shape)
            flag = " <====" if ipos == pos else ""
            lines.append(f"{ipos}[{b},{h},{w},{d}])\t{int(p.t[ipos])}\t{p.r[ipos]:f}\t"
                         f"{p.delta[ipos]:f}\t{p.excess[ipos]:f}{flag}")
            logged += 1
        elif logged < MAX_TO_SHOW + 10:
            lines.append(f"[Stopped after {logged} errors]")
            logged = MAX_TO_SHOW + 10
        if ipos >= pos and logged >= MAX_TO_SHOW + 10:
            break
    return lines


def range_excess(ref: np.ndarray, mn: np.float32, mx: np.float32
                 ) -> tuple[np.float32, np.float32, np.float32]:
    """(amin, amax, over): the reference range (at least +-1e-6) and by what fraction the
    DUT range exceeds it (0 when the reference range is at most 1e-3)."""
    with np.errstate(invalid="ignore", over="ignore"):
        flat = ref.reshape(-1).astype(F32)
        amin = np.fmin(F32(-1e-6), np.fmin.reduce(flat) if flat.size else F32(0))
        amax = np.fmax(F32(1e-6), np.fmax.reduce(flat) if flat.size else F32(0))
        # matches device: fmax/fmin here are the double versions, rounded once to float
        range_dut = F32(max(float(mx), float(amax)) - min(float(mn), float(amin)))
        range_ref = F32(amax - amin)
        over = F32(F32(range_dut - range_ref) / range_ref) if range_ref > F32(1e-3) else F32(0)
    return F32(amin), F32(amax), over


def _options(opts: tuple[Tensor, ...]) -> tuple[np.float32, np.float32]:
    limit = F32(scalar_f(opts[0])) if opts else F32(0.2)
    frac = F32(scalar_f(opts[1])) if len(opts) > 1 else F32(0.05)
    return limit, frac


def _check_inputs(x: Tensor, ref: Tensor, mn: np.float32, mx: np.float32) -> np.float32:
    if x.shape != ref.shape:
        a, b = ":".join(map(str, x.shape)), ":".join(map(str, ref.shape))
        raise KernelError(f"close_d32: shape {a} does not match reference {b}")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        qscale = F32(F32(255.0) / F32(mx - mn))
    if not (mx >= 0 and mn <= 0 and qscale > 0 and qscale <= F32(255e6)):
        raise KernelError(f"invalid input range: {mn:f} .. {mx:f} (needs min <= 0 <= max, "
                          "finite, and max - min >= about 1e-6)")
    return qscale


@op("Close_d32", Category.CHECK,
    reference=NoReference("a test assertion on codes; it computes no value"),
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32), Port("x_min", DType.FLOAT32),
            Port("x_max", DType.FLOAT32), Port("ref", DType.FLOAT32),
            Port("max_exc_err", DType.FLOAT32, optional=True, doc="default 0.2; < 0 forces stats"),
            Port("max_exc_frac", DType.FLOAT32, optional=True, doc="default 0.05")),
    uses_padding=True)
def close_d32(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor, ref: Tensor,
              *opts: Tensor) -> tuple[()]:
    """Checks a d32 quint8 result against a float reference, in quantized units.

    graph spec §4.10. The reference (a float tensor of the same shape; the seed's "float
    scalar" is wrong) is mapped to r = (ref - min) * 255/(max - min). Per point the excess
    error is |t - r| - |roundf(r) - r|: how much worse the DUT code t is than the ideal
    rounded value. Passes when the largest excess error <= |input 4| (default 0.2) and at
    most input 5 (default 0.05) of the points have a non-zero one. Unless the node's padding
    is VALID, it also fails when the DUT range exceeds the reference range by more than 4x
    its size (over > 4, "Computed range is too large"). Only valid d32 data are read.

    Statistics (mean and population sd of t - r, labelled "rms err"; correlation gain and
    offsets over unclipped points when there are at least 16) are logged at level 2 on a
    pass and at level 0 on a failure or when input 4 is negative. A failure logs the
    device's listing of offending points (at most 100 plus the worst) and raises CheckFailed
    saying by how much and where (b, h, w, d) the worst point is.

    Errors: shape mismatch; invalid range (needs min <= 0 <= max, finite, width >= ~1e-6).
    A zero point more than 1e-3 from an integer is only logged.
    """
    require_d32(x)
    mn, mx = F32(scalar_f(x_min)), F32(scalar_f(x_max))
    limit, frac = _options(opts)
    qscale = _check_inputs(x, ref, mn, mx)
    inzero = F32(F32(-qscale) * mn)
    if abs(F32(inzero - roundf(np.array(inzero))[()])) > F32(1e-3):
        ctx.log(0, f"**** close_d32: input range {mn:f} .. {mx:f}  has zero at {inzero:.8f} ****")
    ref_data = data_of(ref, "input 3").astype(F32)
    p = points(data_of(x, "input 0"), ref_data, mn, qscale)
    codes = data_of(x, "input 0").reshape(-1)
    unclipped = (codes != 0) & (codes != 255)
    amin, amax, over = range_excess(ref_data, mn, mx)
    stats, max_exc, pos, n_exc = stats_lines(p)
    force = limit < 0
    limit = F32(abs(limit))
    errors_ok = max_exc <= limit and n_exc <= F32(frac * F32(p.t.size))
    range_ok = ctx.padding is Padding.VALID or not over > F32(4.0)
    if not range_ok:
        ctx.log(0, "Computed range is too large for the reference data")
    level = 2 if errors_ok and range_ok and not force else 0
    ctx.log(level, f"Ref data range = {amin:f} .. {amax:f}; dut range = {mn:f} .. {mx:f}; "
                   f"oversize by {F32(over * F32(100.0)):.2f} %\n")
    ctx.log(level, stats)
    if int(unclipped.sum()) >= 16:
        for line in correlation_lines(p, unclipped):
            ctx.log(level, line)
    if errors_ok and range_ok:
        ctx.log(2, f"close_d32 node 0x{ctx.node_id:x} OK")
        return ()
    for line in listing(p, x.shape, max_exc, pos):
        ctx.log(0, line)
    raise CheckFailed(_failure(x.shape, p, pos, max_exc, n_exc, limit, frac, over, range_ok))


def _failure(shape: tuple[int, ...], p: Points, pos: int, max_exc: np.float32, n_exc: int,
             limit: np.float32, frac: np.float32, over: np.float32, range_ok: bool) -> str:
    n = p.t.size
    parts = []
    if pos >= 0:
        b, h, w, d = (int(i) for i in np.unravel_index(pos, shape))
        parts.append(f"largest excess error {max_exc:.3f} (limit {limit:.3f}) at index {pos} "
                     f"(b,h,w,d)=({b},{h},{w},{d}): dut code {int(p.t[pos])}, expected "
                     f"{p.r[pos]:.3f} in quantized units")
    else:
        parts.append("no point has a non-zero excess error")
    parts.append(f"{n_exc} of {n} points ({100.0 * n_exc / max(n, 1):.1f} %) have non-zero "
                 f"excess error (limit {100.0 * float(frac):.1f} %)")
    if not range_ok:
        parts.append(f"the DUT range is {100.0 * float(over):.0f} % larger than the reference "
                     "data need (limit 400 %; padding VALID disables this rule)")
    return "test failed: " + "; ".join(parts)
