"""How far Hexscope's output is from TFLite's, per committed model and output, as a
distribution, next to how far TFLite is from itself (docs/tflite.md, *How close is close*).

For each model of ``tests/data/tflite`` (or those named) and each output of its delegated
partition, |A - B| in codes of that output: the max, the 99th and 95th percentiles and the
mean, for

- **Hexscope**: the delegated graph fed TFLite's values at the partition's inputs (what
  ``compare --reference tflite`` compares), against TFLite's builtin kernels;
- **TFLite ±1**: TFLite's builtin kernels on the input with each code moved by -1, 0 or +1
  at random (``--draws`` seeded draws, pooled), against their run on the input itself: how
  much the network amplifies a one-code change, which any implementation that rounds
  differently from TFLite somewhere inside meets;
- **XNNPACK**: TFLite with its default delegate (XNNPACK, ``OpResolverType.AUTO``) against
  its builtin kernels;
- **reference**: TFLite's reference kernels (``OpResolverType.BUILTIN_REF``) against its
  builtin (optimized) kernels.

Only ai-edge-litert (the ``tflite`` extra) is needed, not TensorFlow. Usage:
``.venv/bin/python bench/tflite_agreement.py [NAME ...] [--draws N] [--markdown]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from hexscope.engine.io.tflite.agreement import SIDES, Spread, agreement

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "tflite"


def _cell(s: Spread | str) -> str:
    return s.text() if isinstance(s, Spread) else s


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="models of tests/data/tflite (default: all)")
    p.add_argument("--draws", type=int, default=4, help="input draws moved by ±1 (default 4)")
    p.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = p.parse_args(argv)
    names = args.names or sorted(q.stem for q in DATA.glob("*.tflite")
                                 if not q.stem.startswith("bad_"))
    head = ("model", "output", "Hexscope vs TFLite", "TFLite input ±1 vs TFLite",
            "XNNPACK vs builtin", "reference vs builtin")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("  ".join(head) + "   (each: max / p99 / p95 / mean |A - B|, codes)")
    for name in names:
        for row in agreement(DATA / f"{name}.tflite", [np.load(DATA / f"{name}.input.npy")],
                             args.draws):
            cells = [f"`{row.model}`", row.tensor, *(_cell(row.spreads[s]) for s in SIDES)]
            if args.markdown:
                print("| " + " | ".join(cells) + " |")
            else:
                print("  ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
