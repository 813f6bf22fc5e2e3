"""The ``hexscope`` command line: one entry point, one subcommand per task.

Exit codes (every subcommand): 0 success / all checks passed, 1 a check failed (or, for
``check-padding``, a node reads padding), 2 the graph or the inputs are invalid, 3 a
backend failed. Nothing here imports Qt: only ``gui`` does, lazily.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from hexscope.app.cli_reduce import add_reduce_parser, cmd_reduce
from hexscope.app.cli_signals import Terminated, terminate_as_interrupt
from hexscope.engine.errors import BackendError, EngineError
from hexscope.engine.graph import Graph
from hexscope.engine.io.any_graph import load_any, special_file_problem

EXIT_OK, EXIT_CHECK, EXIT_INVALID, EXIT_BACKEND = 0, 1, 2, 3
EXIT_INTERRUPTED = 130      # Ctrl+C, as shells report a SIGINT

DESCRIPTION = """\
Hexscope: a debugger for hexagon_nn graphs. Without a subcommand, opens the app.
GRAPH is a .hexgraph file or a hexagon_nn graph-init C file (.c).
Exit codes: 0 ok, 1 a check failed, 2 invalid graph or inputs, 3 backend failure,
130 interrupted (Ctrl+C; 143 SIGTERM, 129 SIGHUP)."""

PLUGINS_EPILOG = """\
Plugins: every command (info and the agent included) first runs the bundled plugins, every
*.py in the plugins folder ($XDG_CONFIG_HOME/hexscope/plugins, by default
~/.config/hexscope/plugins) and each --plugin FILE. They are Python code: put there only
files you trust. --verbose lists what was loaded."""


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error on one line (exit 2), as every other error is:
    CI logs and ``2>err`` get the reason, not the whole usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INVALID, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from hexscope.app.cli_run import add_run_parser

    parser = OneLineParser(prog="hexscope", description=DESCRIPTION, epilog=PLUGINS_EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"hexscope {version()}")
    parser.add_argument("--plugin", action="append", default=[], metavar="FILE",
                        help="load a user-op plugin (repeatable): its Python code runs on "
                             "every command; load errors are reported, never fatal")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also list the plugins loaded (file and ops) on stderr")
    parser.add_argument("--self-test", action="store_true",
                        help="open the app offscreen on a bundled example, step it to the end, "
                             "check the results and exit (0: passed)")
    parser.add_argument("--warm-up", action="store_true",
                        help="compile the simulator's kernels now (once after install: the "
                             "first run is then not kept waiting) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    gui = sub.add_parser("gui", help="open the app (the default)",
                         description="Open the Hexscope app, optionally with a graph.")
    gui.add_argument("graph", nargs="?", metavar="GRAPH")
    add_run_parser(sub)
    validate = sub.add_parser("validate", help="list every problem of a graph",
                              description="List every problem of GRAPH (errors and "
                                          "warnings); exit 2 if there is an error.")
    validate.add_argument("graph", metavar="GRAPH")
    info = sub.add_parser("info", help="print a summary of a graph (like snpprint)",
                          description="Print the nodes in order with op, padding, inputs, "
                                      "output shapes and const sizes, in the spirit of "
                                      "hexagon_nn's snpprint.")
    info.add_argument("graph", metavar="GRAPH")
    info.add_argument("--prepared", action="store_true",
                      help="list the graph as prepare leaves it (fusions, dead nodes "
                           "removed, Consts first)")
    imp = sub.add_parser("import", help="import a graph-init C file or a TFLite model",
                         description="Read a hexagon_nn graph-init C file, or a .tflite model "
                                     "as the graph TFLite's Hexagon delegate builds for it, and "
                                     "save it as a .hexgraph file.")
    imp.add_argument("source", metavar="FILE.c|MODEL.tflite")
    imp.add_argument("--partition", type=int, metavar="K",
                     help="TFLite: import the K-th candidate partition, largest first "
                          "(default: the one the delegate takes)")
    imp.add_argument("-o", "--output", metavar="GRAPH.hexgraph",
                     help="default: FILE with the .hexgraph suffix")
    exp = sub.add_parser("export", help="export a graph as a graph-init C file",
                         description="Write GRAPH as a hexagon_nn graph-init C file that "
                                     "compiles against hexagon_nn's headers.")
    exp.add_argument("graph", metavar="GRAPH")
    exp.add_argument("-o", "--output", metavar="FILE.c", help="default: GRAPH with .c")
    pad = sub.add_parser("check-padding", help="find nodes that read d32 padding",
                         description="Run GRAPH twice with different d32 padding contents "
                                     "and list the nodes whose results change (exit 1 if "
                                     "any).")
    pad.add_argument("graph", metavar="GRAPH")
    from hexscope.app.cli_compare import add_compare_parser
    add_compare_parser(sub)
    from hexscope.app.cli_diff import add_diff_parser
    add_diff_parser(sub)
    from hexscope.app.cli_ranges import add_ranges_parsers
    add_ranges_parsers(sub)
    add_reduce_parser(sub)
    from hexscope.app.cli_device import add_import_profile_parser
    add_import_profile_parser(sub)
    return parser


def version() -> str:
    """The installed package's version (the bundle carries its metadata too)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("hexscope")
    except PackageNotFoundError:
        return "unknown (not installed as a package)"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "token", None):
        # dsp:// backends read their token from the environment (and so do --jobs workers)
        from hexscope.engine.backends.remote import TOKEN_ENV

        os.environ[TOKEN_ENV] = args.token
    command = args.command or "gui"
    # the app keeps the default: Qt's event loop would hold the exception back
    previous = {} if command == "gui" or args.self_test else terminate_as_interrupt()
    try:
        # plugins run user code: a Ctrl+C there is an interruption like any other
        args.plugin_errors = load_plugins(args.plugin, verbose=args.verbose)
        if args.self_test:
            from hexscope.app.self_test import run_self_test

            return run_self_test()
        if args.warm_up:
            from hexscope.app.warm_up import warm_up

            return warm_up()
        handler = {"gui": cmd_gui, "validate": cmd_validate, "info": cmd_info,
                   "import": cmd_import, "export": cmd_export,
                   "check-padding": cmd_check_padding,
                   "run": _cmd_run, "compare": _cmd_compare, "diff": _cmd_diff,
                   "calibrate": _cmd_ranges, "apply-ranges": _cmd_ranges,
                   "sensitivity": _cmd_ranges,
                   "reduce": cmd_reduce,
                   "import-profile": lambda a: a.device_command(a)}[command]
        return handler(args)
    except Terminated as exc:
        print(f"hexscope: terminated ({signal.Signals(exc.signum).name})", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("hexscope: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _cmd_run(args: argparse.Namespace) -> int:
    from hexscope.app.cli_run import cmd_run

    return cmd_run(args)


def _cmd_compare(args: argparse.Namespace) -> int:
    from hexscope.app.cli_compare import cmd_compare

    return cmd_compare(args)


def _cmd_diff(args: argparse.Namespace) -> int:
    from hexscope.app.cli_diff import cmd_diff

    return cmd_diff(args)


def _cmd_ranges(args: argparse.Namespace) -> int:
    from hexscope.app.cli_ranges import cmd_ranges

    return cmd_ranges(args)


def err(message: str) -> None:
    print(f"hexscope: {message}", file=sys.stderr)


def load_plugins(paths: Sequence[str], verbose: bool = False) -> list[str]:
    """The bundled plugins, the user's plugin folder, then each --plugin; failures print
    (and with ``verbose``, each plugin loaded, with its ops).

    Returns the failure messages (each names the file and line) so the app can show them.
    """
    from hexscope.engine.plugins import load_standard_plugins, loaded_plugins

    problems: list[Exception] = []
    load_standard_plugins(list(paths), errors=problems)  # type: ignore[arg-type]
    for exc in problems:
        err(str(exc))
    if verbose:
        for path, ops in loaded_plugins().items():
            print(f"hexscope: plugin {path}: {', '.join(ops)}", file=sys.stderr)
    return [str(exc) for exc in problems]


def load_or_report(path: str) -> Graph | None:
    """The graph in ``path`` (.hexgraph, graph-init C or .tflite), its load notes printed as
    warnings; None once the reason it cannot be read is printed (one line naming it)."""
    notes: list[str] = []
    try:
        graph = load_any(path, notes)       # refuses a named pipe before opening it
    except EngineError as exc:
        err(str(exc))
        return None
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    return graph


def cmd_gui(args: argparse.Namespace) -> int:
    try:
        from hexscope.app.gui import run_gui
    except ImportError as exc:
        err(f"the app cannot start: {exc}")
        return EXIT_INVALID
    return int(run_gui(getattr(args, "graph", None),
                       plugin_errors=getattr(args, "plugin_errors", [])))


def cmd_validate(args: argparse.Namespace) -> int:
    from hexscope.engine.validate import Severity, validate

    graph = load_or_report(args.graph)
    if graph is None:
        return EXIT_INVALID
    issues = validate(graph)
    for issue in issues:
        print(issue)
    n_errors = sum(i.severity is Severity.ERROR for i in issues)
    print(f"{args.graph}: {len(graph)} nodes, {n_errors} error(s), "
          f"{len(issues) - n_errors} warning(s)")
    return EXIT_INVALID if n_errors else EXIT_OK


def cmd_info(args: argparse.Namespace) -> int:
    from hexscope.app.cli_info import info_lines
    from hexscope.engine.io.any_graph import is_tflite_file

    if is_tflite_file(args.graph):
        from hexscope.engine.io.tflite.importer import delegation_report

        try:
            print("\n".join(delegation_report(args.graph)))
        except EngineError as exc:
            err(str(exc))
            return EXIT_INVALID
    graph = load_or_report(args.graph)
    if graph is None:
        return EXIT_INVALID
    try:
        lines = info_lines(graph, Path(args.graph).name, prepared=args.prepared)
    except EngineError as exc:
        err(str(exc))
        return EXIT_INVALID
    print("\n".join(lines))
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from hexscope.engine.io.any_graph import is_tflite_file
    from hexscope.engine.io.c_import import import_c

    out = args.output or str(Path(args.source).with_suffix(".hexgraph"))
    notes: list[str] = []
    problem = special_file_problem(args.source)
    if problem:
        err(problem)
        return EXIT_INVALID
    try:
        if is_tflite_file(args.source):
            from hexscope.engine.io.tflite.importer import import_tflite

            graph = import_tflite(args.source, notes, args.partition)
        else:
            graph = import_c(args.source, notes)
        graph.save(out)
    except EngineError as exc:
        err(str(exc))
        return EXIT_INVALID
    except OSError as exc:
        err(f"{out}: {exc.strerror or exc}")
        return EXIT_INVALID
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    consts = sum(n.is_const for n in graph)
    print(f"imported {len(graph)} nodes ({consts} Const) from {args.source} into {out}")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from hexscope.engine.io.c_export import export_c

    graph = load_or_report(args.graph)
    if graph is None:
        return EXIT_INVALID
    out = args.output or str(Path(args.graph).with_suffix(".c"))
    try:
        export_c(graph, out, Path(args.graph).stem)
    except EngineError as exc:
        err(str(exc))
        return EXIT_INVALID
    except OSError as exc:
        err(f"{out}: {exc.strerror or exc}")
        return EXIT_INVALID
    print(f"exported {len(graph)} nodes from {args.graph} to {out}")
    return EXIT_OK


def cmd_check_padding(args: argparse.Namespace) -> int:
    try:
        from hexscope.engine.analysis.padding_check import check_padding
    except ImportError:
        err("the padding check is not available in this build "
            "(hexscope.engine.analysis.padding_check is missing)")
        return EXIT_INVALID
    from hexscope.engine.inputs import make_inputs

    graph = load_or_report(args.graph)
    if graph is None:
        return EXIT_INVALID
    try:
        inputs = make_inputs(graph, base_dir=Path(args.graph).resolve().parent)
        report = check_padding(graph, inputs=inputs)
    except BackendError as exc:
        err(str(exc))
        return EXIT_BACKEND
    except EngineError as exc:
        err(str(exc))
        return EXIT_INVALID
    for line in report.lines():
        print(line)
    return EXIT_CHECK if report.readers else EXIT_OK
