"""``hexscope diff A B``: what changed between two graphs, node by node (issue 31)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hexscope.engine.graph import Graph
from hexscope.engine.structural_diff import StructuralDiff, structural_diff

DIFF_EPILOG = """\
A and B are .hexgraph files, hexagon_nn graph-init C files or .tflite models. Nodes are
matched by id, then by a label unique in B (as compare matches them); a matched node
differs in its op, padding, inputs (rewired), output declarations, label or const data
(the bytes that differ and the largest change). Positions are not compared.
--prepared compares A as authored with A as prepare leaves it (B not given).

exit codes: 0 the graphs are the same, 1 they differ, 2 a graph cannot be read."""


def add_diff_parser(sub: Any) -> None:
    p = sub.add_parser(
        "diff", help="list the nodes added, removed and changed between two graphs",
        description="Compare graph B with graph A structurally: nodes added, removed and "
                    "changed.",
        epilog=DIFF_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B", nargs="?")
    p.add_argument("--prepared", action="store_true",
                   help="compare A as authored with A as prepared (instead of B)")
    p.add_argument("--json", action="store_true", help="print the diff as JSON")
    p.add_argument("--html", metavar="OUT.html",
                   help="write a self-contained HTML report (the graph drawn, coloured by "
                        "the diff)")
    p.add_argument("--top", type=int, default=200, metavar="N",
                   help="nodes listed in the text output (default 200)")


def cmd_diff(args: argparse.Namespace) -> int:
    from hexscope.app.cli import EXIT_INVALID, err
    from hexscope.app.cli_run import report_problem, write_report
    from hexscope.engine.errors import EngineError

    if (args.b is None) == (not args.prepared):
        err("diff: give two graphs A B, or one graph and --prepared")
        return EXIT_INVALID
    problem = report_problem(args.html)
    if problem:
        err(problem)
        return EXIT_INVALID
    a = _load(args.a)
    if a is None:
        return EXIT_INVALID
    if args.prepared:
        from hexscope.engine.prepare import prepare

        try:
            prepared = prepare(a)
        except EngineError as exc:
            err(f"{args.a}: cannot prepare: {exc}")
            return EXIT_INVALID
        b_nodes, b_name = list(prepared.nodes.values()), f"{args.a} (prepared)"
        b_graph = None
    else:
        b_graph = _load(args.b)
        if b_graph is None:
            return EXIT_INVALID
        b_nodes, b_name = list(b_graph), args.b
    diff = structural_diff(a, b_nodes, args.a, b_name)
    if args.json:
        print(json.dumps(diff.to_json(), indent=1))
    else:
        print(diff_text(diff, args.top))
    if args.html:
        from hexscope.engine.report.html_diff import write_diff_html

        problem = write_report(args.html, lambda tmp: write_diff_html(diff, a, b_nodes, tmp))
        if problem:
            err(problem)
            return EXIT_INVALID
    return 0 if diff.same else 1


def _load(path: str) -> Graph | None:
    """The graph in ``path``, or None once the reason is printed (one line naming it)."""
    from hexscope.app.cli import load_or_report

    return load_or_report(path)


def diff_text(diff: StructuralDiff, top: int = 200) -> str:
    lines = [f"A: {diff.a_name}", f"B: {diff.b_name}"]
    lines += [e.text() for e in diff.entries[:top]]
    if len(diff.entries) > top:
        lines.append(f"... {len(diff.entries) - top} more node(s) (--top N, or --json)")
    lines.append(diff.summary())
    return "\n".join(lines)
