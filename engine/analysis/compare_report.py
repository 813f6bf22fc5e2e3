"""The compare report: a JSON document (resources/schemas/compare.schema.json), a JUnit
file (a case per compared output, failing beyond the tolerance) and the terminal table."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from hexscope.engine.analysis.compare import Comparison
from hexscope.engine.analysis.diff import OutputDiff
from hexscope.engine.analysis.metrics import Metrics

FORMAT = "hexscope-compare"
VERSION = 1


@dataclass
class CompareRun:
    """One input set: its comparison, or why it could not be made."""

    name: str
    comparison: Comparison | None = None
    error: str = ""
    exit_code: int = 0


@dataclass
class CompareResult:
    graph: str
    mode: str
    a: str
    b: str
    tolerance_lsb: float
    runs: list[CompareRun] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        codes = [r.exit_code for r in self.runs]
        codes += [1 for r in self.runs if r.comparison and r.comparison.exceeding]
        return max(codes, default=0)


def divergence_json(d: OutputDiff | None) -> dict | None:
    if d is None:
        return None
    index = d.first_index
    a, b = d.first_a, d.first_b
    if index is None and d.metrics is not None:      # float reference: the worst element
        index, a, b = d.metrics.worst_index, d.metrics.worst_a, d.metrics.worst_b
    from hexscope.engine.analysis.metrics import json_number
    return {"node": f"0x{d.node_id:x}", "title": d.title, "op": d.op, "output": d.index,
            "element": list(index) if index is not None else None,
            "a": json_number(a), "b": json_number(b)}


def report_document(result: CompareResult) -> dict:
    runs = []
    for r in result.runs:
        c = r.comparison
        runs.append({
            "inputs": r.name, "error": r.error, "exit_code": r.exit_code,
            "first_divergence": divergence_json(c.first_divergence) if c else None,
            "exceeding": len(c.exceeding) if c else 0,
            "outputs": [d.to_json() for d in c.outputs] if c else [],
            "skipped": [{"node": f"0x{i:x}", "reason": why}
                        for i, why in c.skipped.items()] if c else [],
            "unmatched_a": c.unmatched_a if c else [],
            "unmatched_b": c.unmatched_b if c else [],
        })
    return {
        "format": FORMAT, "version": VERSION, "graph": result.graph, "mode": result.mode,
        "a": result.a, "b": result.b, "tolerance_lsb": result.tolerance_lsb,
        "exit_code": result.exit_code,
        "summary": {"runs": len(result.runs),
                    "exceeding": sum(x["exceeding"] for x in runs),
                    "errors": sum(bool(r.error) for r in result.runs)},
        "runs": runs,
    }


def write_json(result: CompareResult, path: str | PathLike[str]) -> None:
    text = json.dumps(report_document(result), indent=1, allow_nan=False)
    Path(path).write_text(text + "\n", encoding="utf-8")


def write_junit(result: CompareResult, path: str | PathLike[str]) -> None:
    root = ET.Element("testsuites", name=f"hexscope compare {result.graph}")
    for r in result.runs:
        suite = ET.SubElement(root, "testsuite", name=f"{r.name} ({result.mode})")
        cases = failures = errors = 0
        if r.error:
            case = ET.SubElement(suite, "testcase", classname=r.name, name="run")
            ET.SubElement(case, "error", message=r.error)
            cases, errors = 1, 1
        for d in (r.comparison.outputs if r.comparison else []):
            cases += 1
            case = ET.SubElement(suite, "testcase", classname=f"{r.name}.{d.op}",
                                 name=d.label)
            if d.exceeds:
                failures += 1
                ET.SubElement(case, "failure", message=row_text(d))
        suite.set("tests", str(cases))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def fmt_number(value: float | None, digits: int = 3) -> str:
    """A metric for tables: '-' when undefined, inf spelt out, large values short."""
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}f}" if abs(value) < 1e6 else f"{value:.3g}"


def row_text(d: OutputDiff) -> str:
    m = d.metrics
    if m is None:
        return d.note or "not compared"
    where = ""
    if m.worst_index is not None:
        where = (f" worst at {list(m.worst_index)}: {fmt_number(m.worst_a, 5)} vs "
                 f"{fmt_number(m.worst_b, 5)}")
    excess = f", excess {fmt_number(m.excess_lsb)} LSB" if m.excess_lsb is not None else ""
    return (f"max {fmt_number(m.max_lsb)} LSB{excess}, max abs {fmt_number(m.max_abs, 6)}, "
            f"{m.beyond} beyond the tolerance{where}")


HEADER = ("node", "output", "max LSB", "excess", "RMS LSB", "max abs", "cosine", "SQNR dB",
          "beyond", "differing")


def excess_text(m: Metrics | None) -> str:
    """The excess error (against a float reference); within the tolerance it was not
    taken, and is at most the plain error."""
    if m is None or m.max_lsb is None or not m.by_excess:
        return "-"
    if m.excess_lsb is not None or m.max_lsb == 0:
        return fmt_number(m.excess_lsb or 0.0)
    return "≤ " + fmt_number(m.max_lsb)


def table(comparison: Comparison, top: int = 20) -> str:
    """The worst outputs first, then the first divergence named."""
    rows = []
    for d in comparison.worst_first()[:top]:
        m = d.metrics
        rows.append((d.row_name[:34] + ("*" if d.exceeds else ""), str(d.index),
                     fmt_number(m.max_lsb if m else None), excess_text(m),
                     fmt_number(m.rms_lsb if m else None),
                     fmt_number(m.max_abs if m else None, 6),
                     fmt_number(m.cosine if m else None, 5),
                     fmt_number(m.sqnr_db if m else None, 1),
                     f"{100 * m.beyond_share:.1f}%" if m else "-",
                     "-" if d.differing is None else str(d.differing)))
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]
    lines = ["  ".join(h.ljust(w) if i < 2 else h.rjust(w)
                       for i, (h, w) in enumerate(zip(HEADER, widths, strict=True)))]
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    shown = len(rows)
    if len(comparison.outputs) > shown:
        lines.append(f"... {len(comparison.outputs) - shown} more output(s)")
    lines.append(first_divergence_text(comparison))
    if comparison.unmatched_a or comparison.unmatched_b:
        lines.append(f"unmatched in A: {', '.join(comparison.unmatched_a) or 'none'}; "
                     f"in B: {', '.join(comparison.unmatched_b) or 'none'}")
    return "\n".join(lines)


def first_divergence_text(comparison: Comparison) -> str:
    d = comparison.first_divergence
    if d is None:
        return (f"no output beyond {comparison.tolerance_lsb:g} LSB"
                + (" (bit exact)" if comparison.mode == "trace"
                   and comparison.tolerance_lsb <= 0 else ""))
    info = divergence_json(d) or {}
    where = f" at element {info['element']}: {info['a']} vs {info['b']}" \
        if info.get("element") is not None else ""
    why = f" ({d.note})" if d.note else ""
    return f"first divergence: {d.title} ({d.op}) output {d.index}{where}{why}"
