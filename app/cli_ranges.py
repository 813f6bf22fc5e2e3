"""``hexscope calibrate``, ``apply-ranges`` and ``sensitivity``: ranges over a data set,
written into the graph, and what each node's quantization costs (issue 29; docs/ranges.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from hexscope.app.cli_run import (
    MAX_JOBS,
    Progress,
    build_input_sets,
    print_summary,
    report_problem,
    scheduler_problem,
    write_report,
)
from hexscope.engine.batch.parallel import default_jobs
from hexscope.engine.errors import EngineError

CALIBRATE_EPILOG = """\
methods: minmax (smallest and largest value over all runs); percentile:P (the P-th
percentile of all values as max, the (100-P)-th as min); per-run-percentile:P (TensorFlow's
freeze_requantization_ranges: the P-th percentile of each run's maximum, the (100-P)-th of
each run's minimum). Every range includes 0 and is written as the grid the device uses
(0.0 an exact code).

The file follows AIMET's encodings layout, keyed 0xID:IDX; apply it with
'hexscope apply-ranges GRAPH FILE -o OUT.hexgraph'.

exit codes: 0 written, 2 the graph, inputs or method are invalid or a run failed."""

APPLY_EPILOG = """\
Rewrites, for each node the file gives a range: QuantizeDownAndShrinkRange_32to8 becomes
Requantize_32to8 with Const min and max; a Requantize_32to8 reading a RequantizationRange_32
reads Consts (the range op goes); a Supernode's infinite output range ends become Consts; a
Quantize fed by Min_f/Max_f reads Consts (they go). Nodes the file does not name stay.

exit codes: 0 written, 2 the graph or the file is invalid."""

SENSITIVITY_EPILOG = """\
Each node's sensitivity is how much the RMS error of the graph's outputs against the float
reference drops when that node alone runs in float (its output's quantize-dequantize taken
away), averaged over the input sets. The error is measured on a float run with every
quantized output quantized and dequantized in the range the quantized run gave it.

exit codes: 0 ranked, 2 the graph or inputs are invalid or a run failed."""

COMMANDS = ("calibrate", "apply-ranges", "sensitivity")


def add_ranges_parsers(sub: Any) -> None:
    """The three subcommands."""
    cal = sub.add_parser(
        "calibrate", help="ranges of every node output over a data set (AIMET encodings)",
        description="Run GRAPH once per input set and write the range each node output "
                    "should have.",
        epilog=CALIBRATE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    cal.add_argument("graph", metavar="GRAPH")
    _add_data_arguments(cal)
    cal.add_argument("-o", "--output", required=True, metavar="RANGES.json",
                     help="the encodings file to write")
    cal.add_argument("--method", default="minmax", metavar="METHOD",
                     help="minmax (default), percentile:P or per-run-percentile:P")
    cal.add_argument("--as-authored", action="store_true",
                     help="no prepare fusions: calibrate each op of a convolution chain")
    cal.add_argument("-q", "--quiet", action="store_true", help="only print the summary")
    app = sub.add_parser(
        "apply-ranges", help="write a ranges file into a graph (fixed ranges, no run-time "
                             "range ops)",
        description="Give the run-time range nodes of GRAPH the ranges of RANGES.json.",
        epilog=APPLY_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    app.add_argument("graph", metavar="GRAPH")
    app.add_argument("ranges", metavar="RANGES.json",
                     help="from hexscope calibrate, or an AIMET/QNN encodings file whose "
                          "tensor names are node labels")
    app.add_argument("-o", "--output", required=True, metavar="OUT.hexgraph")
    sens = sub.add_parser(
        "sensitivity", help="rank nodes by what their quantization costs at the outputs",
        description="Rank the nodes of GRAPH by how much the output error against the "
                    "float reference drops when each alone runs in float.",
        epilog=SENSITIVITY_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sens.add_argument("graph", metavar="GRAPH")
    _add_data_arguments(sens, batch=False)
    sens.add_argument("--reference", default="float", choices=("float",),
                      help="what the error is measured against (the float references)")
    sens.add_argument("--top", type=int, default=10, metavar="N",
                      help="print the N most sensitive nodes (default 10)")
    sens.add_argument("--report", metavar="OUT.json", help="write the whole ranking as JSON")
    sens.add_argument("--as-authored", action="store_true",
                      help="no prepare fusions: rank each op of a convolution chain")


def _add_data_arguments(parser: Any, batch: bool = True) -> None:
    parser.add_argument("--inputs-dir", action="append", default=[], metavar="[NODE:IDX=]DIR",
                        help="one run per .npy/image file in DIR (repeatable)")
    parser.add_argument("--input", action="append", default=[], metavar="NODE:IDX=FILE",
                        help="feed FILE to output IDX of the INPUT node (repeatable)")
    parser.add_argument("-j", "--jobs", type=_job_count, default=None if batch else 1,
                        metavar="N",
                        help="N worker processes (default: the number of processors)" if batch
                        else "share the nodes among N worker processes (default 1: each "
                             "worker first runs the data set for its own baseline)")
    if batch:       # calibrate's runs are a run batch: the cluster and seed of 'run'
        parser.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                            help="run on this Dask distributed cluster (hexscope[cluster])")
        parser.add_argument("--seed", type=int, default=0, help="session seed (default 0)")


def _job_count(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if not 1 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of jobs (1 to {MAX_JOBS})")
    return value


def cmd_ranges(args: argparse.Namespace) -> int:
    """Dispatch to the subcommand's function."""
    return {"calibrate": cmd_calibrate, "apply-ranges": cmd_apply_ranges,
            "sensitivity": cmd_sensitivity}[args.command](args)


def _fail(message: str) -> int:
    print(f"hexscope: {message}", file=sys.stderr)
    return 2


def cmd_calibrate(args: argparse.Namespace) -> int:
    from hexscope.engine.io.any_graph import load_any
    from hexscope.engine.ranges.calibrate import Method, calibrate
    from hexscope.engine.ranges.encodings import write_ranges

    problem = ((scheduler_problem(args.scheduler) if args.scheduler else "")
               or report_problem(args.output))
    if problem:
        return _fail(problem)
    try:
        method = Method.parse(args.method)
        graph = load_any(args.graph, [])
        input_sets = build_input_sets(graph, args.graph, args.input, args.inputs_dir)
    except EngineError as exc:
        return _fail(str(exc))
    name = Path(args.graph).name
    stream = sys.stderr if sys.stderr.isatty() else sys.stdout
    cal = calibrate(graph, input_sets, method, graph_name=name,
                    data_set=", ".join(args.inputs_dir) or "inputs",
                    jobs=args.jobs if args.jobs is not None else default_jobs(),
                    scheduler=args.scheduler, fusions=not args.as_authored, seed=args.seed,
                    progress=Progress(stream, args.quiet))
    if cal.result.exit_code:
        print_summary(cal.result, sys.stdout)          # the details; one line on stderr
        failed = next((r for r in cal.result.runs if r.message), None)
        why = f"run {failed.name}: {failed.message}" if failed else cal.result.message
        return _fail(f"no ranges written, every run must pass to calibrate: {why}")
    problem = write_report(args.output, lambda tmp: write_ranges(cal.ranges, tmp))
    if problem:
        return _fail(problem)
    print(f"{name}: {len(cal.ranges.encodings)} output range(s) over "
          f"{len(cal.result.runs)} run(s), {method}: {args.output}")
    return 0


def cmd_apply_ranges(args: argparse.Namespace) -> int:
    from hexscope.engine.io.any_graph import load_any
    from hexscope.engine.prepare import prepare
    from hexscope.engine.ranges.apply import apply_ranges, runtime_range_nodes
    from hexscope.engine.ranges.encodings import read_ranges
    from hexscope.engine.validate import validate

    problem = report_problem(args.output)
    if problem:
        return _fail(problem.replace("the report", "the graph"))
    try:
        graph = load_any(args.graph, [])
        ranges = read_ranges(args.ranges, graph)
        applied = apply_ranges(graph, ranges)
    except EngineError as exc:
        return _fail(str(exc))
    issues = validate(graph)
    if issues:
        return _fail(f"the graph with ranges does not validate: {issues[0]}")
    for name in ranges.unmatched:
        print(f"warning: {args.ranges}: {name!r} names no node of the graph", file=sys.stderr)
    for change in applied.changes:
        print(change.describe())
    left = [f"0x{i:x} {what}" for i, what in runtime_range_nodes(prepare(graph))]
    if left:
        print("left finding their range at run time: " + "; ".join(left))
    problem = write_report(args.output, graph.save)
    if problem:
        return _fail(problem.replace("the report", "the graph"))
    print(f"{Path(args.graph).name}: {len(applied.changes)} node(s) given fixed ranges: "
          f"{args.output}")
    return 0


def cmd_sensitivity(args: argparse.Namespace) -> int:
    import json

    from hexscope.engine.errors import InputError
    from hexscope.engine.io.any_graph import load_any
    from hexscope.engine.ranges.sensitivity import sensitivity

    problem = report_problem(args.report)
    if problem:
        return _fail(problem)
    name = Path(args.graph).name
    try:
        graph = load_any(args.graph, [])
        sets = [s.loaded(graph) for s in
                build_input_sets(graph, args.graph, args.input, args.inputs_dir)]
        bad = next((s for s in sets if s.error), None)
        if bad is not None:
            raise InputError(f"{bad.name}: {bad.error}")
        ranking = sensitivity(graph, [s.tensors for s in sets], fusions=not args.as_authored,
                              jobs=args.jobs if args.jobs is not None else default_jobs())
    except EngineError as exc:
        return _fail(str(exc))
    print(f"{name}: {len(sets)} input set(s); output RMS error against the float reference: "
          f"quantized run {ranking.quantized:.6g}, fake-quantized float run "
          f"{ranking.baseline:.6g}")
    print(f"{'rank':>4}  {'node':<12} {'op':<34} {'error in float':>14} {'drop %':>8}  label")
    for n in ranking.top(args.top):
        share = n.drop / ranking.baseline if ranking.baseline else 0.0
        print(f"{n.rank:>4}  0x{n.node_id:<10x} {n.op:<34} {n.error_in_float:>14.6g} "
              f"{share:>7.1%}  {n.label}")
    if args.report:
        problem = write_report(args.report, lambda tmp: tmp.write_text(
            json.dumps(ranking.report(name), indent=1) + "\n", encoding="utf-8"))
        if problem:
            return _fail(problem)
    return 0
