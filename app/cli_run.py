"""``hexscope run``: a graph over one or many input sets, with reports for CI."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from hexscope.app.warning_summary import group_warnings
from hexscope.engine.batch.parallel import default_jobs
from hexscope.engine.batch.records import BatchResult, InputSet, Outcome, RunRecord
from hexscope.engine.batch.runner import run_batch
from hexscope.engine.errors import EngineError, InputError
from hexscope.engine.graph import Graph
from hexscope.engine.inputs import InputSource, input_node, input_sources

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
INPUT_SUFFIXES = (".npy", *IMAGE_SUFFIXES)

RUN_EPILOG = """\
NODE is the INPUT node's id, in hex (0x2024a) or decimal; IDX its output index (default 0).
FILE is a .npy file or an image (resized to the input's declared shape). Inputs not given
use the sources saved with the graph (else seeded random data). --inputs-dir runs the graph
once per file of DIR (sorted by name); several --inputs-dir (for several INPUT outputs) must
hold the same number of files.

--backend dsp://HOST:PORT runs on a device agent (hexscope-agent, or the on-device agent of
packaging/dsp-agent); its token comes from --token or $HEXSCOPE_AGENT_TOKEN. The report then
holds each node's device counter (hexagon_nn's perfinfo). Runs on a device go one at a time.

exit codes: 0 all checks passed, 1 a check failed, 2 the graph or inputs are invalid,
3 a backend failed (an agent that cannot be reached, refuses the token, or drops the
connection mid-run: the nodes that ran before are still reported and dumped)."""


def add_run_parser(sub: Any) -> None:
    run = sub.add_parser(
        "run", help="run a graph over input sets, with JSON/JUnit reports",
        description="Run GRAPH once per input set and report per node: status, time, "
                    "shapes, ranges, saturation and every Check/Close result.",
        epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("graph", metavar="GRAPH")
    run.add_argument("--input", action="append", default=[], metavar="NODE:IDX=FILE",
                     help="feed FILE to output IDX of the INPUT node (repeatable)")
    run.add_argument("--inputs-dir", action="append", default=[], metavar="[NODE:IDX=]DIR",
                     help="one run per .npy/image file in DIR (repeatable)")
    run.add_argument("--backend", default="sim", metavar="sim|dsp://HOST:PORT",
                     help="where to run (default: sim, the simulated HVX)")
    add_token_argument(run)
    run.add_argument("--report", metavar="OUT.json", help="write the JSON report")
    run.add_argument("--junit", metavar="OUT.xml", help="write a JUnit XML report")
    from hexscope.app.cli_report import add_share_arguments
    add_share_arguments(run, "time (microseconds, or device cycles)")
    run.add_argument("--dump", metavar="DIR",
                     help="write every node's outputs as .npy files, with their ranges")
    run.add_argument("--seed", type=int, default=0,
                     help="session seed for random fills (default 0)")
    run.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                     help="run the input sets in N worker processes (default: the number "
                          "of processors; the results are the same for any N)")
    run.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                     help="run the input sets on this Dask distributed cluster (needs "
                          "hexscope[cluster] here and on the workers; the results are the "
                          "same as with --jobs 1)")
    run.add_argument("--as-authored", action="store_true",
                     help="no prepare fusions: run each op of a convolution chain instead of "
                          "the Supernode the device makes of it")
    run.add_argument("--trace", metavar="OUT.json",
                     help="write a Chrome trace-event timeline (Perfetto, chrome://tracing)")
    run.add_argument("-q", "--quiet", action="store_true", help="only print the summary")


def add_token_argument(parser: Any) -> None:
    parser.add_argument("--token", metavar="TOKEN",
                        help="the device agent's token for dsp:// backends (default: "
                             "$HEXSCOPE_AGENT_TOKEN)")


#: More worker processes than this is a typing error, not a machine (each holds the graph).
MAX_JOBS = 1024


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of jobs (1 or more)")
    if value > MAX_JOBS:
        raise argparse.ArgumentTypeError(f"'{text}' jobs is too many (at most {MAX_JOBS}; "
                                         "each job is a process that holds the graph)")
    return value


def backend_problem(name: str) -> str:
    """Why ``name`` is no backend ('' when it may be one): an invalid argument (exit 2), not
    a backend that failed (exit 3)."""
    from hexscope.engine.backends import BACKENDS

    if name in BACKENDS or name.startswith("dsp://"):
        return ""
    return (f"unknown backend {name!r}; choose one of {', '.join(sorted(BACKENDS))} or "
            "dsp://HOST:PORT")


def scheduler_problem(address: str) -> str:
    """Why ``address`` is no Dask scheduler address ('' when it looks like one): checked
    before Dask sees it (garbage made it hang for 40 s, then print a traceback)."""
    scheme, sep, rest = address.partition("://")
    host, colon, port = rest.rpartition(":")
    if sep and scheme in ("tcp", "tls") and colon and host and port.isdigit() \
            and 0 < int(port) < 65536:
        return ""
    return f"--scheduler {address!r}: expected tcp://HOST:PORT (or tls://HOST:PORT)"


def report_problem(*paths: str | None) -> str:
    """Why a report could not be written where asked ('' when it can): checked before the
    runs, so a typo costs nothing."""
    for path in paths:
        if not path:
            continue
        folder = Path(path).parent
        if Path(path).is_dir():
            return f"cannot write the report to {path}: it is a folder"
        if not folder.is_dir():
            return f"cannot write the report to {path}: the folder {folder} does not exist"
        if not os.access(folder, os.W_OK):
            return f"cannot write the report to {path}: the folder {folder} is not writable"
    return ""


def write_report(path: str, write: Callable[[Path], None]) -> str:
    """Write one report atomically (a full disk never leaves a 0-byte file a CI parser then
    reads as empty); '' when it worked, else why not."""
    from hexscope.engine.io.atomic import atomic_path

    try:
        with atomic_path(path) as tmp:
            write(tmp)
    except OSError as exc:
        return f"cannot write the report to {path}: {exc.strerror or exc}"
    return ""


def parse_target(text: str, graph: Graph) -> tuple[int, str]:
    """``NODE:IDX=VALUE`` (or ``NODE=VALUE``, ``VALUE``) -> (output index, VALUE)."""
    node_id = input_node(graph)
    if node_id is None:
        raise InputError("the graph has no INPUT node to feed")
    if "=" not in text:
        return 0, text
    target, value = text.split("=", 1)
    node_text, _, idx_text = target.partition(":")
    try:
        node = int(node_text, 0)
        idx = int(idx_text or "0", 0)
    except ValueError:
        raise InputError(f"'{target}': expected NODE:IDX, e.g. 0x{node_id:x}:0") from None
    if node != node_id:
        raise InputError(f"'{target}': node 0x{node:x} is not the graph's INPUT node "
                         f"(0x{node_id:x})")
    n_out = len(graph.node(node_id).outputs)
    if not 0 <= idx < n_out:
        raise InputError(f"'{target}': the INPUT node has {n_out} output(s)")
    return idx, value


def _file_source(base: InputSource, path: Path) -> InputSource:
    suffix = path.suffix.lower()
    if suffix not in INPUT_SUFFIXES:
        raise InputError(f"{path}: expected a .npy file or an image "
                         f"({', '.join(IMAGE_SUFFIXES)})")
    kind = "npy" if suffix == ".npy" else "image"
    # abspath, not resolve(): a symlink loop is then named when the file is read (resolve()
    # raises RuntimeError on one)
    return dataclasses.replace(base, kind=kind, path=os.path.abspath(path))


def build_input_sets(graph: Graph, graph_path: str, inputs: list[str],
                     inputs_dirs: list[str]) -> list[InputSet]:
    """The input sets of a run; an input problem raises InputError (exit 2)."""
    base_dir = Path(graph_path).resolve().parent
    sources = input_sources(graph)
    for text in inputs:
        idx, value = parse_target(text, graph)
        sources[idx] = _file_source(sources[idx], Path(value))
    columns: list[tuple[int, list[Path]]] = []
    for text in inputs_dirs:
        idx, value = parse_target(text, graph)
        folder = Path(value)
        if not folder.is_dir():
            raise InputError(f"{folder}: not a directory")
        files = sorted(p for p in folder.iterdir() if p.suffix.lower() in INPUT_SUFFIXES)
        if not files:
            raise InputError(f"{folder}: no .npy or image files")
        columns.append((idx, files))
    counts = {len(files) for _, files in columns}
    if len(counts) > 1:
        raise InputError("the --inputs-dir folders hold different numbers of files: "
                         + ", ".join(str(len(f)) for _, f in columns))
    n_sets = counts.pop() if counts else 1
    sets = []
    for k in range(n_sets):
        chosen = list(sources)
        for idx, files in columns:
            chosen[idx] = _file_source(chosen[idx], files[k])
        name = columns[0][1][k].name if columns else "inputs"
        sets.append(_materialise(graph, base_dir, chosen, name))
    return sets


def _materialise(graph: Graph, base_dir: Path, sources: list[InputSource],
                 name: str) -> InputSet:
    """One run's input set, made when the run starts (``InputSet.recipe``): a batch over a
    folder of images holds one of them at a time, not the folder."""
    return InputSet(name, sources=[s.describe() for s in sources],
                    recipe=(str(base_dir), list(sources)))


class Progress:
    """On a terminal, a tqdm bar with the rate and the time left; plain lines otherwise (CI
    logs read line by line)."""

    def __init__(self, stream: TextIO, quiet: bool) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.quiet = quiet
        self._bar: tqdm | None = None

    def __call__(self, done: int, total: int, run: RunRecord | None, name: str) -> None:
        if self.tty:
            if self._bar is None:
                self._bar = tqdm(total=total, file=self.stream, unit="run", leave=True,
                                 dynamic_ncols=True, smoothing=0.1)
            self._bar.set_postfix_str(name[:40], refresh=False)
            self._bar.update(done - self._bar.n)
            if done == total and run is not None:
                self._bar.close()
        elif run is not None and not self.quiet:
            print(f"run {done}/{total} {name}: {run.outcome.value} ({run.seconds:.3f} s)"
                  + (f": {run.message}" if run.message else ""), file=self.stream, flush=True)


def print_summary(result: BatchResult, out: TextIO, errors: TextIO | None = None) -> None:
    """The warnings and the summary on ``out``; each failure on ``errors`` (default: out),
    one line each with the ``hexscope:`` prefix."""
    errors = errors or out
    # one line per distinct warning ("… and N more like it"), so the verdict stays in view
    for group in group_warnings(w for run in result.runs for w in run.warnings):
        print(f"warning: {group.line()}", file=out)
    for run in result.runs:
        if run.outcome is not Outcome.PASSED and result.outcome is not Outcome.PASSED:
            print(f"hexscope: run {run.name}: {run.outcome.value}: {run.message}", file=errors)
    told = {run.message for run in result.runs}
    if result.outcome is not Outcome.PASSED and result.message and result.message not in told:
        # nothing ran, or the runs passed and something else failed (the dump)
        print(f"hexscope: {result.outcome.value}: {result.message}", file=errors)
        for issue in result.issues:
            print(f"  {issue}", file=out)
    checks = [c for r in result.runs for c in r.checks]
    failed = sum(c.status in ("failed", "error") for c in checks)
    passed_runs = sum(r.outcome is Outcome.PASSED for r in result.runs)
    print(f"{result.graph_name}: {len(result.runs)} run(s), {passed_runs} passed; "
          f"{len(checks)} check result(s), {failed} failed; {result.outcome.value} "
          f"(exit {result.exit_code})", file=out)


def _dump_folder(path: str) -> None:
    """Make the --dump folder before any run, so a bad path fails at once (exit 2)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"cannot write the dump to {path}: it is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot write the dump to {path}: {exc.strerror or exc}") from None


def cmd_run(args: argparse.Namespace) -> int:
    from hexscope.app.cli_report import write_run_shares
    from hexscope.engine.batch.report import write_json, write_junit
    from hexscope.engine.io.any_graph import load_any

    problem = (backend_problem(args.backend)
               or (scheduler_problem(args.scheduler) if args.scheduler else "")
               or report_problem(args.report, args.junit, args.html, args.model_explorer))
    if problem:
        print(f"hexscope: {problem}", file=sys.stderr)
        return 2
    name = Path(args.graph).name
    result = BatchResult(name, args.backend)
    notes: list[str] = []
    trace_problem = ""
    try:
        graph = load_any(args.graph, notes)         # refuses a named pipe before opening it
        input_sets = build_input_sets(graph, args.graph, args.input, args.inputs_dir)
        if args.dump:
            _dump_folder(args.dump)
    except EngineError as exc:
        result.outcome, result.message = Outcome.INVALID, str(exc)
        graph = None
    else:
        for note in notes:
            print(f"warning: {note}", file=sys.stderr)
        result = run_batch(graph, input_sets, args.backend, graph_name=name,
                           dump_dir=args.dump, progress=Progress(sys.stderr if sys.stderr
                                                                 .isatty() else sys.stdout,
                                                                 args.quiet),
                           seed=args.seed,
                           jobs=args.jobs if args.jobs is not None else default_jobs(),
                           fusions=not args.as_authored, scheduler=args.scheduler)
        if args.trace:
            from hexscope.app.cli_device import write_run_trace
            trace_problem = write_run_trace(args, graph, result)
    problem = ((write_report(args.report, lambda tmp: write_json(result, tmp, args.graph))
                if args.report else "")
               or (write_report(args.junit, lambda tmp: write_junit(result, tmp))
                   if args.junit else "")
               or write_run_shares(args, result, graph) or trace_problem)
    print_summary(result, sys.stdout, sys.stderr)
    if problem:
        print(f"hexscope: {problem}", file=sys.stderr)
        return max(result.exit_code, 2)
    return result.exit_code
