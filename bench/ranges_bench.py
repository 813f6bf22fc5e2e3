"""Calibration and sensitivity on the InceptionV3-shaped graph (issue 29).

* ``hexscope calibrate``'s engine against a plain ``hexscope run`` batch over the same random
  images (one process, --jobs 1): the time per image of each, and the ratio;
* ``hexscope sensitivity`` on one image: the time, the number of nodes ranked, and the time
  per node; with --jobs 2 as well.

The graph is bench/inception_v3.py's realistic one (94 convolutions, each
QuantizedConv2d_8x8to32 -> QuantizeDownAndShrinkRange_32to8 -> QuantizedRelu_8).

    .venv/bin/python bench/ranges_bench.py [--images 4] [--no-sensitivity]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inception_v3 import HexBuilder, inception_v3  # noqa: E402

from hexscope.engine.batch.records import InputSet  # noqa: E402
from hexscope.engine.batch.runner import run_batch  # noqa: E402
from hexscope.engine.ranges import Method, calibrate  # noqa: E402
from hexscope.engine.ranges.sensitivity import sensitivity  # noqa: E402
from hexscope.engine.tensor import Tensor  # noqa: E402


def _graph():
    nb = HexBuilder(realistic=True)
    inception_v3(nb)
    return nb.g


def _sets(n: int) -> list[InputSet]:
    rng = np.random.default_rng(1)
    return [InputSet(f"img{k:03d}", [Tensor.from_array(
        rng.integers(0, 256, (1, 299, 299, 3), dtype=np.uint8))]) for k in range(n)]


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-sensitivity", action="store_true")
    args = parser.parse_args()
    g, sets = _graph(), _sets(args.images)
    run_batch(g, sets[:1])                                 # warm-up: kernels, caches
    methods = ("minmax", "per-run-percentile:99", "percentile:99.9")
    plain: list[float] = []
    cal: dict[str, list[float]] = {m: [] for m in methods}
    for _ in range(args.rounds):                           # interleaved: same load for all
        result, s = _timed(lambda: run_batch(g, sets))
        assert result.outcome.value == "passed", result.message
        plain.append(s / len(sets))
        for m in methods:
            c, s = _timed(lambda: calibrate(g, sets, Method.parse(m)))  # noqa: B023
            assert c.result.outcome.value == "passed"
            cal[m].append(s / len(sets))
    print(f"graph: {len(g)} nodes; {len(c.ranges.encodings)} output ranges calibrated; "
          f"{len(sets)} images, best of {args.rounds}")
    print(f"plain run batch: {min(plain) * 1e3:.0f} ms per image")
    for m in methods:
        print(f"calibrate {m:<22} {min(cal[m]) * 1e3:.0f} ms per image, "
              f"{min(cal[m]) / min(plain):.2f}x the plain run")
    if args.no_sensitivity:
        return
    inputs = [sets[0].tensors]
    for jobs in (1, 2):
        ranking, s = _timed(lambda: sensitivity(g, inputs, jobs=jobs))  # noqa: B023
        print(f"sensitivity, 1 image, --jobs {jobs}: {s:.1f} s for {len(ranking.nodes)} nodes "
              f"({s / max(1, len(ranking.nodes)) * 1e3:.0f} ms per node); top 3: "
              + ", ".join(f"0x{n.node_id:x} {n.op} {n.drop / ranking.baseline:.1%}"
                          for n in ranking.top(3)))


if __name__ == "__main__":
    main()
