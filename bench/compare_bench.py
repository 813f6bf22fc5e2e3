"""Cost of the float-reference comparison on the InceptionV3-shaped graph (issue 12).

The peer is a plain simulator run of the same graph and input, measured in the same process:
the budget is at most 3x its time for each of

* the isolated analysis (each node's reference on the run's own inputs) and its metrics;
* the accumulated analysis (the whole graph run in float) and its metrics;
* a run compared with another run of itself (two traces, node by node).

Prints medians of N rounds (default 3) and the ratios. Run (needs the "bench" extra)::

    .venv/bin/python bench/compare_bench.py [--rounds 3]
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


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    threadpool_limits(1)       # as inception_v3.py: one thread for the run and the analyses
    nb = HexBuilder()
    inception_v3(nb)
    session = Session(nb.g)
    x = RNG.integers(0, 256, (1, 299, 299, 3), dtype=np.uint8)
    session.execute([x])                                   # warm-up (weights converted)
    figures: dict[str, list[float]] = {"run": [], "isolated": [], "accumulated": [],
                                       "trace": []}
    for _ in range(args.rounds):
        figures["run"].append(timed(lambda: session.execute([x])))
        pinned = Trace.from_session(session, "pinned")
        figures["isolated"].append(timed(lambda: compare_reference(session, "isolated")))
        figures["accumulated"].append(timed(lambda: compare_reference(session,
                                                                      "accumulated")))
        session.execute([x])
        current = Trace.from_session(session)
        figures["trace"].append(timed(lambda a=pinned, b=current: compare_traces(a, b)))
    med = {k: statistics.median(v) for k, v in figures.items()}
    print(f"InceptionV3-shaped graph, {len(session.plan)} nodes, {args.rounds} rounds "
          "(medians)")
    print(f"plain simulator run      {med['run']:8.3f} s")
    for key, what in (("isolated", "float reference, isolated"),
                      ("accumulated", "float reference, accumulated"),
                      ("trace", "run vs pinned run")):
        ratio = med[key] / med["run"]
        verdict = "ok" if ratio <= 3 else "OVER BUDGET"
        print(f"{what:<28} {med[key]:8.3f} s  {ratio:5.2f}x the run  ({verdict}, budget 3x)")


if __name__ == "__main__":
    main()
