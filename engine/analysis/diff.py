"""One node output against another: the record both comparisons (float reference, two
traces) produce, and how a quantized output is read (its range, its LSB)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.analysis.metrics import Metrics, code_metrics, error_metrics, json_number
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.ops.reference import Reals, code_scale, real, scalar_of
from hexscope.engine.tensor import Tensor

QUANTIZED = (DType.QUINT8, DType.QINT32)


def range_slots(outputs: tuple[Tensor, ...]) -> dict[int, tuple[int, int]]:
    """Data output -> (min slot, max slot): a quantized output followed by two float
    scalars is read through them (the hexagon_nn convention: data, min, max)."""
    slots: dict[int, tuple[int, int]] = {}
    k, n = 0, len(outputs)
    while k < n:
        t = outputs[k]
        if (k + 2 < n and t.dtype in QUANTIZED and t.has_data
                and _range_word(outputs[k + 1]) and _range_word(outputs[k + 2])):
            slots[k] = (k + 1, k + 2)
            k += 3
        else:
            k += 1
    return slots


def _range_word(t: Tensor) -> bool:
    return t.dtype is DType.FLOAT32 and t.has_data and t.elements == 1


def data_slots(outputs: tuple[Tensor, ...],
               ranges: dict[int, tuple[int, int]] | None = None) -> list[int]:
    """The outputs worth comparing: everything but the range companions (``ranges``:
    :func:`range_slots` of ``outputs``, when the caller has it)."""
    if ranges is None:
        ranges = range_slots(outputs)
    companions = {j for pair in ranges.values() for j in pair}
    return [k for k in range(len(outputs)) if k not in companions]


def lsb_of(t: Tensor, mn: Tensor | None, mx: Tensor | None) -> float | None:
    """The quantization step of ``t``: (max - min)/255 for quint8, /2**32 for qint32, one
    code for integers without a range, None for floats."""
    if t.dtype is DType.FLOAT32:
        return None
    if mn is None or mx is None:
        return 1.0
    lo, hi = scalar_of(mn), scalar_of(mx)
    return (hi - lo) / (255.0 if t.dtype is DType.QUINT8 else 2.0 ** 32)


def metrics_against(ref: np.ndarray | Reals, t: Tensor, mn: Tensor | None,
                    mx: Tensor | None, lsb: float | None, tolerance_lsb: float,
                    read: tuple[float, float | None] | None = None,
                    op_reference: Callable[[], np.ndarray | None] | None = None) -> Metrics:
    """``error_metrics(ref, values(t, mn, mx), ...)``, reading ``t``'s codes in place: a
    quantized output's float copy was a third of the comparison's time. ``ref`` has
    ``t``'s number of elements; given as :class:`Reals`, its sums are read in the same
    pass. ``read``: ``code_scale(t, mn, mx)``, when the caller has it. ``op_reference``:
    the op's own ideal result, for its excess error (``metrics.code_metrics``)."""
    codes = np.asarray(t.array)
    if t.dtype in QUANTIZED and mn is not None and mx is not None:
        scale, offset = read if read is not None else code_scale(t, mn, mx)
        if isinstance(ref, Reals):
            return code_metrics(ref.codes.reshape(codes.shape), codes, scale, offset, lsb,
                                tolerance_lsb, ref.scale, excess=True,
                                op_reference=op_reference)
        return code_metrics(ref.reshape(codes.shape), codes, scale, offset, lsb,
                            tolerance_lsb, excess=True, op_reference=op_reference)
    ref = (ref.array() if isinstance(ref, Reals) else ref).reshape(codes.shape)
    if t.dtype is DType.FLOAT32:
        return error_metrics(ref, codes, lsb, tolerance_lsb)
    return code_metrics(ref, codes, 1.0, None, lsb, tolerance_lsb)


def values(t: Tensor, mn: Tensor | None, mx: Tensor | None) -> np.ndarray:
    """Real values when ``t`` has a range (or is float), else its codes."""
    if t.dtype in QUANTIZED and mn is not None and mx is not None:
        return real(t, mn, mx)
    return real(t) if t.dtype is DType.FLOAT32 else np.asarray(t.array, np.float64)


@dataclass
class OutputDiff:
    """B against A for one node output. ``exceeds`` is the verdict at the tolerance."""

    node_id: int
    op: str
    title: str
    index: int
    shape: tuple[int, ...]
    metrics: Metrics | None = None
    exceeds: bool = False
    unit: str = "LSB"                  # "LSB", "codes" (no range) or "real" (float output)
    bit_identical: bool | None = None  # two traces only: every byte, padding included
    differing: int | None = None       # two traces: logical elements whose codes differ
    max_code_diff: float | None = None
    first_index: tuple[int, ...] | None = None
    first_a: float | None = None
    first_b: float | None = None
    padding_differing: int | None = None   # d32: padding bytes that differ
    note: str = ""
    # How to make the values A and B again for the views: a comparison of a large graph
    # would hold hundreds of MB of float arrays if it kept them, and fresh memory for each
    # array cost more than the analysis's arithmetic (page faults), so only the selected
    # output's values are made, from the tensors (and, isolated, its reference) again.
    source: Callable[[], tuple[np.ndarray, np.ndarray] | None] | None = field(
        default=None, repr=False, compare=False)

    @property
    def label(self) -> str:
        return f"{self.title}:{self.index}"

    @property
    def row_name(self) -> str:
        """How a table names the row: the title, and the op when the node has no label (as
        none of the nodes prepare adds has: a bare 0xffffffff said nothing)."""
        unlabelled = self.title == f"0x{self.node_id:x}"
        return f"{self.title} {self.op}" if unlabelled else self.title

    def values(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(A, B) as real values (or codes), in the output's shape; None if unknown."""
        return self.source() if self.source is not None else None

    @property
    def a(self) -> np.ndarray | None:
        pair = self.values()
        return None if pair is None else pair[0]

    @property
    def b(self) -> np.ndarray | None:
        pair = self.values()
        return None if pair is None else pair[1]

    def to_json(self) -> dict:
        out = {
            "node": f"0x{self.node_id:x}", "op": self.op, "title": self.title,
            "output": self.index, "shape": list(self.shape), "unit": self.unit,
            "exceeds": self.exceeds, "note": self.note,
            "metrics": self.metrics.to_json() if self.metrics else None,
        }
        if self.bit_identical is not None:
            out.update(bit_identical=self.bit_identical, differing=self.differing,
                       max_code_diff=json_number(self.max_code_diff),
                       first_index=list(self.first_index) if self.first_index else None,
                       first_a=json_number(self.first_a), first_b=json_number(self.first_b),
                       padding_differing=self.padding_differing)
        return out


def unit_of(t: Tensor, lsb: float | None) -> str:
    if t.dtype is DType.FLOAT32:
        return "real"
    return "LSB" if t.dtype in QUANTIZED and lsb != 1.0 else "codes"


def differing_codes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two logical arrays differ; NaN equals NaN, as a byte compare would mostly say."""
    with np.errstate(invalid="ignore"):
        same = (a == b)
        if a.dtype.kind == "f":
            same |= np.isnan(a) & np.isnan(b)
    return ~same


def padding_differing(a: Tensor, b: Tensor) -> int | None:
    """Padding bytes that differ, when both are d32 tensors of the same geometry."""
    if a.layout is not Layout.D32 or b.layout is not Layout.D32:
        return None
    if a.padding != b.padding or a.shape != b.shape:
        return None
    mask = a.padding_mask().reshape(-1)
    ma, mb = a.memory.reshape(-1), b.memory.reshape(-1)
    return int(np.count_nonzero(ma[mask] != mb[mask]))
