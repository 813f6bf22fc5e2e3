"""``hexscope compare --html``: the compare result (the JSON and JUnit writers' third
sibling) as one HTML file: summary, first divergence, the graph coloured by error, the
error by node in plan order, the worst tensor, and every output in a sortable table."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from os import PathLike

from hexscope.engine.analysis.compare import Comparison
from hexscope.engine.analysis.compare_report import (
    CompareResult,
    excess_text,
    first_divergence_text,
    fmt_number,
)
from hexscope.engine.analysis.diff import OutputDiff
from hexscope.engine.nodes import Node
from hexscope.engine.report.graph_drawing import PLAIN, Key, draw_graph, error_colour
from hexscope.engine.report.html import Cell, Figure, Page, Row, Section, Table, num, write_page
from hexscope.engine.report.plots import per_node_plot, tensor_plot
from hexscope.engine.structural_diff import StructuralDiff

MAX_ROWS = 5000
HEADERS = ("node", "op", "output", "max LSB", "excess", "RMS LSB", "max abs", "cosine",
           "SQNR dB", "beyond", "differing", "note")


def error_of(d: OutputDiff) -> float | None:
    """An output's error for colours and plots: max LSB where known, else real units."""
    m = d.metrics
    if m is None:
        return None
    return m.max_lsb if m.max_lsb is not None else m.max_abs


def node_errors(comparison: Comparison) -> dict[int, float]:
    """The largest error of each node's outputs."""
    out: dict[int, float] = {}
    for d in comparison.outputs:
        e = error_of(d)
        if e is not None:
            out[d.node_id] = max(e, out.get(d.node_id, 0.0))
    return out


def compare_page(result: CompareResult, nodes: Iterable[Node],
                 diff: StructuralDiff | None = None) -> Page:
    """The page; ``diff`` (B another graph file) adds what differs between the graphs,
    which names the const or node changed when the first divergence is a fused node."""
    nodes = list(nodes)
    compared = [r for r in result.runs if r.comparison is not None]
    exceeding = sum(len(r.comparison.exceeding) for r in compared)  # type: ignore[union-attr]
    page = Page(f"Compare: {os.path.basename(result.graph)}",
                f"{result.graph} · A: {result.a} · B: {result.b} · mode {result.mode} · "
                f"tolerance {result.tolerance_lsb:g} LSB",
                "FAILED" if result.exit_code else "passed", bool(result.exit_code),
                cards=[(str(len(result.runs)), "input set(s)"),
                       (str(exceeding), f"output(s) beyond {result.tolerance_lsb:g} LSB"),
                       (str(sum(bool(r.error) for r in result.runs)), "error(s)")])
    for k, run in enumerate(result.runs):
        anchor = f"run{k}"
        if run.comparison is None:
            page.sections.append(Section(f"{run.name}: not compared", anchor,
                                         callouts=[(run.error or "no comparison", True)]))
            continue
        page.sections += _run_sections(run.name, run.comparison, nodes, anchor,
                                       len(result.runs) > 1)
    if diff is not None:
        from hexscope.engine.report.html_diff import differences_section

        page.sections.insert(1, differences_section(diff, "What differs between the graphs"))
    return page


def _run_sections(name: str, c: Comparison, nodes: Sequence[Node], anchor: str,
                  named: bool) -> list[Section]:
    prefix = f"{name}: " if named else ""
    first = c.first_divergence
    head = Section(f"{prefix}{_cap('first divergence', named)}", f"{anchor}-first",
                   callouts=[(first_divergence_text(c), first is not None)])
    if c.unmatched_a or c.unmatched_b:
        head.callouts.append((f"unmatched in A: {', '.join(c.unmatched_a) or 'none'}; in B: "
                              f"{', '.join(c.unmatched_b) or 'none'}", False))
    identical = sum(bool(d.bit_identical) for d in c.outputs)
    head.cards = [(str(len(c.outputs)), "outputs compared"),
                  (str(len(c.exceeding)), "beyond the tolerance"),
                  (str(len(c.skipped)), "not compared")]
    if c.mode == "trace":
        head.cards.append((str(identical), "bit identical"))
    errors = node_errors(c)
    worst = max(errors.values(), default=0.0)
    colours = {i: error_colour(e, worst) for i, e in errors.items()}
    keys = [Key("no error", error_colour(0.0, worst)),
            Key(f"worst: {fmt_number(worst)}", error_colour(worst, worst)),
            Key("not compared", PLAIN)]
    values = [error_of(d) for d in c.outputs]
    marked = c.outputs.index(first) if first is not None else None
    figures = [Figure(draw_graph(nodes, colours, "The graph, coloured by error", keys)),
               Figure(per_node_plot(values, "Error by node output (plan order)",
                                    "max error (LSB)", c.tolerance_lsb or None, marked,
                                    first.title if first is not None else "",
                                    [d.exceeds for d in c.outputs]))]
    figures += _worst_tensor(c)
    plots = Section(f"{prefix}{_cap('graph and plots', named)}", f"{anchor}-plots", figures=figures)
    rows = tuple(_row(d) for d in c.outputs[:MAX_ROWS])
    more = (f"{len(c.outputs) - MAX_ROWS} more output(s) in the JSON report (--report)"
            if len(c.outputs) > MAX_ROWS else "")
    table = Section(f"{prefix}{_cap('every output', named)}", f"{anchor}-table",
                    table=Table(HEADERS, rows, more))
    return [head, plots, table]


def _cap(heading: str, named: bool) -> str:
    """A heading after a run's name ("inputs: first divergence") or on its own."""
    return heading if named else heading[0].upper() + heading[1:]


def _worst_tensor(c: Comparison) -> list[Figure]:
    ranked = [d for d in c.worst_first() if d.source is not None and d.metrics is not None]
    if not ranked:
        return []
    d = ranked[0]
    a, b = d.source()  # type: ignore[misc]
    index = d.metrics.worst_index if d.metrics else None  # type: ignore[union-attr]
    caption = (f"The worst output: {d.title} ({d.op}) output {d.index}, shape "
               f"{'x'.join(map(str, d.shape))}; its largest error "
               f"{fmt_number(error_of(d))} {d.unit} at {list(index) if index else '-'}.")
    return [Figure(tensor_plot(a, b, index, f"{d.title} output {d.index}", "real value"),
                   caption)]


def _row(d: OutputDiff) -> Row:
    m = d.metrics
    return Row((Cell(d.title, f"{d.node_id:012d}"), Cell(d.op), num(str(d.index), d.index),
                num(fmt_number(m.max_lsb if m else None), m.max_lsb if m else None),
                Cell(excess_text(m), css="num"),
                num(fmt_number(m.rms_lsb if m else None), m.rms_lsb if m else None),
                num(fmt_number(m.max_abs if m else None, 6), m.max_abs if m else None),
                num(fmt_number(m.cosine if m else None, 5), m.cosine if m else None),
                num(fmt_number(m.sqnr_db if m else None, 1), m.sqnr_db if m else None),
                num(f"{100 * m.beyond_share:.1f}%" if m else "-",
                    m.beyond_share if m else None),
                num("-" if d.differing is None else str(d.differing), d.differing),
                Cell(d.note)), d.exceeds)


def write_compare_html(result: CompareResult, nodes: Iterable[Node],
                       path: str | PathLike[str], diff: StructuralDiff | None = None) -> None:
    write_page(compare_page(result, nodes, diff), path)


__all__ = ["compare_page", "error_of", "node_errors", "write_compare_html"]
