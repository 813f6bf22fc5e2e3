"""TFLite and the float reference in one comparison: per TFLite tensor, Hexscope against
TFLite (in LSB of the tensor's scale) and each of them against the float reference, so a
divergence between the two says which side left the float meaning, and where first.

The float reference is the delegate's graph in float (``float_run``): *accumulated* (the
default here) runs it from the partition's inputs, the values both sides were fed, so
Hexscope's node and TFLite's tensor are each compared with the same ideal value: "what has
each lost by here?". *Isolated* gives each node its reference on Hexscope's own inputs:
"what does this node add?"; TFLite's tensor is then compared with the op's meaning on
Hexscope's inputs, which are TFLite's only up to the first divergence.

Each side is judged as the float reference judges a quantized output (its excess error over
the ideal rounding, ``metrics``): Hexscope's node on its own output range, as
``compare --reference float`` reports it, TFLite's tensor on its scale and zero point (the
same grid wherever the node keeps the tensor's range, as the delegate's nodes do).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hexscope.engine.analysis.compare import Comparison, compare_reference
from hexscope.engine.analysis.compare_report import excess_text
from hexscope.engine.analysis.diff import OutputDiff
from hexscope.engine.analysis.metrics import Metrics, code_metrics, error_metrics, json_number
from hexscope.engine.session import Session

FLOAT_MODES = ("accumulated", "isolated")


@dataclass(frozen=True)
class FloatPair:
    """One TFLite tensor's two errors against the float reference (None: no value)."""

    hexscope: Metrics | None
    tflite: Metrics | None
    why: str = ""                   # why there is no float value

    def error(self, side: str) -> float | None:
        """The error the verdict is taken on, in LSB: the excess where it was taken, else
        the plain error (the excess is at most that)."""
        m = self.hexscope if side == "hexscope" else self.tflite
        if m is None:
            return None
        if m.excess_lsb is not None:
            return m.excess_lsb
        return m.max_lsb if m.max_lsb is not None else m.max_abs

    def beyond(self, side: str) -> bool:
        m = self.hexscope if side == "hexscope" else self.tflite
        return m is not None and m.beyond > 0


@dataclass(frozen=True)
class Sides:
    """One row's codes on both sides, each read as ``codes * scale + offset``."""

    hexscope: np.ndarray
    h_scale: float
    h_offset: float
    tflite: np.ndarray
    t_scale: float
    t_offset: float


@dataclass
class TfliteComparison(Comparison):
    """A comparison with TFLite whose rows also carry their errors against the float
    reference (``against_float`` by (node, output); empty without one)."""

    float_mode: str = ""
    against_float: dict[tuple[int, int], FloatPair] = field(default_factory=dict)

    def pair(self, d: OutputDiff) -> FloatPair | None:
        return self.against_float.get((d.node_id, d.index))

    def first_from_float(self, side: str) -> OutputDiff | None:
        """The first row, in run order, whose ``side`` is beyond the tolerance from the
        float reference."""
        return next((d for d in self.outputs
                     if (p := self.pair(d)) is not None and p.beyond(side)), None)


def add_float_reference(comparison: TfliteComparison, session: Session, mode: str,
                        sides: dict[tuple[int, int], Sides]) -> None:
    """Fill ``comparison.against_float`` from ``session`` (the run just compared) and the
    codes of its rows (``sides``, by (node, output))."""
    if mode not in FLOAT_MODES:
        raise ValueError(f"unknown float analysis {mode!r}; choose accumulated or isolated")
    tolerance = comparison.tolerance_lsb
    floats = compare_reference(session, mode, tolerance)
    by_output = {(d.node_id, d.index): d for d in floats.outputs}
    comparison.float_mode = mode
    for d in comparison.outputs:
        key = (d.node_id, d.index)
        f = by_output.get(key)
        pair = f.values() if f is not None else None
        if pair is None:
            why = floats.skipped.get(d.node_id, "the float reference has no value here")
            comparison.against_float[key] = FloatPair(None, None, why)
            continue
        s = sides[key]
        reference = np.asarray(pair[0], np.float64).reshape(s.tflite.shape)
        # both on the TFLite tensor's step, each judged on its own grid (the excess)
        comparison.against_float[key] = FloatPair(
            _against(reference, s.hexscope, s.h_scale, s.h_offset, s.t_scale, tolerance),
            _against(reference, s.tflite, s.t_scale, s.t_offset, s.t_scale, tolerance))


def _against(reference: np.ndarray, codes: np.ndarray, scale: float, offset: float,
             lsb: float, tolerance: float) -> Metrics:
    """Codes read as ``codes * scale + offset`` against the float reference."""
    if codes.dtype.kind == "i" and codes.dtype.itemsize == 4 and scale == 1.0:
        return error_metrics(reference, codes.astype(np.float64), 1.0, tolerance)
    return code_metrics(reference, codes.astype(np.int32), scale, offset, lsb, tolerance,
                        excess=True)


def _where(d: OutputDiff | None) -> str:
    return f"0x{d.node_id:x} ({d.op})" if d is not None else "none"


def float_parting_text(comparison: TfliteComparison) -> str:
    """Which side first leaves the float reference, and at the first divergence from
    TFLite which side is the farther from it (one or two lines)."""
    if not comparison.float_mode:
        return ""
    a = comparison.a_name
    tol = f"{comparison.tolerance_lsb:g} LSB"
    first_h = comparison.first_from_float("hexscope")
    first_t = comparison.first_from_float("tflite")
    if first_h is None and first_t is None:
        who = "both stay within it"
    elif first_t is None or (first_h is not None and _index(comparison, first_h)
                             < _index(comparison, first_t)):
        who = f"{a} parts first: the delegate's graph, run as nnlib runs it, loses more there"
    elif first_h is None or _index(comparison, first_t) < _index(comparison, first_h):
        who = ("TFLite parts first: its kernel rounds worse there, or the delegate's graph "
               "means something else than the model (its float meaning is the graph's)")
    else:
        who = "both part at the same tensor"
    lines = [f"first beyond {tol} from the float reference ({comparison.float_mode}): "
             f"{a}: {_where(first_h)}; TFLite: {_where(first_t)} ({who})"]
    d = comparison.first_divergence
    p = comparison.pair(d) if d is not None else None
    if d is not None and p is not None:
        h, t = p.error("hexscope"), p.error("tflite")
        if h is None or t is None:
            lines.append(f"at the first divergence from TFLite, 0x{d.node_id:x}: no float "
                         f"value ({p.why})")
        else:
            farther = (f"{a} is the farther" if h > t else "TFLite is the farther"
                       if t > h else "as far as each other")
            lines.append(f"at the first divergence from TFLite, 0x{d.node_id:x} ({d.op}): "
                         f"{a} {_lsb(p.hexscope)} from float, TFLite {_lsb(p.tflite)} "
                         f"({farther})")
    return "\n".join(lines)


def float_parting_line(comparison: TfliteComparison) -> str:
    """:func:`float_parting_text` in one short line (the app's summary, where every line
    is taken from the pictures below it)."""
    if not comparison.float_mode:
        return ""
    a = comparison.a_name
    first_h = comparison.first_from_float("hexscope")
    first_t = comparison.first_from_float("tflite")
    order = {id(d): i for i, d in enumerate(comparison.outputs)}
    if first_h is None and first_t is None:
        who = "neither side leaves it"
    elif first_t is None or (first_h is not None and order[id(first_h)] < order[id(first_t)]):
        who = f"{a} leaves it first, at {_where(first_h)}"
    elif first_h is None or order[id(first_t)] < order[id(first_h)]:
        who = f"TFLite leaves it first, at {_where(first_t)}"
    else:
        who = f"both leave it at {_where(first_h)}"
    line = f"Float reference ({comparison.float_mode}): {who}"
    d = comparison.first_divergence
    p = comparison.pair(d) if d is not None else None
    if d is not None and p is not None and p.hexscope is not None and p.tflite is not None:
        line += (f"; at the first divergence {a} is {_lsb(p.hexscope)}, TFLite "
                 f"{_lsb(p.tflite)} from it")
    return line


def _lsb(m: Metrics | None) -> str:
    if m is None:
        return "-"
    if m.by_excess:
        text = excess_text(m)
        return f"{text} LSB (excess)" if not text.startswith("≤") else f"{text} LSB"
    return f"{m.max_lsb:.3g} LSB" if m.max_lsb is not None else f"{m.max_abs:.3g}"


def _index(comparison: Comparison, d: OutputDiff) -> int:
    return next(i for i, o in enumerate(comparison.outputs) if o is d)


def float_table(comparison: TfliteComparison, top: int = 20) -> str:
    """The rows in run order with their three errors (LSB): against TFLite, and each side
    against the float reference; '*' beyond the tolerance."""
    rows = []
    for d in comparison.outputs[:top]:
        p = comparison.pair(d)
        m = d.metrics
        h = _cell(p.hexscope if p else None, p.beyond("hexscope") if p else False)
        t = _cell(p.tflite if p else None, p.beyond("tflite") if p else False)
        vs = "-" if m is None or m.max_lsb is None else \
            f"{m.max_lsb:.3g}" + ("*" if d.exceeds else "")
        rows.append((d.title[:34], str(d.index), vs, h, t, d.op))
    header = ("node", "out", "vs TFLite", f"{comparison.a_name} vs float", "TFLite vs float",
              "op")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i in (0, 1, 5) else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in [header, *rows]]
    if len(comparison.outputs) > top:
        lines.append(f"... {len(comparison.outputs) - top} more output(s)")
    lines.append(float_parting_text(comparison))
    return "\n".join(lines)


def _cell(m: Metrics | None, beyond: bool) -> str:
    if m is None:
        return "-"
    text = excess_text(m) if m.by_excess else (f"{m.max_lsb:.3g}" if m.max_lsb is not None
                                               else "-")
    return text + ("*" if beyond else "")


def float_json(comparison: TfliteComparison) -> dict:  # type: ignore[type-arg]
    """The float part of a run's report: the analysis and each row's two errors."""
    def side(m: Metrics | None) -> dict | None:  # type: ignore[type-arg]
        if m is None:
            return None
        return {"max_lsb": json_number(m.max_lsb), "excess_lsb": json_number(m.excess_lsb),
                "beyond": m.beyond}

    first_h = comparison.first_from_float("hexscope")
    first_t = comparison.first_from_float("tflite")
    return {
        "analysis": comparison.float_mode,
        "first_a": f"0x{first_h.node_id:x}" if first_h else None,
        "first_tflite": f"0x{first_t.node_id:x}" if first_t else None,
        "outputs": [{"node": f"0x{d.node_id:x}", "output": d.index,
                     "a": side(p.hexscope), "tflite": side(p.tflite), "why": p.why}
                    for d in comparison.outputs if (p := comparison.pair(d)) is not None],
    }


__all__ = ["FLOAT_MODES", "FloatPair", "TfliteComparison", "add_float_reference",
           "float_json", "float_parting_line", "float_parting_text", "float_table"]
