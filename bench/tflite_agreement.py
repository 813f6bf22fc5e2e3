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
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hexscope.engine.errors import EngineError
from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.model import read_model, short_name
from hexscope.engine.io.tflite.reference import compare_with_tflite, run_tflite

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "tflite"
SIDES = ("hexscope", "tflite_pm1", "xnnpack", "reference")


@dataclass(frozen=True)
class Spread:
    """|A - B| in codes over one output's elements."""

    max: float
    p99: float
    p95: float
    mean: float

    @classmethod
    def of(cls, diff: np.ndarray) -> Spread:
        d = np.abs(np.asarray(diff, np.float64)).ravel()
        if d.size == 0:
            return cls(0.0, 0.0, 0.0, 0.0)
        p99, p95 = np.percentile(d, [99, 95], method="higher")     # codes, not between
        return cls(float(d.max()), float(p99), float(p95), float(d.mean()))

    def text(self) -> str:
        return f"{self.max:g} / {self.p99:g} / {self.p95:g} / {self.mean:.3f}"


@dataclass
class OutputRow:
    model: str
    tensor: str
    spreads: dict[str, Spread | str]


def _interpreter_outputs(path: Path, inputs: list[np.ndarray], resolver: str,
                         tensors: list[int]) -> dict[int, np.ndarray] | None:
    """The ``tensors`` of one TFLite run with the named op resolver (None where the run
    cannot read them, XNNPACK keeping no intermediate tensors, or the resolver lacks an op)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            interp = Interpreter(model_path=os.fspath(path), num_threads=1,
                                 experimental_op_resolver_type=getattr(OpResolverType, resolver),
                                 experimental_preserve_all_tensors=resolver != "AUTO")
        except ValueError:      # the reference kernels lack an op version (DEPTH_TO_SPACE v2)
            return None
    interp.allocate_tensors()
    for detail, arr in zip(interp.get_input_details(), inputs, strict=False):
        interp.set_tensor(detail["index"], arr)
    interp.invoke()
    out = {}
    for t in tensors:
        try:
            out[t] = np.array(interp.get_tensor(t))
        except ValueError:
            return None
    return out


def _codes(arr: np.ndarray) -> np.ndarray:
    return np.asarray(arr).astype(np.float64)


def _nudged(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each code moved by -1, 0 or +1 at random, clamped to its type."""
    info = np.iinfo(x.dtype)
    moved = x.astype(np.int64) + rng.integers(-1, 2, x.shape)
    return np.clip(moved, info.min, info.max).astype(x.dtype)


def _hexscope(path: Path, x: list[np.ndarray]) -> tuple[list[int], dict[int, np.ndarray], str]:
    """The partition's output tensors, Hexscope - TFLite in codes at each, and why not."""
    graph = import_tflite(path)
    out_node = next(n for n in graph if n.op == "OUTPUT")
    of = graph.meta["tflite"]["tensor_of_output"]
    wanted = {ref: int(of[f"0x{ref[0]:x}:{ref[1]}"]) for ref in out_node.inputs}
    try:
        c = compare_with_tflite(graph, path, x)
    except EngineError:
        return sorted(set(wanted.values())), {}, "nnlib refuses the graph"
    rows = {(d.node_id, d.index): d for d in c.outputs}
    diffs: dict[int, np.ndarray] = {}
    for ref, t in wanted.items():
        row = rows.get(ref)
        if row is None or row.source is None:
            continue
        a, b = row.source()
        scale = read_model(path).tensor(t).quant
        lsb = float(scale.scale[0]) if scale is not None else 1.0
        diffs[t] = np.round((np.asarray(a) - np.asarray(b)) / lsb)
    why = c.stopped.split(" (")[0].replace("the run stopped", "stops") if c.stopped else ""
    return sorted(set(wanted.values())), diffs, why


def agreement(name: str, draws: int = 4) -> list[OutputRow]:
    """One row per output of the model's delegated partition."""
    path = DATA / f"{name}.tflite"
    x = [np.load(DATA / f"{name}.input.npy")]
    model = read_model(path)
    tensors, hex_diffs, why = _hexscope(path, x)
    base = run_tflite(path, x)
    moved: dict[int, list[np.ndarray]] = {t: [] for t in tensors}
    rng = np.random.default_rng(0)
    for _ in range(draws):
        other = run_tflite(path, [_nudged(a, rng) for a in x])
        for t in tensors:
            moved[t].append(_codes(other[t]) - _codes(base[t]))
    alt = {r: _interpreter_outputs(path, x, r, tensors) for r in ("AUTO", "BUILTIN_REF")}
    rows = []
    for t in tensors:
        spreads: dict[str, Spread | str] = {}
        spreads["hexscope"] = Spread.of(hex_diffs[t]) if t in hex_diffs else (why or "-")
        spreads["tflite_pm1"] = Spread.of(np.concatenate([d.ravel() for d in moved[t]]))
        for side, r in (("xnnpack", "AUTO"), ("reference", "BUILTIN_REF")):
            got = alt[r]
            spreads[side] = Spread.of(_codes(got[t]) - _codes(base[t])) if got else "-"
        rows.append(OutputRow(name, short_name(model.tensor(t).name), spreads))
    return rows


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
        for row in agreement(name, args.draws):
            cells = [f"`{row.model}`", row.tensor, *(_cell(row.spreads[s]) for s in SIDES)]
            if args.markdown:
                print("| " + " | ".join(cells) + " |")
            else:
                print("  ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
