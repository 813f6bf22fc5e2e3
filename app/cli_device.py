"""The device's own artifacts on the command line (issue 30): ``compare --device-dump``
(hexagon_nn's graph and tensor dumps as B) and ``import-profile`` (its per-node cycles)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from hexscope.engine.analysis.compare_report import (
    CompareResult,
    CompareRun,
    table,
    write_json,
    write_junit,
)
from hexscope.engine.batch.records import BatchResult
from hexscope.engine.device.dump_compare import compare_with_dump
from hexscope.engine.device.dump_reader import read_dump
from hexscope.engine.device.profile import Profile
from hexscope.engine.errors import BackendError, EngineError, NodeError
from hexscope.engine.graph import Graph


def compare_device_dump(graph: Graph, args: argparse.Namespace) -> int:
    """``hexscope compare GRAPH --device-dump PREFIX_graph.yaml``.

    Exit codes as compare: 1 an output diverges; else 2 when the dump had problems (each
    printed, naming the file and node; the rest is compared) or the run failed to start;
    3 a backend failed; 0 every output of the dump matches."""
    from hexscope.app.cli import EXIT_BACKEND, EXIT_INVALID, err
    from hexscope.app.cli_run import write_report

    tolerance = 0.0 if args.tolerance_lsb is None else args.tolerance_lsb
    dump = read_dump(args.device_dump)
    if not dump.nodes:
        for problem in dump.problems:
            err(problem)
        return EXIT_INVALID
    result = CompareResult(args.graph, "trace", args.backend, f"device dump {args.device_dump}",
                           tolerance)
    run = CompareRun(f"the dump's inputs ({dump.path.name})")
    result.runs.append(run)
    try:
        found = compare_with_dump(graph, dump, args.backend, args.seed, tolerance)
    except (BackendError, NodeError) as exc:
        run.error, run.exit_code = str(exc), EXIT_BACKEND
        err(str(exc))
    except EngineError as exc:
        run.error, run.exit_code = str(exc), EXIT_INVALID
        err(str(exc))
    else:
        run.comparison = found.comparison
        for problem in found.problems:
            err(problem)
        if found.problems:
            run.exit_code = EXIT_INVALID
            run.error = f"{len(found.problems)} problem(s) with the dump"
        if not args.quiet:
            print(f"A: {run.comparison.a_name}   B: {run.comparison.b_name}   tolerance "
                  f"{tolerance:g} LSB")
            print(table(run.comparison, args.top))
    comparison = run.comparison
    exceeding = len(comparison.exceeding) if comparison else 0
    code = 1 if exceeding else result.exit_code
    verdict = "FAILED" if code else "passed"
    print(f"compare {verdict}: device dump, {exceeding} output(s) beyond {tolerance:g} LSB"
          + (f", {len(found.problems)} problem(s) with the dump"
             if comparison and found.problems else ""), file=sys.stdout)
    problem = ((write_report(args.report, lambda tmp: write_json(result, tmp))
                if args.report else "")
               or (write_report(args.junit, lambda tmp: write_junit(result, tmp))
                   if args.junit else ""))
    if problem:
        err(problem)
        return max(code, EXIT_INVALID)
    return code


IMPORT_EPILOG = """\
PERF.txt is what `graph_app --perfdump` prints (lines `node,0x<id>,<name>,<op>,executions,
<n>,cycles,<c>,...`), or the TFLite Hexagon delegate's op-profiling table as TFLite's
benchmark tool prints it (GRAPH then a .tflite model or a graph imported from one). The
device reports a fused chain under the surviving node's id (the Relu's); Hexscope's prepare
keeps that id, so the cycles land on the fused node and name the nodes it absorbed.

The cycles are stored beside GRAPH as GRAPH.cycles.json (or --out): the app shows them
(Timing panel, cycles overlay) and `hexscope run --trace` puts them in the timeline.

exit codes: 0 every row attached, 1 some rows name no node of GRAPH (listed), 2 GRAPH or
PERF.txt cannot be read or holds no profile."""


def add_import_profile_parser(sub: object) -> None:
    p = sub.add_parser(  # type: ignore[attr-defined]
        "import-profile", help="attach the device's per-node cycles (--perfdump) to a graph",
        description="Read hexagon_nn's per-node cycles and attach them to GRAPH's nodes.",
        epilog=IMPORT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph", metavar="GRAPH")
    p.add_argument("profile", metavar="PERF.txt")
    p.add_argument("--out", metavar="CYCLES.json",
                   help="where to store the cycles (default GRAPH.cycles.json)")
    p.add_argument("--top", type=int, default=20, metavar="N",
                   help="rows of the table (default 20)")
    p.set_defaults(device_command=cmd_import_profile)


def cmd_import_profile(args: argparse.Namespace) -> int:
    from hexscope.app.cli import EXIT_INVALID, err, load_or_report
    from hexscope.app.cli_run import write_report
    from hexscope.engine.device.perfdump import parse_profile
    from hexscope.engine.device.profile import attach, profile_path, save_profile

    graph = load_or_report(args.graph)
    if graph is None:
        return EXIT_INVALID
    try:
        with open(args.profile, encoding="utf-8", errors="replace") as handle:
            text = parse_profile(handle.read(), os.path.basename(args.profile))
    except OSError as exc:
        err(f"{args.profile}: cannot read: {exc.strerror or exc}")
        return EXIT_INVALID
    if not text.kind:
        for problem in text.problems:
            err(problem)
        return EXIT_INVALID
    try:
        profile = attach(graph, text, os.path.basename(args.profile))
    except EngineError as exc:
        err(str(exc))
        return EXIT_INVALID
    for problem in profile.problems:
        err(problem)
    print(profile_table(profile, args.top))
    out = args.out or str(profile_path(args.graph))
    problem = write_report(out, lambda tmp: save_profile(profile, tmp))
    if problem:
        err(problem)
        return EXIT_INVALID
    print(f"{len(profile.nodes)} node(s), {profile.total} cycles stored in {out}"
          + (f"; {len(profile.unmatched)} row(s) name no node of {args.graph}: "
             f"{', '.join(profile.unmatched[:10])}" if profile.unmatched else ""))
    return 1 if profile.unmatched else 0


def profile_table(profile: Profile, top: int = 20) -> str:
    total = profile.total or 1
    rows = sorted(profile.nodes.values(), key=lambda n: -n.cycles)
    lines = [f"{'node':<12}{'op':<34}{'cycles':>14}{'share':>8}  fused / note"]
    for n in rows[:top]:
        extra = (f"reports for {', '.join(f'0x{a:x}' for a in n.absorbed)} (fused here)"
                 if n.absorbed else "")
        extra = "; ".join(x for x in (extra, n.note) if x)
        lines.append(f"0x{n.node_id:<10x}{n.op[:33]:<34}{n.cycles:>14}"
                     f"{100 * n.cycles / total:>7.1f}%  {extra}")
    if len(rows) > top:
        lines.append(f"... {len(rows) - top} more node(s)")
    return "\n".join(lines)


def write_run_trace(args: argparse.Namespace, graph: Graph, result: BatchResult) -> str:
    """``hexscope run --trace``: the runs as trace-event JSON; '' or why it failed. An
    imported profile beside the graph gives the cycles where the run has none."""
    from hexscope.app.cli_run import write_report
    from hexscope.engine.device.profile import ProfileError, load_profile, profile_path
    from hexscope.engine.device.trace_events import slices_from_batch, trace_document
    from hexscope.engine.prepare import prepare

    try:
        prepared = prepare(graph, fusions=not args.as_authored)
    except EngineError as exc:
        return f"cannot write the trace: {exc}"
    cycles: dict[int, int] = {}
    source = ""
    stored = profile_path(args.graph)
    if stored.is_file():
        try:
            profile = load_profile(stored)
        except ProfileError as exc:
            print(f"warning: {exc}", file=sys.stderr)
        else:
            cycles = {k: n.cycles for k, n in profile.nodes.items()}
            source = f"{stored.name} (imported from {profile.source})"
    runs = slices_from_batch(result, prepared, {n.node_id: n.title for n in graph},
                             cycles, source)
    doc = trace_document(runs, os.path.basename(args.graph), result.backend)
    return write_report(args.trace, lambda tmp: tmp.write_text(json.dumps(doc)))
