"""How far a delegated graph's outputs are from TFLite's, as a distribution, next to how far
TFLite is from itself: its run with the input moved by ±1 code, XNNPACK and its reference
kernels against its builtin ones (docs/tflite.md, *How close is close*;
``bench/tflite_agreement.py`` prints it for every committed model).

Each figure is |A - B| in codes of the output tensor: max, 99th and 95th percentile (of the
codes, not between them) and mean.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike

import numpy as np

from hexscope.engine.errors import EngineError, GraphError
from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.model import TfModel, read_model, short_name
from hexscope.engine.io.tflite.reference import compare_with_tflite, run_tflite

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
    """One output of a model's delegated partition: a :class:`Spread` per side of
    :data:`SIDES`, or why there is none."""

    model: str
    tensor: str
    spreads: dict[str, Spread | str]


def _interpreter_outputs(path: str | PathLike[str], inputs: Sequence[np.ndarray],
                         resolver: str,
                         tensors: list[int]) -> dict[int, np.ndarray] | None:
    """The ``tensors`` of one TFLite run with the named op resolver (None where the run
    cannot read them, XNNPACK keeping no intermediate tensors, or the resolver lacks an op)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            interp = Interpreter(model_path=os.fspath(path), num_threads=1,
                                 experimental_op_resolver_type=getattr(OpResolverType, resolver),
                                 experimental_preserve_all_tensors=resolver != "AUTO")
        interp.allocate_tensors()
        for detail, arr in zip(interp.get_input_details(), inputs, strict=False):
            interp.set_tensor(detail["index"], arr)
        interp.invoke()
    except (RuntimeError, ValueError):  # the reference kernels lack DEPTH_TO_SPACE v2
        return None
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


def _hexscope(path: str | PathLike[str], model: TfModel, x: Sequence[np.ndarray]
              ) -> tuple[list[int], dict[int, np.ndarray], str]:
    """The partition's output tensors, Hexscope - TFLite in codes at each, and why not."""
    graph = import_tflite(path)
    out_node = next(n for n in graph if n.op == "OUTPUT")
    of = graph.meta["tflite"]["tensor_of_output"]
    wanted = {ref: int(of[f"0x{ref[0]:x}:{ref[1]}"]) for ref in out_node.inputs}
    try:
        c = compare_with_tflite(graph, path, x)
    except GraphError:          # validation: what nnlib's append or prepare refuses
        return sorted(set(wanted.values())), {}, "nnlib refuses the graph"
    except EngineError as exc:
        return sorted(set(wanted.values())), {}, str(exc).splitlines()[0]
    rows = {(d.node_id, d.index): d for d in c.outputs}
    diffs: dict[int, np.ndarray] = {}
    for ref, t in wanted.items():
        row = rows.get(ref)
        if row is None or row.source is None:
            continue
        a, b = row.source()
        quant = model.tensor(t).quant
        lsb = float(quant.scale[0]) if quant is not None else 1.0
        diffs[t] = np.round((np.asarray(a) - np.asarray(b)) / lsb)
    why = c.stopped.split(" (")[0].replace("the run stopped", "stops") if c.stopped else ""
    return sorted(set(wanted.values())), diffs, why


def agreement(path: str | PathLike[str], x: Sequence[np.ndarray], draws: int = 4
              ) -> list[OutputRow]:
    """One row per output of the delegated partition of the model at ``path`` on inputs
    ``x`` (the model's input codes), each with its four :class:`Spread` (or why not)."""
    x = list(x)
    name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    model = read_model(path)
    tensors, hex_diffs, why = _hexscope(path, model, x)
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


__all__ = ["SIDES", "OutputRow", "Spread", "agreement"]
