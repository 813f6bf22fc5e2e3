"""Error metrics between two tensors, in the unit a quantized-graph engineer thinks in: the
quantization step (LSB) of the node's own output range.

Every case has a defined answer and no numpy warning:

- empty tensors: no error (max 0, RMS 0, cosine 1, SQNR +inf);
- two all-zero tensors: cosine 1; exactly one all-zero: cosine 0;
- no error at all: SQNR +inf; a zero signal with an error: SQNR -inf;
- a degenerate range (min == max, LSB 0) or a float output (no LSB): the LSB metrics are
  None and the tolerance applies to real units instead;
- NaN or inf: an element where both sides hold the same non-finite value matches; any other
  non-finite element counts as an infinite error (beyond every tolerance, SQNR -inf), and
  RMS and cosine are taken over the finite elements only.

Against a float reference, a quantized output is judged by its *excess error*, as hexagon_nn's
Close_d32 judges a result (graph spec §4.10): ``|t - r| - |roundf(r) - r|`` in steps, ``r``
the reference in codes (unclamped) and ``t`` the output's code. It is how much worse the
output is than the ideal rounding of the reference, so an op that rounds once to its output
grid is not failed for that rounding (a healthy Supernode reaches 1.2 LSB of plain error),
while a saturated range or a wrong weight still is: |round(r) - r| is at most half a step.

An op that reads its inputs otherwise than the spec (a convolution subtracting a rounded zero
code, ``engine/analysis/op_reading.py``) has a second reference, ``p``: the same float meaning
on its own reading of the inputs, the result it would give if it added no error. Its excess is
then the smaller of the two, ``min(|t - r| - |roundf(r) - r|, |t - p| - |roundf(p) - p|)``: an
output as good as the ideal rounding of either is not failed, and one that misses both is, by
how far it misses the nearer. (Judging ``|t - r|`` beyond ``|p - r|`` instead would let a miss
towards ``r`` of up to twice ``|p - r|``, hundreds of steps on a [-1, 1] filter, pass.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import numpy as np

from hexscope.engine.analysis import metrics_pass
from hexscope.engine.ops.reference import read_codes


@dataclass(frozen=True, slots=True)
class Metrics:
    """Errors of B against A (A the reference side)."""

    count: int                         # elements compared
    max_abs: float                     # largest |A - B| in real units (inf: non-finite)
    rms_abs: float
    max_lsb: float | None              # the same in LSB of the output range (None: no LSB)
    rms_lsb: float | None
    cosine: float
    sqnr_db: float                     # 10 log10(sum A^2 / sum (A - B)^2); +-inf defined above
    beyond: int                        # elements beyond the tolerance
    nonfinite: int                     # elements where a NaN or inf differs
    worst_index: tuple[int, ...] | None
    worst_a: float | None
    worst_b: float | None
    lsb: float | None
    # the largest excess error in LSB (see the module docstring): against a float
    # reference, where the plain error is beyond the tolerance (within it, the excess is
    # too: it is never larger); ``beyond`` then counts elements by their excess
    excess_lsb: float | None = None
    by_excess: bool = False            # judged by the excess error (a float reference's)

    @property
    def beyond_share(self) -> float:
        return self.beyond / self.count if self.count else 0.0

    def to_json(self) -> dict:
        out = asdict(self)
        out["worst_index"] = list(self.worst_index) if self.worst_index is not None else None
        out["beyond_share"] = self.beyond_share
        return {k: json_number(v) if isinstance(v, float) else v for k, v in out.items()}


def json_number(value: float | None) -> float | str | None:
    """Floats for JSON: +-inf and NaN as the strings "inf", "-inf", "nan"."""
    if value is None or math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def _same_nonfinite(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))


def error_metrics(a: np.ndarray, b: np.ndarray, lsb: float | None = None,
                  tolerance_lsb: float = 0.0) -> Metrics:
    """Metrics of ``b`` against ``a`` (same shape), ``lsb`` the step of the output range.

    An element is beyond the tolerance when |a - b| > tolerance_lsb * lsb; with no usable LSB
    (None or 0) the tolerance is read in real units.
    """
    return _metrics(np.asarray(a), np.asarray(b), None, lsb, tolerance_lsb)


def code_metrics(a: np.ndarray, codes: np.ndarray, scale: float, offset: float | None,
                 lsb: float | None = None, tolerance_lsb: float = 0.0,
                 a_scale: float | None = None, excess: bool = False,
                 op_reference: Callable[[], np.ndarray | None] | None = None) -> Metrics:
    """:func:`error_metrics` of ``b = codes * scale + offset`` against ``a``, with B read
    as :func:`~hexscope.engine.ops.reference.real` reads it (float32 steps for quint8,
    float64 for qint32), but without making B: the same answer, bit for bit, in one pass
    over the codes when the compiled kernels are on. With ``a_scale``, ``a`` is int32
    codes standing for ``a * a_scale`` in float64 (qint32 sums, as real() reads them),
    read in the same pass. ``excess``: ``a`` is a float reference of the codes, judged by
    the excess error (module docstring); ``op_reference()`` gives the op's own ideal
    result (``p`` there, float64 reals of ``a``'s shape, or None), asked for only when the
    excess against ``a`` is beyond the tolerance."""
    a = np.asarray(a)
    if a_scale is not None:
        if a.dtype != np.int32:
            raise ValueError(f"codes read with a scale are int32, not {a.dtype}")
        m = _metrics(a, np.asarray(codes), (scale, offset), lsb, tolerance_lsb,
                     (a_scale, None))
    else:
        m = _metrics(a, np.asarray(codes), (scale, offset), lsb, tolerance_lsb)
    if not excess or m.max_lsb is None:
        return m
    m = replace(m, by_excess=True)
    if m.max_lsb > tolerance_lsb and not m.nonfinite and scale > 0 and math.isfinite(scale):
        reals = a.astype(np.float64) * a_scale if a_scale is not None else a
        worst, beyond = excess_error(reals, np.asarray(codes), scale, offset or 0.0,
                                     tolerance_lsb)
        # the op's own ideal only where the spec's reading fails the output: the smaller
        # excess cannot fail what that one passes
        op_reals = op_reference() if beyond and op_reference is not None else None
        if op_reals is not None:
            worst, beyond = excess_error(reals, np.asarray(codes), scale, offset or 0.0,
                                         tolerance_lsb, op_reals)
        m = replace(m, excess_lsb=worst, beyond=beyond)
    return m


def excess_error(reals: np.ndarray, codes: np.ndarray, scale: float, offset: float,
                 tolerance_lsb: float, op_reals: np.ndarray | None = None
                 ) -> tuple[float, int]:
    """(largest excess error, elements whose excess is beyond ``tolerance_lsb``), in steps:
    ``|t - r| - |roundf(r) - r|`` with ``r = (reals - offset) / scale`` unclamped and ``t``
    the code (graph spec §4.10; C ``roundf`` rounds halves away from zero). With
    ``op_reals`` (the op's own ideal result, module docstring) each element's excess is the
    smaller of that against ``reals`` and against ``op_reals``."""
    if reals.size == 0:
        return 0.0, 0
    with np.errstate(all="ignore"):
        t = np.asarray(codes, np.float64).reshape(-1)
        e = _excess(reals, t, scale, offset)
        if op_reals is not None and op_reals.size == reals.size:
            np.fmin(e, _excess(op_reals, t, scale, offset), out=e)   # a NaN side: the other
    # a miss by whole codes is a whole excess in exact arithmetic; its float64 evaluation
    # may land a hair above (1 + 2e-15): that is not beyond a tolerance of 1
    return float(e.max()), int(np.count_nonzero(e > tolerance_lsb + _EXCESS_SLACK))


_EXCESS_SLACK = 1e-9


def _excess(reals: np.ndarray, t: np.ndarray, scale: float, offset: float) -> np.ndarray:
    """|t - r| - |roundf(r) - r| per element, r the reals in codes (a fresh array)."""
    r = (np.asarray(reals, np.float64).reshape(-1) - offset) / scale
    ideal = np.abs(np.copysign(np.floor(np.abs(r) + 0.5), r) - r)
    e = np.abs(t - r)
    e -= ideal
    return e


def _metrics(a_in: np.ndarray, b_in: np.ndarray, read: tuple[float, float | None] | None,
             lsb: float | None, tolerance_lsb: float,
             a_read: tuple[float, None] | None = None) -> Metrics:
    if a_in.shape != b_in.shape:
        raise ValueError(f"cannot compare shapes {a_in.shape} and {b_in.shape}")
    if a_read is not None:
        fast = metrics_pass.finite_pass(
            a_in.reshape(-1), b_in.reshape(-1), True, read[0], read[1] or 0.0,
            _limit(lsb, tolerance_lsb), a_read[0]) if a_in.size and read else None
        if fast is None:    # the values, then the general path (NaN, inf, no numba)
            return _metrics(_read(a_in, a_read), b_in, read, lsb, tolerance_lsb)
        return _assembled(a_in, b_in, read, lsb, fast, a_read)
    step = _step(lsb)
    n = a_in.size
    if n == 0:
        zero = 0.0 if step else None
        return Metrics(0, 0.0, 0.0, zero, zero, 1.0, math.inf, 0, 0, None, None, None, step)
    limit = _limit(lsb, tolerance_lsb)
    # the type real() gives the codes: float32 for quint8, float64 for qint32 and the rest
    b_type = np.dtype(np.float32 if b_in.dtype == np.uint8 else np.float64) if read else \
        b_in.dtype
    wide = not (a_in.dtype == np.float32 and b_type == np.float32)
    scale, offset = read if read else (1.0, 0.0)
    fast = metrics_pass.finite_pass(a_in.reshape(-1), b_in.reshape(-1), wide, scale,
                                     offset or 0.0, limit) if a_in.dtype.kind == "f" else None
    if fast is None:
        b_val = _read(b_in, read)
        return _numpy_metrics(a_in, b_val, limit, step)
    return _assembled(a_in, b_in, read, lsb, fast, None)


def _step(lsb: float | None) -> float | None:
    return lsb if lsb is not None and lsb > 0 and math.isfinite(lsb) else None


def _limit(lsb: float | None, tolerance_lsb: float) -> float:
    step = _step(lsb)
    return tolerance_lsb * step if step else tolerance_lsb


def _assembled(a_in: np.ndarray, b_in: np.ndarray, read: tuple[float, float | None] | None,
               lsb: float | None, fast: tuple[float, int, float, float, float, int, float],
               a_read: tuple[float, None] | None) -> Metrics:
    """The metrics from the compiled pass's figures, the worst element's values read as
    the pass read them."""
    max_abs, worst, noise, signal, rms_abs, beyond, cosine = fast
    b_worst = b_in.reshape(-1)[worst]
    if read:
        b_worst = _read_one(b_worst, read, np.dtype(
            np.float32 if b_in.dtype == np.uint8 else np.float64))
    a_worst = a_in.reshape(-1)[worst]
    if a_read:
        a_worst = _read_one(a_worst, a_read, np.dtype(np.float64))
    return _assemble(a_in, a_in.size, _step(lsb), max_abs, worst, noise, signal, rms_abs,
                     beyond, cosine, 0, float(a_worst), float(b_worst))


def _read(codes: np.ndarray, read: tuple[float, float | None] | None) -> np.ndarray:
    """The codes' values, as real() makes them (the same float steps)."""
    if read is None:
        return codes
    return read_codes(codes, *read, np.float32 if codes.dtype == np.uint8 else np.float64)


def _read_one(code: np.generic, read: tuple[float, float | None], dtype: np.dtype) -> float:
    """One code's value as :func:`_read` makes it (the same steps in numpy scalars: each
    rounded to ``dtype``, as the array operations round), without an array per call."""
    t = dtype.type
    value = t(code) * t(read[0])
    if read[1] is not None:
        value = value + t(read[1])
    return float(value)


def _numpy_metrics(a_in: np.ndarray, b_in: np.ndarray, limit: float, step: float | None
                   ) -> Metrics:
    a, b = _common(a_in, b_in)
    # a side converted here is ours: the difference may overwrite it (one array less to
    # allocate; the worst values are read from the caller's arrays)
    scratch = a if a is not a_in else (b if b is not b_in else None)
    with np.errstate(all="ignore"):
        fast = _finite_metrics(a.reshape(-1), b.reshape(-1), limit,
                               None if scratch is None else scratch.reshape(-1))
    if fast is not None:
        max_abs, worst, noise, signal, rms_abs, beyond, cosine = fast
        n_bad = 0
    else:
        a, b = _common(a_in, b_in)      # afresh: the fast path may have used one as scratch
        with np.errstate(all="ignore"):
            max_abs, worst, noise, signal, rms_abs, beyond, cosine, n_bad = \
                _general_metrics(a, b, limit)
    return _assemble(a_in, a_in.size, step, max_abs, worst, noise, signal, rms_abs, beyond,
                     cosine, n_bad, float(a_in.reshape(-1)[worst]),
                     float(b_in.reshape(-1)[worst]))


def _assemble(a: np.ndarray, n: int, step: float | None, max_abs: float, worst: int,
              noise: float, signal: float, rms_abs: float, beyond: int, cosine: float,
              n_bad: int, worst_a: float, worst_b: float) -> Metrics:
    if n_bad:
        sqnr = -math.inf                # an infinite error swamps any signal
    elif noise == 0.0:
        sqnr = math.inf
    elif signal == 0.0:
        sqnr = -math.inf
    else:
        sqnr = 10.0 * math.log10(signal / noise)
    idx = _unravel(worst, a.shape)
    return Metrics(
        count=n, max_abs=max_abs, rms_abs=rms_abs,
        max_lsb=max_abs / step if step else None, rms_lsb=rms_abs / step if step else None,
        cosine=cosine, sqnr_db=sqnr, beyond=beyond, nonfinite=n_bad, worst_index=idx,
        worst_a=worst_a, worst_b=worst_b, lsb=step)


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``np.unravel_index`` (C order) in plain ints: once per output compared."""
    idx = []
    for dim in reversed(shape):
        flat, i = divmod(flat, dim) if dim else (flat, 0)
        idx.append(i)
    return tuple(reversed(idx))


def _common(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 pairs stay float32 (speed); anything else is compared in float64."""
    if a.dtype == b.dtype == np.float32:
        return a, b
    return np.asarray(a, np.float64), np.asarray(b, np.float64)


def _finite_metrics(a: np.ndarray, b: np.ndarray, limit: float, scratch: np.ndarray | None
                    ) -> tuple[float, int, float, float, float, int, float] | None:
    """The common case in few passes (dot products run in BLAS); None if a value is not
    finite (a finite sum proves every element finite: NaN and inf propagate). ``scratch``
    (a or b itself, when the caller's values live elsewhere) receives the difference."""
    signal = float(np.dot(a, a))
    cross = float(np.dot(a, b))
    if not (math.isfinite(signal) and math.isfinite(cross)):
        return None
    d = np.subtract(a, b, out=scratch)
    noise = float(np.dot(d, d))
    if not math.isfinite(noise):
        return None
    # the first largest |d| from the extremes of d (no pass writing |d|): the first index
    # of the larger side, or the earlier of the two on a tie
    hi, lo = int(np.argmax(d)), int(np.argmin(d))
    up, down = abs(float(d[hi])), abs(float(d[lo]))
    worst = hi if up > down else lo if down > up else min(hi, lo)
    err = max(up, down)
    # the largest error within the limit (the usual verdict) proves none beyond: no pass
    if not err > limit:
        beyond = 0
    elif limit < 0:
        beyond = d.size
    else:
        # against the limit in float64, as the compiled pass compares
        beyond = int(np.count_nonzero(d > np.float64(limit))) + \
            int(np.count_nonzero(d < -np.float64(limit)))
    return (err, worst, noise, signal, math.sqrt(noise / a.size), beyond,
            metrics_pass.cosine_of(signal, cross, noise))


def _general_metrics(a: np.ndarray, b: np.ndarray, limit: float
                     ) -> tuple[float, int, float, float, float, int, float, int]:
    """Any values: non-finite elements handled as the module docstring says."""
    finite = np.isfinite(a) & np.isfinite(b)
    err = np.where(finite, np.abs(a - b), 0.0)
    bad = ~finite & ~_same_nonfinite(a, b)
    n_bad = int(bad.sum())
    if n_bad:
        worst = int(np.flatnonzero(bad.reshape(-1))[0])
        max_abs = math.inf
    else:
        worst = int(np.argmax(err.reshape(-1)))
        max_abs = float(err.reshape(-1)[worst])
    fa, fb = a[finite], b[finite]
    noise = float(np.sum((fa - fb) ** 2))
    signal = float(np.sum(fa * fa))
    rms_abs = math.sqrt(noise / fa.size) if fa.size else 0.0
    beyond = int(np.count_nonzero(err > limit)) + n_bad
    return max_abs, worst, noise, signal, rms_abs, beyond, _cosine(fa, fb), n_bad


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.sqrt(np.sum(a * a))), float(np.sqrt(np.sum(b * b)))
    if na == 0.0 and nb == 0.0:
        return 1.0
    if na == 0.0 or nb == 0.0 or not (math.isfinite(na) and math.isfinite(nb)):
        return 0.0 if (na == 0.0) != (nb == 0.0) else float(np.dot(a / na, b / nb))
    return float(np.clip(np.dot(a / na, b / nb), -1.0, 1.0))
