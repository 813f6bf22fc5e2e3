"""The connected-DSP path's overhead: a run through hexscope-agent on loopback, as a ratio of
the same run on the in-process simulator, and the protocol's encode/decode per node.

Builds residual networks of real ops (``tests/support/large_graph.py``) at a few sizes, runs
each once on ``sim`` and once on ``dsp://`` (a fresh agent process on loopback; the upload,
prepare, execute with a tap on every node and PERFINFO), median of ``--repeat`` runs, and
times UPLOAD's encode and decode alone. The last column of the encode rows is the time
growth divided by the node growth: 1.0 is linear.

Run::

    .venv/bin/python bench/remote_bench.py [--sizes 500 2000 8000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hexscope.engine import Session  # noqa: E402
from hexscope.engine.remote import protocol as p  # noqa: E402
from hexscope.engine.remote.graph_wire import wire_nodes  # noqa: E402
from support.agent_process import running_agent  # noqa: E402
from support.large_graph import input_tensor, residual_graph  # noqa: E402


def _median(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _run(graph, backend: str) -> None:
    session = Session(graph, backend)
    try:
        session.set_inputs([input_tensor()])
        finished = session.run()
        assert finished.status.name == "FINISHED", finished.message
    finally:
        session.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 8000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with running_agent() as agent:
        for size in args.sizes:
            graph = residual_graph(size)
            nodes = wire_nodes(graph)
            upload = p.Upload(tuple(nodes))
            meta, data = upload.encode()
            encode = _median(upload.encode, args.repeat)
            decode = _median(lambda m=meta, d=data: p.Upload.decode(m, d), args.repeat)
            sim = _median(lambda g=graph: _run(g, "sim"), args.repeat)
            dsp = _median(lambda g=graph: _run(g, agent.address), args.repeat)
            rows.append((len(graph), encode, decode, sim, dsp, len(meta) + len(data)))
    print("| nodes | UPLOAD bytes | encode | decode | sim run | dsp:// run | dsp / sim |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, enc, dec, sim, dsp, size in rows:
        print(f"| {n:,} | {size:,} | {enc * 1e3:.1f} ms | {dec * 1e3:.1f} ms | "
              f"{sim * 1e3:.0f} ms | {dsp * 1e3:.0f} ms | {dsp / sim:.2f} |")
    (n0, e0, d0, *_), (n1, e1, d1, *_) = rows[0], rows[-1]
    growth = n1 / n0
    print(f"\nencode growth / node growth: {e1 / e0 / growth:.2f}; "
          f"decode: {d1 / d0 / growth:.2f} (1.0 is linear)")


if __name__ == "__main__":
    main()
