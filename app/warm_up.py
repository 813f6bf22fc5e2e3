"""``hexscope --warm-up``: compile the simulator's kernels once, at install time.

numba and LLVM compile the compiled kernels on their first use and keep the machine code
on disk (numba's cache beside the modules, the GEMM objects under the user's cache
directory). Without this step the first run after an install sat on "Preparing the
graph…" for tens of seconds (``hexscope run`` of the classic example: 31 s cold, 2.2 s
warm). ``packaging/setup.sh`` and the bundle's build call it; the app says what is going
on when a run has to compile them anyway (``is_warm``).
"""

from __future__ import annotations

import os
import sys
import time
from importlib import resources
from importlib.abc import Traversable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TextIO


def cache_directory() -> Path:
    """The user's Hexscope cache (the same place the GEMM kernels' objects go)."""
    env = os.environ.get("HEXSCOPE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hexscope"


def stamp_path() -> Path:
    """A file that says the kernels of this install were compiled (per version)."""
    try:
        own = version("hexscope")
    except PackageNotFoundError:
        own = "dev"
    try:
        jit = version("numba")
    except PackageNotFoundError:
        jit = "none"
    py = f"{sys.version_info.major}{sys.version_info.minor}"
    return cache_directory() / f"warm-{own}-numba{jit}-py{py}"


def is_warm() -> bool:
    return stamp_path().exists()


def mark_warm() -> None:
    """Record that the kernels are compiled (a read-only home means no record, no error)."""
    try:
        path = stamp_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass


def warm_up(out: TextIO | None = None) -> int:
    """Run every bundled example, and a graph as TFLite's Hexagon delegate builds it
    (``resources/warmup``), twice each on the simulator (a node's second run takes its kept
    set-up and fused passes), then compile every other kernel (``engine/ops/kernels/warm.py``),
    all cached on disk; returns the exit code (0, or 1 when a graph could not run or a
    kernel could not be compiled)."""
    from hexscope.engine.ops.kernels.warm import warm_all

    out = out or sys.stdout
    start = time.monotonic()
    print("hexscope: compiling the simulator's kernels (once after install)…", file=out,
          flush=True)
    failed = 0
    for folder in ("examples", "warmup"):
        entries = resources.files("hexscope.resources") / folder
        for entry in sorted(entries.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".hexgraph"):
                failed += _run_twice(entry, out)
    # then every compiled kernel, those no graph reaches too (a softmax, a Winograd
    # convolution, Compare's metrics: seconds each at first use)
    for problem in warm_all():
        failed += 1
        print(f"hexscope: warm-up: {problem}", file=out)
    mark_warm()
    print(f"hexscope: kernels ready ({time.monotonic() - start:.1f} s)", file=out)
    return 1 if failed else 0


#: the graphs the warm-up ran (their file names), for the tests
RAN: list[str] = []


def _run_twice(entry: Traversable, out: TextIO) -> int:
    """Run one bundled graph twice on its default inputs; 1 if it could not run."""
    from hexscope.engine.errors import EngineError
    from hexscope.engine.graph import Graph
    from hexscope.engine.inputs import make_inputs
    from hexscope.engine.session import Session

    with resources.as_file(entry) as path:
        try:
            graph = Graph.load(path)
            session = Session(graph)
            try:
                session.set_inputs(make_inputs(graph, Path(path).parent))
                session.run()
                session.begin_run()         # the state carries over, as a second F5's
                session.run()
            finally:
                session.close()
        except EngineError as exc:
            print(f"hexscope: warm-up: {entry.name}: {exc}", file=out)
            return 1
    RAN.append(entry.name)
    return 0


__all__ = ["cache_directory", "is_warm", "mark_warm", "stamp_path", "warm_up"]
