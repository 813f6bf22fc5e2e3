"""Quantization range statistics per node output, and their error against a float reference.

A quantized op's outputs come as (codes, min, max): a quint8 tensor followed by two float32
scalars (quantized-ops spec §1.1). For each such triple this module reports the range, its
step, its zero code, how many of the 256 codes the data uses, how much of it sits at 0 and
255, and, when a float reference is known, the error in steps (LSB).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hexscope.engine.cooperate import paced
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import InputError
from hexscope.engine.quant import QuantRange
from hexscope.engine.tensor import Tensor

WIDE_SPAN = 32             # codes: a range whose data spans fewer is too wide (3 bits lost)
WIDE_MIN_ELEMENTS = 64


@dataclass(frozen=True, slots=True)
class RangeStats:
    """The range of one quint8 output and how its codes use it."""

    node_id: int
    op: str
    output: int
    order: int                  # position in the execution plan
    min: float
    max: float
    stepsize: float
    zero_code: int
    zero_exact: bool
    elements: int
    distinct: int               # codes in use, of 256
    share_0: float              # fraction of elements at code 0
    share_255: float            # fraction at code 255
    err_max_lsb: float | None = None
    err_rms_lsb: float | None = None
    source: str = "run"         # "run", or "batch" for ranges gathered by batch runs
    code_low: int = 0           # the lowest and highest code in use (unknown: 0 and 255)
    code_high: int = 255

    @property
    def saturation(self) -> float:
        """Share of clipped elements: at 255, and at 0 unless code 0 stands for 0.0.

        After a Relu, code 0 is the exact zero the op produces on purpose; counting it as
        clipping would paint every Relu red.
        """
        low = self.share_0 if self.zero_code != 0 else 0.0
        return self.share_255 + low

    @property
    def range_use(self) -> float:
        """Fraction of the 256 codes the data uses."""
        return self.distinct / 256.0

    @property
    def code_span(self) -> int:
        """How many codes lie between the lowest and the highest one in use."""
        return self.code_high - self.code_low + 1

    @property
    def too_wide(self) -> bool:
        """The range is far wider than the data: its values fall within fewer than
        :data:`WIDE_SPAN` of the 256 codes, so at least 3 bits of resolution are wasted.
        Tiny outputs (under :data:`WIDE_MIN_ELEMENTS`) cannot tell and are never flagged."""
        return self.elements >= WIDE_MIN_ELEMENTS and self.code_span < WIDE_SPAN


def code_counts(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.int64]:
    """How many elements hold each of the 256 codes."""
    return np.bincount(np.asarray(codes, np.uint8).reshape(-1), minlength=256)


def range_stats(codes: npt.NDArray[np.uint8], qrange: QuantRange, *, node_id: int = 0,
                op: str = "", output: int = 0, order: int = 0) -> RangeStats:
    """The statistics of quint8 ``codes`` (the valid data only) under ``qrange``."""
    counts = code_counts(codes)
    n = int(counts.sum())
    share = (lambda k: float(counts[k]) / n) if n else (lambda k: 0.0)
    used = np.flatnonzero(counts)
    low, high = (int(used[0]), int(used[-1])) if used.size else (0, 255)
    return RangeStats(node_id, op, output, order, float(qrange.min), float(qrange.max),
                      qrange.stepsize, qrange.zero_code, qrange.zero_exact, n,
                      int(np.count_nonzero(counts)), share(0), share(255),
                      code_low=low, code_high=high)


def lsb_error(codes: npt.NDArray[np.uint8], qrange: QuantRange,
              reference: npt.ArrayLike) -> tuple[float, float]:
    """(max, rms) of |dequantized codes - reference| in steps of the range.

    Raises
    ------
    InputError
        The reference does not have the codes' number of elements.
    """
    ref = np.asarray(reference, np.float64).reshape(-1)
    c = np.asarray(codes).reshape(-1)
    if ref.size != c.size:
        raise InputError(f"the float reference has {ref.size} elements, the quantized output "
                         f"has {c.size}")
    step = qrange.stepsize
    if c.size == 0 or step <= 0:
        return 0.0, 0.0
    err = (qrange.dequantize(c).astype(np.float64) - ref) / step
    return float(np.max(np.abs(err))), float(np.sqrt(np.mean(err * err)))


def quantized_outputs(outputs: Sequence[Tensor]) -> list[int]:
    """Indices k where outputs k, k+1, k+2 are (quint8 codes, float min, float max)."""
    found = []
    k = 0
    while k + 2 < len(outputs):
        t, lo, hi = outputs[k], outputs[k + 1], outputs[k + 2]
        if (t.dtype in (DType.QUINT8, DType.UINT8) and t.has_data and _is_scalar_f(lo)
                and _is_scalar_f(hi)):
            found.append(k)
            k += 3
        else:
            k += 1
    return found


def _is_scalar_f(t: Tensor) -> bool:
    return t.dtype is DType.FLOAT32 and t.has_data and t.array.size == 1


def output_range(outputs: Sequence[Tensor], k: int) -> QuantRange:
    """The range given by the two float scalars after output ``k``."""
    return QuantRange(float(outputs[k + 1].array.reshape(-1)[0]),
                      float(outputs[k + 2].array.reshape(-1)[0]))


def node_ranges(session: object, references: Mapping[int, npt.ArrayLike] | None = None
                ) -> list[RangeStats]:
    """Range statistics of every quantized output of every node that has run, in plan order.

    Parameters
    ----------
    session
        A :class:`hexscope.engine.Session` (typed loosely to keep this module light).
    references
        Float reference values per node id, for the node's first quantized output.
    """
    stats = []
    # paced: the app reads a 10,000-node run on its own thread (a bincount per output, 3,000
    # outputs: 90-130 ms with no pause point beside the window after F5, issue 32)
    for order, node_id in paced(enumerate(session.plan)):  # type: ignore[attr-defined]
        result = session.result(node_id)  # type: ignore[attr-defined]
        if result is None:
            continue
        op = session.prepared.nodes[node_id].op  # type: ignore[attr-defined]
        for n, k in enumerate(quantized_outputs(result.outputs)):
            codes = result.outputs[k].array
            qrange = output_range(result.outputs, k)
            s = range_stats(codes, qrange, node_id=node_id, op=op, output=k, order=order)
            if references is not None and n == 0 and node_id in references:
                err = lsb_error(codes, qrange, references[node_id])
                s = replace(s, err_max_lsb=err[0], err_rms_lsb=err[1])
            stats.append(s)
    return stats


def references_from_session(session: object) -> dict[int, npt.NDArray[np.float32]]:
    """Float reference values from another run: per node, its first float32 output with more
    than one element, or else its first quantized output dequantized."""
    refs: dict[int, npt.NDArray[np.float32]] = {}
    for node_id in paced(session.plan):  # type: ignore[attr-defined]
        result = session.result(node_id)  # type: ignore[attr-defined]
        if result is None or not result.outputs:
            continue
        floats = [t for t in result.outputs
                  if t.dtype is DType.FLOAT32 and t.has_data and t.array.size > 1]
        if floats:
            refs[node_id] = np.ascontiguousarray(floats[0].array)
            continue
        ks = quantized_outputs(result.outputs)
        if ks:
            k = ks[0]
            refs[node_id] = output_range(result.outputs, k).dequantize(result.outputs[k].array)
    return refs


def load_references(path: str | Path) -> dict[int, npt.NDArray[np.float32]]:
    """Float references from an ``.npz`` whose keys are node ids (``0x2001`` or decimal)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {_parse_id(k, path): np.asarray(data[k], np.float32) for k in data.files}
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read float references: {exc}") from None


def _parse_id(key: str, path: str | Path) -> int:
    text = key.removeprefix("node_")
    try:
        return int(text, 0)
    except ValueError:
        raise InputError(f"{path}: key {key!r} is not a node id (write e.g. 0x2001)") from None


def load_batch_ranges(source: str | Path | Mapping[str, object]) -> list[RangeStats]:
    """Ranges gathered by a batch run: the ``ranges`` section of a ``hexscope run --report``
    file (resources/schemas/report.schema.json), as RangeStats marked ``source="batch"``.

    The shown range is the entry's ``quant_range`` (the union over the runs) when it has one,
    else the data's min and max. The shares at 0 and 255 are the mean over the runs of the
    per-run ``saturation`` (low, high) of that output; codes used is not in the report (0).

    Raises
    ------
    InputError
        The file cannot be read or is not a Hexscope report.
    """
    doc = _read_report(source)
    shares = _batch_saturation(doc)
    stats = []
    for order, entry in enumerate(doc.get("ranges", [])):  # type: ignore[union-attr]
        try:
            node_id = int(entry["node"], 16)
            index = int(entry["index"])
            pair = entry.get("quant_range") or [entry["min"], entry["max"]]
            qrange = QuantRange(float(pair[0]), float(pair[1]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"batch report: range entry {order} is malformed ({exc})") from None
        low, high = shares.get((node_id, index), (0.0, 0.0))
        stats.append(RangeStats(node_id, str(entry.get("op", "")), index, order, qrange.min,
                                qrange.max, qrange.stepsize, qrange.zero_code,
                                qrange.zero_exact, int(entry.get("count", 0)), 0, low, high,
                                source="batch"))
    return stats


def _read_report(source: str | Path | Mapping[str, object]) -> Mapping[str, object]:
    import json

    if isinstance(source, Mapping):
        doc = source
    else:
        try:
            doc = json.loads(Path(source).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{source}: cannot read the batch report: {exc}") from None
    if not isinstance(doc, Mapping) or doc.get("format") != "hexscope-report":
        raise InputError("not a Hexscope batch report (expected format 'hexscope-report', "
                         "written by 'hexscope run --report')")
    return doc


def _batch_saturation(doc: Mapping[str, object]) -> dict[tuple[int, int], tuple[float, float]]:
    """Mean per-run saturation (low, high) per (node, output index)."""
    sums: dict[tuple[int, int], list[float]] = {}
    for run in doc.get("runs", []) or []:  # type: ignore[union-attr]
        for node in run.get("nodes", []) if isinstance(run, Mapping) else []:
            for out in node.get("outputs", []):
                sat = out.get("saturation")
                if not sat:
                    continue
                key = (int(node["node"], 16), int(out["index"]))
                acc = sums.setdefault(key, [0.0, 0.0, 0.0])
                acc[0] += float(sat["low"])
                acc[1] += float(sat["high"])
                acc[2] += 1
    return {k: (v[0] / v[2], v[1] / v[2]) for k, v in sums.items()}
