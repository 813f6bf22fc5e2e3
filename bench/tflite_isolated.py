"""Each TFLite operator of a delegated graph on TFLite's own inputs: how far each op kind is
from TFLite when nothing before it differs, and whether it leans one way (docs/tflite.md,
*Is every difference nnlib's arithmetic?*).

As ``compare --reference tflite --analysis isolated`` (engine/io/tflite/isolated.py): the
graph is stepped node by node, and after every node that computes a TFLite tensor its output
is replaced by TFLite's codes for the nodes after it (on the node's own grid, its d32 padding
kept), so each operator reads exactly what TFLite's kernel read. Per tensor: the max
|A - B|, the mean signed A - B (a consistent lean shows as a mean near the fraction of codes
that differ), and the fraction of codes that differ; then the same per op kind.

Usage: ``.venv/bin/python bench/tflite_isolated.py MODEL.tflite [--input X.npy]
[--per-tensor]``. Needs ai-edge-litert (the ``tflite`` extra), not TensorFlow.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.model import read_model, short_name
from hexscope.engine.io.tflite.reference import compare_with_tflite


@dataclass(frozen=True)
class Row:
    node_id: int
    op: str
    tflite_op: str
    tensor: str
    max_abs: float
    mean_signed: float
    differing: float


def isolated(path: str, inputs: list[np.ndarray] | None = None) -> list[Row]:
    """One row per TFLite tensor a node computes, in run order, each operator run on
    TFLite's inputs (``compare_with_tflite(..., isolated=True)``)."""
    graph = import_tflite(path)
    model = read_model(path)
    meta = graph.meta["tflite"]
    c = compare_with_tflite(graph, path, inputs, isolated=True)
    rows = []
    for d in c.outputs:
        t = int(meta["tensor_of_output"][f"0x{d.node_id:x}:{d.index}"])
        tensor = model.tensor(t)
        if d.source is None or tensor.quant is None:
            continue
        a, b = d.source()
        diff = (np.asarray(a) - np.asarray(b)) / float(tensor.quant.scale[0])
        op_index = meta["op_index"].get(f"0x{d.node_id:x}")
        tflite_op = model.operators[int(op_index)].code if op_index is not None else "-"
        rows.append(Row(d.node_id, d.op, tflite_op, short_name(tensor.name),
                        float(np.abs(diff).max()), float(diff.mean()),
                        float((np.abs(diff) > 0.5).mean())))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--input", help="the model's input codes (.npy); default seeded random")
    p.add_argument("--per-tensor", action="store_true", help="one line per TFLite tensor")
    args = p.parse_args(argv)
    rows = isolated(args.model, [np.load(args.input)] if args.input else None)
    if args.per_tensor:
        print(f"{'node':>7} {'op':34} {'tensor':26} {'max':>5} {'mean A-B':>9} {'differ':>7}")
        for r in rows:
            print(f"0x{r.node_id:<5x} {r.op[:34]:34} {r.tensor[:26]:26} {r.max_abs:5.2f} "
                  f"{r.mean_signed:+9.4f} {r.differing:7.2%}")
    kinds: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in rows:
        kinds[(r.tflite_op, r.op)].append(r)
    print(f"{'TFLite op':18} {'node op':34} {'n':>3} {'max':>5} {'mean A-B':>17} "
          f"{'differ':>15}")
    for (tflite_op, op), rs in kinds.items():
        means = [r.mean_signed for r in rs]
        diff = [r.differing for r in rs]
        print(f"{tflite_op:18} {op[:34]:34} {len(rs):3d} {max(r.max_abs for r in rs):5.2f} "
              f"{min(means):+8.4f}..{max(means):+.4f} {min(diff):6.2%}..{max(diff):.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
