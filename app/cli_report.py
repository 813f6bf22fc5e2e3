"""``--html`` and ``--model-explorer`` of ``compare`` and ``run``: the arguments and the
writers, kept here so the two commands each gain a line or two (issue 31)."""

from __future__ import annotations

import argparse
from typing import Any

from hexscope.engine.analysis.compare_report import CompareResult
from hexscope.engine.batch.records import BatchResult
from hexscope.engine.graph import Graph
from hexscope.engine.structural_diff import StructuralDiff, structural_diff


def add_share_arguments(parser: Any, value: str) -> None:
    parser.add_argument("--html", metavar="OUT.html",
                        help="write a self-contained HTML report (summary, the graph "
                             "coloured, plots, a sortable table; opens offline)")
    parser.add_argument("--model-explorer", metavar="OUT.json",
                        help=f"write each node's {value} as Model Explorer node data")


def write_compare_shares(args: argparse.Namespace, result: CompareResult,
                         graph: Graph | None) -> str:
    """Write the HTML and Model Explorer files asked for; '' or why one failed."""
    from hexscope.app.cli_run import write_report
    from hexscope.engine.report import drawn_nodes
    from hexscope.engine.report.html_compare import write_compare_html
    from hexscope.engine.report.model_explorer import compare_values, node_data, write_node_data

    nodes = drawn_nodes(graph) if graph is not None else []
    diff = _against_diff(args, graph) if args.html else None
    problem = ""
    if args.html:
        problem = write_report(args.html,
                               lambda tmp: write_compare_html(result, nodes, tmp, diff))
    if args.model_explorer and not problem:
        doc = node_data(compare_values(result), {n.node_id: n for n in nodes})
        problem = write_report(args.model_explorer, lambda tmp: write_node_data(doc, tmp))
    return problem


def _against_diff(args: argparse.Namespace, graph: Graph | None) -> StructuralDiff | None:
    """With --against, what differs between the two graph files (for the HTML report)."""
    if graph is None or not getattr(args, "against", None):
        return None
    from hexscope.engine.errors import EngineError
    from hexscope.engine.io.any_graph import load_any

    try:
        other = load_any(args.against)
    except EngineError:
        return None              # compare has said why already
    return structural_diff(graph, other, args.graph, args.against)


def write_run_shares(args: argparse.Namespace, result: BatchResult,
                     graph: Graph | None) -> str:
    from hexscope.app.cli_run import write_report
    from hexscope.engine.report import drawn_nodes
    from hexscope.engine.report.html_run import write_run_html
    from hexscope.engine.report.model_explorer import node_data, run_values, write_node_data

    nodes = drawn_nodes(graph) if graph is not None else []
    problem = ""
    if args.html:
        problem = write_report(args.html,
                               lambda tmp: write_run_html(result, nodes, tmp, args.graph))
    if args.model_explorer and not problem:
        doc = node_data(run_values(result)[0], {n.node_id: n for n in nodes})
        problem = write_report(args.model_explorer, lambda tmp: write_node_data(doc, tmp))
    return problem
