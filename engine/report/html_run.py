"""``hexscope run --html``: a batch run (the JSON and JUnit reports' result) as one HTML
file: the verdict, the first failure, the graph coloured by time (failed nodes red), the
time by node in plan order, the checks, and every node in a sortable table."""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike

from hexscope.engine.batch.records import BatchResult, NodeRecord, RunRecord
from hexscope.engine.nodes import Node
from hexscope.engine.report.graph_drawing import PLAIN, Key, draw_graph, error_colour
from hexscope.engine.report.html import Cell, Figure, Page, Row, Section, Table, num, write_page
from hexscope.engine.report.model_explorer import run_values
from hexscope.engine.report.plots import per_node_plot

FAILED = "#e53935"
MAX_ROWS = 5000


def run_page(result: BatchResult, nodes: Iterable[Node], graph_path: str = "") -> Page:
    nodes = list(nodes)
    checks = [c for r in result.runs for c in r.checks]
    failed_checks = [c for c in checks if c.status in ("failed", "error")]
    passed = sum(r.outcome.value == "passed" for r in result.runs)
    page = Page(f"Run: {result.graph_name}", f"{graph_path or result.graph_name} · backend "
                f"{result.backend} · {result.seconds:.3f} s",
                result.outcome.value, result.exit_code != 0,
                cards=[(str(len(result.runs)), "run(s)"), (str(passed), "passed"),
                       (str(len(checks)), "check result(s)"),
                       (str(len(failed_checks)), "checks failed"),
                       (str(sum(len(r.warnings) for r in result.runs)), "warning(s)")])
    head = Section("First failure", "first")
    failing = [r for r in result.runs if r.outcome.value != "passed"]
    if result.message and not result.runs:
        head.callouts.append((result.message, True))
    for r in failing[:5]:
        where = f" at node 0x{r.failed_node:x}" if r.failed_node is not None else ""
        head.callouts.append((f"run {r.name}: {r.outcome.value}{where}: {r.message}", True))
    if not head.callouts:
        head.callouts.append(("every run passed", False))
    page.sections.append(head)
    values, unit = run_values(result)
    worst = max(values.values(), default=0.0)
    colours = {i: error_colour(v, worst, log=False) for i, v in values.items()}
    colours.update({n.node_id: FAILED for r in result.runs for n in r.nodes
                    if n.status == "failed"})
    keys = [Key("fast", error_colour(0.0, worst)), Key(f"slowest: {worst:.0f} {unit}",
                                                       error_colour(worst, worst, False)),
            Key("failed", FAILED), Key("not run", PLAIN)]
    first = result.runs[0] if result.runs else None
    order = [n for n in first.nodes] if first else []
    figures = [Figure(draw_graph(nodes, colours, f"The graph, coloured by {unit}", keys))]
    if order:
        figures.append(Figure(per_node_plot(
            [values.get(n.node_id) for n in order], f"Time by node (plan order, {unit}, "
            "mean over the runs)", unit, bad=[n.status == "failed" for n in order])))
    page.sections.append(Section("Graph and plots", "plots", figures=figures))
    if checks:
        page.sections.append(Section("Checks", "checks", table=Table(
            ("run", "node", "op", "status", "message"),
            tuple(Row((Cell(r.name), Cell(f"0x{c.node_id:x}" + (f" '{c.label}'" if c.label
                                                                 else "")),
                       Cell(c.op), Cell(c.status), Cell(c.message)),
                      c.status in ("failed", "error"))
                  for r in result.runs for c in r.checks))))
    if first is not None:
        page.sections.append(_node_table(first, values, unit, len(result.runs)))
    return page


def _node_table(run: RunRecord, values: dict[int, float], unit: str, runs: int) -> Section:
    rows = tuple(_row(k, n, values.get(n.node_id)) for k, n in enumerate(run.nodes[:MAX_ROWS]))
    more = (f"{len(run.nodes) - MAX_ROWS} more node(s) in the JSON report (--report)"
            if len(run.nodes) > MAX_ROWS else "")
    heading = "Every node" + (f" (run {run.name}; {unit} mean over {runs} runs)" if runs > 1
                              else "")
    return Section(heading, "nodes", table=Table(
        ("#", "node", "op", "status", unit, "outputs", "warnings"), rows, more))


def _row(k: int, n: NodeRecord, value: float | None) -> Row:
    shapes = "; ".join(str(o.get("shape", "")) for o in n.outputs[:3])
    return Row((num(str(k), k), Cell(f"0x{n.node_id:x}" + (f" '{n.label}'" if n.label else ""),
                                     f"{k:09d}"),
                Cell(n.op), Cell(n.status), num("-" if value is None else f"{value:.1f}", value),
                Cell(shapes), Cell("; ".join(n.warnings) or n.message)), n.status == "failed")


def write_run_html(result: BatchResult, nodes: Iterable[Node], path: str | PathLike[str],
                   graph_path: str = "") -> None:
    write_page(run_page(result, nodes, graph_path), path)


__all__ = ["run_page", "write_run_html"]
