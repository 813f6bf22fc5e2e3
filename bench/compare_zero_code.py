"""The isolated float reference on classic TF ranges (issue 32 item 3): flagged outputs and
the analysis's time, with and without the op's own reading of its inputs.

``tests/support/large_graph.py``'s residual graph has [-1, 1] filters (zero point 127.5,
which QuantizedConv2d_8x8to32 rounds to 128). "without" is the analysis with
``op_reading.op_inputs`` answering None for every node: the spec's reading only, as before
the op's reading was added. Times are cold (each node's work forgotten between rounds),
medians of N rounds (BLAS on one thread with the "bench" extra). Run::

    .venv/bin/python bench/compare_zero_code.py [--nodes 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import hexscope.engine.analysis.float_run as float_run  # noqa: E402
from hexscope.engine import Session  # noqa: E402
from hexscope.engine.analysis.compare import compare_reference  # noqa: E402
from hexscope.engine.analysis.reuse import forget  # noqa: E402
from support.large_graph import input_tensor, residual_graph  # noqa: E402


def _one_thread():  # type: ignore[no-untyped-def]
    try:
        from threadpoolctl import threadpool_limits  # the "bench" extra
    except ImportError:
        from contextlib import nullcontext
        return nullcontext()
    return threadpool_limits(1)


def measure(session: Session, rounds: int) -> tuple[float, float, Counter, str]:
    walls, cpus = [], []
    result = None
    for _ in range(rounds):
        forget(session.prepared)
        wall, cpu = time.perf_counter(), time.process_time()
        result = compare_reference(session, "isolated")
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    assert result is not None
    flagged = Counter(d.op for d in result.exceeding)
    first = result.first_divergence
    where = "none" if first is None else (
        f"{first.title} ({first.op}) max {first.metrics.max_lsb:.1f} LSB, excess "
        f"{first.metrics.excess_lsb:.1f}, max abs {first.metrics.max_abs:.4f}")
    return statistics.median(walls), statistics.median(cpus), flagged, where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    session = Session(residual_graph(args.nodes))
    with _one_thread():
        session.execute([input_tensor()])
        compare_reference(session, "isolated")        # warm: compiled kernels loaded
        outputs = len(compare_reference(session, "isolated").outputs)
        with_reading = measure(session, args.rounds)
        own = float_run.op_inputs
        float_run.op_inputs = lambda spec, inputs: None
        try:
            without = measure(session, args.rounds)
        finally:
            float_run.op_inputs = own
    print(f"residual_graph({args.nodes}): {outputs} outputs compared, medians of "
          f"{args.rounds} cold rounds")
    for name, (wall, cpu, flagged, first) in (("spec's reading only", without),
                                              ("with the op's reading", with_reading)):
        print(f"{name:>22}: {sum(flagged.values()):5d} flagged "
              f"({', '.join(f'{op} {n}' for op, n in flagged.most_common()) or '-'}); "
              f"{wall:.2f} s wall, {cpu:.2f} s CPU")
        print(f"{'':>22}  first: {first}")


if __name__ == "__main__":
    main()
