"""``hexscope reduce``: cut a failing graph down to its smallest failing part (issue 28)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:       # the command line imports this module at every start: keep it light
    from hexscope.engine.reduce import Progress, ReduceResult
    from hexscope.engine.reduce.job import CheckSpec, Reduction

MODES = ("bisect", "linear")      # engine.reduce.MODES (a test checks they agree)

REDUCE_EPILOG = """\
What fails (one of; default: the node the graph's own run stops at must still raise):
  --check CMD          run CMD on each candidate, saved as a .hexgraph with its inputs
                       beside it: {} in CMD is its path (else it goes last); a non-zero exit
                       means it still fails (--fail-regex RE: and the output matches RE).
                       A candidate still running after --timeout S is killed (with its
                       process group) and counts as failing: a hang is what is reduced
                       (--timeout-passes: it counts as passing)
  --node-error         the node that raised in the original run raises again (by id)
  --check-failed       the same, and that node is a Check or a Close
  --against OTHER      diverges from OTHER (a variant with the same node ids: each kept node
                       runs as OTHER has it) beyond --tolerance LSB
  --backend-b NAME     diverges from the same candidate on NAME (sim, dsp://HOST:PORT)
  --reference float    diverges from the float reference (--analysis isolated|accumulated)

Units are prepare's groups (a Supernode's chain, an AutoQuantize with its Min_f and Max_f):
never cut apart. A tensor cut at the start comes from the INPUT (its min and max from Consts)
with the original run's values; dropped side branches become Consts of their values; ids stay.
Writes OUT.hexgraph with OUT.inputK.npy beside it (`hexscope run OUT.hexgraph` reproduces
it), OUT.c (graph-init C), reduce.json (every candidate: phase, nodes, verdict, prepared
form, time) and OUT.replay.json after each candidate: run again with --replay to resume.

exit codes: 0 reduced, 1 the graph does not fail the check (nothing to reduce), 2 invalid
graph, inputs or options, 3 a backend failed, 130 interrupted (resume with --replay)."""


def add_reduce_parser(sub: Any) -> None:
    from hexscope.app.cli_compare import tolerance_arg
    from hexscope.app.cli_run import add_token_argument

    p = sub.add_parser(
        "reduce", help="cut a failing graph down to its smallest failing part",
        description="Reduce GRAPH to the smallest part that still fails, bisecting prepare's "
                    "groups from the end, then the start, then removing side branches.",
        epilog=REDUCE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph", metavar="GRAPH")
    p.add_argument("-o", "--output", required=True, metavar="OUT.hexgraph",
                   help="the reduced graph (OUT.c, its inputs and reduce.json go beside it)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--check", metavar="CMD", help="a command that fails on a failing graph")
    what.add_argument("--node-error", action="store_true",
                      help="the original's failing node still raises (the default)")
    what.add_argument("--check-failed", action="store_true",
                      help="the original's failing Check/Close still fails")
    what.add_argument("--against", metavar="OTHER", help="diverges from another graph file")
    what.add_argument("--backend-b", metavar="NAME", help="diverges from another backend")
    what.add_argument("--reference", choices=["float"], help="diverges from the float reference")
    p.add_argument("--fail-regex", metavar="RE", help="--check: only output matching RE fails")
    p.add_argument("--timeout", type=float, metavar="S", help="--check: seconds per candidate")
    p.add_argument("--timeout-passes", action="store_true",
                   help="--check: a candidate that times out counts as passing")
    p.add_argument("--tolerance", "--tolerance-lsb", dest="tolerance", type=tolerance_arg,
                   metavar="X", help="divergences: beyond X LSB (default 0 for --against and "
                                     "--backend-b, 1 for --reference)")
    p.add_argument("--analysis", choices=["isolated", "accumulated"], default="isolated",
                   help="--reference float: the analysis (default isolated)")
    p.add_argument("--mode", choices=MODES, default="bisect",
                   help="bisect (default) or linear: one unit at a time")
    p.add_argument("--replay", metavar="FILE",
                   help="the replay file to resume from and write (default OUT.replay.json)")
    p.add_argument("--min-good", metavar="GOOD.hexgraph",
                   help="also write the largest passing candidate within the result")
    p.add_argument("--report", metavar="reduce.json",
                   help="where the report goes (default reduce.json beside OUT)")
    p.add_argument("--backend", default="sim", metavar="NAME", help="where to run (default sim)")
    p.add_argument("--input", action="append", default=[], metavar="NODE:IDX=FILE",
                   help="feed FILE to output IDX of the INPUT node (repeatable)")
    p.add_argument("--inputs-dir", action="append", default=[], metavar="[NODE:IDX=]DIR",
                   help="several input sets: the reduction uses the worst")
    add_token_argument(p)
    p.add_argument("--seed", type=int, default=0, help="session seed (default 0)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress, only the summary")


def check_spec(args: argparse.Namespace, other: Any = None) -> CheckSpec:
    """The CheckSpec the options describe."""
    from hexscope.engine.reduce.job import CheckSpec

    compare_default = 0.0 if (args.against or args.backend_b) else 1.0
    tolerance = compare_default if args.tolerance is None else args.tolerance
    if args.check:
        return CheckSpec("command", command=args.check, fail_regex=args.fail_regex,
                         timeout=args.timeout, timeout_fails=not args.timeout_passes)
    if args.check_failed:
        return CheckSpec("check-failed")
    if args.against:
        return CheckSpec("against", other=other, tolerance=tolerance)
    if args.backend_b:
        return CheckSpec("backend-b", backend_b=args.backend_b, tolerance=tolerance)
    if args.reference:
        return CheckSpec("reference", analysis=args.analysis, tolerance=tolerance)
    return CheckSpec("node-error")


def cmd_reduce(args: argparse.Namespace) -> int:
    from hexscope.app.cli import EXIT_BACKEND, EXIT_CHECK, EXIT_INVALID, err
    from hexscope.app.cli_run import backend_problem, build_input_sets, report_problem
    from hexscope.engine.errors import BackendError, Cancelled, EngineError
    from hexscope.engine.reduce import NotFailing
    from hexscope.engine.reduce.job import prepare_reduction

    out = Path(args.output)
    report = Path(args.report) if args.report else out.with_name("reduce.json")
    problem = (backend_problem(args.backend)
               or (backend_problem(args.backend_b) if args.backend_b else "")
               or report_problem(str(out), str(report), args.min_good, args.replay)
               or _option_problem(args))
    if problem:
        err(problem)
        return EXIT_INVALID
    graph = _load(args.graph)
    other = _load(args.against) if args.against else None
    if graph is None or (args.against and other is None):
        return EXIT_INVALID
    spec = check_spec(args, other)
    bar = _Bar(args.quiet)
    try:
        sets = [s.loaded(graph) for s in build_input_sets(graph, args.graph, args.input,
                                                          args.inputs_dir)]
        broken = next((s for s in sets if s.error), None)
        if broken is not None:
            err(f"{broken.name}: {broken.error}")
            return EXIT_INVALID
        job = prepare_reduction(graph, [s.tensors for s in sets], spec, backend=args.backend,
                                seed=args.seed, mode=args.mode,
                                replay=args.replay or out.with_suffix(".replay.json"),
                                progress=bar)
        if not args.quiet:
            print(f"{args.graph}: {len(graph)} nodes, {len(job.run.units)} units; fails as "
                  f"{spec.describe()} ({job.first.detail}) on input set "
                  f"{sets[job.input_index].name}", file=sys.stderr)
        try:
            result = job.reducer.run()
        except BaseException:     # Ctrl+C, SIGTERM, a device gone: the verdicts so far stay
            bar.close()
            err(f"resume with --replay {job.reducer.replay} (the verdicts so far are there)")
            raise
    except BackendError as exc:
        err(str(exc))
        return EXIT_BACKEND
    except NotFailing as exc:
        err(str(exc))
        return EXIT_CHECK
    except (Cancelled, EngineError) as exc:
        err(str(exc))
        return EXIT_INVALID
    finally:
        bar.close()
    return _write(result, job, spec, args, out, report, sets[job.input_index].name)


def _load(path: str) -> Any:
    """The graph at ``path`` (a .hexgraph, C file or model), or None once said why."""
    from hexscope.app.cli import load_or_report

    return load_or_report(path)


def _option_problem(args: argparse.Namespace) -> str:
    if (args.fail_regex or args.timeout is not None or args.timeout_passes) and not args.check:
        return "--fail-regex, --timeout and --timeout-passes go with --check"
    if args.timeout is not None and not args.timeout > 0:
        return f"--timeout {args.timeout:g}: a number of seconds above 0"
    if Path(args.output).suffix != ".hexgraph":
        return f"-o {args.output}: the reduced graph is a .hexgraph file"
    return ""


def _write(result: ReduceResult, job: Reduction, spec: CheckSpec, args: argparse.Namespace,
           out: Path, report: Path, input_name: str) -> int:
    from hexscope.app.cli import EXIT_INVALID, EXIT_OK, err
    from hexscope.engine.errors import EngineError
    from hexscope.engine.reduce import write_c, write_candidate, write_json

    try:
        files = write_candidate(result.best, out)
        c_file = write_c(result.best, out.with_suffix(".c"))
        if args.min_good and result.min_good is not None:
            write_candidate(result.min_good, args.min_good)
        document = {"graph": args.graph, "check": spec.describe(), "input_set": input_name,
                    "original_failure": job.first.detail, **result.summary(),
                    "files": [str(f) for f in files]
                    + ([str(out.with_suffix(".c"))] if c_file.written else []),
                    "c_export": c_file.problem or "written", "c_notes": list(c_file.notes)}
        write_json(document, report)
    except (OSError, EngineError) as exc:
        err(f"{out}: {getattr(exc, 'strerror', None) or exc}")
        return EXIT_INVALID
    if c_file.line():
        err(f"{out.with_suffix('.c')}: {c_file.line()}")
    kept = ", ".join(f"0x{g:x}" for g in result.best.units[:8])
    more = "" if len(result.best.units) <= 8 else f" and {len(result.best.units) - 8} more"
    print(f"reduced {result.original_nodes} nodes to {result.best.size} ({len(result.best.units)} "
          f"unit(s): {kept}{more}) in {len(result.iterations)} iterations, "
          f"{result.seconds:.1f} s; wrote {out}, {report}"
          + (f", {args.min_good} ({result.min_good.size} nodes)"
             if args.min_good and result.min_good else ""))
    if args.min_good and result.min_good is None:
        err("--min-good: no passing candidate was seen within the result")
    return EXIT_OK


class _Bar:
    """A tqdm bar with the current candidate's node count (on a terminal); a line per
    candidate otherwise, for logs."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._bar: Any = None

    def __call__(self, p: Progress) -> None:
        if self.quiet:
            return
        if not self.tty:
            print(f"candidate {p.iteration} ({p.phase}): {p.nodes} nodes; smallest failing "
                  f"{p.best_nodes}", file=sys.stderr, flush=True)
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(file=sys.stderr, unit=" candidates", dynamic_ncols=True)
        self._bar.set_postfix_str(f"{p.phase}: {p.nodes} nodes, smallest failing "
                                  f"{p.best_nodes}", refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
