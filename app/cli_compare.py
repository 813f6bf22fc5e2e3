"""``hexscope compare``: a run against the float reference, another graph or another backend,
node by node, with the first divergence named (issue 12)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from hexscope.engine.analysis.compare import (
    Comparison,
    compare_reference,
    compare_traces,
    run_trace,
)
from hexscope.engine.analysis.compare_report import (
    CompareResult,
    CompareRun,
    table,
    write_json,
    write_junit,
)
from hexscope.engine.errors import BackendError, EngineError, NodeError
from hexscope.engine.graph import Graph
from hexscope.engine.session import Session

COMPARE_EPILOG = """\
What B is (one of; default --reference float):
  --reference float    the graph run in float: each op's float reference. --analysis
                       isolated (default) feeds each node the run's own inputs: "what does
                       this node add?"; accumulated runs the whole graph in float: "what has
                       the graph lost by here?"
  --against OTHER      another graph file on the same inputs; nodes matched by id, then label
  --backend-b NAME     the same graph on another backend (sim, dsp://HOST:PORT, ...)
  --as-authored        the same graph without prepare's fusions: each op of a convolution
                       chain against the Supernode the device runs (A)
  --device-dump YAML   hexagon_nn's own dump (<prefix>_graph.yaml and its .dat files): the
                       graph runs on the dump's INPUT data, each node against the device's
                       outputs by node id (see docs/device-artifacts.md)
  --reference tflite   GRAPH is a .tflite model: TFLite's CPU kernels (ai-edge-litert, every
                       tensor kept) against the delegate's graph, each TFLite tensor a node
                       computes in LSB of that tensor's scale; --input FILE is the model's
                       input (its codes, or float32 to quantize). With --backend-b NAME
                       the graph runs on A's backend and on NAME (a device: dsp://HOST:PORT),
                       each against the same TFLite run: where each first parts from TFLite.
                       With --reference float too, each row also has both sides' errors
                       against the float reference (--analysis, accumulated by default):
                       which side leaves the float meaning first. Alone, --analysis
                       isolated runs each TFLite operator on TFLite's own inputs (every
                       node after a TFLite tensor's node reads TFLite's value): what each
                       op does differently, not what the ops before it did

Errors are in LSB: quantization steps of each node's own output range. --tolerance-lsb
defaults to 0 (bit exact) for --against and --backend-b, 1 for --reference float.
Input options as in `hexscope run`: one comparison per input set.

exit codes: 0 no output beyond the tolerance, 1 an output exceeds it, 2 the graph, the other
graph or the inputs are invalid (with --device-dump: the dump had problems and no output
diverged), 3 a backend failed (or a node failed to run)."""


def add_compare_parser(sub: Any) -> None:
    from hexscope.app.cli_report import add_share_arguments
    from hexscope.app.cli_run import add_token_argument

    p = sub.add_parser(
        "compare", help="compare a run with the float reference, another graph or backend",
        description="Compare GRAPH's run node by node with B and name the first divergence.",
        epilog=COMPARE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph", metavar="GRAPH")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--reference", choices=["float", "tflite"], action="append",
                      help="compare with the float reference, or with TFLite's CPU kernels "
                           "(GRAPH a .tflite model); both: given twice")
    what.add_argument("--against", metavar="OTHER", help="compare with another graph file")
    what.add_argument("--as-authored", action="store_true",
                      help="compare with the same graph run as authored (no prepare fusions)")
    what.add_argument("--device-dump", metavar="PREFIX_graph.yaml",
                      help="compare with hexagon_nn's own dump (graph and tensor print)")
    # outside the group: it also goes with --reference tflite (both backends against TFLite)
    p.add_argument("--backend-b", metavar="NAME",
                   help="compare with another backend (with --reference tflite: run on both, "
                        "each against TFLite)")
    p.add_argument("--analysis", choices=["isolated", "accumulated"],
                   help="the float reference's (default isolated; accumulated with "
                        "--reference tflite); --reference tflite alone: isolated runs "
                        "each TFLite operator on TFLite's inputs")
    p.add_argument("--backend", default="sim", metavar="NAME",
                   help="A's backend (default sim, the simulated HVX)")
    p.add_argument("--input", action="append", default=[], metavar="NODE:IDX=FILE",
                   help="feed FILE to output IDX of the INPUT node (repeatable)")
    p.add_argument("--inputs-dir", action="append", default=[], metavar="[NODE:IDX=]DIR",
                   help="one comparison per .npy/image file in DIR (repeatable)")
    add_token_argument(p)
    p.add_argument("--tolerance-lsb", type=tolerance_arg, metavar="X",
                   help="an output diverges beyond X LSB (default: see below)")
    p.add_argument("--report", metavar="OUT.json", help="write the JSON report")
    p.add_argument("--junit", metavar="OUT.xml", help="write a JUnit XML report")
    add_share_arguments(p, "error (LSB)")
    p.add_argument("--top", type=int, default=20, metavar="N",
                   help="rows of the table (default 20)")
    p.add_argument("--seed", type=int, default=0, help="session seed (default 0)")
    p.add_argument("-q", "--quiet", action="store_true", help="no table, only the summary")


def tolerance_arg(text: str) -> float:
    """A tolerance in LSB: a finite number >= 0 (nan or inf would pass everything)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"'{text}' is not a tolerance in LSB (a finite "
                                         "number, 0 or more)")
    return value


def cmd_compare(args: argparse.Namespace) -> int:
    from hexscope.app.cli import EXIT_BACKEND, EXIT_INVALID, err, load_or_report
    from hexscope.app.cli_report import write_compare_shares
    from hexscope.app.cli_run import (
        backend_problem,
        build_input_sets,
        report_problem,
        write_report,
    )

    problem = (backend_problem(args.backend)
               or (backend_problem(args.backend_b) if args.backend_b else "")
               or report_problem(args.report, args.junit, args.html, args.model_explorer))
    if problem:
        err(problem)
        return EXIT_INVALID
    references = set(args.reference or ())
    if args.backend_b and (args.against or args.as_authored or references == {"float"}):
        other = "--against" if args.against else (
            "--as-authored" if args.as_authored else "--reference float")
        err(f"--backend-b goes with --reference tflite only, not with {other}")
        return EXIT_INVALID
    graph = load_or_report(args.graph)
    if graph is None:
        return EXIT_INVALID
    if "tflite" in references:
        return _compare_tflite(graph, args, "float" in references)
    args.analysis = args.analysis or "isolated"
    if args.device_dump:
        from hexscope.app.cli_device import compare_device_dump
        return compare_device_dump(graph, args)
    other: Graph | None = None
    if args.against:
        other = load_or_report(args.against)
        if other is None:
            return EXIT_INVALID
    tolerance = args.tolerance_lsb
    if tolerance is None:
        tolerance = 0.0 if (args.against or args.backend_b or args.as_authored) else 1.0
    if tolerance < 0:
        err("--tolerance-lsb must be >= 0")
        return EXIT_INVALID
    if args.against:
        mode, b_name = "trace", args.against
    elif args.backend_b:
        mode, b_name = "trace", args.backend_b
    elif args.as_authored:
        mode, b_name = "trace", "as authored"
    else:
        mode, b_name = args.analysis, f"float reference ({args.analysis})"
    result = CompareResult(args.graph, mode, args.backend, b_name, tolerance)
    try:
        sets = build_input_sets(graph, args.graph, args.input, args.inputs_dir)
    except EngineError as exc:
        err(str(exc))
        return EXIT_INVALID
    for lazy in sets:
        input_set = lazy.loaded(graph)       # one set's tensors at a time
        run = CompareRun(input_set.name)
        result.runs.append(run)
        if input_set.error:
            run.error, run.exit_code = input_set.error, EXIT_INVALID
            err(f"{input_set.name}: {input_set.error}")
            continue
        try:
            run.comparison = _compare_one(graph, other, args, input_set.tensors, tolerance)
        except (BackendError, NodeError) as exc:
            run.error, run.exit_code = str(exc), EXIT_BACKEND
            err(f"{input_set.name}: {exc}")
            continue
        except EngineError as exc:
            run.error, run.exit_code = str(exc), EXIT_INVALID
            err(f"{input_set.name}: {exc}")
            continue
        if not args.quiet:
            if len(sets) > 1:
                print(f"== {input_set.name}")
            print(f"A: {args.backend}   B: {b_name}   tolerance {tolerance:g} LSB")
            print(table(run.comparison, args.top))
    _print_summary(result)
    problem = ((write_report(args.report, lambda tmp: write_json(result, tmp))
                if args.report else "")
               or (write_report(args.junit, lambda tmp: write_junit(result, tmp))
                   if args.junit else "")
               or write_compare_shares(args, result, graph))
    if problem:
        err(problem)
        return max(result.exit_code, EXIT_INVALID)
    return result.exit_code


def _compare_one(graph: Graph, other: Graph | None, args: argparse.Namespace,
                 tensors: Any, tolerance: float) -> Comparison:
    session = Session(graph, args.backend, seed=args.seed)
    try:
        a = run_trace(session, tensors, args.backend)
        if other is None and not args.backend_b and not args.as_authored:
            return compare_reference(session, args.analysis, tolerance)
        if other is not None:
            b_session = Session(other, args.backend, seed=args.seed)
            b_name = args.against
        elif args.as_authored:
            b_session = Session(graph, args.backend, seed=args.seed, fusions=False)
            b_name = "as authored"
        else:
            b_session = Session(graph, args.backend_b, seed=args.seed)
            b_name = args.backend_b
        try:
            b = run_trace(b_session, tensors, b_name)
        finally:
            b_session.close()
        return compare_traces(a, b, tolerance)
    finally:
        session.close()


def _compare_tflite(graph: Graph, args: argparse.Namespace, with_float: bool) -> int:
    """A .tflite model's delegated graph against TFLite's CPU run on the same input; with
    --backend-b, on both backends, each against the one TFLite run; ``with_float``: each
    row also against the float reference (accumulated unless --analysis says)."""
    import numpy as np

    from hexscope.app.cli import EXIT_BACKEND, EXIT_INVALID, err
    from hexscope.engine.io.tflite.float_check import float_parting_text, float_table
    from hexscope.engine.io.tflite.reference import compare_backends_with_tflite

    tolerance = 1.0 if args.tolerance_lsb is None else args.tolerance_lsb
    inputs = []
    for text in args.input:
        path = text.split("=", 1)[-1]
        try:
            inputs.append(np.load(path, allow_pickle=False))
        except (OSError, ValueError) as exc:
            err(f"{path}: cannot read as .npy: {exc}")
            return EXIT_INVALID
    backends = [args.backend] + ([args.backend_b] if args.backend_b else [])
    isolated = args.analysis == "isolated" and not with_float
    if isolated and (args.backend_b or args.backend != "sim"):
        err("--analysis isolated with --reference tflite feeds the simulator TFLite's values "
            "node by node: not with another backend")
        return EXIT_INVALID
    try:
        comparisons = compare_backends_with_tflite(
            graph, args.graph, backends, inputs or None, tolerance, args.seed,
            (args.analysis or "accumulated") if with_float else "", isolated)
    except (BackendError, NodeError) as exc:
        err(str(exc))
        return EXIT_BACKEND
    except EngineError as exc:
        err(str(exc))
        return EXIT_INVALID
    b_name = comparisons[0].b_name
    result = CompareResult(args.graph, "tflite", " and ".join(backends), b_name, tolerance)
    name = args.input[0] if args.input else f"random codes (seed {args.seed})"
    for backend, comparison in zip(backends, comparisons, strict=True):
        run = CompareRun(f"{name} on {backend}" if args.backend_b else name)
        run.comparison = comparison
        result.runs.append(run)
        if not args.quiet:
            print(f"A: {backend}   B: {b_name}   tolerance {tolerance:g} LSB "
                  "(of each TFLite tensor's scale)")
            print(table(comparison, args.top))
        if getattr(comparison, "stopped", ""):
            # compared up to a node nnlib cannot run: the rows are the answer so far
            run.error, run.exit_code = comparison.stopped, EXIT_INVALID  # type: ignore[attr-defined]
            print(f"stopped: {run.error}")
        if with_float:
            # with -q, only the lines that say which side parts first: they are the answer
            print(float_parting_text(comparison) if args.quiet
                  else float_table(comparison, args.top))
    if args.backend_b:
        print(_where_they_part(backends, comparisons))
    _print_summary(result, f"runs ({' and '.join(backends)})" if args.backend_b else
                   "input set(s)")
    if args.report:
        _write_tflite_json(result, args.report)
    if args.junit:
        write_junit(result, args.junit)
    return result.exit_code


def _write_tflite_json(result: CompareResult, path: str) -> None:
    """The compare report, each run with its rows against the float reference when made."""
    import json
    from pathlib import Path

    from hexscope.engine.analysis.compare_report import report_document
    from hexscope.engine.io.tflite.float_check import TfliteComparison, float_json

    document = report_document(result)
    for run, out in zip(result.runs, document["runs"], strict=True):
        c = run.comparison
        if isinstance(c, TfliteComparison) and c.float_mode:
            out["against_float"] = float_json(c)
    Path(path).write_text(json.dumps(document, indent=1, allow_nan=False) + "\n",
                          encoding="utf-8")


def _where_they_part(backends: list[str], comparisons: list[Comparison]) -> str:
    """One line: where each backend first parts from TFLite, and what that says."""
    firsts = [c.first_divergence for c in comparisons]
    said = "; ".join(f"{b}: " + (f"0x{d.node_id:x} ({d.op})" if d else "none")
                     for b, d in zip(backends, firsts, strict=True))
    a, b = firsts
    if a is None and b is None:
        why = "both follow TFLite"
    elif a is not None and b is not None and (a.node_id, a.index) == (b.node_id, b.index):
        why = "both part at the same tensor: the delegate's graph, not the backend"
    elif a is None or (b is not None and _before(comparisons[1], b, a)):
        why = f"{backends[1]} parts first: its own difference"
    else:
        why = f"{backends[0]} parts first: its own difference"
    return f"first divergence from TFLite: {said} ({why})"


def _before(comparison: Comparison, d: Any, other: Any) -> bool:
    """Whether ``d`` comes before ``other`` in run order (the rows' order)."""
    keys = [(o.node_id, o.index) for o in comparison.outputs]
    return keys.index((d.node_id, d.index)) < keys.index((other.node_id, other.index))


def _print_summary(result: CompareResult, runs: str = "input set(s)") -> None:
    exceeding = sum(len(r.comparison.exceeding) for r in result.runs if r.comparison)
    errors = sum(bool(r.error) for r in result.runs)
    verdict = "FAILED" if result.exit_code else "passed"
    print(f"compare {verdict}: {len(result.runs)} {runs}, {exceeding} output(s) beyond "
          f"{result.tolerance_lsb:g} LSB" + (f", {errors} error(s)" if errors else ""),
          file=sys.stdout)
