"""Cost of ``hexscope reduce`` on large graphs (issue 28).

The graph is ``tests/support/large_graph.py``'s residual network of 500, 2,000 and 10,000
nodes with one relu, 80 % of the way down, made a plugin op that raises on its data
(``tests/engine/reduce/trap_plugin.py``); the check is "the same node raises", the search
``--mode bisect``. The peer is a plain simulator run of the whole graph in the same process:
the table gives the reduction's time as a ratio of it, and each phase's candidates. ``--linear
N`` also times ``--mode linear`` (one unit at a time, Polygraphy's linear mode) on the
graphs of at most N nodes (default 2,000), the ratio bisect/linear.

    .venv/bin/python bench/reduce_bench.py [--sizes 500 2000 10000] [--linear 2000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hexscope.engine import Session  # noqa: E402
from hexscope.engine.plugins import load_plugin  # noqa: E402
from hexscope.engine.reduce.job import CheckSpec, prepare_reduction  # noqa: E402
from hexscope.engine.tensor import Tensor  # noqa: E402
from support.large_graph import input_tensor, residual_graph  # noqa: E402

TRAP = ROOT / "tests" / "engine" / "reduce" / "trap_plugin.py"


def trapped(nodes: int):
    graph = residual_graph(nodes)
    relus = [n.node_id for n in graph if n.op == "QuantizedRelu_8"]
    trap = relus[int(len(relus) * 0.8)]
    graph.set_op(trap, "TrapRelu_8")
    return graph, trap


def plain_run(graph) -> float:
    """The peer: one run of the whole graph (it stops at the trap, as the device would)."""
    session = Session(graph)
    start = time.perf_counter()
    try:
        session.execute([input_tensor()])
    except Exception:  # noqa: BLE001 - the trap raises: that is the failure being reduced
        pass
    return time.perf_counter() - start


def reduce_once(graph, trap: int, mode: str) -> dict[str, object]:
    start = time.perf_counter()
    job = prepare_reduction(graph, [[Tensor.from_array(input_tensor())]],
                            CheckSpec("node-error"), mode=mode)
    setup = time.perf_counter() - start
    result = job.reducer.run()
    total = time.perf_counter() - start
    assert result.best.units == (trap,), result.best.units
    phases = Counter(i.phase for i in result.iterations)
    return {"after": result.best.size, "units": len(job.run.units),
            "iterations": len(result.iterations), "setup": setup, "total": total,
            "phases": phases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 10000])
    parser.add_argument("--linear", type=int, default=2000,
                        help="also time --mode linear up to this many nodes")
    args = parser.parse_args()
    load_plugin(TRAP)
    print("| nodes before | units | after | mode | candidates (end/start/branches) | "
          "first run + setup | total | x plain run | bisect/linear |")
    print("|---:|---:|---:|---|---|---:|---:|---:|---:|")
    for size in args.sizes:
        graph, trap = trapped(size)
        plain = min(plain_run(graph) for _ in range(3))
        rows = [("bisect", reduce_once(graph, trap, "bisect"))]
        if size <= args.linear:
            rows.append(("linear", reduce_once(graph, trap, "linear")))
        for mode, r in rows:
            ph = r["phases"]
            ratio = (f"{rows[0][1]['total'] / rows[1][1]['total']:.3f}"
                     if mode == "bisect" and len(rows) > 1 else "")
            print(f"| {len(graph):,} | {r['units']} | {r['after']} | {mode} | "
                  f"{r['iterations']} ({ph['end']}/{ph['start']}/{ph['branches']}) | "
                  f"{r['setup']:.2f} s | {r['total']:.2f} s | {r['total'] / plain:.1f} | "
                  f"{ratio} |", flush=True)


if __name__ == "__main__":
    main()
