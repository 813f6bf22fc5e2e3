"""The device's own artifacts on the command line (issue 30): ``compare --device-dump``
(hexagon_nn's graph and tensor dumps as B) and ``import-profile`` (its per-node cycles)."""

from __future__ import annotations

import argparse
import sys

from hexscope.engine.analysis.compare_report import (
    CompareResult,
    CompareRun,
    table,
    write_json,
    write_junit,
)
from hexscope.engine.device.dump_compare import compare_with_dump
from hexscope.engine.device.dump_reader import read_dump
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
            print(f"A: {args.backend}   B: {run.comparison.b_name}   tolerance "
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
