"""The metrics' one pass over the data, compiled by numba (issue 12's budget).

The numpy fast path of :mod:`metrics` takes six passes (three dot products, the difference,
argmax, argmin) and, for a quantized output, the dequantized copy before them. Here one loop
reads A and B (B as codes when given a scale and an offset: ``f(b) * scale + offset``, the
very steps :func:`~hexscope.engine.ops.reference.real` takes, so no float copy is made) and
gives the extremes of A - B, the three sums and the count beyond the limit; a second loop
stops at the worst element.

Why the loops look as they do: the sums run in sixteen independent lanes, added up at the
end. That is what lets LLVM vectorise them without fastmath, so the order of every addition
is fixed by the source and the same whatever B's dtype (codes or their float values give
the same bits). A fourth sum (|B|^2) in the loop stopped LLVM from vectorising it
(2.4 ns an element against 0.5): |B|^2 is derived from the other three, as the numpy path
does. ``HEXSCOPE_KERNELS=numpy`` (or no numba) keeps the numpy path.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.compiled import read_only

_LOCK = threading.Lock()
_KERNELS: list[Any] = []          # [narrow, wide] once compiled
_FAILED: list[bool] = []


def _make() -> list[Any]:
    from numba import njit

    opts = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}
    lanes = 16
    block = 4096        # elements between two looks at the largest error so far

    def factory(ct, a_codes):  # type: ignore[no-untyped-def]
        # ct: the type the difference is taken in (float32 for a float32 pair, as numpy's
        # path computes it; float64 otherwise). a_codes: A is codes too, read as
        # ct(a) * a_scale (read_codes' steps with no offset: qint32 sums), a constant that
        # LLVM folds away when False
        def one_pass(a, b, scale, offset, limit, a_scale):  # pragma: no cover - compiled
            hi = np.full(lanes, -np.inf, ct)
            lo = np.full(lanes, np.inf, ct)
            saa = np.zeros(lanes)
            sab = np.zeros(lanes)
            sdd = np.zeros(lanes)
            cnt = np.zeros(lanes, np.int64)
            n = a.size
            full = n // block
            # the block where the largest |A - B| so far last grew holds the first worst
            # element (the scan for it starts there)
            best, at = ct(-1.0), 0
            for blk in range(full + 1):
                # index arithmetic LLVM can bound (a block number times a constant): with
                # loop limits passed in, it kept numba's negative-index checks and did not
                # vectorise (2.2 ns an element against 0.55)
                span = block if blk < full else (n - full * block) // lanes * lanes
                for j in range(0, span, lanes):
                    for k in range(lanes):
                        i = blk * block + j + k
                        x = ct(a[i]) * a_scale if a_codes else ct(a[i])
                        v = ct(b[i]) * scale + offset
                        d = x - v
                        hi[k] = d if d > hi[k] else hi[k]
                        lo[k] = d if d < lo[k] else lo[k]
                        saa[k] += np.float64(x) * x
                        sab[k] += np.float64(x) * v
                        sdd[k] += np.float64(d) * d
                        cnt[k] += (d > limit) | (d < -limit)
                if blk == full:
                    for i in range(full * block + span, n):     # the tail, in lane 0
                        x = ct(a[i]) * a_scale if a_codes else ct(a[i])
                        v = ct(b[i]) * scale + offset
                        d = x - v
                        hi[0] = d if d > hi[0] else hi[0]
                        lo[0] = d if d < lo[0] else lo[0]
                        saa[0] += np.float64(x) * x
                        sab[0] += np.float64(x) * v
                        sdd[0] += np.float64(d) * d
                        cnt[0] += (d > limit) | (d < -limit)
                top = best
                for k in range(lanes):
                    top = hi[k] if hi[k] > top else top
                    top = -lo[k] if -lo[k] > top else top
                if top > best:
                    best, at = top, blk * block
            err = best
            for i in range(at, n):
                x = ct(a[i]) * a_scale if a_codes else ct(a[i])
                if abs(x - (ct(b[i]) * scale + offset)) == err:
                    return err, i, saa.sum(), sab.sum(), sdd.sum(), cnt.sum()
            return err, 0, saa.sum(), sab.sum(), sdd.sum(), cnt.sum()

        return njit(**opts)(one_pass)

    return [factory(np.float32, False), factory(np.float64, False),
            factory(np.float64, True)]


def _kernels() -> list[Any] | None:
    if not compiled.enabled() or _FAILED:
        return None
    if not _KERNELS:
        with _LOCK:
            if not _KERNELS and not _FAILED:
                try:
                    _KERNELS.extend(_make())
                except Exception:  # noqa: BLE001 - no numba: the numpy path runs
                    _FAILED.append(True)
                    return None
    return _KERNELS


def compiled_forms() -> int:
    """How many forms (argument types) of the pass are compiled or loaded in this process."""
    kernels = _kernels()
    return sum(len(k.signatures) for k in kernels) if kernels else 0


#: The dtypes a compared tensor's values or codes come in (float, quint8, qint8, qint32).
VALUE_TYPES = (np.float32, np.float64)
CODE_TYPES = (np.uint8, np.int8, np.int32)


def finite_pass(a: np.ndarray, b: np.ndarray, wide: bool, scale: float, offset: float,
                limit: float, a_scale: float | None = None
                ) -> tuple[float, int, float, float, float, int, float] | None:
    """(max |A - B|, its first index, |D|^2, |A|^2, RMS, count beyond, cosine) of A against
    ``b * scale + offset`` (flat arrays), in float64 (``wide``) or float32 arithmetic; None
    if a value is not finite (the caller's general path then defines the answer), or the
    compiled kernels are off. With ``a_scale``, A is codes read as ``a * a_scale`` in
    float64 (``wide`` then)."""
    kernels = _kernels()
    if kernels is None:
        return None
    ct = np.float64 if wide else np.float32
    s, o = ct(scale), ct(offset)
    kernel = kernels[2] if a_scale is not None else kernels[1 if wide else 0]
    try:
        err, worst, signal, cross, noise, beyond = kernel(read_only(a), read_only(b), s, o, limit,
                                                          ct(1.0 if a_scale is None else a_scale))
    except Exception:  # noqa: BLE001 - a dtype numba cannot take: the numpy path
        return None
    if not (math.isfinite(signal) and math.isfinite(cross) and math.isfinite(noise)):
        return None
    return (float(err), int(worst), noise, signal, math.sqrt(noise / a.size), int(beyond),
            cosine_of(signal, cross, noise))


def cosine_of(signal: float, cross: float, noise: float) -> float:
    """The cosine of A and B from |A|^2, A.B and |A - B|^2 (|B|^2 = |A - B|^2 - |A|^2 +
    2 A.B: no fourth sum), with the degenerate cases defined (metrics module text)."""
    other = max(0.0, noise - signal + 2.0 * cross)
    if signal == 0.0 and other == 0.0:
        return 1.0
    if signal == 0.0 or other == 0.0:
        return 0.0
    return min(1.0, max(-1.0, cross / math.sqrt(signal * other)))


def load() -> bool:
    """Compile or load the kernels now (True when they are on)."""
    return _kernels() is not None


__all__ = ["CODE_TYPES", "VALUE_TYPES", "compiled_forms", "cosine_of", "finite_pass", "load"]
