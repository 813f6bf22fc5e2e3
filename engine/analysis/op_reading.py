"""An op's own reading of its quint8 inputs, for the isolated analysis (issue 32 item 3).

The spec reads a code q of the range [min, max] as min + q x step (§1.1). A convolution
subtracts an integer zero code instead, ``quantize_uint8(0, min, max)`` and its kin (each op
declares which, ``@op(..., zero_codes=...)``, :class:`~hexscope.engine.ops.reference.ZeroCode`):
it reads q as (q - z) x step. Where 0.0 is a code of the range (TFLite's ranges) the two are
the same. Where it is not ([-1, 1]: 0.0 at 127.5, rounded to 128) they differ by up to half a
step, and a 1x1 convolution over 8 channels of [-1, 1] filters is then hundreds of its
32-bit output's steps from the spec's reference: an error the op has by the ranges it is
given, which the device has too.

:func:`op_inputs` gives the inputs with those ranges moved so that :func:`real` reads them as
the op does (min' = -z x step, max' = min' + (max - min)): the same reference on them is the
op's ideal result, and the isolated analysis counts as the op's error only what it adds to
that (``metrics.excess_error``). Only a zero code that *rounds* the exact zero point is read
the op's way: a clamped one (a range without 0.0, where the op reads codes from 0) is a wrong
range, still counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.ops.reference import ZeroCode, scalar_of
from hexscope.engine.ops.registry import OpSpec
from hexscope.engine.quant import QuantRange
from hexscope.engine.tensor import Tensor

# a zero code within half a step of the exact zero point rounds it; a little more room for
# the float32 steps the op's rule takes (ZA rounds a float32 product)
_ROUNDS = 0.5 + 1e-4


@dataclass(frozen=True, slots=True)
class OpReading:
    """The node's inputs as its op reads them, and what differs, in words."""

    inputs: tuple[Tensor, ...]
    note: str       # "zero code 128 of filter (exact 127.50)", one per input read otherwise


def op_inputs(spec: OpSpec, inputs: Sequence[Tensor]) -> OpReading | None:
    """The inputs with each declared quint8 input's range moved to the op's reading; None
    when the op reads every input as the spec does (no declaration, or exact zeros)."""
    declared: tuple[ZeroCode, ...] = spec.zero_codes
    if not declared:
        return None
    changed = list(inputs)
    notes = []
    for zc in declared:
        moved = _moved_range(zc, inputs)
        if moved is None:
            continue
        lo, hi, code, exact = moved
        changed[zc.lo], changed[zc.hi] = _word(lo), _word(hi)
        port = spec.inputs.port(zc.codes, len(inputs))
        name = port.name if port is not None else f"input {zc.codes}"
        notes.append(f"zero code {code} of {name} (exact {exact:.2f})")
    if not notes:
        return None
    return OpReading(tuple(changed), ", ".join(notes))


def _moved_range(zc: ZeroCode, inputs: Sequence[Tensor]
                 ) -> tuple[float, float, int, float] | None:
    """(min', max', zero code, exact zero point) of one declared input, or None when the op
    reads it as the spec does (or it cannot be read)."""
    if max(zc.codes, zc.lo, zc.hi) >= len(inputs):
        return None
    t, t_lo, t_hi = inputs[zc.codes], inputs[zc.lo], inputs[zc.hi]
    if t.dtype is not DType.QUINT8 or not (t_lo.has_data and t_hi.has_data):
        return None
    try:
        mn, mx = scalar_of(t_lo), scalar_of(t_hi)
    except (ValueError, IndexError):
        return None
    if QuantRange(mn, mx).zero_exact:
        return None
    step = (mx - mn) / 255.0        # code_scale's step: real() reads the moved range with it
    if not (math.isfinite(step) and step > 0.0):
        return None
    exact = -mn / step
    code = zc.rule(mn, mx)
    if abs(code - exact) > _ROUNDS:
        return None
    lo = -code * step
    return lo, lo + (mx - mn), code, exact


def _word(value: float) -> Tensor:
    return Tensor.from_array(np.full((1, 1, 1, 1), value, np.float32), DType.FLOAT32)


def reading_gap(ref: np.ndarray, op_ref: np.ndarray, lsb: float) -> float:
    """The largest |op's ideal - reference| in steps of ``lsb``: how much of the plain error
    the op's reading of its inputs accounts for."""
    if ref.size == 0 or not (lsb > 0 and math.isfinite(lsb)):
        return 0.0
    with np.errstate(all="ignore"):
        gap = np.abs(np.asarray(op_ref, np.float64).reshape(-1)
                     - np.asarray(ref, np.float64).reshape(-1))
    finite = gap[np.isfinite(gap)]
    return float(finite.max()) / lsb if finite.size else 0.0
