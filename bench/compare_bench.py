"""Cost of the float-reference comparison on the InceptionV3-shaped graph (issue 12).

The peer is a plain simulator run of the same graph and input, measured in the same process:
the budget is at most 3x its time for each of

* the isolated analysis (each node's reference on the run's own inputs) and its metrics;
* the accumulated analysis (the whole graph run in float) and its metrics;
* a run compared with another run of itself (two traces, node by node).

The analyses keep work per prepared graph (``engine/analysis/reuse.py``): the accumulated
analysis its float run while the inputs stay the same, both each node's comparison while
made from the very same tensors. The budget's figures are cold (a new run, nothing kept);
"float run kept" is the accumulated analysis of a new run of the same inputs, "again, same
run" the app's comparison made again with no new node (after a tolerance change it is cold).

Prints medians of N rounds (default 5), the ratios, and each round's range of ratios. Run
(needs the "bench" extra)::

    .venv/bin/python bench/compare_bench.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inception_v3 import RNG, HexBuilder, inception_v3  # noqa: E402

from hexscope.engine import Session  # noqa: E402
from hexscope.engine.analysis.compare import (  # noqa: E402
    Trace,
    compare_reference,
    compare_traces,
)
from hexscope.engine.analysis.reuse import forget  # noqa: E402


def timed(fn) -> tuple[float, float]:
    """Wall and CPU seconds of ``fn()`` (one thread: CPU time is the work, without the
    waits for a core that a shared machine adds to the wall time)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


ROWS = (
    ("isolated", "isolated"),
    ("accumulated_cold", "accumulated"),
    ("accumulated_warm", "accumulated, float run kept"),
    ("isolated_again", "isolated again, same run"),
    ("trace", "run vs pinned run"),
)


def one_round(session: Session, x: np.ndarray,
              figures: dict[str, list[tuple[float, float]]]) -> None:
    figures["run"].append(timed(lambda: session.execute([x])))
    pinned = Trace.from_session(session, "pinned")

    def analysis(key: str, mode: str) -> None:
        figures[key].append(timed(lambda: compare_reference(session, mode)))

    analysis("isolated", "isolated")
    analysis("isolated_again", "isolated")   # nothing new: each node's work is kept
    forget(session.prepared)
    analysis("accumulated_cold", "accumulated")
    session.execute([x])                     # a new run of the same inputs: new tensors
    analysis("accumulated_warm", "accumulated")
    current = Trace.from_session(session)
    figures["trace"].append(timed(lambda: compare_traces(pinned, current)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--realistic", action="store_true",
                        help="the shape converters write (bias adds; prepare fuses each "
                             "chain into a Supernode), as inception_v3.py's first table")
    args = parser.parse_args()
    threadpool_limits(1)       # as inception_v3.py: one thread for the run and the analyses
    nb = HexBuilder(realistic=args.realistic)
    inception_v3(nb)
    session = Session(nb.g)
    x = RNG.integers(0, 256, (1, 299, 299, 3), dtype=np.uint8)
    session.execute([x])                                   # warm-up (weights converted)
    figures: dict[str, list[tuple[float, float]]] = {"run": [], **{k: [] for k, _ in ROWS}}
    for _ in range(args.rounds):
        one_round(session, x, figures)
    print(f"InceptionV3-shaped graph, {len(session.plan)} nodes, {args.rounds} rounds: medians "
          "of wall and CPU seconds, ratio of the medians (each round's lowest-highest)")
    for clock, label in ((0, "wall"), (1, "CPU")):
        med = {k: statistics.median(t[clock] for t in v) for k, v in figures.items()}
        print(f"\n{label} time")
        print(f"{'plain simulator run':<30} {med['run']:7.3f} s")
        for key, what in ROWS:
            ratio = med[key] / med["run"]
            rounds = [t[clock] / r[clock]
                      for t, r in zip(figures[key], figures["run"], strict=True)]
            verdict = "ok" if ratio <= 3 else "OVER BUDGET"
            print(f"{what:<30} {med[key]:7.3f} s  {ratio:5.2f}x the run  "
                  f"({min(rounds):.2f}-{max(rounds):.2f}; {verdict}, budget 3x)")


if __name__ == "__main__":
    main()
